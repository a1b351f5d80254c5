#!/usr/bin/env python3
"""How long the browser's live table takes to draw a map of 1,000 assets, cold and warm, on loopback.

Usage: Benchmarks/table.py PATH/TO/hoard [--assets 1000] [--runs 3]

Makes a pack of N distinct token pictures (64 px), imports it, starts a session whose map places every one, joins it
and, in a fresh headless Chromium each run (an empty profile: a cold HTTP cache and Cache Storage), opens the table
with the seat already in sessionStorage. The figure is the page's own mark: from navigation start to every picture's
smallest variant fetched, verified, decoded and drawn (`data-first-draw-ms` on the canvas). A reload in the same
browser gives the warm figure (blobs from the Cache Storage). Also prints the size of the table page's scripts.
"""
import argparse
import gzip
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib
from urllib.parse import quote
from pathlib import Path

from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Benchmarks"))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "Tests/browser"))
from benchlib import call, free_port, wait_healthy  # noqa: E402
from sample_map import build_map  # noqa: E402
from test_web import browser  # noqa: E402

PAGE = os.environ.get("TABLE_PAGE", "/join")  # the seat is in sessionStorage: the page sits at once
TABLE_SCRIPTS = ["join.js", "table.js", "gestures.js", "live.js", "blobs.js", "tablestate.js", "host.js", "mapview.js", "api.js", "dom.js"]


def png(width, height, seed):
    """A small PNG (a checker of two colours of its own, about 1 kB), so every picture is a distinct blob."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    colour = bytes((seed % 251, (seed * 7) % 253, (seed * 13) % 241, 255))
    rim = bytes((seed * 3 % 256, 40, 40, 255))
    raw = b"".join(b"\x00" + b"".join(rim if (x // 8 + y // 8 + seed) % 3 == 0 else colour for x in range(width)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def script_sizes():
    web = ROOT / "Sources/HoardServer/Web/Page"
    raw = sum((web / name).stat().st_size for name in TABLE_SCRIPTS)
    zipped = sum(len(gzip.compress((web / name).read_bytes())) for name in TABLE_SCRIPTS)
    every = sum(p.stat().st_size for p in web.glob("*.js"))
    return raw, zipped, every


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hoard")
    parser.add_argument("--assets", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    hoard = os.path.abspath(arguments.hoard)
    work = Path(tempfile.mkdtemp(prefix="hoard-table-bench-"))
    data = str(work / "data")

    def run(*args):
        return subprocess.run([hoard, *args, "--data-dir", data], check=True, capture_output=True, text=True).stdout

    pack = work / "crowd.zip"
    with zipfile.ZipFile(pack, "w") as archive:
        archive.writestr("pack.json", json.dumps({"name": "crowd", "version": "1.0.0", "tilePixels": 64}))
        for i in range(arguments.assets):
            archive.writestr(f"tokens/creature-{i:04d}.png", png(64, 64, i + 1))
    run("group", "create", "default")
    run("import", "--group", "default", str(pack))
    token = run("token", "create", "--group", "default", "--name", "bench", "--admin").strip().splitlines()[-1]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(work / "server.log", "w")
    server = subprocess.Popen([hoard, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning"], stdout=log, stderr=log)
    try:
        wait_healthy(base)
        listed, cursor = [], None
        while True:
            page = call(base, "GET", "/v1/assets?pack=crowd&limit=1000" + (f"&cursor={quote(cursor)}" if cursor else ""), token=token)
            listed += page["assets"]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        game = build_map(listed, name="A crowd")
        created = call(base, "POST", "/v1/sessions", {"name": "Bench", "map": game}, token=token)
        joined = call(base, "POST", "/v1/sessions/join", {"code": created["code"], "name": "Bench player"})
        seat = {"code": created["code"].replace("-", ""), "sessionId": joined["sessionId"], "participantId": joined["participantId"],
                "token": joined["participantToken"], "name": "Bench player"}
        session = call(base, "GET", f"/v1/sessions/{joined['sessionId']}", token=joined["participantToken"])
        smallest = sum(min(a["variants"], key=lambda v: v["width"] * v["height"])["size"] for a in session["manifest"]["assets"])

        def draw(driver):
            driver.get(base + PAGE)
            return WebDriverWait(driver, 120).until(lambda d: d.execute_script("""
                const c = document.getElementById('table-canvas');
                return c && c.dataset.firstDrawMs && c.dataset.drawn === c.dataset.references
                  ? [Number(c.dataset.firstDrawMs), Number(c.dataset.references), JSON.stringify(window.hoardTable.loader.stats)] : null;"""))

        cold, warm = [], []
        for _ in range(arguments.runs):
            driver = browser(1280, 900)
            try:
                driver.get(base + "/web/icon.svg")
                driver.execute_script("sessionStorage.setItem('hoard.seat', arguments[0])", json.dumps(seat))
                ms, references, stats = draw(driver)
                cold.append(ms)
                # The page keeps what it verified in the Cache Storage once it is idle: the warm run waits for that.
                WebDriverWait(driver, 120).until(lambda d: d.execute_script(
                    "const s = window.hoardTable.loader.stats; return s.kept === s.verified"))
                ms_warm, _, stats_warm = draw(driver)
                warm.append(ms_warm)
            finally:
                driver.quit()
        raw, zipped, every = script_sizes()
        print(f"table of {references} pictures ({len(session['manifest']['assets'])} assets, smallest variants {smallest / 1e6:.2f} MB)")
        print(f"cold browser cache: median {statistics.median(cold):.0f} ms from navigation to everything drawn (runs: {', '.join(f'{m:.0f}' for m in cold)})")
        print(f"  fetches: {stats}")
        print(f"warm (Cache Storage): median {statistics.median(warm):.0f} ms (runs: {', '.join(f'{m:.0f}' for m in warm)}); fetches: {stats_warm}")
        print(f"the table page's scripts: {len(TABLE_SCRIPTS)} modules, {raw / 1000:.1f} kB ({zipped / 1000:.1f} kB gzipped); all of Web/*.js {every / 1000:.1f} kB")
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()
        subprocess.run(["rm", "-rf", str(work)])


if __name__ == "__main__":
    main()
