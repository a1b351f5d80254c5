#!/usr/bin/env python3
"""The web page in a real browser: headless Chromium from Debian, driven through its chromedriver by Selenium.

Usage: Tests/browser/test_web.py PATH/TO/hoard [--artefacts DIR] [--keep]

Serves a fresh data directory on a free loopback port and, on a tablet (820×1180 CSS pixels at 2× device pixels,
an iPad in portrait), signs in with a token, uploads a sample pack through the page and watches the progress bars
and the report (the form cleared after, a pack named from its file, replacing a pack confirmed first, repeated
warnings grouped, an upload cancelled), uploads a refused archive and reads its problems, filters by search, kind
and footprint together (all in the URL, with counts), scrolls a 260-asset pack to its end and comes back to the same
place from an asset, checks thumbnails are sharp for the screen, opens an asset, downloads a variant and drags a tile,
shares it and opens the share link, starts a session from a saved map and reads its join code, opens a session's
map preview, changes a pack's visibility and deletes it, sees the server go away and come back, and checks that
hostile pack, session, token and player names render as text. axe-core (from axe-selenium-python) checks every view
for critical and serious violations; each view has a heading and a title, focus moves to the heading, a skip link
leads past the header. The main views are then shown on a desktop (1440×900) and a phone (390×844, 3×).
Fails on any Content-Security-Policy violation or script error in the console.
Screenshots go to DIR (default artefacts/browser/, git-ignored); look at them.
Needs: scripts/setup.sh --browser (chromium, chromium-driver, selenium, axe-selenium-python).
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
import urllib.error
import urllib.request
import zipfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Harness"))
from harnesslib import Check  # noqa: E402

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from sample_map import build_map  # noqa: E402

HOSTILE = '<img src=x onerror="window.pwned=1">'
TABLET = (820, 1180, 2)
DESKTOP = (1440, 900, 1)
PHONE = (390, 844, 3)


def png(width, height, rgba, padding=0):
    """A solid-colour PNG, optionally padded with a private chunk (so its size can be chosen)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + bytes(rgba) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + (chunk(b"hoRd", os.urandom(padding)) if padding else b"")
            + chunk(b"IEND", b""))


def pack_zip(path, files, manifest=None):
    """A zip of `files` ({path: bytes}) with an optional pack.json."""
    with zipfile.ZipFile(path, "w") as archive:
        if manifest is not None:
            archive.writestr("pack.json", json.dumps(manifest))
        for name, data in files.items():
            archive.writestr(name, data)


def hostile_pack(path):
    """A pack whose name and asset name are markup; it must show as text."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("pack.json", json.dumps({"name": HOSTILE, "version": "1.0.0", "tilePixels": 64}))
        archive.writestr("tokens/<b>bold<b>.png", png(64, 64, (120, 40, 160, 255)))



class Server:
    def __init__(self, hoard, work, *serve):
        self.hoard, self.data = hoard, str(work / "data")
        self.run("group", "create", "default")
        self.run("import", "--group", "default", str(ROOT / "Packs/scifi-outpost.zip"))
        # A pack past one page of the grid (250), and two packs that both hold a "twin".
        many = work / "many.zip"
        pack_zip(many, {f"tokens/minion-{i:03d}.png": png(8, 8, (i % 250, 90, 160, 255)) for i in range(260)}, {"name": "many", "version": "1.0.0"})
        self.run("import", "--group", "default", str(many))
        for name, colour in (("twins-a", (200, 30, 30, 255)), ("twins-b", (30, 30, 200, 255))):
            twins = work / f"{name}.zip"
            pack_zip(twins, {"tokens/twin.png": png(64, 64, colour)}, {"name": name, "version": "1.0.0"})
            self.run("import", "--group", "default", str(twins))
        self.token = self.run("token", "create", "--group", "default", "--name", "ana's tablet", "--admin").strip().splitlines()[-1]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(work / "server.log", "w")
        self.process = subprocess.Popen([hoard, "serve", "--data-dir", self.data, "--port", str(self.port), "--log-level", "warning", *serve],
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


def browser(width, height, scale=1, logs=("browser",), extra=()):
    """Headless Chromium at width × height CSS pixels and `scale` device pixels a CSS pixel, keeping the log types
    named (`performance`: CDP events); `extra`: more command-line switches."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}",
                     f"--force-device-scale-factor={scale}", "--lang=en-GB", *extra):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {name: "ALL" for name in logs})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    if width < 500:  # narrower than Chromium's smallest window: a phone's screen, emulated
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": True})
    return driver


