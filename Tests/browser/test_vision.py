#!/usr/bin/env python3
"""Line of sight at the table, in headless Chromium: what a player's page shows with vision on, and the host's.

Usage: Tests/browser/test_vision.py PATH/TO/hoard [--artefacts DIR] [--keep]

A generated pack (a pale floor, a blue hero, a magenta ogre) and a 12 × 8 map with vision on: two rooms split at x = 6
by a wall with a closed door at row 3, the hero (sight 20) in room A at (1, 3), the ogre in room B at (10, 3). The
host opens the table, a player joins by the code's link and the host gives her the hero through the host panel.
Checked on the player's page, from the canvas's pixels at tile centres and from what her browser received (Chrome's
network log: every request, every HTTP answer's body, every WebSocket frame): (a) the ogre is not drawn and nothing
she received names it, its token id, label or any of its art's digests; (b) room A is drawn lit, room B dark, and
every tile's shade (lit, dim, dark) is the one her view's seen and explored tiles give; (c) the host opens the door
with the Door tool: the ogre's art comes over her socket before the ogre, loads and is drawn, room B's tiles in line
with the door become lit; (d) she drags her hero out of the door's line: the ogre leaves her table, what she saw of
room B stays dim (explored), what she never saw stays dark, and so after her page reloads; (e) the host's "See the
table as" her shows the same shade on every tile and no ogre, "the host (everything)" shows the ogre; the host turns
vision off (her table all lit, the ogre drawn) and on again (her shades as before). axe-core finds no critical or
serious violation on her page with vision on. Fails on any Content-Security-Policy violation or script error in the
console. Screenshots in DIR.
Needs: scripts/setup.sh --browser (chromium, chromium-driver, selenium, axe-selenium-python).
"""
import json
import sys
import time
from pathlib import Path

from axe_selenium_python import Axe
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_hex import near, solid_png  # noqa: E402
from test_table import Seat, trial  # noqa: E402
from test_web import TABLET, pack_zip, start  # noqa: E402

WIDTH, HEIGHT, DOOR_ROW = 12, 8, 3
FLOOR = (214, 204, 150)
HERO, OGRE = (40, 90, 220), (220, 40, 200)
NIGHT = (8, 9, 14)  # mapview.js's unexplored fill; explored but unseen is 55 % of it over the floor
DIM = tuple(round(0.45 * f + 0.55 * n) for f, n in zip(FLOOR, NIGHT))
OGRE_ID, OGRE_LABEL = "brute-7", "Grishnak"


def game_map(art):
    """Two rooms split at x = 6 by a wall with a closed door between rows 3 and 4 of the line; vision on."""
    return {
        "schema": "hoard.map/v2", "name": "Two rooms",
        "grid": {"width": WIDTH, "height": HEIGHT, "tilePixels": 64},
        "background": {"texture": art["flagstone"]},
        "vision": {"enabled": True},
        "drawing": {"walls": [
            {"id": "north", "from": [6, 0], "to": [6, DOOR_ROW]},
            {"id": "door", "from": [6, DOOR_ROW], "to": [6, DOOR_ROW + 1], "door": True, "open": False},
            {"id": "south", "from": [6, DOOR_ROW + 1], "to": [6, HEIGHT]},
        ], "strokes": []},
        "objects": [],
        "tokens": [
            {"id": "hero", "asset": art["hero"], "x": 1, "y": DOOR_ROW, "number": 1, "label": "Hero", "sight": {"range": 20}},
            {"id": OGRE_ID, "asset": art["ogre"], "x": 10, "y": DOOR_ROW, "number": 2, "label": OGRE_LABEL},
        ],
    }


def digests_in(value):
    """Every `sha256:` string inside a JSON value."""
    if isinstance(value, str):
        return {value} if value.startswith("sha256:") else set()
    if isinstance(value, dict):
        return set().union(*map(digests_in, value.values()), set())
    if isinstance(value, list):
        return set().union(*map(digests_in, value), set())
    return set()


def shades(seat, tiles):
    """The colour at each tile's centre on `seat`'s canvas (device pixels, read from the canvas itself)."""
    return seat.js("""const c = document.getElementById('table-canvas'); const b = c.getBoundingClientRect();
        const context = c.getContext('2d'); const ratio = window.hoardTable.view.ratio;
        return arguments[0].map(([x, y]) => { const [px, py] = window.hoardTable.clientPoint(x, y);
          const d = context.getImageData(Math.floor((px - b.left) * ratio), Math.floor((py - b.top) * ratio), 1, 1).data;
          return [d[0], d[1], d[2], d[3]]; });""", [list(tile) for tile in tiles])


