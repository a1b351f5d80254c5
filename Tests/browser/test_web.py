#!/usr/bin/env python3
"""The web page in a real browser: headless Chromium from Debian, driven through its chromedriver by Selenium.

Usage: Tests/browser/test_web.py PATH/TO/hoard [--artefacts DIR] [--keep]

Serves a fresh data directory on a free loopback port and, on a tablet-sized window (820×1180, an iPad in
portrait), signs in with a token, uploads a sample pack through the page and watches the progress bar and the
report, uploads a refused archive and reads its problems, finds an asset by searching, opens its page, shares it
and opens the share link, opens a session's map preview, and checks that hostile pack, session, token and player
names render as text. Fails on any Content-Security-Policy violation or script error in the console.
Screenshots go to DIR (default artefacts/browser/, git-ignored); look at them.
Needs: scripts/setup.sh --browser (chromium, chromium-driver, selenium).
"""
import argparse
import io
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
import zipfile
import zlib
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Scripts"))
from sample_map import build_map  # noqa: E402

HOSTILE = '<img src=x onerror="window.pwned=1">'
TABLET = (820, 1180)


def png(width, height, rgba, padding=0):
    """A solid-colour PNG, optionally padded with a private chunk (so its size can be chosen)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + bytes(rgba) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + (chunk(b"hoRd", os.urandom(padding)) if padding else b"")
            + chunk(b"IEND", b""))


def hostile_pack(path):
    """A pack whose name and asset name are markup; it must show as text."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pack.json", json.dumps({"name": HOSTILE, "version": "1.0.0", "tilePixels": 64}))
        archive.writestr("tokens/<b>bold<b>.png", png(64, 64, (120, 40, 160, 255)))


class Check:
    def __init__(self):
        self.failures = []

    def that(self, condition, message):
        print(("ok    " if condition else "FAIL  ") + message, flush=True)
        if not condition:
            self.failures.append(message)

    def report(self, shots, what="browser"):
        """Says where the screenshots are and how the run went; the process's exit status."""
        print(f"\nscreenshots in {shots}")
        if self.failures:
            print(f"{len(self.failures)} {what} check(s) failed", file=sys.stderr)
            return 1
        print(f"all {what} checks passed")
        return 0


class Server:
    def __init__(self, hoard, work):
        self.hoard, self.data = hoard, str(work / "data")
        self.run("group", "create", "default")
        self.run("import", "--group", "default", str(ROOT / "Packs/scifi-outpost.zip"))
        self.token = self.run("token", "create", "--group", "default", "--name", "ana's tablet", "--admin").strip().splitlines()[-1]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(work / "server.log", "w")
        self.process = subprocess.Popen([hoard, "serve", "--data-dir", self.data, "--port", str(self.port), "--log-level", "warning"],
                                        stdout=self.log, stderr=self.log)
        for _ in range(100):
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("hoard serve did not answer /healthz")

    def run(self, *arguments):
        return subprocess.run([self.hoard, *arguments, "--data-dir", self.data], check=True, capture_output=True, text=True).stdout

    def call(self, method, path, body=None, token=True):
        request = urllib.request.Request(self.base + path, method=method, data=None if body is None else json.dumps(body).encode())
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read()
            return json.loads(text) if text else None

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.log.close()


