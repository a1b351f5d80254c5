#!/usr/bin/env python3
"""Invite links that work from a phone: headless Chromium reads the host's invite and decodes its QR code.

Usage: Tests/browser/test_invite.py PATH/TO/hoard [--artefacts DIR]      (as root: it makes a network namespace)

Runs itself again in a network namespace of its own (`unshare --net`) whose only network is a veth pair, one end with
10.37.1.1: the "LAN" the server offers, so nothing touches this machine's interfaces. `hoard serve --lan` serves there
(DNS-SD off: DBUS_SYSTEM_BUS_ADDRESS names no bus). The host opens the page on 127.0.0.1 and signs in; checked:
  - the table's invite (/table/{id}) and the session page (/#/sessions/{id}) show the join code and a link built from
    the server's LAN URL (http://10.37.1.1:PORT/join/CODE), never loopback;
  - the QR code drawn on the page (its canvas, read as a PNG) decodes, with zbarimg, to that very link;
  - the link, opened as a phone would (390×844), shows the join form with the code filled in;
  - a server without --lan offers no QR code and says the address works on this machine only;
  - no Content-Security-Policy violation or script error in the console;
  - the page's encoder (qr.js, run by Node) makes codes of versions 1 to 10 that zbarimg reads back exactly.
Screenshots go to DIR (default artefacts/browser/). Needs: scripts/setup.sh --browser (chromium, chromium-driver,
zbar-tools, selenium).
"""
import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAN = "10.37.1.1"


def run(*command):
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


class Served:
    """`hoard serve` on `port` over `data`, with --lan or not."""

    def __init__(self, hoard, data, port, lan, log):
        self.base = f"http://127.0.0.1:{port}"
        self.log = open(log, "w")
        environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/hoard-test-bus")
        self.process = subprocess.Popen([hoard, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning",
                                         *(["--lan"] if lan else [])], stdout=self.log, stderr=self.log, env=environment)
        for _ in range(300):
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=1)
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("hoard serve did not answer: " + Path(log).read_text()[-2000:])

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.log.close()


def call(base, method, path, token, body=None):
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def versions(check, work):
    """qr.js through Node: one text per version 1–10 (sizes at each version's upper end), each read back by zbarimg."""
    if not shutil.which("node"):
        check.that(False, "node is needed to run qr.js outside the browser (Debian's nodejs)")
        return
    lengths = [14, 26, 42, 62, 84, 106, 122, 152, 180, 213]
    texts = [(f"http://{LAN}:8080/join/" + "".join("ABCDEFGHJKLMNPQRSTUVWXYZ23456789-/."[(i * 7 + n) % 35] for i in range(n)))[:n]
             for n in lengths]
    script = """
import {qrMatrix} from '%s';
const texts = JSON.parse(process.argv[1]);
console.log(JSON.stringify(texts.map((text) => { const q = qrMatrix(text); return {version: q.version, modules: q.modules}; })));
""" % (ROOT / "Sources/HoardServer/Web/Page/qr.js").as_uri()
    made = json.loads(subprocess.run(["node", "--input-type=module", "-e", script, json.dumps(texts)], check=True,
                                     capture_output=True, text=True).stdout)
    for text, code in zip(texts, made):
        size, scale = len(code["modules"]), 4
        side = (size + 8) * scale
        rows = []
        for y in range(side):
            my = y // scale - 4
            rows.append(" ".join("1" if 0 <= my < size and 0 <= x // scale - 4 < size and code["modules"][my][x // scale - 4] else "0"
                                 for x in range(side)))
        path = work / f"v{code['version']}.pbm"
        path.write_text(f"P1\n{side} {side}\n" + "\n".join(rows) + "\n")
        read = subprocess.run(["zbarimg", "--raw", "-q", str(path)], capture_output=True, text=True).stdout.strip()
        check.that(read == text, f"qr.js version {code['version']} ({len(text)} bytes) reads back")
    check.that([code["version"] for code in made] == list(range(1, 11)), "the lengths chosen span versions 1 to 10")