def shade(colour):
    """lit, dim or dark for a floor tile's colour (opaque: a canvas not yet painted is none of them); else the colour
    itself (something the page should not draw)."""
    for name, wanted, slack in (("lit", FLOOR, 40), ("dim", DIM, 30), ("dark", NIGHT, 8)):
        if colour[3] == 255 and all(abs(a - b) <= slack for a, b in zip(colour, wanted)):
            return name
    return tuple(colour)


def tiles_of(rects):
    return {(x + i, y + j) for x, y, w, h in rects for j in range(h) for i in range(w)}


def expected_shades(seat, participant):
    """Each tile's shade as her view's state says: seen lit, explored dim, else dark (all lit with vision off)."""
    vision = seat.js("return window.hoardTable.state.map.vision ?? null") or {}
    if vision.get("enabled") is not True:
        return {(x, y): "lit" for x in range(WIDTH) for y in range(HEIGHT)}
    seen = tiles_of((vision.get("seen") or {}).get(participant, []))
    explored = tiles_of((vision.get("explored") or {}).get(participant, []))
    return {(x, y): "lit" if (x, y) in seen else "dim" if (x, y) in explored else "dark" for x in range(WIDTH) for y in range(HEIGHT)}


def floor_tiles(seat):
    """Every tile without a token on it (a token's picture covers the floor)."""
    held = {(t["x"], t["y"]) for t in seat.js("return window.hoardTable.tokens()")}
    held |= {(1, DOOR_ROW), (1, 0), (10, DOOR_ROW)}
    return [(x, y) for y in range(HEIGHT) for x in range(WIDTH) if (x, y) not in held]


def drawn_shades(seat, tiles):
    return dict(zip(tiles, (shade(c) for c in shades(seat, tiles))))


