#!/usr/bin/env python3
"""Writes a corpus of packs laid out the way people and other tools make them (Python 3.11 stdlib only).

    python3 tools/make-layouts.py OUTDIR

OUTDIR/layouts.json lists each archive with what an import must give:
    {"file": ..., "pack": pack name, "wrapper": stripped folder or null, "litter": files skipped silently,
     "assets": [[kind, name, "WxH"], ...] (every asset, any order), "warnings": {code: how many},
     "animated": {name: [frames or null, durationMs or null]} (every moving asset; the others are still),
     "documents": [licence, readme and credits file names kept with the pack],
     "tilePixels": the tile size its assets are described at, or null for unchecked, "about": ...}

Layouts: a folder zipped by macOS Finder (__MACOSX/, ._x, .DS_Store, a wrapper folder) and by Windows
(Thumbs.db, desktop.ini), creators' folder names (Creatures/, Props/, Terrain/, Maps/, units/…), size words and
footprints inside names (Goblin_Archer_A1_Medium_01, Table (wood) 2x1, Cave_40x30, Forest Clearing [30x40]), a
zip whose names are CP437 without the UTF-8 flag, loose pictures given the default kind, animated GIF, APNG,
WebP and WebM tokens and a WebM map, MapTool token files (.rptok) in a pack and one alone, and a pack with
20,000 files most of which are skipped (one warning per folder). Pictures are small but valid PNG, JPEG and
WebP (the helpers of make-hostile.py). Output is deterministic.
"""
import hashlib
import importlib.util
import json
import os
import sys

_spec = importlib.util.spec_from_file_location("hostile", os.path.join(os.path.dirname(__file__), "make-hostile.py"))
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)
ZE, build_zip, token_png, jpeg, webp_lossless = hostile.ZE, hostile.build_zip, hostile.token_png, hostile.jpeg, hostile.webp_lossless
gif, apng, animated_webp, webm = hostile.gif, hostile.apng, hostile.animated_webp, hostile.webm
rptok, rptok_entries, token_content = hostile.rptok, hostile.rptok_entries, hostile.token_content

DS_STORE = b"\x00\x00\x00\x01Bud1" + bytes(64)
APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + bytes(64)
LAYOUTS = []
TILE_64 = json.dumps({"tilePixels": 64}).encode()
CC_BY = ("# Licence\n\nGoblins © 2026 Example Art, licensed under CC BY 4.0 "
         "(https://creativecommons.org/licenses/by/4.0/). Credit: *Example Art*.\n").encode()
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def layout(file, pack, assets, about, wrapper=None, litter=0, warnings=None, animated=None, documents=None, tile_pixels=None):
    """Registers an archive: its entries come from the decorated function."""
    def register(build):
        LAYOUTS.append({"file": file, "pack": pack, "wrapper": wrapper, "litter": litter, "about": about, "tilePixels": tile_pixels,
                        "assets": assets, "warnings": warnings or {}, "animated": animated or {},
                        "documents": documents or [], "build": build})
        return build
    return register


def png(side=64, rgb=(90, 160, 70), height=None):
    return token_png(side, height or side, rgb)


@layout("Goblins.zip", "Goblins", [["token", "goblin", "1x1"], ["token", "Goblin_Archer_A1_01", "1x1"],
                                    ["token", "Red_Dragon_Adult_A1", "3x3"], ["object", "Table (wood)", "2x1"]],
        "a folder zipped by macOS Finder: one wrapper folder, __MACOSX/ with ._ files, .DS_Store; a CC-BY licence and a readme",
        wrapper="Goblins", litter=5, documents=["LICENSE.md", "README.txt"])
def _():
    return [ZE("Goblins/", b"", 0, external_attr=(0o40755 << 16) | 0x10), ZE("Goblins/pack.json", TILE_64),
            ZE("Goblins/tokens/goblin.png", png()), ZE("Goblins/.DS_Store", DS_STORE), ZE("Goblins/tokens/.DS_Store", DS_STORE),
            ZE("Goblins/tokens/Goblin_Archer_A1_Medium_01.png", png(64, (10, 90, 10))),
            ZE("Goblins/Creatures/Red_Dragon_Adult_Huge_A1.png", png(192, (200, 20, 20))),
            ZE("Goblins/Props/Table (wood) 2x1.webp", webp_lossless(128, 64)),
            ZE("Goblins/LICENSE.md", CC_BY), ZE("Goblins/README.txt", b"Goblins by Example Art. Enjoy!\r\n"),
            ZE("__MACOSX/", b"", 0, external_attr=(0o40755 << 16) | 0x10),
            ZE("__MACOSX/Goblins/tokens/._goblin.png", APPLE_DOUBLE), ZE("__MACOSX/Goblins/._.DS_Store", APPLE_DOUBLE),
            ZE("__MACOSX/Goblins/Props/._Table (wood) 2x1.webp", APPLE_DOUBLE)]