def inside(hoard, shots):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_web import PHONE, Check, browser  # noqa: E402
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    sys.path.insert(0, str(ROOT / "tools"))
    from sample_map import build_map  # noqa: E402

    for command in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "lan0", "type", "veth", "peer", "name", "lan1"],
                    ["ip", "addr", "add", f"{LAN}/24", "dev", "lan0"], ["ip", "link", "set", "lan0", "up"], ["ip", "link", "set", "lan1", "up"]):
        run(*command)
    check = Check()
    work = Path(tempfile.mkdtemp(prefix="hoard-invite-"))
    data = str(work / "data")
    drivers = []
    servers = []
    try:
        versions(check, work)
        run(hoard, "group", "create", "default", "--data-dir", data)
        run(hoard, "import", "--group", "default", str(ROOT / "Packs/scifi-outpost.zip"), "--data-dir", data)
        token = run(hoard, "token", "create", "--group", "default", "--name", "host", "--data-dir", data).strip().splitlines()[-1]
        port = 8080
        lan = Served(hoard, data, port, True, work / "lan.log")
        servers.append(lan)
        assets = call(lan.base, "GET", "/v1/assets?pack=scifi-outpost&limit=1000", token)["assets"]
        created = call(lan.base, "POST", "/v1/sessions", token, {"name": "Game night", "map": build_map(assets, name="Night")})
        code = created["code"]
        expected = f"http://{LAN}:{port}/join/{code}"

        driver = browser(1280, 900)
        drivers.append(driver)
        wait = WebDriverWait(driver, 20, ignored_exceptions=[StaleElementReferenceException])

        def decoded(name):
            """The QR code on the page, as a PNG from its canvas, read by zbarimg."""
            png = driver.execute_script("return document.getElementById('invite-qr').toDataURL('image/png')")
            path = work / f"{name}.png"
            path.write_bytes(base64.b64decode(png.split(",", 1)[1]))
            shutil.copy(path, shots / f"invite-{name}-qr.png")
            result = subprocess.run(["zbarimg", "--raw", "-q", str(path)], capture_output=True, text=True)
            return result.stdout.strip()

        driver.get(lan.base + "/")
        driver.execute_script("sessionStorage.setItem('hoard.token', arguments[0])", token)
        for name, page in (("table", f"/table/{created['id']}"), ("session", f"/#/sessions/{created['id']}")):
            driver.get(lan.base + page)
            link = wait.until(lambda d: next((e for e in d.find_elements(By.ID, "join-link") if e.is_displayed()), None))
            href = link.get_attribute("href")
            check.that(href == expected, f"the {name} page's invite link is the LAN URL ({href})")
            shown = driver.find_element(By.ID, "invite-code").text
            check.that(shown == code, f"the {name} page shows the join code ({shown})")
            wait.until(lambda d: d.find_elements(By.ID, "invite-qr"))
            driver.save_screenshot(str(shots / f"invite-{name}.png"))
            text = decoded(name)
            check.that(text == expected, f"the {name} page's QR code decodes to that link ({text!r})")
        problems = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        check.that(not problems, f"no script error or CSP violation on the host's pages {problems[:3]}")

        phone = browser(*PHONE)
        drivers.append(phone)
        phone.get(expected)
        field = WebDriverWait(phone, 20).until(lambda d: next((e for e in d.find_elements(By.ID, "join-code") if e.is_displayed()), None))
        check.that(field.get_attribute("value").replace("-", "") == code.replace("-", ""), "the link opened on a phone fills in the code")
        phone.save_screenshot(str(shots / "invite-phone.png"))
        # The browsers go before the server stops (like the other browser tests): a server waits for connections that
        # have not sent a request yet, such as Chromium's preconnects, until the head timeout.
        for browser_ in (phone, driver):
            browser_.quit()
            drivers.remove(browser_)
        lan.stop()
        servers.remove(lan)

        # Without --lan: the link is this machine's own, said to be so, with no QR code.
        local = Served(hoard, data, port, False, work / "local.log")
        servers.append(local)
        driver = browser(1280, 900)
        drivers.append(driver)
        wait = WebDriverWait(driver, 20, ignored_exceptions=[StaleElementReferenceException])
        driver.get(local.base + "/")
        driver.execute_script("sessionStorage.setItem('hoard.token', arguments[0])", token)
        driver.get(local.base + f"/table/{created['id']}")
        notice = wait.until(lambda d: next((e for e in d.find_elements(By.ID, "invite-local") if e.is_displayed()), None))
        check.that("this machine only" in notice.text and not driver.find_elements(By.ID, "invite-qr"),
                   "without --lan the page offers no QR code and says the link works on this machine only")
        check.that(driver.find_element(By.ID, "join-link").get_attribute("href") == f"{local.base}/join/{code}",
                   "and the link is the page's own address")
        driver.save_screenshot(str(shots / "invite-loopback.png"))
    finally:
        for browser_ in drivers:
            browser_.quit()
        for server in servers:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return check.report(shots, "invite")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hoard")
    parser.add_argument("--artefacts", default=str(ROOT / "artefacts/browser"))
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    shots = Path(arguments.artefacts).resolve()
    shots.mkdir(parents=True, exist_ok=True)
    hoard = os.path.abspath(arguments.hoard)
    if arguments.inside:
        return inside(hoard, shots)
    if os.geteuid() != 0:
        print("Tests/browser/test_invite.py makes a network namespace: run it as root", file=sys.stderr)
        return 1
    return subprocess.run(["unshare", "--net", "--fork", "--kill-child", sys.executable, os.path.abspath(__file__), hoard,
                           "--artefacts", str(shots), "--inside"]).returncode


if __name__ == "__main__":
    sys.exit(main())
