#!/usr/bin/env python3
"""A processor plugin for Hoard (protocol 1, Plugins/README.md): a pixel-art preview of 8 px per tile for PNG art.

It decodes 8-bit, non-interlaced RGB and RGBA PNGs with the standard library (zlib and the five PNG row filters),
keeps one pixel in every block (nearest neighbour: crisp, and deterministic), and answers one `preview` output as a
PNG. Other pictures get no outputs. It is an example of the protocol, not an image library: Hoard's own previews
come from libvips (hoard.generate-lods).
"""
import base64
import json
import struct
import sys
import zlib

PLUGIN_ID = "png-preview"
TILE_PIXELS = 8


def chunks(data):
    position = 8
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        yield kind, data[position + 8:position + 8 + length]
        position += 12 + length


def decode(data):
    """(width, height, channels, rows) of an 8-bit RGB/RGBA non-interlaced PNG, else None."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    header, idat = None, bytearray()
    for kind, body in chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    if header is None:
        return None
    width, height, depth, colour, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace != 0:
        return None
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def encode(width, height, channels, rows):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6 if channels == 4 else 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def process(params):
    if params.get("mediaType") != "image/png":
        return {"outputs": []}
    decoded = decode(base64.b64decode(params["data"]))
    if decoded is None:
        return {"outputs": []}
    width, height, channels, rows = decoded
    scale = params.get("scale", 1)
    tile = params.get("tilePixels", 256) * scale
    out_width = max(1, width * TILE_PIXELS // tile)
    out_height = max(1, height * TILE_PIXELS // tile)
    small = []
    for y in range(out_height):
        row = rows[y * height // out_height]
        small.append(b"".join(row[(x * width // out_width) * channels:(x * width // out_width + 1) * channels]
                              for x in range(out_width)))
    picture = encode(out_width, out_height, channels, small)
    return {"outputs": [{"role": "preview", "mediaType": "image/png", "data": base64.b64encode(picture).decode()}]}


def main():
    for line in sys.stdin:
        request = json.loads(line)
        method, params = request.get("method"), request.get("params") or {}
        reply = {"id": request.get("id")}
        try:
            if method == "hello":
                reply["result"] = {"protocol": 1, "id": PLUGIN_ID, "version": "1.0.0"}
            elif method == "process":
                reply["result"] = process(params)
            else:
                reply["error"] = {"code": "PLUGIN_FAILURE", "message": f"{PLUGIN_ID} does not serve '{method}'"}
        except (ValueError, KeyError, zlib.error) as error:
            reply = {"id": request.get("id"), "error": {"code": "UNREADABLE_IMAGE", "message": f"cannot read the PNG: {error}"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
