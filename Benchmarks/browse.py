#!/usr/bin/env python3
"""The browse grid in headless Chromium: bytes of the first screen, and time to a complete grid of 1,000 assets.

Usage: Benchmarks/browse.py PATH/TO/hoard [--count 1000] [--side 1024] [--padding 190000]

Makes a pack of COUNT SIDE×SIDE pictures (each padded to about 190 kB, the size of a painted 1024 px token, with a
private PNG chunk: the pixels and so the thumbnails stay as they are), imports it, restarts the server (its blob
cache cold) and opens the page in a fresh browser (its cache cold) for each measurement:

- first screen: on a desktop (1440×900, 1×) and a tablet (820×1180, 2×), the bytes of pictures downloaded until
  every tile on the first screen shows its picture, against the bytes of those tiles' originals and against
  originals of PADDING bytes; measured on a second pack of 48 pictures with the detail of painted art (with numpy;
  else on the padded pictures, whose plain stripes make tiny thumbnails);
- listed to the end (desktop): from opening the pack's address to all COUNT tiles in the grid and the last screen's
  pictures shown, the page kept scrolled to its bottom;
- complete grid (desktop): from opening the pack's address to all COUNT tiles shown with their pictures, the page
  scrolled one screen further each time the screen's pictures have shown (as fast as the page keeps up).

Needs: scripts/setup.sh --browser.
"""
import argparse
import contextlib
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import call, free_port, wait_healthy  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


def png(side, seed, padding):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    row = b"\x00" + bytes((x * 255 // side + seed * 37 + x % 3 * 80) % 256 for x in range(side * 3))
    raw = row * side
    body = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw, 1))
    pad = max(0, padding - len(body) - 24)
    return body + (chunk(b"hoRd", os.urandom(pad)) if pad else b"") + chunk(b"IEND", b"")


def painted(side, seed):
    """A picture with the detail of painted art (smooth colour fields and fine grain; its thumbnail about 10 kB);
    None without numpy."""
    try:
        import numpy as np
    except ImportError:
        return None
    rng = np.random.default_rng(seed)

    def field(cells):
        corners = rng.integers(0, 256, (cells + 1, cells + 1, 3)).astype(np.float32)
        x = np.linspace(0, cells, side, endpoint=False)
        i, f = x.astype(int), (x - x.astype(int))[:, None, None]
        rows = corners[i] * (1 - f) + corners[i + 1] * f
        return rows[:, i] * (1 - f.transpose(1, 0, 2)) + rows[:, i + 1] * f.transpose(1, 0, 2)
    pixels = np.clip(field(8) * 0.7 + field(64) * 0.3 + rng.normal(0, 3, (side, side, 3)), 0, 255).astype(np.uint8)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + pixels[y].tobytes() for y in range(side))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def browser(width, height, scale):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}",
                     f"--force-device-scale-factor={scale}"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


SCREEN_DONE = """
    const tiles = [...document.querySelectorAll('#grid .tile')].filter((t) => {
      const r = t.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; });
    return tiles.length > 0 && tiles.every((t) => { const i = t.querySelector('img'); return i.src && i.complete; })
      ? tiles.map((t) => t.dataset.digest) : null;"""

PICTURE_BYTES = """
    return performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/blobs/'))
      .reduce((sum, e) => sum + e.encodedBodySize, 0);"""


class Server:
    def __init__(self, hoard, data):
        self.hoard, self.data = hoard, data
        self.process = None

    def start(self):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([self.hoard, "serve", "--data-dir", self.data, "--port", str(self.port), "--log-level", "error"])
        wait_healthy(self.base)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)


