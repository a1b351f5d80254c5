#!/usr/bin/env python3
"""A game made by clicks only, in headless Chromium: the referee's map editor and a player who joins it.

Usage: Tests/browser/test_editor.py PATH/TO/hoard [--artefacts DIR] [--keep]

The host opens the lobby and makes a new 20 × 15 map ("New map"); on its table, with the Build tools only: two rooms
painted with rectangles of two textures and the rest filled with a third; the rooms walled, with a door between them;
four tokens and two objects placed from the packs; fog turned on with the first room revealed; the table saved, the
saved map duplicated, renamed and deleted in the lobby, and a session started from it. A player joins by the link: judged from the data their page holds and
every WebSocket frame it received, they see only the first room (its tokens, not the second room's, nor its floor's
texture). The host opens the door and reveals the second room: the player's page has its token within 200 ms of the
reveal being sent. The host's "see the table as" Pia holds the tokens her page holds; a layer only the host sees
takes a token from her and a glimpse shows it to her until it ends. An undo of a paint restores the floor for both. axe-core finds no critical or serious violation in
the editor. A second new map over a battlemap uploaded from the form is covered by it. Screenshots in DIR.
Needs: scripts/setup.sh --browser (chromium, chromium-driver, selenium, axe-selenium-python).
"""
import sys
import time
from pathlib import Path

from axe_selenium_python import Axe
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_table import Seat, trial  # noqa: E402
from test_web import ROOT, TABLET, png, start  # noqa: E402

# Per-cell textures of the page's map, read with the page's own reading of the floor (mapview.layers).
FLOOR = """const done = arguments[arguments.length - 1];
    import('/web/mapview.js').then((m) => {
      const cells = {};
      for (const t of m.layers(window.hoardTable.state.map).tiles) cells[`${t.x},${t.y}`] = t.texture ?? null;
      done(cells);
    }, (e) => done({error: String(e)}));"""


BATTLEMAP = (40, 120, 170)


