#!/usr/bin/env python3
"""Builds a map document in the shape of Schemas/map.schema.json from a list of assets.

Used by the benchmarks (Benchmarks/join.py), the schema checker and the browser test, so every sample map has the
shape a tablet VTT sends. As a command: `sample_map.py ASSETS.json [--name NAME]` reads `hoard assets --json`
output (or a GET /v1/assets page) and prints a map that uses every asset once or more.

Layout: the first texture (or background) covers the floor; a room of walls with a door whose floor cycles through
the other textures (or, when there are more textures than room tiles, one tile each from the top left), so every
texture is referenced; objects along the room's top wall; tokens numbered 1, 2, 3… in the room.
"""
import json
import math
import sys


def build_map(assets, name="Sample map", width=16, height=12, tile_pixels=64):
    """A hoard.map/v1 document referencing every asset in `assets` (dicts with digest, kind, name, footprint)."""
    by_kind = {}
    for asset in assets:
        by_kind.setdefault(asset["kind"], []).append(asset)
    floors = by_kind.get("texture", []) + by_kind.get("background", [])
    patches = floors[1:]
    others = [a for kind, items in by_kind.items() if kind not in ("texture", "background", "wall", "token") for a in items]
    tokens = by_kind.get("token", [])
    walls = by_kind.get("wall", [])
    # Enough tiles for one patch per texture and room for the objects and tokens.
    needed = len(patches) + 4 * (len(others) + len(tokens))
    side = math.ceil(math.sqrt(needed)) if needed else 0
    width = min(512, max(width, side))
    height = min(512, max(height, side))

    wall_texture = {"texture": walls[0]["digest"]} if walls else {}
    left, top, right, bottom = 2, 2, max(4, width - 2), max(4, height - 2)
    room = [(x, y) for y in range(top, bottom) for x in range(left, right)]
    if patches and len(patches) <= len(room):
        # The room's floor cycles through the other textures: every one is used, and the room stands out.
        tiles = [{"x": x, "y": y, "texture": patches[i % len(patches)]["digest"]} for i, (x, y) in enumerate(room)]
    else:
        tiles = [{"x": i % width, "y": i // width, "texture": asset["digest"]} for i, asset in enumerate(patches)]
    door = (left + right) // 2
    wall_list = [
        {"id": "w-top", "from": [left, top], "to": [right, top], **wall_texture},
        {"id": "w-right", "from": [right, top], "to": [right, bottom], **wall_texture},
        {"id": "w-bottom-a", "from": [right, bottom], "to": [door + 1, bottom], **wall_texture},
        {"id": "door-1", "from": [door + 1, bottom], "to": [door, bottom], "door": True, "open": False},
        {"id": "w-bottom-b", "from": [door, bottom], "to": [left, bottom], **wall_texture},
        {"id": "w-left", "from": [left, bottom], "to": [left, top], **wall_texture},
    ]
    wall_list += [{"id": f"w-{i}", "from": [0, i % (height + 1)], "to": [1, i % (height + 1)], "texture": w["digest"]}
                  for i, w in enumerate(walls[1:], start=1)]

    def place(items, start_y, prefix, numbered):
        placed, x, y, row = [], left + 1, start_y, 1
        for index, asset in enumerate(items):
            w, h = asset["footprint"]["width"], asset["footprint"]["height"]
            if x + w > right and x > left + 1:
                x, y = left + 1, y + row
                row = 1
            item = {"id": f"{prefix}-{index + 1}", "asset": asset["digest"],
                    "x": min(x, max(0, width - w)), "y": min(y, max(0, height - h))}
            if numbered:
                item["number"] = index + 1
                item["label"] = asset["name"]
            placed.append(item)
            x += w
            row = max(row, h)
        return placed

    objects = place(others, top + 1, "o", False)
    token_list = place(tokens, max(top + 3, (top + bottom) // 2), "t", True)
    document = {
        "schema": "hoard.map/v1",
        "name": name,
        "grid": {"width": width, "height": height, "tilePixels": tile_pixels},
        "background": {"color": "#2b2a27", "tiles": tiles},
        "drawing": {
            "walls": wall_list,
            "strokes": [{"id": "s-1", "color": "#c0392b", "width": 0.08,
                         "points": [[left + 0.5, bottom - 0.5], [door - 0.5, top + 1.5], [right - 0.5, bottom - 1.5]]}],
        },
        "objects": objects,
        "tokens": token_list,
    }
    if floors:
        document["background"]["texture"] = floors[0]["digest"]
    return document


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: sample_map.py ASSETS.json [--name NAME]")
    with open(sys.argv[1]) as f:
        listed = json.load(f)
    assets = listed["assets"] if isinstance(listed, dict) else listed
    name = sys.argv[sys.argv.index("--name") + 1] if "--name" in sys.argv else "Sample map"
    json.dump(build_map(assets, name=name), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
