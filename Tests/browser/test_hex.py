#!/usr/bin/env python3
"""Hex maps drawn as hex art is made to be drawn, in headless Chromium.

Usage: Tests/browser/test_hex.py PATH/TO/hoard [--artefacts DIR] [--keep]

A pack of flat-topped hex terrain in Wesnoth's shape (72 × 72 pictures, transparent outside the hexagon) and a token
of size 3 is generated and imported (its pack.json says hex: the listing and the browse page's filter show it as hex); a 30 × 20 map painted edge to edge with it is opened at the host's table twice:
as a hex map (`grid.type` "hex", flat, odd) and, for comparison, as a square one. Checked, from the canvas's pixels:
inside the map (a hex's width in from its edges) under 1 % of the pixels are near-black on the hex map, where the
square grid shows the background through every hexagon's corners; the size-3 token covers the seven hexes around its
cell and no hex two steps away; the server refuses a move that puts one of its hexes off the map and takes one that
does not; in every pointy and even layout the ogre is on its cell and a wall on a hex's side is drawn on that edge,
without a script error. Screenshots in DIR.
Needs: scripts/setup.sh --browser (chromium, chromium-driver, selenium).
"""
import base64
import struct
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_table import Seat, trial  # noqa: E402
from test_web import pack_zip, start  # noqa: E402

HEX = 72
TERRAIN = {"grass": (88, 160, 72), "dirt": (168, 124, 80), "water": (70, 120, 200)}
OGRE = (220, 40, 200)


def hex_png(rgb):
    """A 72 × 72 flat-topped hexagon of one colour (corners at (0, 36), (18, 0), (54, 0), (72, 36), …), transparent
    outside it, as Wesnoth's terrain is cut."""
    rows = []
    for y in range(HEX):
        row = bytearray(b"\x00")
        for x in range(HEX):
            dx, dy = abs(x + 0.5 - 36), abs(y + 0.5 - 36)
            inside = dy <= 36 and dx <= 36 - dy / 2
            row += bytes(rgb) + (b"\xff" if inside else b"\x00")
        rows.append(bytes(row))
    return png_bytes(HEX, HEX, b"".join(rows))


def solid_png(side, rgb):
    return png_bytes(side, side, b"".join(b"\x00" + (bytes(rgb) + b"\xff") * side for _ in range(side)))