def main():
    arguments, shots, check, work, server = start(__doc__, "hoard-vision-")
    seats = []

    def steps():
        begun = time.monotonic()
        pack = work / "vision-trial.zip"
        pack_zip(pack, {"textures/flagstone.png": solid_png(64, FLOOR), "tokens/hero.png": solid_png(64, HERO),
                        "tokens/ogre.png": solid_png(64, OGRE)}, {"name": "vision-trial", "version": "1.0.0", "tilePixels": 64})
        server.run("import", "--group", "default", str(pack))
        listed = server.call("GET", "/v1/assets?pack=vision-trial&limit=10")["assets"]
        art = {asset["name"]: asset["digest"] for asset in listed}
        created = server.call("POST", "/v1/sessions", {"name": "Two rooms", "map": game_map(art)})
        hosted = server.call("GET", f"/v1/sessions/{created['id']}")
        ogre_entry = next(a for a in hosted["manifest"]["assets"] if a["digest"] == art["ogre"])
        secrets = {f'"{OGRE_ID}"', OGRE_LABEL, *digests_in(ogre_entry), *digests_in(next(a for a in listed if a["digest"] == art["ogre"]))}
        check.that(len(secrets) >= 4, f"the ogre's token, label and art digests are known to look for ({len(secrets)})")

        host = Seat("host", (1280, 900), shots)
        seats.append(host)
        host.host_table(server, created["id"])
        host.visible("#host-panel")
        host.drawn()

        pia = Seat("pia", TABLET, shots)
        seats.append(pia)
        pia.driver.execute_cdp_cmd("Network.enable", {})
        pia.driver.get(server.base + f"/join/{created['code']}")
        pia.visible("#join-name").send_keys("Pia")
        pia.driver.find_element(By.CSS_SELECTOR, "#join-form button").click()
        pia.drawn()
        pia.until(lambda: pia.js("return document.body.dataset.live") == "connected", "the player's channel")
        pia_id = pia.js("return JSON.parse(sessionStorage.getItem('hoard.seat')).participantId")
        tiles = [(x, y) for y in range(HEIGHT) for x in range(WIDTH)]
        before = drawn_shades(pia, tiles)
        check.that(set(before.values()) == {"dark"}, f"before she has a token with sight, her whole map is dark ({set(before.values())})")

        # The host gives her the hero through the host panel.
        host.until(lambda: "Pia" in host.js("return [...document.querySelectorAll('#presence li.online')].map((li) => li.textContent)"),
                   "Pia at the table")
        host.click_tile(1, DOOR_ROW)
        host.until(lambda: not host.driver.find_element(By.ID, "assign-token").get_property("disabled"), "a selected token")
        Select(host.driver.find_element(By.ID, "assign-token")).select_by_visible_text("Pia")
        pia.until(lambda: (pia.token("hero") or {}).get("owner") == pia_id, "her hero to be hers")
        pia.drawn()

        # (b) Room A lit, room B dark, every tile as her view says.
        def agree(seat, what):
            """Waits until every floor tile of `seat`'s canvas has the shade Pia's view gives it; returns the shades."""
            last = {}

            def same():
                want = expected_shades(pia, pia_id)
                floor = floor_tiles(seat)
                last.update(drawn=drawn_shades(seat, floor), want={t: want[t] for t in floor})
                return last["drawn"] == last["want"]
            try:
                seat.until(same, what)
            except AssertionError:
                wrong = {t: (last["drawn"][t], last["want"][t]) for t in last["drawn"] if last["drawn"][t] != last["want"][t]}
                check.that(False, f"{seat.name}: {what}: tiles drawn (and wanted) {dict(list(wrong.items())[:8])}")
            return last.get("drawn", {})

        shown = agree(pia, "her canvas to shade each tile as her view's seen and explored tiles say")
        room_a = {t: s for t, s in shown.items() if t[0] < 6}
        room_b = {t: s for t, s in shown.items() if t[0] >= 6}
        check.that(set(room_a.values()) == {"lit"} and set(room_b.values()) == {"dark"},
                   f"(b) her hero lights room A, room B behind the closed door stays dark ({set(room_a.values())}, {set(room_b.values())})")
        ogre_pixel = shades(pia, [(10, DOOR_ROW)])[0]
        check.that(shade(ogre_pixel) == "dark" and pia.token(OGRE_ID) is None,
                   f"(a) the ogre is not drawn on her table ({ogre_pixel}) nor in its state")
        pia.shot("vision-01-player-door-closed")

        # (a) Nothing she received names the ogre.
        pia.traffic().answers()
        texts = pia.requests + pia.frames + pia.bodies
        leaks = sorted({secret for secret in secrets if any(secret in text for text in texts)})
        check.that(pia.frames and pia.bodies and not leaks,
                   f"(a) no request, answer or frame she received names the ogre or its art ({len(pia.requests)} requests, "
                   f"{len(pia.bodies)} answers, {len(pia.frames)} frames; found {leaks})")

        # axe-core on her page with vision on.
        axe = Axe(pia.driver)
        axe.inject()
        bad = [v for v in axe.run()["violations"] if v["impact"] in ("critical", "serious")]
        check.that(not bad, "axe-core finds no critical or serious violation on her page with vision on"
                   + "".join(f"\n      {v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}" for v in bad))
        pia.js("window.scrollTo(0, 0)")  # axe-core scrolls to what it checks

        # (e) The host sees the table as she does; then as the host.
        def host_as(name):
            # The list follows who is at the table (editor.js looks every 2 s).
            host.until(lambda: name in host.js("return [...document.querySelectorAll('#view-as option')].map((o) => o.text)"),
                       f"{name} offered in \"See the table as\"")
            Select(host.driver.find_element(By.ID, "view-as")).select_by_visible_text(name)

        def host_sees_as_pia(when):
            host_as("Pia")
            agree(host, f"(e) {when}: the host's \"See the table as\" Pia shades each tile as her view says")
            mine, hers = drawn_shades(host, floor_tiles(pia)), drawn_shades(pia, floor_tiles(pia))
            check.that(mine == hers, f"(e) {when}: seen as Pia, the host's table is lit, dim and dark where hers is")
            hers, mine = shade(shades(pia, [(10, DOOR_ROW)])[0]), shade(shades(host, [(10, DOOR_ROW)])[0])
            check.that(mine == hers and mine in ("dark", "dim"), f"(e) {when}: and shows no ogre, its tile {mine} as on hers ({hers})")
            host_as("the host (everything)")
            host.until(lambda: near(shades(host, [(10, DOOR_ROW)])[0], OGRE), "the ogre on the host's own view")
            check.that(True, f"(e) {when}: \"the host (everything)\" shows the ogre")

        host_sees_as_pia("door closed")

        # (c) The host opens the door with the Door tool: the ogre comes into her view, art and all.
        host.driver.find_element(By.CSS_SELECTOR, "[data-tool=door]").click()
        host.click_tile(5.5, DOOR_ROW)  # the door's middle: (6, 3.5)
        host.until(lambda: (next((w for w in host.js("return window.hoardTable.state.map.drawing.walls")
                                  if w["id"] == "door"), {})).get("open") is True, "the door open on the host's table")
        host.driver.find_element(By.CSS_SELECTOR, "[data-tool=move]").click()
        pia.until(lambda: pia.token(OGRE_ID) is not None, "the ogre on her table")
        pia.drawn()
        pia.until(lambda: near(shades(pia, [(10, DOOR_ROW)])[0], OGRE), "the ogre drawn on her canvas")
        check.that(True, "(c) the door opens: the ogre's art loads and it is drawn on her canvas")
        seen_frames = len(pia.frames)
        pia.traffic()
        opened = [json.loads(frame) for frame in pia.frames[seen_frames:]]
        art_at = next((i for i, e in enumerate(opened) if e.get("type") == "assets" and art["ogre"] in json.dumps(e)), None)
        ogre_at = next((i for i, e in enumerate(opened) if e.get("type") == "op" and OGRE_ID in json.dumps(e)), None)
        check.that(art_at is not None and ogre_at is not None and art_at < ogre_at,
                   f"(c) her socket brought the ogre's art (frame {art_at}) before the ogre (frame {ogre_at})")
        shown = agree(pia, "her canvas to shade each tile as her view says, the door open")
        in_line = [(7, DOOR_ROW), (9, DOOR_ROW), (11, DOOR_ROW)]
        check.that(all(shown.get(t) == "lit" for t in in_line),
                   f"(c) room B's tiles in line with the door are lit ({[shown.get(t) for t in in_line]})")
        pia.shot("vision-02-player-door-open")

        # (d) She drags her hero out of the door's line: the ogre leaves, what she saw stays dim.
        pia.drag((1, DOOR_ROW), (1, 0))
        pia.until(lambda: [(pia.token("hero") or {}).get(k) for k in ("x", "y")] == [1, 0], "her hero's move")
        pia.until(lambda: pia.token(OGRE_ID) is None, "the ogre to leave her table")
        shown = agree(pia, "her canvas to shade each tile as her view says, her hero moved")
        ogre_pixel = shades(pia, [(10, DOOR_ROW)])[0]
        check.that(shade(ogre_pixel) == "dim", f"(d) the ogre is no longer drawn; its tile stays dim, explored ({ogre_pixel})")
        stepped = [(8, DOOR_ROW), (9, DOOR_ROW), (11, DOOR_ROW)]  # out of the line from (1, 0) through the doorway
        check.that(all(shown.get(t) == "dim" for t in stepped),
                   f"(d) room B's tiles she saw stay dim, not dark ({[shown.get(t) for t in stepped]})")
        check.that(shown.get((9, 7)) == "dark", f"(d) a tile of room B she never saw stays dark ({shown.get((9, 7))})")
        pia.shot("vision-03-player-stepped-back")
        # Her tablet reloads the page: the table as the server gives it now draws the same shades.
        pia.driver.refresh()
        pia.drawn()
        pia.until(lambda: pia.js("return document.body.dataset.live") == "connected", "her channel again")
        again = agree(pia, "her canvas, reloaded, to shade each tile as her view says")
        check.that(again == shown and pia.token(OGRE_ID) is None,
                   "(d) reloaded, her page draws the same lit, dim and dark tiles, and no ogre")

        host_sees_as_pia("hero stepped back")

        # The host turns vision off (the Build panel's box): her table is all lit and the ogre shows; on again, her view
        # is as it was, what she explored kept.
        host.driver.find_element(By.ID, "vision-enabled").click()
        pia.until(lambda: pia.token(OGRE_ID) is not None, "the ogre with vision off")
        pia.until(lambda: near(shades(pia, [(10, DOOR_ROW)])[0], OGRE), "the ogre drawn with vision off")
        lit = agree(pia, "her canvas with vision off")
        check.that(set(lit.values()) == {"lit"} and near(shades(pia, [(10, DOOR_ROW)])[0], OGRE),
                   f"vision off: her whole table is lit and the ogre drawn ({set(lit.values())})")
        host.driver.find_element(By.ID, "vision-enabled").click()
        pia.until(lambda: pia.token(OGRE_ID) is None, "the ogre to leave with vision on again")
        back = agree(pia, "her canvas with vision on again")
        check.that(back == shown, "vision on again: her table is lit, dim and dark as before it was turned off")
        host_as("Pia")
        host.shot("vision-04-host-as-pia")
        host_as("the host (everything)")
        print(f"the vision trial took {time.monotonic() - begun:.1f} s after the server started")

    return trial(arguments, shots, check, work, server, seats, "vision", steps)


if __name__ == "__main__":
    sys.exit(main())
