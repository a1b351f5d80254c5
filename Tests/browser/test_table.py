#!/usr/bin/env python3
"""The live table in real browsers: the host and two players, each in a headless Chromium of their own.

Usage: Tests/browser/test_table.py PATH/TO/hoard [--artefacts DIR] [--keep]

A host opens a session's table with a member's token (/table/{id}); a player joins by the code's link
(/join/ABCD-EFGH) on a tablet-sized window (820×1180), another types the code at /join (landscape tablet). Checked:
the map is drawn from the manifest; the host gives a token to the first player, who drags it and the host sees it
move; dragging a token they do not own is refused and the refusal is shown; ping, drawing on their own layer and a
message to the host reach the host (and not the other player); zooming loads sharper variants; a hidden token never
reaches a player (neither in what the page fetched, per Chrome's network log, nor in its WebSocket frames, nor in
the page's state); a dropped connection shows that it is reconnecting and resumes with `since`, missing nothing and
sending its waiting message once. Fails on any Content-Security-Policy violation or script error in the console.
Screenshots go to DIR (default artefacts/browser/, git-ignored).
Needs: scripts/setup.sh --browser (chromium, chromium-driver, selenium).
"""
import base64
import json
import subprocess
import sys
import time
import traceback
from pathlib import Path

from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_web import ROOT, TABLET, browser, pack_zip, png, start  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
from sample_map import build_map  # noqa: E402