@layout("windows-props.zip", "Tavern Props", [["object", "bench", "3x1"], ["object", "potion", "1x1"],
                                              ["texture", "planks", "1x1"], ["texture", "cobbles", "1x1"]],
        "Windows 'Send to compressed folder': a wrapper folder with a space, Thumbs.db and desktop.ini", wrapper="Tavern Props",
        litter=2)
def _():
    return [ZE("Tavern Props/pack.json", TILE_64), ZE("Tavern Props/Furniture/bench_3x1.png", png(192, height=64)), ZE("Tavern Props/Thumbs.db", bytes(128)),
            ZE("Tavern Props/Items/potion.png", png(64, (40, 40, 200))), ZE("Tavern Props/desktop.ini", b"[.ShellClassInfo]\r\n"),
            ZE("Tavern Props/Floors/planks.jpg", jpeg(64, 64)), ZE("Tavern Props/Tiles/cobbles.png", png(64, (120, 120, 120)))]


@layout("creator-folders.zip", "creator-folders",
        [["token", "Undead/zombie", "1x1"], ["token", "knight", "1x1"], ["object", "sword", "1x1"],
         ["texture", "grass", "1x1"], ["background", "Cave", "40x30"], ["background", "Forest Clearing", "30x40"],
         ["token", "Misc/imp", "1x1"], ["token", "Misc/Large Imp Statue", "1x1"], ["token", "barrel", "2x2"]],
        "creators' and other tools' folder names at any depth, battlemaps with their grid in the name, loose pictures",
        warnings={"DEFAULT_KIND": 2, "IGNORED_ENTRY": 1, "FOOTPRINT_MISMATCH": 1}, documents=["credits.pdf"])
def _():
    return [ZE("Monsters/Undead/zombie.png", png(64, (60, 120, 60))), ZE("units/knight.png", png(64, (160, 160, 180))),
            ZE("items/sword.png", png(64, (200, 200, 210))), ZE("Terrain/grass.png", png(64, (30, 160, 30))),
            ZE("Maps/Cave_40x30.jpg", jpeg(40 * 70, 30 * 70)), ZE("Battlemaps/Forest Clearing [30x40].jpg", jpeg(30 * 70, 40 * 70)),
            ZE("Misc/imp.png", png(64, (150, 40, 150))), ZE("Misc/Large Imp Statue_1x1.png", png(64, (150, 40, 151))),
            ZE("barrel_large.png", png(100, (110, 80, 40))), ZE("pack.json", TILE_64),
            ZE("Misc/notes.txt", b"drawn by hand\n"), ZE("credits.pdf", PDF)]


@layout("cp437.zip", "cp437", [["token", "Café_Goblin", "1x1"], ["token", "Ñandú", "2x2"]],
        "names in CP437 without the UTF-8 flag, as Windows' built-in compressor writes them")
def _():
    return [ZE("pack.json", TILE_64),
            ZE("tokens/Café_Goblin.png".encode("cp437"), png()), ZE("tokens/Ñandú_2x2.png".encode("cp437"), png(128))]


@layout("default-kind.zip", "default-kind", [["object", "crate", "1x1"], ["object", "chest", "1x1"]],
        "loose pictures at the root with pack.json defaultKind object", warnings={"DEFAULT_KIND": 1})
def _():
    return [ZE("pack.json", json.dumps({"tilePixels": 64, "defaultKind": "object"}).encode()),
            ZE("crate.png", png()), ZE("chest.png", png(64, (90, 60, 20)))]


@layout("twenty-thousand.zip", "twenty-thousand", [["token", "goblin", "1x1"]],
        "20,000 files: 19,999 notes in 3 folders are skipped with one warning per folder", warnings={"IGNORED_ENTRY": 3})
def _():
    notes = [ZE(f"extras/{folder}/note-{n:05}.txt", b"n", 0) for folder in ("a", "b", "c") for n in range(6666)]
    return [ZE("tokens/goblin.png", png(256))] + notes + [ZE("extras/c/last.txt", b"n", 0)]


@layout("animated.zip", "animated",
        [["token", "flame", "1x1"], ["token", "still", "1x1"], ["token", "spin", "1x1"], ["token", "pulse", "1x1"],
         ["token", "torch", "1x1"], ["background", "Waterfall", "20x15"]],
        "animated tokens as VTT packs ship them: GIF (and a one-frame GIF, a still), APNG, animated WebP, WebM; a WebM map",
        animated={"flame": [4, 400], "spin": [3, 300], "pulse": [3, 300], "torch": [None, 2000], "Waterfall": [None, 12000]})