def start(description, prefix, *serve):
    """Reads the command line (hoard, --artefacts, --keep) and serves a fresh data directory (`serve`: more options of
    `hoard serve`): what every browser test begins with. Returns (arguments, screenshot folder, Check, work folder,
    Server)."""
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("hoard")
    parser.add_argument("--artefacts", default=str(ROOT / "artefacts/browser"))
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    arguments = parser.parse_args()
    shots = Path(arguments.artefacts)
    shots.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=prefix))
    return arguments, shots, Check(), work, Server(os.path.abspath(arguments.hoard), work, *serve)


def main():
    arguments, shots, check, work, server = start(__doc__, "hoard-browser-")
    driver = browser(*TABLET)
    # The page re-renders as data arrives: an element found a moment ago may be gone; look again.
    wait = WebDriverWait(driver, 20, ignored_exceptions=[StaleElementReferenceException])

    def shot(name):
        driver.save_screenshot(str(shots / f"{name}.png"))

    def visible(css, d=None):
        return WebDriverWait(d or driver, 20, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None))

    def accessible(name, d=None):
        """axe-core: no critical or serious violation; the view has a heading and a title of its own."""
        d = d or driver
        axe = Axe(d)
        axe.inject()
        bad = [v for v in axe.run()["violations"] if v["impact"] in ("critical", "serious")]
        check.that(not bad, f"axe-core finds no critical or serious violation on {name}"
                   + ("".join(f"\n      {v['id']} ({v['impact']}, {len(v['nodes'])}): {v['nodes'][0]['target']}" for v in bad)))
        heading = d.execute_script("const h = document.querySelector('main h1'); return h && h.textContent.trim()")
        check.that(bool(heading) and d.title.endswith("· Hoard") and heading.split()[0] in d.title,
                   f"{name} has a heading ({heading!r}) and a title of its own ({d.title!r})")

    def click(find):
        """Clicks what `find` finds, looking again when the page re-rendered it in between."""
        def attempt(d):
            try:
                element = find(d)
                if element is None:
                    return False
                element.click()
                return True
            except StaleElementReferenceException:
                return False
        wait.until(attempt)

    def focused():
        return driver.execute_script("const e = document.activeElement; return e && (e.id || e.tagName)")

    def sign_in(d):
        d.get(server.base + "/")
        visible("#token", d).send_keys(server.token)
        d.find_element(By.CSS_SELECTOR, "#sign-in button").click()
        visible("#grid .tile", d)

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
        accessible("the browse view")
        check.that(not driver.execute_script("return document.getElementById('main').hasAttribute('aria-live')"),
                   "the view itself is not a live region (only status messages are)")
        driver.refresh()
        visible("#grid .tile")
        ActionChains(driver).send_keys(Keys.TAB).perform()
        check.that(focused() == "skip", "the first Tab stop is the skip link")
        ActionChains(driver).send_keys(Keys.ENTER).perform()
        check.that(focused() == "summary", "the skip link leads past the header, the search and the filters to the assets")

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
              .observe(bar, {attributes: true, attributeFilter: ['aria-valuenow']});
            const followed = document.getElementById('import-progress');
            new MutationObserver(() => { if (!followed.hidden) window.importShown = true; })
              .observe(followed, {attributes: true, attributeFilter: ['hidden']});""")
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
        check.that(driver.execute_script("return window.importShown") is True, "the server's import is followed once the archive is sent")
        # The pack is usable at once; its thumbnails and previews are made in the background, and the report follows them.
        wait.until(lambda d: "made for" in d.find_element(By.CSS_SELECTOR, "#report .renditions").text)
        check.that("of 18 assets" in driver.find_element(By.CSS_SELECTOR, "#report .renditions").text,
                   "the report follows the pack's thumbnails, made in the background, until they are done")
        check.that(driver.find_element(By.ID, "pack-name").get_attribute("value") == ""
                   and "No file chosen" in driver.find_element(By.CSS_SELECTOR, ".chosen").text
                   and driver.find_element(By.ID, "pack-file").get_attribute("value") == "", "the form is cleared after the upload")
        driver.execute_script("arguments[0].scrollIntoView()", report)
        shot("04-upload-report")
        accessible("the upload view")

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
        try:
            wait.until(lambda d: HOSTILE in d.find_element(By.ID, "report").text)
            check.that(True, "the upload report shows the hostile pack name as text")
        except TimeoutException:
            check.that(False, "the upload report shows the hostile pack name as text")
        driver.get(server.base + "/#/")
        hostile_chip = lambda d: next((c for c in d.find_elements(By.CSS_SELECTOR, ".chips.packs .chip") if HOSTILE in c.text), None)
        check.that(wait.until(hostile_chip) is not None, "the hostile pack name is a chip whose text is the markup itself")
        click(hostile_chip)
        visible("#grid .tile")
        check.that(driver.find_elements(By.CSS_SELECTOR, "img[src='x']") == [], "no <img src=x> was injected")
        check.that(driver.execute_script("return window.pwned") is None, "no injected handler ran")
        check.that(any("<b>bold<b>" in t.text for t in driver.find_elements(By.CSS_SELECTOR, ".tile .name")), "a hostile asset name shows as text")
        shot("06-hostile-names")

        # A zip whose pack.json names nothing is named from its file; the same picture in a dozen unclaimed folders is one card.
        unnamed = work / "no-name-pack.zip"
        pack_zip(unnamed, {"tokens/hero.png": png(64, 64, (10, 200, 10, 255)),
                           **{f"misc{i}/extra.png": png(64, 64, (i * 10, 0, 0, 255)) for i in range(12)}}, {"version": "1.0.0"})
        driver.get(server.base + "/#/upload")
        visible("#upload-button")
        driver.find_element(By.ID, "pack-file").send_keys(str(unnamed))
        wait.until(lambda d: "“no-name-pack”" in d.find_element(By.ID, "filed-as").text)
        driver.find_element(By.ID, "upload-button").click()
        report = visible("#report.ok")
        check.that("Imported “no-name-pack”" in report.text, "a zip whose pack.json has no name is named from its file name")
        cards = report.find_elements(By.CSS_SELECTOR, ".problems li")
        check.that(0 < len(cards) < 12 and any("12 files" in c.text for c in cards), f"twelve identical warnings are one card ({len(cards)} cards)")
        shot("05b-upload-grouped-warnings")
        # The same archive again: the page asks before filing it under a pack that exists.
        driver.find_element(By.ID, "pack-file").send_keys(str(unnamed))
        wait.until(lambda d: "“no-name-pack”" in d.find_element(By.ID, "filed-as").text)
        driver.find_element(By.ID, "upload-button").click()
        check.that("already here" in visible("#replace-confirm").text, "uploading over an existing pack asks first")
        shot("05c-upload-confirm-replace")
        driver.find_element(By.ID, "replace-no").click()
        check.that(not driver.find_element(By.ID, "replace-confirm").is_displayed() and "Imported" in driver.find_element(By.ID, "report").text,
                   "saying no uploads nothing")
        driver.find_element(By.ID, "upload-button").click()
        visible("#replace-yes").click()
        wait.until(lambda d: "unchanged" in d.find_element(By.ID, "report").text)
        check.that(True, "saying yes uploads it (here: unchanged)")
        # A wrapper folder names the pack before the file name does: the page says the name the server files it under.
        wrapped = work / "mymonsters-v2.zip"
        pack_zip(wrapped, {"My Monsters/tokens/imp.png": png(72, 72, (200, 10, 10, 255)),
                           "My Monsters/tokens/orc.png": png(72, 72, (10, 10, 200, 255))})
        driver.find_element(By.ID, "pack-file").send_keys(str(wrapped))
        told = wait.until(lambda d: "“" in d.find_element(By.ID, "filed-as").text and d.find_element(By.ID, "filed-as").text)
        check.that("“My Monsters”" in told and "folder" in told, f"the page predicts the wrapper folder's name ({told!r})")
        driver.find_element(By.ID, "upload-button").click()
        # The last report stays until the page has asked the server about the name: wait for this upload's.
        told = wait.until(lambda d: next((r.text for r in d.find_elements(By.CSS_SELECTOR, "#report.ok") if "My Monsters" in r.text), None))
        check.that("Imported “My Monsters”" in told and "No warnings" in told,
                   f"it is filed under that name, and 72 px art without tilePixels imports without warnings ({told[:200]!r})")
        # A tar's listing is not read before upload; the server still refuses to add a version unasked, and the page asks.
        import tarfile
        tarred = work / "monsters-again.tar"
        with tarfile.open(tarred, "w") as archive, zipfile.ZipFile(wrapped) as source:
            for info in source.infolist():
                data = source.read(info)
                member = tarfile.TarInfo(info.filename)
                member.size = len(data)
                archive.addfile(member, io.BytesIO(data))
        driver.find_element(By.ID, "pack-file").send_keys(str(tarred))
        wait.until(lambda d: "unless" in d.find_element(By.ID, "filed-as").text)
        driver.find_element(By.ID, "upload-button").click()
        asked = visible("#replace-confirm").text
        check.that("already here" in asked and "My Monsters" in asked, f"replacing a pack the page could not foresee still asks first ({asked!r})")
        visible("#replace-yes").click()
        wait.until(lambda d: "unchanged" in d.find_element(By.ID, "report").text)
        check.that(True, "saying yes sends it again (here: unchanged)")
        # An upload cancelled while it is sent: nothing is stored.
        cancelled = work / "cancelled.zip"
        pack_zip(cancelled, {"tokens/big.png": png(64, 64, (1, 2, 3, 255), padding=600_000)}, {"name": "cancelled-pack", "version": "1.0.0"})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                               {"offline": False, "latency": 5, "downloadThroughput": -1, "uploadThroughput": 24 * 1024})
        driver.find_element(By.ID, "pack-file").send_keys(str(cancelled))
        driver.find_element(By.ID, "upload-button").click()
        wait.until(lambda d: int(d.find_element(By.CSS_SELECTOR, ".progress").get_attribute("aria-valuenow")) >= 3)
        driver.find_element(By.ID, "upload-cancel").click()
        wait.until(lambda d: "Cancelled" in d.find_element(By.ID, "progress-text").text)
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        check.that("cancelled-pack" not in [p["name"] for p in server.call("GET", "/v1/packs")["packs"]], "a cancelled upload stores nothing")
        shot("05d-upload-cancelled")

        # 3. Search by name, open the asset's page.
        driver.get(server.base + "/#/")
        visible("#search").send_keys("drag")

        def typed(d):
            """True once the box holds "drag": the browse view may be drawn again (its box replaced) while the first
            keys arrive, right after the page changed view; the test then types again, as a person would."""
            box = d.find_element(By.CSS_SELECTOR, "#search")
            if box.get_attribute("value") != "drag":
                box.clear()
                box.send_keys("drag")
                return False
            return True
        wait.until(lambda d: typed(d) and d.find_elements(By.CSS_SELECTOR, "#grid .tile") and
                   all("drag" in t.text.lower() for t in d.find_elements(By.CSS_SELECTOR, "#grid .tile .name")))
        wait.until(lambda d: all(i.get_attribute("src") for i in d.find_elements(By.CSS_SELECTOR, "#grid .tile img")))
        check.that("asset" in driver.find_element(By.ID, "summary").text, "a search finds the dragon")
        shot("07-search")
        # Filters work together and live in the URL: the search stays when a kind is picked; each choice shows its count.
        token_chip = lambda d: next((c for c in d.find_elements(By.CSS_SELECTOR, ".kinds .chip") if c.text.lower().startswith("token")), None)
        chip_text = wait.until(lambda d: getattr(token_chip(d), "text", None))
        check.that(any(ch.isdigit() for ch in chip_text), f"kind filters show counts ({chip_text!r})")
        click(token_chip)
        wait.until(lambda d: "kind=token" in d.current_url and "q=drag" in d.current_url)
        wait.until(lambda d: all("token" in t.text.lower() and "drag" in t.text.lower() for t in d.find_elements(By.CSS_SELECTOR, "#grid .tile")))
        check.that(driver.find_element(By.ID, "search").get_attribute("value") == "drag", "picking a kind keeps the search")
        driver.get(server.base + "/#/?pack=dungeon-basics")
        visible("#grid .tile")
        footprint_chip = lambda d: next((c for c in d.find_elements(By.CSS_SELECTOR, ".footprints .chip") if "Any" not in c.text), None)
        label = wait.until(lambda d: (lambda c: c and c.find_element(By.CSS_SELECTOR, ".chip-label").text)(footprint_chip(d)))
        click(footprint_chip)
        wait.until(lambda d: "footprint=" in d.current_url and "pack=dungeon-basics" in d.current_url)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#grid .tile") and all(
            label in t.find_element(By.CSS_SELECTOR, ".meta").text for t in d.find_elements(By.CSS_SELECTOR, "#grid .tile")))
        check.that(True, f"a footprint filter ({label}) shows only assets of that footprint, in the pack chosen")
        shot("07b-filters")
        # Thumbnails sized for the screen: the listing names each asset's generated thumbnail with its pixel size...
        wait.until(lambda d: all(a.get("thumbnail") for a in server.call("GET", "/v1/assets?pack=dungeon-basics&limit=1000")["assets"]))
        listed = server.call("GET", "/v1/assets?pack=dungeon-basics&limit=1000")["assets"]
        check.that(all(a.get("thumbnail") and max(a["thumbnail"]["width"], a["thumbnail"]["height"]) <= 256 and a["thumbnail"]["size"] > 0
                       for a in listed), "the listing names every asset's generated thumbnail with its pixel size")
        # ...and each picture the grid shows covers its tile in device pixels, or is the largest there is.
        driver.get(server.base + "/#/?pack=dungeon-basics")
        visible("#grid .tile")
        driver.execute_script("document.getElementById('grid').scrollIntoView()")
        on_screen = "[...document.querySelectorAll('#grid .tile img')].filter((i) => i.getBoundingClientRect().top < innerHeight)"
        wait.until(lambda d: d.execute_script(f"return {on_screen}.every((i) => i.src)"))
        blurry = driver.execute_script(f"""
            return {on_screen}.filter((img) => {{
              const need = img.getBoundingClientRect().width * devicePixelRatio;
              return Number(img.dataset.side) < Math.min(need, Number(img.dataset.largest)) - 1; }}).length""")
        check.that(blurry == 0 and driver.execute_script("return devicePixelRatio") == 2, f"every thumbnail is sharp on a 2× tablet ({blurry} blurry)")
        # Drag a tile out: its picture's URL (and the asset, for the map preview).
        dragged = driver.execute_script("""
            const data = new DataTransfer();
            document.querySelector('#grid .tile').dispatchEvent(new DragEvent('dragstart', {dataTransfer: data, bubbles: true}));
            return [data.getData('text/uri-list'), data.getData('application/x-hoard-asset')];""")
        check.that("/v1/blobs/sha256:" in dragged[0] and "digest" in dragged[1], "a tile dragged out carries its picture's URL and the asset")
        # Tile sizes, as Foundry's picker has them.
        Select(driver.find_element(By.ID, "tile-size")).select_by_value("list")
        check.that("size-list" in driver.find_element(By.ID, "grid").get_attribute("class"), "the grid can be a list")
        shot("07c-list")
        Select(driver.find_element(By.ID, "tile-size")).select_by_value("medium")
        # A pack label where names repeat.
        driver.get(server.base + "/#/?q=twin")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#grid .tile")) == 2)
        labels = sorted(e.text for e in driver.find_elements(By.CSS_SELECTOR, "#grid .tile .pack-label") if e.is_displayed())
        check.that(labels == ["twins-a", "twins-b"], f"two assets of one name show their packs ({labels})")
        # Infinite scrolling through 260 assets, and the same place on the way back from one.
        driver.get(server.base + "/#/?pack=many")
        visible("#grid .tile")
        count = lambda d: len(d.find_elements(By.CSS_SELECTOR, "#grid .tile"))
        wait.until(lambda d: count(d) >= 250)
        check.that(count(driver) == 250, f"the first page shows 250 tiles ({count(driver)})")
        wait.until(lambda d: d.execute_script("window.scrollTo(0, document.body.scrollHeight)") or count(d) == 260)
        check.that(True, "scrolling down loads the rest of the pack's 260 assets")
        target = driver.find_elements(By.CSS_SELECTOR, "#grid .tile")[200]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", target)
        before = driver.execute_script("return scrollY")
        name = target.find_element(By.CSS_SELECTOR, ".name").text
        target.click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.variants"))
        check.that(focused() == "H1" and name in driver.title, f"opening an asset focuses its heading and titles the tab ({driver.title!r})")
        driver.back()
        wait.until(lambda d: count(d) == 260 and abs(d.execute_script("return scrollY") - before) < 40)
        check.that(True, "coming back from an asset shows the same 260 tiles at the same place")
        shot("07d-scrolled-back")
        driver.get(server.base + "/#/?q=drag")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#grid .tile") and
                   all("drag" in t.text.lower() for t in d.find_elements(By.CSS_SELECTOR, "#grid .tile .name")))
        driver.find_element(By.CSS_SELECTOR, "#grid .tile").click()
        rows = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.variants tbody tr"))
        check.that(len(rows) >= 2 and "×" in rows[0].text and "sha256:" in rows[0].text, "the asset page lists variants with pixel sizes and digests")
        check.that("dungeon-basics" in driver.find_element(By.CSS_SELECTOR, ".packs-list").text, "the asset page names the pack that holds it")
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "img.preview").get_attribute("src"))
        check.that(len(driver.find_elements(By.CSS_SELECTOR, "table.variants button.download")) == len(rows), "each variant can be downloaded")
        shot("08-asset")
        accessible("the asset view")

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
        server.call("POST", "/v1/maps", {"name": "Crypt map", "map": game})
        driver.get(server.base + "/#/sessions")
        card = visible(".session")
        check.that("<script>" in card.text and "<b>Eve</b>" in card.text, "the lobby shows hostile session and player names as text")
        shot("11-lobby")
        accessible("the lobby")
        # Start a session from the saved map: its join code is shown.
        visible("#start-button").click()
        code = visible("#join-code").text
        check.that(len(code) == 9 and code[4] == "-", f"starting a session from a saved map shows its join code ({code})")
        check.that("/#/sessions/" in driver.find_element(By.ID, "session-link").get_attribute("href"), "and a link to it")
        try:
            wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#session-list .session")) == 2)
            check.that(True, "the lobby lists the session just started, without a reload")
        except TimeoutException:
            check.that(False, "the lobby lists the session just started, without a reload")
        shot("11b-session-started")
        driver.get(server.base + "/#/sessions")
        card = wait.until(lambda d: next((c for c in d.find_elements(By.CSS_SELECTOR, ".session") if "<script>" in c.text), None))
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
        accessible("the session view")
        # Drag a token from the tray onto the map preview: it lands there, numbered.
        before = len(driver.find_elements(By.CSS_SELECTOR, ".tokens li"))
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tray .tile"))
        driver.execute_script("""
            const data = new DataTransfer();
            document.querySelector('#tray .tile').dispatchEvent(new DragEvent('dragstart', {dataTransfer: data, bubbles: true}));
            const c = document.getElementById('map-canvas'); const r = c.getBoundingClientRect();
            c.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true, clientX: r.left + 5, clientY: r.top + 5}));""")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".tokens li")) == before + 1)
        check.that(True, "a token dragged onto the map preview is placed on the session's map")
        shot("12a-token-dropped")
        # Errors that say what to do: a session that is gone, a server that cannot be reached (and a retry).
        driver.get(server.base + "/#/sessions/not-a-session")
        check.that("This session has ended" in visible("#failure").text, "a missing session says it has ended")
        accessible("the failure view")
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        driver.execute_script("location.hash = '#/sessions'")
        check.that("cannot be reached" in visible("#failure").text, "with the server out of reach the page says so and offers to retry")
        shot("12b-offline")
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        driver.find_element(By.ID, "retry").click()
        visible(".session")
        check.that(True, "Try again shows the lobby once the server answers")
        # A pack made public, then deleted, from its card.
        driver.get(server.base + "/#/?pack=twins-b")
        # The card is drawn again as the pack's listing arrives: a click looks again for a button replaced under it.
        click(lambda d: visible("#pack-visibility", d))
        wait.until(lambda d: "public" in d.find_element(By.CSS_SELECTOR, ".pack-info .muted").text and "private" not in d.find_element(By.CSS_SELECTOR, ".pack-info .muted").text)
        check.that(next(p for p in server.call("GET", "/v1/packs")["packs"] if p["name"] == "twins-b")["isPublic"], "a pack can be made public from its card")
        click(lambda d: visible("#pack-delete", d))
        click(lambda d: visible("#pack-delete-confirm", d))
        wait.until(lambda d: "twins-b" not in [p["name"] for p in server.call("GET", "/v1/packs")["packs"]])
        wait.until(lambda d: not any("twins-b" in c.text for c in d.find_elements(By.CSS_SELECTOR, ".chips.packs .chip")))
        check.that(True, "a pack can be deleted from its card, after a confirmation")

        # Desktop and phone: the main views fit, with nothing cut or scrolled sideways.
        for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
            other = browser(*size)
            try:
                sign_in(other)
                fits = """return document.documentElement.scrollWidth <= innerWidth &&
                    [...document.querySelectorAll('#nav a, .bar button')].every((e) => e.scrollWidth <= e.clientWidth + 1) &&
                    document.getElementById('nav').scrollWidth <= document.getElementById('nav').clientWidth + 1"""
                check.that(other.execute_script(fits), f"{label}: the header and the browse view fit the width")
                if label == "phone":
                    check.that(not other.execute_script("return document.getElementById('filters').open"), "phone: the filters are folded away")
                    check.that(other.execute_script("return document.querySelector('#grid .tile').getBoundingClientRect().top < innerHeight * 0.7"),
                               "phone: assets show on the first screen")
                else:
                    whole, top = other.execute_script("""const tiles = [...document.querySelectorAll('#grid .tile')];
                        return [tiles.filter((t) => t.getBoundingClientRect().bottom <= innerHeight).length,
                                Math.round(document.getElementById('grid').getBoundingClientRect().top)]""")
                    check.that(whole >= 16, f"desktop: a screen shows at least 16 whole tiles ({whole}, the grid from {top} px)")
                other.save_screenshot(str(shots / f"20-{label}-browse.png"))
                accessible(f"the {label} browse view", other)
                for route, css, name in (("#/upload", "#upload-button", "upload"), ("#/sessions", "#start-form", "lobby"),
                                         (f"#/sessions/{created['id']}", "#map-status", "session")):
                    other.get(server.base + "/" + route)
                    visible(css, other)
                    check.that(other.execute_script("return document.documentElement.scrollWidth <= innerWidth && innerWidth <= arguments[0]",
                                                    size[0]), f"{label}: the {name} view fits the width")
                    other.save_screenshot(str(shots / f"21-{label}-{name}.png"))
                other.get(server.base + "/#/?pack=dungeon-basics")
                visible("#grid .tile", other)
                # Opened from far down the grid, the asset page starts at its title.
                other.execute_script("const tiles = document.querySelectorAll('#grid .tile'); tiles[tiles.length - 1].scrollIntoView();"
                                     "tiles[tiles.length - 1].click()")
                visible("table.variants", other)
                time.sleep(0.2)
                check.that(other.execute_script("return scrollY === 0 && document.querySelector('h1').getBoundingClientRect().top >= 0"),
                           f"{label}: the asset page opens at its title, not scrolled past it")
                check.that(other.execute_script("return document.documentElement.scrollWidth <= innerWidth"), f"{label}: the asset view fits the width")
                if label == "phone":
                    # A phone's viewport widens to what is too wide for it (so scrollWidth <= innerWidth held at 435 px).
                    wide = other.execute_script("const w = document.querySelector('.table-wrap');"
                                                "return [innerWidth, document.documentElement.scrollWidth, w.scrollWidth - w.clientWidth]")
                    check.that(wide[0] <= PHONE[0] and wide[1] <= PHONE[0] and wide[2] <= 1,
                               f"phone: the asset page does not scroll sideways, nor its variants ({wide})")
                other.save_screenshot(str(shots / f"22-{label}-asset.png"))
            finally:
                other.quit()

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

        # Members: an invitation link made on the page, redeemed signed out, then revoked by the owner.
        driver.get(server.base + "/#/members")
        visible(".member-list")
        accessible("the members view")
        Select(visible("#invite-role")).select_by_value("member")
        click(lambda d: d.find_element(By.CSS_SELECTOR, "form.invite button"))
        link = wait.until(lambda d: d.find_element(By.ID, "invite-link").get_attribute("value") or None)
        check.that("/#/invite/hoard_i_" in link, f"the owner gets an invitation link ({link[:40]}…)")
        shot("15-members")
        driver.find_element(By.ID, "sign-out").click()
        visible("#sign-in")
        driver.get(link)
        visible("#invite-name").send_keys("Cid's laptop")
        accessible("the invitation page")
        driver.find_element(By.CSS_SELECTOR, "#invite button").click()
        visible("#grid .tile")
        invited = driver.execute_script("return sessionStorage.getItem('hoard.token')")
        check.that(bool(invited) and invited != server.token, "redeeming the invitation signs the tab in with a token of its own")
        driver.get(link)
        visible("#invite-name").send_keys("Eve")
        driver.find_element(By.CSS_SELECTOR, "#invite button").click()
        wait.until(lambda d: "used or has expired" in d.find_element(By.CSS_SELECTOR, "#invite .error").text)
        check.that(True, "an invitation works once")
        driver.execute_script("sessionStorage.setItem('hoard.token', arguments[0])", server.token)
        driver.get(server.base + "/#/members")
        row = wait.until(lambda d: next((r for r in d.find_elements(By.CSS_SELECTOR, ".member-list li") if "Cid's laptop" in r.text), None))
        row.find_element(By.CSS_SELECTOR, "button").click()
        driver.switch_to.alert.accept()
        wait.until(lambda d: "Revoked" in d.find_element(By.CSS_SELECTOR, ".members [role=status]").text)
        refused = urllib.request.Request(server.base + "/v1/packs", headers={"Authorization": f"Bearer {invited}"})
        try:
            urllib.request.urlopen(refused, timeout=10)
            status = 200
        except urllib.error.HTTPError as error:
            status = error.code
        check.that(status == 401, f"a revoked token is refused at once ({status})")

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