@contextlib.contextmanager
def opened(server, token, size, pack="pictures"):
    """A fresh server (its blob cache cold) and a fresh browser (its cache cold) on the pack's address: yields the
    driver and the moment the address was opened."""
    server.start()
    driver = browser(*size)
    try:
        driver.get(server.base + "/")
        driver.execute_script("sessionStorage.setItem('hoard.token', arguments[0])", token)
        started = time.perf_counter()
        driver.get(server.base + f"/?cold#/?pack={pack}")
        yield driver, started
    finally:
        driver.quit()
        server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hoard")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--side", type=int, default=1024)
    parser.add_argument("--padding", type=int, default=190_000)
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hoard-bench-browse-"))
    data = str(work / "data")
    hoard = os.path.abspath(arguments.hoard)
    run = lambda *a: subprocess.run([hoard, *a, "--data-dir", data], check=True, capture_output=True, text=True).stdout
    archive = work / "pictures.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        z.writestr("pack.json", json.dumps({"name": "pictures", "version": "1.0.0", "tilePixels": arguments.side}))
        for i in range(arguments.count):
            z.writestr(f"tokens/picture-{i:04d}.png", png(arguments.side, i, arguments.padding))
    run("group", "create", "default")
    began = time.perf_counter()
    run("import", "--group", "default", str(archive))
    first_pack = "pictures"
    sample = painted(64, 0)
    if sample is not None:
        first_pack = "painted"
        with zipfile.ZipFile(work / "painted.zip", "w", zipfile.ZIP_STORED) as z:
            z.writestr("pack.json", json.dumps({"name": "painted", "version": "1.0.0", "tilePixels": arguments.side}))
            for i in range(48):
                z.writestr(f"tokens/painted-{i:02d}.png", painted(arguments.side, i))
        run("import", "--group", "default", str(work / "painted.zip"))
    print(f"pack: {arguments.count} pictures of {arguments.side} px, {archive.stat().st_size / 1e6:.1f} MB, "
          f"imported in {time.perf_counter() - began:.1f} s")
    token = run("token", "create", "--group", "default", "--name", "bench").strip().splitlines()[-1]
    server = Server(hoard, data)
    try:
        server.start()
        listing = call(server.base, "GET", "/v1/assets?pack=pictures&limit=1000", token=token)["assets"]
        listing += call(server.base, "GET", f"/v1/assets?pack={first_pack}&limit=1000", token=token)["assets"]
        originals = {a["digest"]: max(v["size"] for v in a["variants"]) for a in listing}
        server.stop()
        for label, size in (("desktop", (1440, 900, 1)), ("tablet 2x", (820, 1180, 2))):
            with opened(server, token, size, first_pack) as (driver, started):
                shown = WebDriverWait(driver, 60, poll_frequency=0.02).until(lambda d: d.execute_script(SCREEN_DONE))
                seconds = time.perf_counter() - started
                fetched = driver.execute_script(PICTURE_BYTES)
                full = sum(originals[d] for d in shown)
                print(f"first screen of {first_pack}, {label}: {len(shown)} tiles in {seconds:.2f} s; pictures {fetched / 1e3:.0f} kB "
                      f"({fetched / 1e3 / len(shown):.1f} kB a tile) against {full / 1e6:.2f} MB of originals ({100 * fetched / full:.1f} %; "
                      f"{100 * fetched / (len(shown) * arguments.padding):.1f} % of {arguments.padding // 1000} kB originals)")
        with opened(server, token, (1440, 900, 1)) as (driver, started):
            while driver.execute_script("return document.querySelectorAll('#grid .tile').length") < arguments.count:
                driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
            WebDriverWait(driver, 60, poll_frequency=0.01).until(lambda d: d.execute_script(SCREEN_DONE))
            print(f"listed to the end, desktop: {arguments.count} tiles, the last screen's pictures shown, in "
                  f"{time.perf_counter() - started:.2f} s (jumping to the bottom)")
        with opened(server, token, (1440, 900, 1)) as (driver, started):
            wait = WebDriverWait(driver, 120, poll_frequency=0.01)
            while True:
                wait.until(lambda d: d.execute_script(SCREEN_DONE))
                done = driver.execute_script("""
                    const tiles = document.querySelectorAll('#grid .tile');
                    return tiles.length >= arguments[0] && [...tiles].every((t) => t.querySelector('img').complete && t.querySelector('img').src)""",
                                             arguments.count)
                if done:
                    break
                driver.execute_script("window.scrollBy(0, innerHeight)")
            seconds = time.perf_counter() - started
            fetched = driver.execute_script(PICTURE_BYTES)
            requests = driver.execute_script("return performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/')).length")
            print(f"complete grid, desktop: {arguments.count} tiles with their pictures in {seconds:.2f} s; "
                  f"{fetched / 1e6:.2f} MB of pictures (originals {sum(originals.values()) / 1e6:.1f} MB) in {requests} API requests")
    finally:
        if server.process and server.process.poll() is None:
            server.stop()
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
