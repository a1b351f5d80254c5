#!/usr/bin/env python3
"""Writes Dungeondraft asset packs (Godot PCK, format version 1) for the tests: one good pack and hostile ones.

Usage: tools/make-pck.py OUTDIR
  good.dungeondraft_pack           an object, a wall and the pack's JSON metadata
  overlap.dungeondraft_pack        two entries share bytes                     -> CORRUPT_ARCHIVE
  outside.dungeondraft_pack        an entry runs past the end of the file      -> CORRUPT_ARCHIVE
  in-table.dungeondraft_pack       an entry starts inside the file table       -> CORRUPT_ARCHIVE
  bad-md5.dungeondraft_pack        an entry's bytes do not match its MD5       -> CORRUPT_ARCHIVE
  traversal.dungeondraft_pack      a path res://../../etc/evil.png             -> UNSAFE_PATH
  version2.dungeondraft_pack       PCK format version 2 (Godot 4)              -> UNSUPPORTED_FORMAT
"""
import hashlib
import struct
import sys
import zlib


def png(width, height, seed):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    raw = b"".join(b"\x00" + bytes(((x + seed) & 0xFF) for x in range(width * 4)) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def pck(files, version=1, layout=None):
    """files: [(path, data)]. layout(entries, table_end) may rewrite each entry's [offset, size, md5] (a list)."""
    table = b""
    for path, _ in files:
        encoded = path.encode()
        padded = encoded + b"\x00" * (-len(encoded) % 4)
        table += struct.pack("<I", len(padded)) + padded + b"\x00" * 32  # offset, size, md5 filled below
    header_size = 4 + 4 + 12 + 64 + 4
    data_start = header_size + len(table)
    entries, position = [], data_start
    for _, data in files:
        entries.append([position, len(data), hashlib.md5(data).digest()])
        position += len(data)
    if layout:
        layout(entries, data_start)
    out = b"GDPC" + struct.pack("<IIII", version, 3, 4, 2) + b"\x00" * 64 + struct.pack("<I", len(files))
    for (path, _), (offset, size, md5) in zip(files, entries):
        encoded = path.encode()
        padded = encoded + b"\x00" * (-len(encoded) % 4)
        out += struct.pack("<I", len(padded)) + padded + struct.pack("<QQ", offset, size) + md5
    return out + b"".join(data for _, data in files)


def main():
    out = sys.argv[1]
    good = [("res://packs/x1y2.json", b'{"name": "Crates", "id": "x1y2", "author": "Test"}'),
            ("res://packs/x1y2/textures/objects/crate_1x1.png", png(256, 256, 1)),
            ("res://packs/x1y2/textures/walls/stone.png", png(256, 256, 2))]
    cases = {
        "good": pck(good),
        "overlap": pck(good, layout=lambda e, start: e[2].__setitem__(0, e[1][0] + 10)),
        "outside": pck(good, layout=lambda e, start: e[2].__setitem__(1, e[2][1] + 1_000_000)),
        "in-table": pck(good, layout=lambda e, start: e[0].__setitem__(0, start - 8)),
        "bad-md5": pck(good, layout=lambda e, start: e[1].__setitem__(2, b"\x00" * 16)),
        "traversal": pck([("res://../../etc/evil.png", png(16, 16, 3))]),
        "version2": pck(good, version=2),
    }
    for name, data in cases.items():
        with open(f"{out}/{name}.dungeondraft_pack", "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