def browser(width, height, logs=("browser",)):
    """Headless Chromium at width × height CSS pixels, keeping the log types named (`performance`: CDP events)."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}",
                     "--force-device-scale-factor=1", "--lang=en-GB"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {name: "ALL" for name in logs})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def start(description, prefix):
    """Reads the command line (hoard, --artefacts, --keep) and serves a fresh data directory: what every browser test
    begins with. Returns (arguments, screenshot folder, Check, work folder, Server)."""
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("hoard")
    parser.add_argument("--artefacts", default=str(ROOT / "artefacts/browser"))
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    arguments = parser.parse_args()
    shots = Path(arguments.artefacts)
    shots.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=prefix))
    return arguments, shots, Check(), work, Server(os.path.abspath(arguments.hoard), work)


def main():
    arguments, shots, check, work, server = start(__doc__, "hoard-browser-")
    driver = browser(*TABLET)
    # The page re-renders as data arrives: an element found a moment ago may be gone; look again.
    wait = WebDriverWait(driver, 20, ignored_exceptions=[StaleElementReferenceException])

    def shot(name):
        driver.save_screenshot(str(shots / f"{name}.png"))

    def visible(css):
        return wait.until(lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None))

    try:
        # 1. Sign in: the token goes into sessionStorage, never into the URL or a cookie.
        driver.get(server.base + "/")
        visible("#sign-in")
        visible("#token").send_keys("not-a-token")
        driver.find_element(By.CSS_SELECTOR, "#sign-in button").click()
        wait.until(lambda d: "not known" in d.find_element(By.CSS_SELECTOR, "#sign-in .error").text)
        shot("01-sign-in-refused")
        token_field = driver.find_element(By.ID, "token")
        token_field.clear()
        token_field.send_keys(server.token)
        driver.find_element(By.CSS_SELECTOR, "#sign-in button").click()
        visible("#grid .tile")
        check.that(server.token not in driver.current_url, "the token is not in the URL")
        check.that(driver.execute_script("return sessionStorage.getItem('hoard.token')") == server.token, "the token is kept in sessionStorage")
        check.that(driver.execute_script("return document.cookie") == "", "no cookie is set")
        shot("02-browse")

        # 2. Upload the sample pack through the page, throttled so the progress bar has time to move.
        driver.get(server.base + "/#/upload")
        visible("#upload-button")
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                               {"offline": False, "latency": 5, "downloadThroughput": -1, "uploadThroughput": 24 * 1024})
        driver.execute_script("""
            window.progressSeen = [];
            const bar = document.querySelector('.progress');
            new MutationObserver(() => window.progressSeen.push(Number(bar.getAttribute('aria-valuenow'))))
              .observe(bar, {attributes: true, attributeFilter: ['aria-valuenow']});""")
        driver.find_element(By.ID, "pack-file").send_keys(str(ROOT / "Packs/dungeon-basics.zip"))
        driver.find_element(By.ID, "upload-button").click()
        try:
            wait.until(lambda d: 15 <= int(d.find_element(By.CSS_SELECTOR, ".progress").get_attribute("aria-valuenow")) < 90)
            shot("03-upload-progress")
        except TimeoutException:
            check.that(False, "the progress bar showed a value between 15 % and 90 %")
        report = visible("#report")
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        seen = driver.execute_script("return window.progressSeen")
        check.that(len({v for v in seen if 0 < v < 100}) >= 2 and max(seen) == 100, f"the progress bar moved through {len(set(seen))} values to 100 %")
        check.that("Imported “dungeon-basics”" in report.text, "the import report names the imported pack")
        check.that("Assets" in report.text and "new" in report.text, "the report shows assets and stored bytes")
        driver.execute_script("arguments[0].scrollIntoView()", report)
        shot("04-upload-report")

        # A refused archive: its problems in plain words.
        bad = work / "not-an-archive.zip"
        bad.write_bytes(b"this is not a zip file at all")
        driver.get(server.base + "/#/upload")
        visible("#upload-button")
        driver.find_element(By.ID, "pack-file").send_keys(str(bad))
        driver.find_element(By.ID, "upload-button").click()
        refused = visible("#report.refused")
        check.that("nothing was stored" in refused.text and len(refused.find_elements(By.CSS_SELECTOR, ".problems li")) >= 1,
                   "a refused archive shows its problems, file by file")
        shot("05-upload-refused")

        # A hostile pack name, uploaded through the page: shown as text everywhere.
        hostile = work / "hostile.zip"
        hostile_pack(hostile)
        driver.get(server.base + "/#/upload")
        visible("#upload-button")
        driver.find_element(By.ID, "pack-file").send_keys(str(hostile))
        driver.find_element(By.ID, "upload-button").click()
        check.that(HOSTILE in visible("#report").text, "the upload report shows the hostile pack name as text")
        driver.get(server.base + "/#/")
        chip = wait.until(lambda d: next((c for c in d.find_elements(By.CSS_SELECTOR, ".chips.packs .chip") if HOSTILE in c.text), None))
        check.that(chip is not None, "the hostile pack name is a chip whose text is the markup itself")
        chip.click()
        visible("#grid .tile")
        check.that(driver.find_elements(By.CSS_SELECTOR, "img[src='x']") == [], "no <img src=x> was injected")
        check.that(driver.execute_script("return window.pwned") is None, "no injected handler ran")
        check.that(any("<b>bold<b>" in t.text for t in driver.find_elements(By.CSS_SELECTOR, ".tile .name")), "a hostile asset name shows as text")
        shot("06-hostile-names")

        # 3. Search by name, open the asset's page.
        driver.get(server.base + "/#/")
        search = visible("#search")
        search.send_keys("drag")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#grid .tile") and
                   all("drag" in t.text.lower() for t in d.find_elements(By.CSS_SELECTOR, "#grid .tile .name")))
        wait.until(lambda d: all(i.get_attribute("src") for i in d.find_elements(By.CSS_SELECTOR, "#grid .tile img")))
        check.that("asset" in driver.find_element(By.ID, "summary").text, "a search finds the dragon")
        shot("07-search")
        driver.find_element(By.CSS_SELECTOR, "#grid .tile").click()
        rows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.variants tbody tr"))
        check.that(len(rows) >= 2 and "×" in rows[0].text and "sha256:" in rows[0].text, "the asset page lists variants with pixel sizes and digests")
        check.that("dungeon-basics" in driver.find_element(By.CSS_SELECTOR, ".packs-list").text, "the asset page names the pack that holds it")
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "img.preview").get_attribute("src"))
        shot("08-asset")

        # Share it, and open the link as someone without a token.
        driver.find_element(By.ID, "share-asset").click()
        link = visible(".share-link").get_attribute("href")
        check.that("/s/" in link and "sha256" not in link, "the share link carries an id, not a digest")
        anonymous = browser(*TABLET)
        try:
            anonymous.get(link)
            picture = WebDriverWait(anonymous, 20).until(lambda d: d.find_element(By.ID, "shared-picture"))
            WebDriverWait(anonymous, 20).until(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", picture))
            check.that("dragon" in anonymous.find_element(By.CSS_SELECTOR, ".share-title").text, "the share page shows the picture and its name")
            anonymous.save_screenshot(str(shots / "09-share-page.png"))
            driver.find_element(By.ID, "revoke-share").click()
            wait.until(lambda d: "revoked" in d.find_element(By.CSS_SELECTOR, ".share-out").text)
            anonymous.get(link)
            WebDriverWait(anonymous, 20).until(lambda d: "does not work" in d.find_element(By.ID, "main").text)
            check.that(True, "a link revoked on the asset page says it does not work")
            anonymous.save_screenshot(str(shots / "10-share-revoked.png"))
        finally:
            anonymous.quit()

        # 4. A session with a map in the shape of Schemas/map.schema.json, and a hostile player name.
        listed = server.call("GET", "/v1/assets?pack=dungeon-basics&limit=1000")["assets"]
        listed += server.call("GET", "/v1/assets?pack=scifi-outpost&limit=1000")["assets"]
        game = build_map(listed, name="Crypt of the browser test", width=20, height=14)
        game["tokens"][-1]["hidden"] = True  # the host's page shows it, marked; players are never sent it
        game["fog"] = {"enabled": True, "revealed": [[0, 0, 10, 14]]}  # the host's preview darkens the east
        created = server.call("POST", "/v1/sessions", {"name": "Crypt <script>window.pwned=2</script>", "map": game})
        server.call("POST", "/v1/sessions/join", {"code": created["code"], "name": "<b>Eve</b>"}, token=False)
        driver.get(server.base + "/#/sessions")
        card = visible(".session")
        check.that("<script>" in card.text and "<b>Eve</b>" in card.text, "the lobby shows hostile session and player names as text")
        shot("11-lobby")
        card.click()
        wait.until(lambda d: "Drawn from" in d.find_element(By.ID, "map-status").text)
        painted = driver.execute_script("""
            const c = document.getElementById('map-canvas'); const g = c.getContext('2d');
            const d = g.getImageData(0, 0, c.width, c.height).data; const colours = new Set();
            for (let i = 0; i < d.length; i += 4 * 97) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
            return colours.size;""")
        check.that(painted > 20, f"the map preview is drawn ({painted} colours sampled)")
        west, east = driver.execute_script("""
            const c = document.getElementById('map-canvas'); const g = c.getContext('2d');
            const mean = (x0, x1) => { const d = g.getImageData(x0, 0, x1 - x0, c.height).data; let sum = 0;
              for (let i = 0; i < d.length; i += 4) sum += d[i] + d[i + 1] + d[i + 2]; return sum / (d.length / 4); };
            return [mean(0, c.width / 2), mean(c.width / 2, c.width)];""")
        check.that(east < 0.7 * west, f"fog darkens what the players do not see (brightness {east:.0f} east, {west:.0f} west)")
        check.that(len(driver.find_elements(By.CSS_SELECTOR, ".tokens li")) == len(game["tokens"]), "every numbered token is listed")
        check.that("hidden" in driver.find_elements(By.CSS_SELECTOR, ".tokens li")[-1].text, "the hidden token is marked hidden for the host")
        check.that(driver.execute_script("return window.pwned") is None, "no injected script ran")
        shot("12-session-preview")

        # Landscape tablet too.
        driver.set_window_size(TABLET[1], TABLET[0])
        time.sleep(0.5)
        driver.get(server.base + "/#/")
        visible("#grid .tile")
        wait.until(lambda d: all(i.get_attribute("src") for i in d.find_elements(By.CSS_SELECTOR, "#grid .tile img")[:8]))
        shot("13-browse-landscape")
        driver.get(server.base + f"/#/sessions/{created['id']}")
        wait.until(lambda d: "Drawn from" in d.find_element(By.ID, "map-status").text)
        shot("14-session-landscape")

        # Sign out forgets the token.
        driver.find_element(By.ID, "sign-out").click()
        visible("#sign-in")
        check.that(driver.execute_script("return sessionStorage.getItem('hoard.token')") is None, "signing out forgets the token")

        problems = [entry["message"] for entry in driver.get_log("browser")
                    if entry["level"] == "SEVERE" or "Content Security Policy" in entry["message"]]
        # Expected: the refused sign-in (401) and the refused archive (422) are logged as failed loads.
        problems = [p for p in problems if "Failed to load resource" not in p]
        check.that(not problems, "no CSP violation or script error in the console" + (f": {problems[:3]}" if problems else ""))
    except Exception as error:  # a step failed: keep what the screen showed
        shot("99-failure")
        traceback.print_exc()
        check.that(False, f"the run stopped: {type(error).__name__}: {error}")
    finally:
        driver.quit()
        server.stop()
        if not arguments.keep:
            subprocess.run(["rm", "-rf", str(work)])
    return check.report(shots)


if __name__ == "__main__":
    sys.exit(main())