class Seat:
    """One browser at the table, with what it fetched and what came over its WebSockets."""

    def __init__(self, name, size, shots):
        self.name, self.shots = name, shots
        self.driver = browser(*size, logs=("browser", "performance"))
        self.wait = WebDriverWait(self.driver, 30, ignored_exceptions=[StaleElementReferenceException])
        self.requests, self.frames, self.sockets = [], [], []
        self.finished, self.bodies = [], []

    def shot(self, name):
        self.driver.save_screenshot(str(self.shots / f"table-{name}.png"))

    def js(self, script, *arguments):
        return self.driver.execute_script(script, *arguments)

    def visible(self, css):
        return self.wait.until(lambda d: next((e for e in d.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None))

    def until(self, condition, message):
        try:
            return self.wait.until(lambda d: condition())
        except TimeoutException:
            raise AssertionError(f"{self.name}: waited in vain for {message}") from None

    def drawn(self):
        """Waits until every picture the map names is drawn (its smallest variant at least)."""
        self.until(lambda: self.js("""const c = document.getElementById('table-canvas');
            return c && c.dataset.references !== undefined && c.dataset.drawn === c.dataset.references"""), "the map to be drawn")
        return int(self.js("return document.getElementById('table-canvas').dataset.references"))

    def host_table(self, server, session_id):
        """Signs in with the server's member token and opens session `session_id`'s table as its host; waits for the
        live channel."""
        self.driver.get(server.base + "/")
        self.js("sessionStorage.setItem('hoard.token', arguments[0])", server.token)
        self.driver.get(server.base + f"/table/{session_id}")
        self.until(lambda: self.js("return document.body.dataset.live") == "connected", "the host's channel")

    def token(self, token_id):
        return self.js("return (window.hoardTable?.tokens() ?? []).find((t) => t.id === arguments[0]) ?? null", token_id)

    def offset(self, x, y):
        """Selenium's offset from the canvas's centre to the centre of tile (x, y)."""
        return self.js("""const c = document.getElementById('table-canvas'); const b = c.getBoundingClientRect();
            const [px, py] = window.hoardTable.clientPoint(arguments[0], arguments[1]);
            return [Math.round(px - (b.left + b.width / 2)), Math.round(py - (b.top + b.height / 2))];""", x, y)

    def drag(self, start, end):
        canvas = self.driver.find_element(By.ID, "table-canvas")
        (sx, sy), (ex, ey) = self.offset(*start), self.offset(*end)
        ActionChains(self.driver).move_to_element_with_offset(canvas, sx, sy).click_and_hold() \
            .move_to_element_with_offset(canvas, (sx + ex) // 2, (sy + ey) // 2) \
            .move_to_element_with_offset(canvas, ex, ey).release().perform()

    def click_tile(self, x, y):
        canvas = self.driver.find_element(By.ID, "table-canvas")
        ActionChains(self.driver).move_to_element_with_offset(canvas, *self.offset(x, y)).click().perform()

    def traffic(self):
        """Reads Chrome's network log so far: request URLs and bodies, WebSocket URLs and received frames (and which
        answers finished loading, for `answers`)."""
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            params = message.get("params", {})
            if message["method"] == "Network.requestWillBeSent":
                self.requests.append(params["request"]["url"] + " " + params["request"].get("postData", ""))
            elif message["method"] == "Network.webSocketCreated":
                self.sockets.append(params["url"])
            elif message["method"] == "Network.webSocketFrameReceived":
                self.frames.append(params["response"]["payloadData"])
            elif message["method"] == "Network.loadingFinished":
                self.finished.append(params["requestId"])
        return self

    def answers(self):
        """Reads the HTTP answers' bodies that `traffic` saw finish (binary ones as Latin-1 text, so a blob batch's
        digest headers can be searched) into `bodies`."""
        for request_id in self.finished:
            try:
                body = self.driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": request_id})
            except Exception:  # noqa: BLE001 — a redirect, a preflight or an evicted body has none to read
                continue
            self.bodies.append(base64.b64decode(body["body"]).decode("latin-1") if body.get("base64Encoded") else body["body"])
        self.finished = []
        return self

    def problems(self):
        return [e["message"] for e in self.driver.get_log("browser")
                if (e["level"] == "SEVERE" or "Content Security Policy" in e["message"]) and "Failed to load resource" not in e["message"]]

    def quit(self):
        self.driver.quit()


def trial(arguments, shots, check, work, server, seats, what, steps):
    """Runs `steps()`, then checks every seat's console; a step that fails keeps what the screens showed. The browsers
    and the server stop whatever happened; gives the exit status."""
    try:
        steps()
        for seat in seats:
            problems = seat.problems()
            check.that(not problems, f"no CSP violation or script error in {seat.name}'s console" + (f": {problems[:3]}" if problems else ""))
    except Exception as error:  # a step failed: keep what the screens showed
        for seat in seats:
            seat.shot(f"{what}-99-failure-{seat.name}")
        traceback.print_exc()
        check.that(False, f"the run stopped: {type(error).__name__}: {error}")
    finally:
        for seat in seats:
            seat.quit()
        server.stop()
        if not arguments.keep:
            subprocess.run(["rm", "-rf", str(work)])
    return check.report(shots, what)


def main():
    # Who left is listed as away for 8 s (not a minute), so that the test sees them go.
    arguments, shots, check, work, server = start(__doc__, "hoard-table-", "--away-seconds", "8")
    seats = []
    try:
        # A session whose last token is hidden, its art used nowhere else on the map.
        listed = server.call("GET", "/v1/assets?pack=scifi-outpost&limit=1000")["assets"]
        game = build_map(listed, name="Outpost", width=16, height=12)
        tokens = game["tokens"]
        assert len(tokens) >= 3, "the sample pack has at least three tokens"
        mine, theirs, secret = tokens[0], tokens[1], tokens[-1]
        secret["hidden"] = True
        secret_asset = next(a for a in listed if a["digest"] == secret["asset"])
        secrets = {f"\"{secret['id']}\"", secret["asset"], *(v["digest"] for v in secret_asset["variants"])}
        if secret_asset.get("thumbnail"):
            secrets.add(secret_asset["thumbnail"] if isinstance(secret_asset["thumbnail"], str) else secret_asset["thumbnail"]["digest"])
        uses = [item for item in tokens + game["objects"] if item["asset"] == secret["asset"]]
        assert len(uses) == 1, "the hidden token's art is used by it alone"
        # A dice pack: one die, a red set, for Pia to roll with.
        pack_zip(work / "bones.zip", {"dice/ember.png": png(64, 64, (200, 30, 30, 255))}, {"name": "bones", "version": "1"})
        server.run("import", "--group", "default", str(work / "bones.zip"))
        created = server.call("POST", "/v1/sessions", {"name": "Outpost night", "map": game})
        code = created["code"]

        host = Seat("host", (1280, 860), shots)
        seats.append(host)
        host.host_table(server, created["id"])
        host.visible("#host-panel")
        host.drawn()
        check.that(host.token(secret["id"]) is not None, "the host's table holds the hidden token")
        check.that(host.visible("#join-link").get_attribute("href").endswith(f"/join/{code}"), "the host's page shows the link to share")
        # The host gives the name the players see them by (kept in this browser); the channel reconnects with it.
        host.visible("#host-name").send_keys("Greta")
        host.driver.find_element(By.ID, "host-name-set").click()
        host.until(lambda: host.js("return localStorage.getItem('hoard.hostName')") == "Greta", "the host's name kept")
        host.until(lambda: host.js("return window.hoardTable.live.connections") >= 2
                   and host.js("return document.body.dataset.live") == "connected", "the host's channel again")

        # 1. A player joins by the code's link, on a tablet.
        pia = Seat("pia", TABLET, shots)
        seats.append(pia)
        pia.driver.get(server.base + f"/join/{code}")
        check.that(pia.visible("#join-code").get_attribute("value").replace("-", "") == code.replace("-", ""), "the join link fills in the code")
        pia.visible("#join-name").send_keys("Pia")
        pia.driver.find_element(By.CSS_SELECTOR, "#join-form button").click()
        references = pia.drawn()
        check.that(references > 5, f"the player's map is drawn ({references} pictures)")
        pia.until(lambda: pia.js("return document.body.dataset.live") == "connected", "the player's channel")
        shown = pia.until(lambda: pia.js("return [...document.querySelectorAll('#presence li.online')].map((li) => li.textContent)"),
                          "who is at the table")
        check.that("Greta (host)" in shown, f"a player who just joined sees the host connected, by the host's name ({shown})")
        check.that(not any("(host)" in name and "Greta" not in name for name in
                           pia.js("return [...document.querySelectorAll('#presence li')].map((li) => li.textContent)")),
                   "the host is never shown by their token's label")
        seat = pia.js("return JSON.parse(sessionStorage.getItem('hoard.seat'))")
        check.that(seat and seat["token"].startswith("hoard_p_"), "the participant token is kept in sessionStorage")
        check.that(seat["token"] not in pia.driver.current_url and pia.js("return document.cookie") == "", "no token in the URL, no cookie")
        kept = pia.js("return Object.fromEntries(Object.entries(localStorage))")
        check.that(list(kept) == ["hoard.player"] and kept["hoard.player"].startswith("hoard_k_") and seat["token"] not in str(kept),
                   "localStorage keeps her player key (her dice record's), never her participant token")
        pia.shot("01-player-joined")

        # A second player types the code at /join (a landscape tablet).
        quinn = Seat("quinn", (TABLET[1], TABLET[0]), shots)
        seats.append(quinn)
        quinn.driver.get(server.base + "/join")
        quinn.visible("#join-code").send_keys(code.lower())
        quinn.visible("#join-name").send_keys("Quinn")
        quinn.driver.find_element(By.CSS_SELECTOR, "#join-form button").click()
        quinn.drawn()
        check.that("/join/" in quinn.driver.current_url, "after joining the address is the game's link")
        host.until(lambda: {"Pia", "Quinn"} <= set(host.js(
            "return [...document.querySelectorAll('#presence li.online')].map((li) => li.textContent)")), "both players present")
        check.that(True, "the host sees both players at the table")

        # The host gives Pia her token (select it on the canvas, pick her in the host panel).
        pia_id = seat["participantId"]
        host.click_tile(mine["x"], mine["y"])
        host.until(lambda: not host.driver.find_element(By.ID, "assign-token").get_property("disabled"), "a selected token")
        Select(host.driver.find_element(By.ID, "assign-token")).select_by_visible_text("Pia")
        pia.until(lambda: (pia.token(mine["id"]) or {}).get("owner") == pia_id, "her token to be hers")
        check.that(True, "the host assigns a token to a player through the host panel")

        # 3. She drags it; the host sees it move.
        target = (mine["x"], mine["y"] + 2)
        pia.drag((mine["x"], mine["y"]), target)
        host.until(lambda: [(host.token(mine["id"]) or {}).get(k) for k in ("x", "y")] == list(target), "the move on the host's table")
        check.that(True, "a player drags her token and the host sees it move")
        host.shot("02-host-sees-move")

        # A token she does not own does not move, and she is told.
        pia.drag((theirs["x"], theirs["y"]), (theirs["x"] + 1, theirs["y"] + 2))
        status = pia.until(lambda: pia.driver.find_element(By.ID, "table-status").text or None, "the refusal")
        # One refusal for "not yours", "hidden" and "absent" (DESIGN, "Game sessions"): nothing tells them apart.
        check.that("refused" in status and "UNKNOWN_ENTITY" in status, f"moving someone else's token is refused and shown ({status!r})")
        # Wherever the page is scrolled: here on a short screen, with the refusal at its bottom edge.
        size = pia.driver.get_window_size()
        pia.driver.set_window_size(size["width"], 560)
        covered = pia.js("""document.getElementById('table-status').scrollIntoView({block: 'end'});
            const s = document.getElementById('table-status').getBoundingClientRect();
            return [...document.querySelectorAll('.toast')].some((t) => { const r = t.getBoundingClientRect();
              return r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom; });""")
        pia.driver.set_window_size(size["width"], size["height"])
        check.that(not covered, "the message that pops up does not cover the refusal under the canvas")
        check.that([(pia.token(theirs["id"]) or {}).get(k) for k in ("x", "y")] == [theirs["x"], theirs["y"]]
                   and [(host.token(theirs["id"]) or {}).get(k) for k in ("x", "y")] == [theirs["x"], theirs["y"]],
                   "the refused token stays where it was")
        pia.shot("03-move-refused")

        # Ping, draw on her layer, and a message to the host only.
        pia.driver.find_element(By.CSS_SELECTOR, "[data-tool=ping]").click()
        pia.click_tile(5, 5)
        host.until(lambda: host.js("return document.getElementById('table-canvas').dataset.pings") == "1", "the ping")
        check.that(True, "a ping reaches the host")
        pia.driver.find_element(By.CSS_SELECTOR, "[data-tool=draw]").click()
        pia.drag((3, 8), (8, 9))
        host.until(lambda: any(s.get("layer") == f"p:{pia_id}" for s in host.js("return window.hoardTable.state.map.drawing.strokes")),
                   "her stroke on the host's table")
        check.that(not any(s.get("layer") == f"p:{pia_id}" for s in quinn.js("return window.hoardTable.state.map.drawing.strokes")),
                   "a player's drawing is on her layer: the host sees it, the other player does not")
        Select(pia.driver.find_element(By.ID, "message-to")).select_by_value("host")
        pia.driver.find_element(By.ID, "message-text").send_keys("a trap by the door?")
        pia.driver.find_element(By.CSS_SELECTOR, "#message-form button").click()
        host.until(lambda: "a trap by the door?" in host.driver.find_element(By.ID, "messages").text, "the message")
        check.that("a trap by the door?" not in quinn.driver.find_element(By.ID, "messages").text, "a message to the host reaches the host, not the other player")
        pia.driver.find_element(By.CSS_SELECTOR, "[data-tool=move]").click()
        pia.shot("04-player-drew")

        # Dice: Pia rolls from the box and a quick button; Quinn rolls blind (the host sees the total, Quinn only that
        # she rolled); once the host reveals the seed, each player's page recomputes every roll it saw from it.
        check.that(len(pia.visible("#dice-commitment").get_attribute("title")) == 64, "the page shows the dice commitment")
        # She chooses the group's red dice: her rolls are drawn with them on everyone's page, and her browser keeps them.
        pia.until(lambda: len(pia.driver.find_elements(By.CSS_SELECTOR, "#dice-choice option")) == 2, "the dice on offer")
        Select(pia.driver.find_element(By.ID, "dice-choice")).select_by_visible_text("ember · bones")
        host.until(lambda: pia_id in (host.js("return window.hoardTable.state.map.dice") or {}), "her choice on the host's table")
        pia.driver.find_element(By.ID, "dice-formula").send_keys("4d6kh3+2")
        pia.driver.find_element(By.CSS_SELECTOR, "#dice-form button").click()
        pia.driver.find_element(By.CSS_SELECTOR, "[data-die='d20']").click()
        host.until(lambda: "4d6kh3+2 = " in host.driver.find_element(By.ID, "messages").text
                   and "1d20 = " in host.driver.find_element(By.ID, "messages").text, "Pia's rolls on the host's table")
        drawn = host.until(lambda: host.js("""const dice = [...document.querySelectorAll('#messages canvas.die')];
            if (dice.length < 5 || !dice.every((d) => d.dataset.drawn)) return null;
            const c = dice[0].getContext('2d').getImageData(4, 4, 1, 1).data; return [dice.length, c[0], c[1], c[2]];"""), "her dice drawn")
        check.that(drawn[0] == 5 and drawn[1] > 150 and drawn[2] < 80, f"her five dice are drawn with her red die on the host's page ({drawn})")
        check.that(pia.js("return localStorage.getItem('hoard.dice')") == host.js("return window.hoardTable.state.map.dice")[pia_id],
                   "her browser keeps her choice for her next table")
        quinn.driver.find_element(By.ID, "dice-blind").click()
        quinn.driver.find_element(By.CSS_SELECTOR, "[data-die='d6']").click()
        quinn.until(lambda: "rolled blind" in quinn.driver.find_element(By.ID, "messages").text, "the blind roll's note")
        host.until(lambda: "1d6 = " in host.driver.find_element(By.ID, "messages").text, "the blind roll on the host's table")
        check.that("1d6 = " not in quinn.driver.find_element(By.ID, "messages").text, "a blind roll's result is not shown to its roller")
        server.call("POST", f"/v1/sessions/{created['id']}/dice/reveal")
        for player in (pia, quinn):
            player.until(lambda: player.driver.find_element(By.ID, "dice-verify").is_displayed(), "the verify button")
            player.driver.find_element(By.ID, "dice-verify").click()
            verdict = player.until(lambda: player.driver.find_element(By.ID, "dice-verdict").text or None, "the verdict")
            check.that(verdict.startswith("All 3 rolls match"), f"{player.name}'s page verifies every roll it saw ({verdict!r})")
        check.that("1d6 = " in quinn.driver.find_element(By.ID, "messages").text, "the blind roll is revealed to its roller")
        # The host (a member) reads the group's high scores: the revealed session's dice, per die and roller.
        host.driver.find_element(By.ID, "dice-high-scores").click()
        scores = host.until(lambda: host.driver.find_element(By.ID, "dice-scores").text or None, "the high scores")
        check.that("d20" in scores and "Pia" in scores and "Quinn" in scores, f"the host's page shows the high scores per die ({scores[:120]!r})")
        # So does a player's page (issue 41): the same list, each record saying what holds it (her player key's).
        pia.driver.find_element(By.ID, "dice-high-scores").click()
        listed = pia.until(lambda: pia.driver.find_element(By.ID, "dice-scores").text or None, "the player's high scores")
        check.that(listed == scores and "Pia (player)" in listed, f"a player's page shows the group's high scores ({listed[:120]!r})")
        quinn.shot("05-dice-verified")
        for player in (pia, quinn):
            player.js("window.scrollTo(0, 0)")

        # Drag on the floor pans; two fingers pinch the table larger (touch events, as a tablet sends them).
        x0 = pia.js("return window.hoardTable.view.x")
        pia.drag((0, 0), (2, 1))
        check.that(pia.js("return window.hoardTable.view.x") > x0 + 10, "dragging the floor pans the table")
        tile0 = pia.js("return window.hoardTable.view.tile")
        cx, cy = pia.js("const b = document.getElementById('table-canvas').getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]")
        pia.driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        touch = lambda kind, spread: pia.driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [] if kind == "touchEnd" else [
            {"x": cx - spread, "y": cy, "id": 1}, {"x": cx + spread, "y": cy, "id": 2}]})
        touch("touchStart", 30)
        for spread in (45, 60, 75, 90):
            touch("touchMove", spread)
        touch("touchEnd", 0)
        tile1 = pia.js("return window.hoardTable.view.tile")
        check.that(tile1 > tile0 * 2, f"a pinch zooms the table in (tile {tile0:.0f} → {tile1:.0f} px)")
        pia.driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": False})

        # Zoom in with the wheel: sharper variants than the smallest are fetched.
        before = pia.js("return window.hoardTable.loader.stats.batches + window.hoardTable.loader.stats.gets")
        pia.js("""const c = document.getElementById('table-canvas'); const b = c.getBoundingClientRect();
            for (let i = 0; i < 6; i++) c.dispatchEvent(new WheelEvent('wheel', {deltaY: -240, clientX: b.left + b.width / 2,
              clientY: b.top + b.height / 2, bubbles: true, cancelable: true}));""")
        pia.until(lambda: pia.js("return window.hoardTable.loader.stats.batches + window.hoardTable.loader.stats.gets") > before,
                  "sharper variants after zooming in")
        check.that(pia.js("return window.hoardTable.view.tile") > tile1, "the wheel zooms in, and sharper variants are fetched")
        pia.shot("05-zoomed")

        # 6. A hidden token never reaches a player: not in what the page fetched, its WebSocket, or its state.
        for player in (pia, quinn):
            player.traffic()
            state = player.js("return JSON.stringify([window.hoardTable.state.map, window.hoardTable.state.manifest])")
            leaks = [s for s in secrets if any(s in r for r in player.requests) or any(s in f for f in player.frames) or s in state]
            check.that(player.requests and player.frames and not leaks,
                       f"{player.name} never received the hidden token ({len(player.requests)} requests, {len(player.frames)} frames checked)")

        # A dropped connection (the page's socket closed, and kept closed while the table changes): the page says it is
        # reconnecting, then continues with `since`, losing nothing; the message typed meanwhile is sent once.
        quinn.traffic()
        quinn.js("""window.liveHistory = []; new MutationObserver(() => window.liveHistory.push(document.body.dataset.live))
            .observe(document.body, {attributes: true, attributeFilter: ['data-live']});""")
        seq_before = quinn.js("return window.hoardTable.live.lastSeq")
        quinn.js("window.hoardTable.live.drop()")
        quinn.until(lambda: "Reconnecting" in quinn.driver.find_element(By.ID, "live-status").text, "the reconnecting notice")
        quinn.shot("06-reconnecting")
        moved = (theirs["x"], theirs["y"] + 3)
        host.js("window.hoardTable.send({kind: 'move', token: arguments[0], x: arguments[1], y: arguments[2]})", theirs["id"], *moved)
        host.js("window.hoardTable.send({kind: 'message', text: 'while you were away'})")
        quinn.driver.find_element(By.ID, "message-text").send_keys("sent while offline")
        quinn.driver.find_element(By.CSS_SELECTOR, "#message-form button").click()
        host.until(lambda: host.token(theirs["id"])["x"] == moved[0], "the host's move")
        quinn.js("window.hoardTable.live.resume()")
        quinn.until(lambda: quinn.js("return document.body.dataset.live") == "connected", "the reconnection")
        quinn.until(lambda: (quinn.token(theirs["id"]) or {}).get("x") == moved[0], "the move made while away")
        quinn.until(lambda: "while you were away" in quinn.driver.find_element(By.ID, "messages").text, "the message sent while away")
        host.until(lambda: "sent while offline" in host.driver.find_element(By.ID, "messages").text, "the waiting message")
        quinn.traffic()
        resumed = [url for url in quinn.sockets if f"since={seq_before}" in url]
        check.that("reconnecting" in quinn.js("return window.liveHistory"), "the page showed that it was reconnecting")
        check.that(bool(resumed) and not any('"type":"snapshot"' in f for f in quinn.frames),
                   f"the page reconnected with since={seq_before} and got the events it missed, not a snapshot")
        check.that(host.driver.find_element(By.ID, "messages").text.count("sent while offline") == 1, "the message sent while offline arrived once")
        host_view = host.js("return window.hoardTable.state.map.tokens.filter((t) => !t.hidden).map((t) => [t.id, t.x, t.y])")
        quinn_view = quinn.js("return window.hoardTable.state.map.tokens.map((t) => [t.id, t.x, t.y])")
        check.that(sorted(host_view) == sorted(quinn_view) and quinn.js("return window.hoardTable.state.seq") == host.js("return window.hoardTable.state.seq"),
                   "after the drop the player's table equals the host's (less the hidden token), at the same sequence number")
        quinn.shot("07-resumed")

        # 4. The host hides a token in the browser: it leaves the players' tables; revealing brings it back.
        host.click_tile(*moved)
        host.until(lambda: not host.driver.find_element(By.ID, "hide-token").get_property("disabled"), "the selection")
        host.driver.find_element(By.ID, "hide-token").click()
        pia.until(lambda: pia.token(theirs["id"]) is None, "the hidden token to leave her table")
        host.driver.find_element(By.ID, "reveal-token").click()
        pia.until(lambda: pia.token(theirs["id"]) is not None, "the revealed token")
        check.that(True, "the host hides and reveals a token from the browser")
        host.driver.find_element(By.ID, "asset-search").send_keys("o")
        choice = host.visible("#asset-results .asset-choice")
        count = len(host.js("return window.hoardTable.tokens()"))
        choice.click()
        pia.until(lambda: len(pia.js("return window.hoardTable.tokens()")) >= count, "the added token")
        host.until(lambda: len(host.js("return window.hoardTable.tokens()")) == count + 1, "the added token on the host's table")
        pia.drawn()
        check.that(True, "the host adds a token from the group's packs; the players see it drawn")
        host.driver.find_element(By.ID, "save-name").send_keys("Outpost, mid-game")
        host.driver.find_element(By.ID, "save-map").click()
        host.until(lambda: "Saved" in host.driver.find_element(By.ID, "table-status").text, "the saved map")
        check.that(any(m["name"] == "Outpost, mid-game" for m in server.call("GET", "/v1/maps")["maps"]), "the host saves the table as a map")
        host.shot("08-host")
        # Replacing the map with the saved one: players get their view of it as a snapshot, at the host's sequence number.
        host.until(lambda: "Outpost, mid-game" in host.driver.find_element(By.ID, "saved-maps").text, "the saved map listed")
        Select(host.driver.find_element(By.ID, "saved-maps")).select_by_visible_text("Outpost, mid-game")
        host.driver.find_element(By.ID, "replace-map").click()
        host.until(lambda: "The map is now" in host.driver.find_element(By.ID, "table-status").text, "the replaced map")
        for player in (pia, quinn):
            player.until(lambda: player.js("return window.hoardTable.state.seq") == host.js("return window.hoardTable.state.seq"), "the new map")
            player.drawn()
        check.that(sorted(host.js("return window.hoardTable.state.map.tokens.filter((t) => !t.hidden).map((t) => t.id)"))
                   == sorted(quinn.js("return window.hoardTable.state.map.tokens.map((t) => t.id)")),
                   "the host replaces the map with a saved one; the players are sent their view of it")

        # The host removes Pia: her page stops reconnecting and says why.
        server.call("DELETE", f"/v1/sessions/{created['id']}/participants/{pia_id}")
        pia.until(lambda: "removed you" in pia.driver.find_element(By.ID, "live-status").text, "the page to say she was removed")
        time.sleep(1.5)
        check.that(pia.js("return document.body.dataset.live") == "ended", "a removed player's page says so and does not reconnect")
        pia.shot("10-player-removed")
        # The host sees her away, then no longer listed nor offered in "send to" once the grace period has passed.
        people = lambda: host.js("return [...document.querySelectorAll('#presence li')].map((li) => li.textContent)")  # noqa: E731
        host.until(lambda: any("Pia" in name and "away" in name for name in people()), "Pia shown away")
        check.that(any(o.text == "Pia only" for o in host.driver.find_elements(By.CSS_SELECTOR, "#message-to option")),
                   "someone who just left is still listed, away")
        time.sleep(9)
        check.that(not any("Pia" in name for name in people())
                   and not any("Pia" in o.text for o in host.driver.find_elements(By.CSS_SELECTOR, "#message-to option")),
                   f"after the grace period she leaves the list and the send-to menu ({people()})")

        for seat_ in seats:
            problems = seat_.problems()
            check.that(not problems, f"no CSP violation or script error in {seat_.name}'s console" + (f": {problems[:3]}" if problems else ""))
    except Exception as error:  # a step failed: keep what the screens showed
        for seat_ in seats:
            seat_.shot(f"99-failure-{seat_.name}")
        traceback.print_exc()
        check.that(False, f"the run stopped: {type(error).__name__}: {error}")
    finally:
        for seat_ in seats:
            seat_.quit()
        server.stop()
        if not arguments.keep:
            subprocess.run(["rm", "-rf", str(work)])
    return check.report(shots, "table")


if __name__ == "__main__":
    sys.exit(main())