def _():
    return [ZE("pack.json", TILE_64), ZE("tokens/flame.gif", gif(64, 64, frames=4)), ZE("tokens/still.gif", gif(64, 64)),
            ZE("tokens/spin.png", apng(64, 64)), ZE("tokens/pulse.webp", animated_webp(64, 64)),
            ZE("tokens/torch.webm", webm(64, 64)), ZE("Maps/Waterfall_20x15.webm", webm(1920, 1440, duration_ms=12000))]


@layout("maptool-tokens.zip", "maptool-tokens",
        [["token", "Goblin Boss", "1x1"], ["token", "Ogre", "2x2"], ["token", "Undead/Red Dragon", "3x3"],
         ["token", "Purple Worm", "4x4"], ["token", "rat", "1x1"], ["token", "hex-bee", "1x1"], ["token", "imp", "1x1"],
         ["token", "Goblin", "1x1"], ["token", "goblin-2", "1x1"]],
        "MapTool token files (.rptok) beside a picture: names and sizes from content.xml (Medium, Large, a MapTool 1.3 Huge, "
        "Gargantuan, none: Medium), a hex-grid size (1x1, warned), a JPEG image, a name two token files share",
        warnings={"BAD_FOOTPRINT": 1})
def _():
    return [ZE("pack.json", TILE_64), ZE("tokens/goblin.rptok", rptok("Goblin Boss", png(), "Medium"), 0),
            ZE("Monsters/ogre.rptok", rptok("Ogre", png(128, (90, 120, 60)), "Large"), 0),
            ZE("tokens/Undead/dragon.rptok", rptok("Red Dragon", jpeg(192, 192), "Huge13", ext="jpg"), 0),
            ZE("tokens/worm.rptok", rptok("Purple Worm", png(256, (120, 40, 160)), "Gargantuan"), 0),
            ZE("tokens/rat.rptok", rptok("", png(64, (100, 100, 100))), 0),
            ZE("tokens/hex-bee.rptok", rptok("", png(64, (220, 200, 0)), content=token_content(
                "", hashlib.md5(png(64, (220, 200, 0))).hexdigest(), "c2oQBvpUR9KdqUu0BCXAnA==", "net.rptools.maptool.model.HexGridHorizontal")), 0),
            ZE("tokens/imp.png", png(64, (150, 40, 150))),
            ZE("tokens/goblin-1.rptok", rptok("Goblin", png(64, (10, 90, 11)), "Tiny"), 0),
            ZE("tokens/goblin-2.rptok", rptok("Goblin", png(64, (10, 90, 12)), "Medium"), 0)]


@layout("wesnoth-72.zip", "Wesnoth Units",
        [["token", "spearman", "1x1"], ["token", "bowman", "1x1"], ["token", "cavalryman", "1x1"], ["token", "mage", "1x1"],
         ["token", "troll", "2x2"], ["token", "odd", "1x1"], ["texture", "grass", "1x1"]],
        "ordinary art without pack.json, drawn at 72 px a tile (Wesnoth's size), in a wrapper folder that names the pack: "
        "tilePixels is read from the pictures, so only the one picture of another size is warned about",
        wrapper="Wesnoth Units", warnings={"FOOTPRINT_MISMATCH": 1}, tile_pixels=72)
def _():
    return [ZE("Wesnoth Units/units/spearman.png", png(72)), ZE("Wesnoth Units/units/bowman.png", png(72, (1, 2, 3))),
            ZE("Wesnoth Units/units/cavalryman.png", png(72, (4, 5, 6))), ZE("Wesnoth Units/units/mage.png", png(72, (7, 8, 9))),
            ZE("Wesnoth Units/units/troll_2x2.png", png(144, (10, 11, 12))), ZE("Wesnoth Units/units/odd.png", png(100, (13, 14, 15))),
            ZE("Wesnoth Units/terrain/grass.png", png(72, (16, 160, 16)))]


@layout("tokens-only.zip", "tokens-only", [["token", "wolf", "1x1"]],
        "everything in one folder that names a kind: it is no wrapper, and the file name names the pack", tile_pixels=256)
def _():
    return [ZE("tokens/wolf.png", png(256))]


@layout("Lone Goblin.rptok", "Lone Goblin", [["token", "Goblin Skirmisher", "1x1"]],
        "a MapTool token file imported alone: a pack of one token, named after the file")
def _():
    return rptok_entries("Goblin Skirmisher", png(256), "Medium")


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: make-layouts.py OUTDIR")
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    for entry in LAYOUTS:
        with open(os.path.join(out, entry["file"]), "wb") as f:
            f.write(build_zip(entry.pop("build")()))
    with open(os.path.join(out, "layouts.json"), "w", encoding="utf-8") as f:
        json.dump(LAYOUTS, f, indent=1, ensure_ascii=False)
    print(f"{out}: {len(LAYOUTS)} layouts")


if __name__ == "__main__":
    main(sys.argv[1:])