def main():
    arguments, shots, check, work, server = start(__doc__, "hoard-editor-")
    seats = []

    def steps():
        server.run("import", "--group", "default", str(ROOT / "Packs/dungeon-basics.zip"))
        assets = server.call("GET", "/v1/assets?pack=dungeon-basics&limit=100")["assets"]
        digest = {a["name"]: a["digest"] for a in assets}

        host = Seat("host", (1400, 1000), shots)
        seats.append(host)
        host.driver.get(server.base + "/")
        host.js("sessionStorage.setItem('hoard.token', arguments[0])", server.token)
        host.driver.get(server.base + "/#/sessions")
        host.visible("#new-map-name").send_keys("The crypt")
        for field, value in (("#new-map-width", "20"), ("#new-map-height", "15"), ("#new-map-pixels", "64")):
            element = host.visible(field)
            element.clear()
            element.send_keys(value)
        host.driver.find_element(By.ID, "new-map-button").click()
        host.until(lambda: "/table/" in host.driver.current_url, "the new map's table")
        host.visible("#editor-panel")
        host.until(lambda: host.js("return document.body.dataset.live") == "connected", "the editor's channel")
        grid = host.js("return window.hoardTable.state.map.grid")
        check.that(grid["width"] == 20 and grid["height"] == 15, f"New map makes a 20 × 15 map and opens it ({grid})")

        def tool(name):
            host.driver.find_element(By.CSS_SELECTOR, f"#editor-panel [data-tool={name}]").click()

        def art(search_id, list_id, name):
            """The CSS of `name`'s button in a panel's list, once its search for it has answered."""
            search = host.visible(f"#{search_id}")
            search.clear()
            search.send_keys(name)
            css = f"#{list_id} [data-digest=\"{digest[name]}\"]"
            host.until(lambda: host.js(f"return !!document.querySelector('{css}')"), f"{name} in #{list_id}")
            return css

        def click(css):
            """Clicks what `css` finds, looking again when the list was drawn anew in between."""
            def attempt():
                try:
                    host.driver.find_element(By.CSS_SELECTOR, css).click()
                    return True
                except (StaleElementReferenceException, NoSuchElementException):
                    return False
            host.until(attempt, f"a click on {css}")

        def texture(name):
            click(art("texture-search", "texture-palette", name))

        def drag(start, end, seat=host):
            seat.drag(start, end)
            time.sleep(0.3)

        def corner_drag(a, b):
            """A drag from grid corner a to corner b (offsets from the centre of tile (0, 0) by half a tile)."""
            canvas = host.driver.find_element(By.ID, "table-canvas")
            tile = host.js("return window.hoardTable.view.tile")
            (ax, ay), (bx, by) = host.offset(0, 0), host.offset(0, 0)
            start = (round(ax + (a[0] - 0.5) * tile), round(ay + (a[1] - 0.5) * tile))
            end = (round(bx + (b[0] - 0.5) * tile), round(by + (b[1] - 0.5) * tile))
            ActionChains(host.driver).move_to_element_with_offset(canvas, *start).click_and_hold() \
                .move_to_element_with_offset(canvas, (start[0] + end[0]) // 2, (start[1] + end[1]) // 2) \
                .move_to_element_with_offset(canvas, *end).release().perform()
            time.sleep(0.2)

        # The floor: two rooms by rectangles, the rest filled.
        texture("stone-floor")
        tool("rect")
        drag((1, 1), (8, 6))
        texture("wood-floor")
        tool("rect")
        drag((9, 1), (17, 6))
        texture("grass")
        tool("fill")
        host.click_tile(3, 11)
        host.until(lambda: len(host.js("return window.hoardTable.state.map.background.palette ?? []")) == 3, "three textures painted")
        floor = host.driver.execute_async_script(FLOOR)
        check.that(floor.get("2,2") == digest["stone-floor"] and floor.get("12,3") == digest["wood-floor"]
                   and floor.get("0,14") == digest["grass"] and floor.get("19,0") == digest["grass"],
                   "a rectangle of stone, one of wood, and the rest filled with grass")

        # Walls around both rooms, the one between them with a door.
        tool("wall")
        for a, b in (((1, 1), (18, 1)), ((18, 1), (18, 7)), ((18, 7), (1, 7)), ((1, 7), (1, 1)), ((9, 1), (9, 3)), ((9, 4), (9, 7))):
            corner_drag(a, b)
        host.driver.find_element(By.ID, "wall-door").click()
        corner_drag((9, 3), (9, 4))
        host.driver.find_element(By.ID, "wall-door").click()
        walls = host.until(lambda: (lambda w: w if len(w) == 7 else None)(host.js("return window.hoardTable.state.map.drawing.walls")),
                           "seven walls")
        door = next((w for w in walls if w.get("door")), None)
        check.that(door is not None and door["from"] == [9, 3] and door["to"] == [9, 4], f"a room of walls with a door ({door})")

        # Four tokens and two objects from the packs.
        def place(kind, name, cell):
            Select(host.driver.find_element(By.ID, "place-kind")).select_by_value(kind)
            click(art("place-search", "place-results", name))
            host.click_tile(*cell)
            time.sleep(0.2)

        def drop(kind, name, cell):
            """Drag and drop from the panel onto the canvas, as the browser sends it (dragstart, dragover, drop)."""
            Select(host.driver.find_element(By.ID, "place-kind")).select_by_value(kind)
            css = art("place-search", "place-results", name)
            host.js("""const [css, x, y] = arguments; const source = document.querySelector(css); const canvas = document.getElementById('table-canvas');
                const [px, py] = window.hoardTable.clientPoint(x, y); const data = new DataTransfer();
                source.dispatchEvent(new DragEvent('dragstart', {bubbles: true, dataTransfer: data}));
                for (const type of ['dragover', 'drop']) {
                  canvas.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: data, clientX: px, clientY: py}));
                }""", css, *cell)
            time.sleep(0.2)

        for kind, name, cell in (("token", "goblin", (3, 3)), ("token", "rat", (2, 5)), ("object", "chest", (7, 2))):
            place(kind, name, cell)
        for kind, name, cell in (("token", "knight", (5, 4)), ("token", "wolf", (14, 3)), ("object", "table", (12, 5))):
            drop(kind, name, cell)
        host.until(lambda: len(host.js("return window.hoardTable.state.map.tokens")) == 4
                   and len(host.js("return window.hoardTable.state.map.objects")) == 2, "four tokens and two objects")
        wolf = next(t["id"] for t in host.js("return window.hoardTable.state.map.tokens") if t["asset"] == digest["wolf"])
        placed = {t["asset"]: (t["x"], t["y"]) for t in host.js("return window.hoardTable.state.map.tokens")}
        check.that(placed.get(digest["knight"]) == (5, 4) and placed.get(digest["wolf"]) == (14, 3),
                   f"four tokens and two objects from the packs, three of them dragged and dropped where they go ({placed})")

        # Fog on, the first room revealed.
        host.driver.find_element(By.ID, "fog-enabled").click()
        tool("reveal")
        drag((1, 1), (8, 6))
        host.until(lambda: host.js("return window.hoardTable.state.map.fog?.enabled === true && (window.hoardTable.state.map.fog.revealed ?? []).length > 0"),
                   "fog on with a room revealed")
        host.shot("editor-01-built")

        axe = Axe(host.driver)
        axe.inject()
        bad = [v for v in axe.run()["violations"] if v["impact"] in ("critical", "serious")]
        check.that(not bad, "axe-core finds no critical or serious violation in the editor"
                   + "".join(f"\n      {v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}" for v in bad))

        # Saved, and a session started from it in the lobby.
        host.visible("#save-name").send_keys("The crypt")
        host.driver.find_element(By.ID, "save-map").click()
        host.until(lambda: "Saved" in (host.js("return document.getElementById('table-status').textContent") or ""), "the save")
        host.driver.get(server.base + "/#/sessions")
        # The saved maps: duplicated, the copy renamed, then deleted (two clicks).
        names = lambda: [li.get_attribute("data-name") for li in host.driver.find_elements(By.CSS_SELECTOR, "#saved-map-list li[data-name]")]
        host.until(lambda: names() == ["The crypt"], "the saved map in the lobby's list")
        host.driver.find_element(By.CSS_SELECTOR, '#saved-map-list li[data-name="The crypt"] [data-action=duplicate]').click()
        host.until(lambda: names() == ["The crypt", "The crypt (copy)"], "its copy")
        host.driver.find_element(By.CSS_SELECTOR, '#saved-map-list li[data-name="The crypt (copy)"] [data-action=rename]').click()
        field = host.visible('input[data-rename="The crypt (copy)"]')
        field.clear()
        field.send_keys("Crypt two\n")
        host.until(lambda: names() == ["Crypt two", "The crypt"], "the copy renamed")
        for _ in range(2):
            host.driver.find_element(By.CSS_SELECTOR, '#saved-map-list li[data-name="Crypt two"] [data-action=delete]').click()
        host.until(lambda: names() == ["The crypt"], "the copy deleted")
        saved = sorted(m["name"] for m in server.call("GET", "/v1/maps")["maps"])
        check.that(saved == ["The crypt"], f"saved maps are duplicated, renamed and deleted from the lobby ({saved})")
        Select(host.visible("#start-map")).select_by_value("The crypt")
        host.driver.find_element(By.ID, "start-button").click()
        code = host.visible("#join-code").text
        check.that(len(code.replace("-", "")) == 8, f"a session started from the saved map ({code})")
        session = next(s for s in server.call("GET", "/v1/sessions")["sessions"] if s["name"] == "The crypt" and s["participants"] == [])
        host.driver.get(server.base + f"/table/{session['id']}")
        host.visible("#editor-panel")
        host.until(lambda: host.js("return document.body.dataset.live") == "connected", "the host's channel")

        player = Seat("player", TABLET, shots)
        seats.append(player)
        player.driver.get(server.base + f"/join/{code}")
        player.visible("#join-name").send_keys("Pia")
        player.driver.find_element(By.CSS_SELECTOR, "#join-form button").click()
        player.drawn()
        player.until(lambda: player.js("return document.body.dataset.live") == "connected", "the player's channel")
        seen = {t["asset"] for t in player.js("return window.hoardTable.state.map.tokens")}
        check.that(seen == {digest["goblin"], digest["knight"], digest["rat"]}, "the player holds the first room's tokens only")
        palette = player.js("return window.hoardTable.state.map.background?.palette ?? []")
        player.traffic()
        received = " ".join(player.frames + player.requests)
        check.that(digest["wood-floor"] not in palette and digest["wood-floor"] not in received and wolf not in received,
                   "nothing of the second room (its floor's texture, its wolf) is in the player's data or frames")
        player.shot("editor-02-player-first-room")

        # The host opens the door and reveals the second room; the wolf reaches the player within 200 ms.
        player.js("""window.__seen = null; const wolf = arguments[0];
            const id = setInterval(() => { if (window.hoardTable.tokens().some((t) => t.id === wolf)) { window.__seen = Date.now(); clearInterval(id); } }, 2);""", wolf)
        host.js("""const live = window.hoardTable.live; const send = live.send.bind(live);
            live.send = (op) => { if (op.kind === 'fog' && op.reveal) window.__sent = Date.now(); return send(op); };""")
        tool("door")
        host.click_tile(8.5, 3)  # a point on the door: (9, 3.5), between the centres of tiles (8, 3) and (9, 3)
        host.until(lambda: any(w.get("door") and w.get("open") for w in host.js("return window.hoardTable.state.map.drawing.walls")),
                   "the door open")
        tool("reveal")
        drag((9, 1), (17, 6))
        player.until(lambda: player.js("return window.__seen") is not None, "the wolf on the player's table")
        latency = player.js("return window.__seen") - host.js("return window.__sent")
        check.that(latency < 200, f"the player sees the revealed room's wolf {latency} ms after the reveal is sent (under 200 ms)")
        player.shot("editor-03-player-second-room")

        # "See the table as" Pia: the host's page draws the view the server sends her.
        pia = player.js("return JSON.parse(sessionStorage.getItem('hoard.seat')).participantId")
        host.until(lambda: host.js("return [...document.querySelectorAll('#view-as option')].some((o) => o.value === arguments[0])", pia),
                   "Pia in the host's view-as list")
        Select(host.driver.find_element(By.ID, "view-as")).select_by_value(pia)
        as_pia = host.driver.execute_async_script("""const done = arguments[arguments.length - 1]; const who = arguments[0];
            Promise.all([import('/web/mapview.js'), import('/web/editor.js')]).then(([m, e]) =>
              done(e.playerView(m.layers(window.hoardTable.state.map), who).tokens.map((t) => t.id).sort()));""", pia)
        hers = sorted(t["id"] for t in player.js("return window.hoardTable.tokens()"))
        check.that(as_pia == hers, f"the host's view as Pia holds the tokens her page holds ({as_pia} / {hers})")
        host.shot("editor-05-host-as-player")
        Select(host.driver.find_element(By.ID, "view-as")).select_by_value("")

        # A layer only the host sees takes the knight from her; a glimpse shows it to her for two seconds.
        knight = next(t["id"] for t in host.js("return window.hoardTable.state.map.tokens") if t["asset"] == digest["knight"])
        host.driver.find_element(By.CSS_SELECTOR, ".table-tools [data-tool=move]").click()
        host.click_tile(5, 4)
        host.until(lambda: host.js("return window.hoardTable.state.selected") == knight, "the knight selected")
        host.visible("#layer-name").send_keys("secrets")
        Select(host.driver.find_element(By.ID, "layer-visible")).select_by_value("")
        host.driver.find_element(By.ID, "layer-apply").click()
        player.until(lambda: knight not in [t["id"] for t in player.js("return window.hoardTable.tokens()")], "the knight gone from her table")
        Select(host.driver.find_element(By.ID, "glimpse-to")).select_by_value(pia)  # a multiple choice: one of them
        seconds = host.driver.find_element(By.ID, "glimpse-seconds")
        seconds.clear()
        seconds.send_keys("2")
        host.driver.find_element(By.ID, "glimpse-token").click()
        player.until(lambda: knight in [t["id"] for t in player.js("return window.hoardTable.tokens()")], "the glimpse of the knight")
        player.until(lambda: knight not in [t["id"] for t in player.js("return window.hoardTable.tokens()")], "the glimpse's end")
        check.that(True, "a layer for the host only hides a token from her; a glimpse shows it to her until it ends")

        # Covered again with the brush, one cell: her table loses the goblin standing there.
        goblin = next(t["id"] for t in host.js("return window.hoardTable.state.map.tokens") if t["asset"] == digest["goblin"])
        host.driver.find_element(By.ID, "fog-brush").click()
        tool("cover")
        host.click_tile(3, 3)
        player.until(lambda: goblin not in [t["id"] for t in player.js("return window.hoardTable.tokens()")], "the goblin covered")
        check.that(True, "the fog brush covers one cell and what stands on it leaves the player's table")
        host.driver.find_element(By.ID, "fog-brush").click()

        # A paint and its undo: both floors are as before.
        texture("grass")
        tool("brush")
        host.click_tile(2, 2)
        player.until(lambda: player.driver.execute_async_script(FLOOR).get("2,2") == digest["grass"], "the paint on the player's table")
        host.driver.find_element(By.ID, "undo-edit").click()
        player.until(lambda: player.driver.execute_async_script(FLOOR).get("2,2") == digest["stone-floor"], "the undo on the player's table")
        check.that(host.driver.execute_async_script(FLOOR).get("2,2") == digest["stone-floor"], "an undo of a paint restores the floor for both")
        host.shot("editor-04-host")

        # A new map over a battlemap uploaded from the form: the picture covers the whole map.
        battlemap = work / "battlemap.png"
        battlemap.write_bytes(png(320, 240, BATTLEMAP + (255,)))
        host.driver.get(server.base + "/#/sessions")
        host.visible("#new-map-name").send_keys("Over the river")
        for field, value in (("#new-map-width", "8"), ("#new-map-height", "6")):
            element = host.visible(field)
            element.clear()
            element.send_keys(value)
        host.driver.find_element(By.ID, "new-map-battlemap").send_keys(str(battlemap))
        host.driver.find_element(By.ID, "new-map-button").click()
        host.until(lambda: "/table/" in host.driver.current_url and host.js("return !!window.hoardTable"), "the battlemap's table")
        host.drawn()
        objects = host.js("return window.hoardTable.state.map.objects")
        check.that(len(objects) == 1 and objects[0].get("footprint") == {"width": 8, "height": 6},
                   f"an uploaded battlemap lies over the whole new map ({objects})")
        colour = host.js("""const c = document.getElementById('table-canvas'); const b = c.getBoundingClientRect();
            const [x, y] = window.hoardTable.clientPoint(6, 4); const r = window.hoardTable.view.ratio;
            return Array.from(c.getContext('2d').getImageData((x - b.left) * r, (y - b.top) * r, 1, 1).data.slice(0, 3));""")
        check.that(all(abs(a - b) <= 40 for a, b in zip(colour, BATTLEMAP)), f"and is drawn there ({colour})")
        host.shot("editor-06-battlemap")


    return trial(arguments, shots, check, work, server, seats, "editor", steps)


if __name__ == "__main__":
    sys.exit(main())