def png_bytes(width, height, raw):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def game_map(digests, grid, width=30, height=20):
    """Grass everywhere, a band of dirt and a lake: every cell painted, the ogre (size 3) at (10, 8)."""
    return {
        "schema": "hoard.map/v2", "name": f"Hex trial ({grid.get('type', 'square')})",
        "grid": {"width": width, "height": height, "tilePixels": HEX, **grid},
        "background": {"texture": digests["grass"], "palette": [digests["dirt"], digests["water"]],
                       "rects": [[0, height * 3 // 5, width, 3, 0], [width * 2 // 3, 2, width // 5, 5, 1]]},
        "drawing": {"walls": [], "strokes": []}, "objects": [],
        "tokens": [{"id": "ogre", "asset": digests["ogre"], "x": 10, "y": 8, "number": 1}],
    }


def across_side(layout, x, y, side):
    """The cell on the other side of side `side` of (x, y): the test's own offset ↔ cube conversion (Red Blob Games),
    so the page's is checked against it."""
    flat, odd = layout
    directions = [(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)]
    if flat:
        q, r = x, y - ((x - (x & 1)) // 2 if odd else (x + (x & 1)) // 2)
    else:
        q, r = x - ((y - (y & 1)) // 2 if odd else (y + (y & 1)) // 2), y
    q, r = q + directions[side][0], r + directions[side][1]
    if flat:
        return q, r + ((q - (q & 1)) // 2 if odd else (q + (q & 1)) // 2)
    return q + ((r - (r & 1)) // 2 if odd else (r + (r & 1)) // 2), r


def canvas_pixels(seat):
    """The table canvas's pixels (RGBA rows) and the view: CSS pixels a tile, the map's origin, the device ratio."""
    data = seat.js("""const c = document.getElementById('table-canvas');
        return [c.toDataURL('image/png'), c.width, c.height, window.hoardTable.view];""")
    url, width, height, view = data
    raw = decode_png(base64.b64decode(url.split(",", 1)[1]))
    return raw, width, height, view


def decode_png(data):
    """RGBA rows of an 8-bit RGBA PNG (what a canvas gives), its filters undone."""
    position, width, height, idat = 8, 0, 0, b""
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    raw, stride, rows, previous = zlib.decompress(idat), width * 4, [], bytearray(width * 4)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - 4] if i >= 4 else 0
            up, corner = previous[i], previous[i - 4] if i >= 4 else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return rows


def near_black_share(rows, box):
    """The share of pixels inside `box` (x0, y0, x1, y1, device pixels) whose every channel is under 60."""
    x0, y0, x1, y1 = (int(v) for v in box)
    dark = total = 0
    for y in range(y0, y1, 2):
        row = rows[y]
        for x in range(x0, x1, 2):
            r, g, b = row[4 * x], row[4 * x + 1], row[4 * x + 2]
            total += 1
            dark += r < 60 and g < 60 and b < 60
    return dark / max(1, total)


def pixel(rows, x, y):
    row = rows[int(y)]
    return tuple(row[4 * int(x):4 * int(x) + 3])


def near(colour, wanted):
    """Within 40 per channel: the first pictures drawn are generated previews, whose encoding moves colours a little."""
    return all(abs(a - b) <= 40 for a, b in zip(colour, wanted))


def main():
    arguments, shots, check, work, server = start(__doc__, "hoard-hex-")
    seats = []

    def steps():
        pack = work / "hexlands.zip"
        files = {f"textures/{name}.png": hex_png(rgb) for name, rgb in TERRAIN.items()}
        files["tokens/ogre_3x3.png"] = solid_png(3 * HEX, OGRE)
        pack_zip(pack, files, {"name": "hexlands", "version": "1.0.0", "tilePixels": HEX, "grid": {"type": "hex", "orientation": "flat"}})
        server.run("import", "--group", "default", str(pack))
        listed = server.call("GET", "/v1/assets?grid=hex&limit=100")["assets"]
        digests = {asset["name"].split("_")[0]: asset["digest"] for asset in listed}
        check.that(set(digests) == {"grass", "dirt", "water", "ogre"}, f"the hex pack is imported and listed as hex ({sorted(digests)})")
        check.that(all(asset["grid"] == {"type": "hex", "orientation": "flat"} for asset in listed), "each of its assets says its grid")

        seat = Seat("host", (1400, 1000), shots)
        seats.append(seat)
        seat.driver.get(server.base + "/")
        seat.js("sessionStorage.setItem('hoard.token', arguments[0])", server.token)
        # The browse page's grid filter: Hex shows the hex pack's four assets and nothing else.
        seat.driver.get(server.base + "/#/?grid=hex")
        seat.until(lambda: seat.js("return document.querySelectorAll('#grid .tile').length") == 4
                   and seat.js("return document.querySelector('.chips.grids .active')?.textContent") == "Hex", "the hex filter")
        check.that(True, "the browse page's Hex filter shows the hex pack's four assets")
        shares = {}
        for label, grid in (("hex", {"type": "hex", "orientation": "flat", "offset": "odd"}), ("square", {})):
            created = server.call("POST", "/v1/sessions", {"name": f"Hex {label}", "map": game_map(digests, grid)})
            seat.driver.get(server.base + f"/table/{created['id']}")
            seat.drawn()
            seat.until(lambda: seat.js("return document.body.dataset.live") == "connected", "the table's channel")
            seat.shot(f"hex-{label}")
            rows, width, height, view = canvas_pixels(seat)
            ratio, tile = view["ratio"], view["tile"]
            # The map's inside: a cell's width in from its edges (the border's half-hexes show the background).
            across, down = (0.75 * 30 + 0.25, 20.5) if label == "hex" else (30, 20)
            box = ((view["x"] + tile) * ratio, (view["y"] + tile) * ratio,
                   (view["x"] + (across - 1) * tile) * ratio, (view["y"] + (down - 1) * tile) * ratio)
            shares[label] = near_black_share(rows, box)
            if label == "hex":
                def at(x, y):
                    px, py = seat.js("""const c = document.getElementById('table-canvas'); const b = c.getBoundingClientRect();
                        const p = window.hoardTable.clientPoint(arguments[0], arguments[1]); return [p[0] - b.left, p[1] - b.top];""", x, y)
                    return pixel(rows, px * ratio, py * ratio)
                # (10, 8) and its six neighbours in flat-odd, where column 10 (even) is not pushed down: above and
                # below, and in columns 9 and 11 the rows 7 and 8.
                ring = [(10, 8), (10, 7), (10, 9), (9, 7), (9, 8), (11, 7), (11, 8)]
                covered = [cell for cell in ring if near(at(*cell), OGRE)]
                check.that(len(covered) == 7, f"the size-3 ogre covers its seven hexes ({covered})")
                check.that(not near(at(10, 6), OGRE) and not near(at(12, 8), OGRE), "and no hex two steps away")
                # The server judges the ogre by its seven hexes (their footprint read from the catalog): one step from
                # the left edge they leave the map; two steps in they do not.
                seat.js("window.hoardTable.send({kind: 'move', token: 'ogre', x: 0, y: 4}).catch(window.hoardTable.refused('the move'))")
                status = seat.until(lambda: seat.js("return document.getElementById('table-status').textContent") or None, "the refusal")
                check.that("OUT_OF_GRID" in status and "7 hexes" in status, f"a move that puts a hex of the ogre off the map is refused ({status!r})")
                seat.js("window.hoardTable.send({kind: 'move', token: 'ogre', x: 1, y: 4})")
                seat.until(lambda: (seat.token("ogre") or {}).get("x") == 1, "the ogre's move to (1, 4)")
                check.that(True, "one hex further in, every hex of it is on the map and it moves")
                check.that(near(at(22, 4), TERRAIN["water"]) and near(at(3, 13), TERRAIN["dirt"]),
                           f"the lake and the band are where painted ({at(22, 4)}, {at(3, 13)})")
        check.that(shares["hex"] < 0.01, f"hex terrain on the hex map leaves {shares['hex']:.2%} near-black inside it (under 1 %)")
        check.that(shares["square"] > 0.1, f"drawn on squares the same art leaves {shares['square']:.1%} near-black (the bug this fixes)")

        for orientation, offset in (("pointy", "odd"), ("pointy", "even"), ("flat", "even")):
            grid = {"type": "hex", "orientation": orientation, "offset": offset}
            document = game_map(digests, grid, 14, 11)
            # A wall along side 1 of (3, 3): drawn on the edge (3, 3) shares with the cell across that side.
            document["drawing"]["walls"] = [{"id": "w", "cell": [3, 3], "side": 1}]
            created = server.call("POST", "/v1/sessions", {"name": f"Hex {orientation} {offset}", "map": document})
            seat.driver.get(server.base + f"/table/{created['id']}")
            seat.drawn()
            rows, width, height, view = canvas_pixels(seat)
            px, py = seat.js("""const c = document.getElementById('table-canvas'); const b = c.getBoundingClientRect();
                const p = window.hoardTable.clientPoint(10, 8); return [p[0] - b.left, p[1] - b.top];""")
            drawn = pixel(rows, px * view["ratio"], py * view["ratio"])
            check.that(near(drawn, OGRE), f"{orientation} {offset}: the ogre is drawn on its cell ({drawn})")
            other = across_side((orientation == "flat", offset == "odd"), 3, 3, 1)
            ends = [seat.js("""const c = document.getElementById('table-canvas'); const b = c.getBoundingClientRect();
                const p = window.hoardTable.clientPoint(arguments[0], arguments[1]); return [p[0] - b.left, p[1] - b.top];""", *cell)
                for cell in ((3, 3), other)]
            middle = pixel(rows, (ends[0][0] + ends[1][0]) / 2 * view["ratio"], (ends[0][1] + ends[1][1]) / 2 * view["ratio"])
            check.that(near(middle, (29, 26, 23)), f"{orientation} {offset}: the wall on side 1 of (3, 3) runs between it and {other} ({middle})")
            seat.shot(f"hex-{orientation}-{offset}")

    return trial(arguments, shots, check, work, server, seats, "hex", steps)


if __name__ == "__main__":
    sys.exit(main())
