#!/usr/bin/env python3
"""Writes Hoard's sample art packs and benchmark packs (Python 3.11 standard library only).

    python3 tools/make-packs.py Packs/
        writes Packs/dungeon-basics.zip (deflated) and Packs/scifi-outpost.zip (stored): original,
        procedurally drawn CC0 art following the naming rules of PACKS.md.

    python3 tools/make-packs.py --bench OUT.zip --files N --total-mb M [--seed S]
        writes a benchmark pack of N PNG files totalling about M MiB, streamed entry by entry (ZIP64 when
        needed). The files are valid PNGs (solid black greyscale) padded with private ancillary chunks of
        random bytes; every file is unique. Folders: tokens objects textures walls backgrounds; tilePixels 256.

Output is deterministic: fixed seeds, fixed entry order, fixed timestamps and attributes, so two runs write
byte-identical archives.
"""
import argparse
import json
import math
import os
import random
import struct
import sys
import zipfile
import zlib

ZIP_DATE = (2024, 1, 1, 0, 0, 0)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# ---------------------------------------------------------------------------------------------- PNG writing


def png_chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC of type+data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def ihdr(width: int, height: int, depth: int = 8, colour: int = 6) -> bytes:
    """The IHDR chunk (RGBA 8-bit by default)."""
    return png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0))


def encode_png(width: int, height: int, rgba: bytes) -> bytes:
    """A complete RGBA 8-bit PNG, every row with filter 0 (none)."""
    stride = width * 4
    raw = b"".join(b"\x00" + rgba[y * stride:(y + 1) * stride] for y in range(height))
    return PNG_SIGNATURE + ihdr(width, height) + png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b"")


# ---------------------------------------------------------------------------------------------- drawing


class Canvas:
    """An RGBA picture drawn in design units: `units` units span the width, whatever the pixel size.

    Drawing the same design on a bigger canvas gives the @2x/@4x variant of the same picture.
    """

    def __init__(self, width, height, units, background=(0, 0, 0, 0)):
        self.w, self.h = width, height
        self.k = width / units
        self.px = bytearray(bytes(background) * (width * height))

    def span(self, y, x0, x1, colour):
        """Fills pixels x0..x1-1 of row y (clipped) with an opaque colour."""
        if not 0 <= y < self.h:
            return
        x0, x1 = max(0, x0), min(self.w, x1)
        if x1 > x0:
            i = (y * self.w + x0) * 4
            self.px[i:i + (x1 - x0) * 4] = (bytes(colour[:3]) + b"\xff") * (x1 - x0)

    def rect(self, x, y, w, h, colour):
        """An axis-aligned rectangle."""
        k = self.k
        for py in range(round(y * k), round((y + h) * k)):
            self.span(py, round(x * k), round((x + w) * k), colour)

    def ellipse(self, cx, cy, rx, ry, colour):
        """A filled ellipse."""
        k = self.k
        cx, cy, rx, ry = cx * k, cy * k, max(rx * k, 0.5), max(ry * k, 0.5)
        for py in range(int(cy - ry), int(cy + ry) + 2):
            d = (py + 0.5 - cy) / ry
            if abs(d) < 1:
                dx = rx * math.sqrt(1 - d * d)
                self.span(py, round(cx - dx), round(cx + dx), colour)

    def circle(self, cx, cy, r, colour):
        """A filled circle."""
        self.ellipse(cx, cy, r, r, colour)

    def ring(self, cx, cy, r, width, colour):
        """A circle outline `width` units thick, inside radius r."""
        k = self.k
        ro, ri, cx, cy = r * k, (r - width) * k, cx * k, cy * k
        for py in range(int(cy - ro), int(cy + ro) + 2):
            d = py + 0.5 - cy
            if abs(d) >= ro:
                continue
            xo = math.sqrt(ro * ro - d * d)
            if abs(d) < ri:
                xi = math.sqrt(ri * ri - d * d)
                self.span(py, round(cx - xo), round(cx - xi), colour)
                self.span(py, round(cx + xi), round(cx + xo), colour)
            else:
                self.span(py, round(cx - xo), round(cx + xo), colour)

    def polygon(self, points, colour):
        """A filled polygon (even-odd rule, scanline)."""
        k = self.k
        pts = [(x * k, y * k) for x, y in points]
        ys = [p[1] for p in pts]
        for py in range(int(min(ys)), int(max(ys)) + 2):
            yc = py + 0.5
            xs = []
            for (x0, y0), (x1, y1) in zip(pts, pts[1:] + pts[:1]):
                if (y0 <= yc < y1) or (y1 <= yc < y0):
                    xs.append(x0 + (yc - y0) * (x1 - x0) / (y1 - y0))
            xs.sort()
            for a, b in zip(xs[::2], xs[1::2]):
                self.span(py, round(a), round(b), colour)

    def line(self, x0, y0, x1, y1, width, colour):
        """A straight stroke `width` units wide with square ends."""
        length = math.hypot(x1 - x0, y1 - y0) or 1
        nx, ny = -(y1 - y0) / length * width / 2, (x1 - x0) / length * width / 2
        self.polygon([(x0 + nx, y0 + ny), (x1 + nx, y1 + ny), (x1 - nx, y1 - ny), (x0 - nx, y0 - ny)], colour)

    def rounded(self, x, y, w, h, r, colour):
        """A rectangle with rounded corners of radius r."""
        self.rect(x + r, y, w - 2 * r, h, colour)
        self.rect(x, y + r, w, h - 2 * r, colour)
        for cx, cy in ((x + r, y + r), (x + w - r, y + r), (x + r, y + h - r), (x + w - r, y + h - r)):
            self.circle(cx, cy, r, colour)

    def vgradient(self, top, bottom, steps=16):
        """Fills the canvas with a vertical gradient in `steps` flat bands (compresses well)."""
        for py in range(self.h):
            t = min(steps - 1, py * steps // self.h) / (steps - 1)
            self.span(py, 0, self.w, tuple(round(a + (b - a) * t) for a, b in zip(top, bottom)) + (255,))

    def speckle(self, rng, amount, levels=(-1, 0, 0, 1)):
        """Adds quantised per-pixel noise to every opaque pixel (same pattern at every scale density)."""
        px = self.px
        for i in range(0, len(px), 4):
            if px[i + 3] == 255:
                d = rng.choice(levels) * amount
                if d:
                    for c in range(3):
                        px[i + c] = min(255, max(0, px[i + c] + d))

    def png(self):
        """The picture as PNG bytes."""
        return encode_png(self.w, self.h, bytes(self.px))


def shade(colour, f):
    """A colour made lighter (f > 1) or darker (f < 1)."""
    return tuple(min(255, round(c * f)) for c in colour[:3]) + (255,)


BLACK, WHITE, YELLOW, RED = (20, 16, 18, 255), (250, 248, 240, 255), (250, 214, 40, 255), (200, 30, 30, 255)

# ---------------------------------------------------------------------------------------------- tokens (100 units square)


def token_frame(c, ring, inner):
    """The round token base every creature sits on."""
    c.circle(50, 50, 49.5, BLACK)
    c.circle(50, 50, 47, ring)
    c.circle(50, 50, 42, inner)


def eyes(c, y, dx, r, iris=YELLOW, slit=False):
    """A pair of eyes centred on x=50."""
    for x in (50 - dx, 50 + dx):
        c.circle(x, y, r, WHITE if not slit else iris)
        if slit:
            c.ellipse(x, y, r * 0.25, r * 0.9, BLACK)
        else:
            c.circle(x, y, r * 0.6, iris)
            c.circle(x, y, r * 0.3, BLACK)


def fangs(c, x0, x1, y, n, size, down=True):
    """n white triangles along a mouth edge."""
    step = (x1 - x0) / n
    for i in range(n):
        a = x0 + i * step
        tip = y + size if down else y - size
        c.polygon([(a, y), (a + step, y), (a + step / 2, tip)], WHITE)


def draw_goblin(c):
    token_frame(c, (60, 120, 40, 255), (200, 190, 150, 255))
    skin = (110, 170, 60, 255)
    c.polygon([(30, 48), (6, 28), (34, 62)], skin)
    c.polygon([(70, 48), (94, 28), (66, 62)], skin)
    c.ellipse(50, 54, 24, 23, skin)
    eyes(c, 47, 10, 6.5, iris=(230, 60, 20, 255))
    c.polygon([(47, 52), (53, 52), (50, 62)], shade(skin, 0.7))
    c.ellipse(50, 68, 12, 5, BLACK)
    fangs(c, 40, 60, 64, 4, 4)


def draw_ogre(c):
    token_frame(c, (120, 80, 40, 255), (170, 150, 120, 255))
    skin = (180, 150, 90, 255)
    c.ellipse(50, 54, 32, 30, skin)
    c.rect(28, 38, 44, 5, (70, 45, 25, 255))
    eyes(c, 46, 11, 4.5, iris=(90, 60, 20, 255))
    c.ellipse(50, 55, 7, 6, shade(skin, 0.8))
    c.ellipse(50, 70, 18, 6, (90, 30, 30, 255))
    c.polygon([(36, 72), (41, 72), (38, 58)], WHITE)
    c.polygon([(59, 72), (64, 72), (62, 58)], WHITE)


def draw_troll(c):
    token_frame(c, (60, 80, 110, 255), (160, 170, 150, 255))
    skin = (110, 140, 150, 255)
    for x in (34, 44, 56, 66):
        c.polygon([(x - 7, 30), (x + 7, 30), (x + 2, 12)], (50, 110, 50, 255))
    c.ellipse(50, 52, 26, 28, skin)
    eyes(c, 42, 10, 5, iris=(240, 170, 20, 255))
    c.ellipse(50, 56, 6, 12, shade(skin, 0.8))
    c.rect(34, 70, 32, 5, BLACK)
    fangs(c, 34, 66, 70, 5, 4, down=False)


def draw_dragon(c):
    token_frame(c, (150, 20, 20, 255), (60, 40, 50, 255))
    wing = (120, 20, 30, 255)
    c.polygon([(40, 45), (10, 18), (14, 40), (8, 58), (36, 60)], wing)
    c.polygon([(60, 45), (90, 18), (86, 40), (92, 58), (64, 60)], wing)
    scales = (210, 40, 30, 255)
    c.polygon([(36, 36), (28, 14), (42, 30)], (240, 220, 180, 255))
    c.polygon([(64, 36), (72, 14), (58, 30)], (240, 220, 180, 255))
    c.ellipse(50, 50, 20, 22, scales)
    c.ellipse(50, 70, 13, 14, scales)
    c.ellipse(50, 74, 9, 8, shade(scales, 1.25))
    eyes(c, 44, 9, 5, iris=YELLOW, slit=True)
    for x in (46, 54):
        c.circle(x, 76, 1.6, BLACK)
    fangs(c, 41, 59, 82, 4, 3.5)


def draw_rat(c):
    token_frame(c, (110, 100, 90, 255), (190, 180, 160, 255))
    fur = (120, 110, 105, 255)
    for (x0, y0), (x1, y1) in zip([(50, 78), (62, 84), (70, 78)], [(62, 84), (70, 78), (78, 84)]):
        c.line(x0, y0, x1, y1, 3, (230, 150, 160, 255))
    c.ellipse(50, 60, 18, 22, fur)
    c.circle(38, 30, 8, fur)
    c.circle(62, 30, 8, fur)
    c.circle(38, 30, 5, (240, 160, 170, 255))
    c.circle(62, 30, 5, (240, 160, 170, 255))
    c.ellipse(50, 38, 13, 12, fur)
    c.circle(44, 36, 2.5, BLACK)
    c.circle(56, 36, 2.5, BLACK)
    c.circle(50, 48, 3, (240, 130, 150, 255))


def draw_knight(c):
    token_frame(c, (40, 60, 160, 255), (220, 220, 230, 255))
    steel = (170, 175, 185, 255)
    c.ellipse(50, 22, 8, 16, RED)
    c.rounded(30, 26, 40, 52, 14, steel)
    c.rect(34, 46, 32, 5, BLACK)
    c.rect(48, 30, 4, 44, shade(steel, 0.75))
    for y in (58, 64, 70):
        c.circle(42, y, 1.5, BLACK)
        c.circle(58, y, 1.5, BLACK)


def draw_giant(c):
    token_frame(c, (90, 70, 40, 255), (150, 180, 210, 255))
    skin = (230, 180, 140, 255)
    c.ellipse(50, 46, 26, 28, skin)
    c.rect(24, 26, 52, 6, (140, 40, 40, 255))
    c.polygon([(26, 50), (74, 50), (66, 84), (50, 92), (34, 84)], (140, 90, 40, 255))
    c.ellipse(50, 62, 8, 3, (120, 40, 40, 255))
    eyes(c, 42, 10, 4.5, iris=(60, 110, 190, 255))
    c.rect(33, 35, 12, 3, (120, 80, 40, 255))
    c.rect(55, 35, 12, 3, (120, 80, 40, 255))
    c.ellipse(50, 50, 5, 7, shade(skin, 0.85))


def draw_wolf(c):
    token_frame(c, (70, 70, 80, 255), (120, 150, 110, 255))
    fur = (140, 140, 150, 255)
    c.polygon([(28, 40), (26, 12), (46, 30)], fur)
    c.polygon([(72, 40), (74, 12), (54, 30)], fur)
    c.polygon([(30, 38), (29, 20), (41, 32)], (230, 170, 170, 255))
    c.polygon([(70, 38), (71, 20), (59, 32)], (230, 170, 170, 255))
    c.ellipse(50, 48, 26, 22, fur)
    c.ellipse(50, 66, 13, 14, (215, 215, 220, 255))
    c.ellipse(50, 60, 5, 4, BLACK)
    eyes(c, 44, 11, 4.5, iris=(240, 160, 30, 255))
    c.line(44, 72, 56, 72, 2, BLACK)


def draw_robot(c):
    token_frame(c, (0, 160, 200, 255), (40, 50, 70, 255))
    c.line(50, 24, 50, 10, 3, (200, 200, 210, 255))
    c.circle(50, 10, 4, RED)
    c.rounded(26, 24, 48, 44, 8, (180, 190, 200, 255))
    c.rounded(31, 33, 38, 14, 6, BLACK)
    c.circle(41, 40, 4, (0, 230, 255, 255))
    c.circle(59, 40, 4, (0, 230, 255, 255))
    for x in range(36, 66, 6):
        c.rect(x, 54, 3, 9, (70, 80, 90, 255))
    c.rect(40, 68, 20, 12, (120, 130, 140, 255))


def draw_drone(c):
    token_frame(c, (220, 140, 0, 255), (30, 35, 45, 255))
    for x, y in ((28, 28), (72, 28), (28, 72), (72, 72)):
        c.line(50, 50, x, y, 5, (100, 110, 120, 255))
        c.ring(x, y, 13, 3, (190, 200, 210, 255))
        c.circle(x, y, 3, (190, 200, 210, 255))
    c.circle(50, 50, 14, (230, 230, 235, 255))
    c.circle(50, 50, 7, RED)
    c.circle(48, 48, 2, WHITE)


def draw_mech(c):
    token_frame(c, (90, 110, 40, 255), (60, 60, 60, 255))
    armour = (120, 140, 80, 255)
    c.rounded(12, 30, 22, 36, 6, shade(armour, 0.8))
    c.rounded(66, 30, 22, 36, 6, shade(armour, 0.8))
    c.rounded(28, 24, 44, 54, 8, armour)
    c.polygon([(38, 32), (62, 32), (58, 46), (42, 46)], (30, 200, 230, 255))
    for x in (16, 84):
        c.rect(x - 3, 66, 6, 16, (60, 60, 60, 255))
    c.rect(34, 56, 32, 4, YELLOW)
    c.rect(34, 64, 32, 4, BLACK)


def draw_mothership(c):
    token_frame(c, (100, 60, 160, 255), (10, 10, 30, 255))
    c.ellipse(50, 54, 40, 16, (150, 155, 170, 255))
    c.ellipse(50, 58, 34, 9, (90, 95, 110, 255))
    c.ellipse(50, 44, 16, 14, (120, 220, 250, 255))
    c.ellipse(46, 40, 5, 4, WHITE)
    for i in range(9):
        a = math.pi * (0.1 + 0.8 * i / 8)
        c.circle(50 - 34 * math.cos(a), 56 + 8 * math.sin(a), 2.5, YELLOW if i % 2 else (255, 90, 200, 255))


# ---------------------------------------------------------------------------------------------- objects (64 units per tile)

WOOD, DARK_WOOD, IRON, GOLD = (150, 95, 50, 255), (90, 55, 30, 255), (70, 70, 80, 255), (230, 180, 40, 255)


def draw_door(c, tiles_w, tiles_h):
    """A plank door filling its tiles; planks run along the long side."""
    w, h = 64 * tiles_w, 64 * tiles_h
    c.rect(0, 0, w, h, DARK_WOOD)
    c.rect(4, 4, w - 8, h - 8, WOOD)
    vertical = h >= w
    n = 4 if vertical else 3
    for i in range(1, n):
        if vertical:
            c.rect(4 + i * (w - 8) / n - 1, 4, 2, h - 8, DARK_WOOD)
        else:
            c.rect(4, 4 + i * (h - 8) / n - 1, w - 8, 2, DARK_WOOD)
    for f in (0.2, 0.8):
        if vertical:
            c.rect(4, h * f - 4, w - 8, 8, IRON)
        else:
            c.rect(w * f - 4, 4, 8, h - 8, IRON)
    if vertical:
        c.circle(w * 0.78, h * 0.5, 4, GOLD)
    else:
        c.circle(w * 0.5, h * 0.78, 4, GOLD)


def draw_chest(c):
    c.rounded(6, 14, 52, 40, 5, DARK_WOOD)
    c.rect(9, 17, 46, 14, WOOD)
    c.rect(9, 33, 46, 18, WOOD)
    for x in (12, 48):
        c.rect(x, 14, 4, 40, GOLD)
    c.rect(6, 30, 52, 3, GOLD)
    c.rect(28, 28, 8, 10, GOLD)
    c.circle(32, 34, 1.5, BLACK)


def draw_table(c):
    c.rounded(4, 6, 120, 52, 6, DARK_WOOD)
    c.rounded(7, 9, 114, 46, 4, WOOD)
    for y in (20, 32, 44):
        c.rect(8, y, 112, 1.5, shade(WOOD, 0.8))
    for x in (30, 64, 98):
        c.circle(x, 32, 9, WHITE)
        c.circle(x, 32, 6, (220, 200, 170, 255))
    c.circle(47, 22, 4, (170, 30, 40, 255))
    c.circle(81, 42, 4, (170, 30, 40, 255))


HAZARD = (240, 190, 20, 255)


def draw_airlock(c):
    c.rect(0, 0, 64, 128, (60, 65, 75, 255))
    for i in range(-2, 10):
        c.polygon([(i * 16, 0), (i * 16 + 8, 0), (i * 16 + 24, 16), (i * 16 + 16, 16)], HAZARD)
        c.polygon([(i * 16, 112), (i * 16 + 8, 112), (i * 16 + 24, 128), (i * 16 + 16, 128)], HAZARD)
    c.rect(6, 18, 25, 92, (150, 160, 170, 255))
    c.rect(33, 18, 25, 92, (150, 160, 170, 255))
    c.rect(31, 18, 2, 92, BLACK)
    c.circle(32, 64, 8, (0, 200, 120, 255))
    c.rect(12, 30, 14, 20, (80, 200, 240, 255))
    c.rect(38, 30, 14, 20, (80, 200, 240, 255))


def draw_crate(c):
    c.rect(4, 4, 56, 56, (90, 100, 70, 255))
    c.rect(8, 8, 48, 48, (130, 145, 100, 255))
    c.line(8, 8, 56, 56, 5, (90, 100, 70, 255))
    c.line(56, 8, 8, 56, 5, (90, 100, 70, 255))
    c.rect(22, 26, 20, 12, HAZARD)
    c.rect(26, 30, 12, 4, BLACK)


def draw_console(c):
    c.rounded(2, 8, 124, 50, 6, (50, 55, 65, 255))
    for x in (8, 48, 88):
        c.rect(x, 14, 32, 20, (20, 60, 90, 255))
        c.rect(x + 3, 17, 26, 3, (80, 220, 255, 255))
        c.rect(x + 3, 23, 16, 3, (80, 220, 255, 255))
    for i, colour in enumerate([RED, HAZARD, (0, 210, 90, 255)] * 4):
        c.circle(12 + i * 9.5, 46, 3, colour)


# ---------------------------------------------------------------------------------------------- textures and walls (64 units)


def draw_stone_floor(c, rng):
    c.rect(0, 0, 64, 64, (70, 70, 75, 255))
    for y in range(0, 64, 16):
        off = 8 if (y // 16) % 2 else 0
        for x in range(-16, 64, 16):
            g = rng.choice((120, 130, 140, 150))
            c.rect(x + off + 1, y + 1, 14, 14, (g, g, g + 6, 255))
    c.speckle(rng, 6)


def draw_wood_floor(c, rng):
    for i, y in enumerate(range(0, 64, 8)):
        tone = rng.choice((0.9, 1.0, 1.1))
        c.rect(0, y, 64, 8, shade(WOOD, tone))
        c.rect(0, y + 7, 64, 1, DARK_WOOD)
        seam = (i * 23) % 64
        c.rect(seam, y, 1, 8, DARK_WOOD)
        c.rect(seam + 3, y + 3, 12, 0.8, shade(WOOD, tone * 0.85))
        c.circle(seam + 2.5, y + 4, 0.8, IRON)


def draw_grass(c, rng):
    c.rect(0, 0, 64, 64, (70, 140, 50, 255))
    for _ in range(70):
        x, y = rng.uniform(0, 64), rng.uniform(0, 64)
        g = rng.choice(((50, 120, 40, 255), (100, 170, 60, 255), (60, 150, 45, 255)))
        c.line(x, y, x + rng.uniform(-2, 2), y - rng.uniform(3, 6), 1.2, g)
    for _ in range(4):
        x, y = rng.uniform(4, 60), rng.uniform(4, 60)
        c.circle(x, y, 1.5, rng.choice((YELLOW, WHITE)))


def draw_metal_floor(c, rng):
    c.rect(0, 0, 64, 64, (120, 125, 130, 255))
    for y in range(0, 64, 8):
        for x in range(0, 64, 8):
            a = (x + y) % 16 == 0
            x0, y0 = x + 2, y + 2
            c.line(x0, y0 + (4 if a else 0), x0 + 4, y0 + (0 if a else 4), 1.5, (165, 170, 178, 255))
    for x in (0, 63):
        c.rect(x, 0, 1, 64, (60, 62, 66, 255))
        c.rect(0, x, 64, 1, (60, 62, 66, 255))


def draw_hex_grid(c, rng):
    """Cyan hexagon outlines on navy, computed per pixel (nearest hex centre, flat-topped)."""
    size = 64 / 3  # two hexes across per tile; rows squashed so two rows fit a tile height: seamless
    squash = math.sqrt(3) * size / 32
    k, w, h, px = c.k, c.w, c.h, c.px
    for py in range(h):
        for pxx in range(w):
            x, y = (pxx + 0.5) / k, (py + 0.5) / k * squash
            q = (2 / 3 * x) / size
            r = (-1 / 3 * x + math.sqrt(3) / 3 * y) / size
            cq, cr, cs = round(q), round(r), round(-q - r)
            dq, dr, ds = abs(cq - q), abs(cr - r), abs(cs + q + r)
            if dq > dr and dq > ds:
                cq = -cr - cs
            elif dr > ds:
                cr = -cq - cs
            hx, hy = size * 1.5 * cq, size * math.sqrt(3) * (cr + cq / 2)
            d = max(abs(y - hy), abs(y - hy) / 2 + abs(x - hx) * math.sqrt(3) / 2)
            edge = d > size * math.sqrt(3) / 2 - 1.2
            i = (py * w + pxx) * 4
            px[i:i + 4] = b"\x30\xe0\xf0\xff" if edge else b"\x10\x18\x38\xff"


def draw_brick(c, rng):
    c.rect(0, 0, 64, 64, (200, 190, 170, 255))
    for row, y in enumerate(range(0, 64, 16)):
        off = 16 if row % 2 else 0
        for x in range(-32, 64, 32):
            red = rng.choice(((170, 60, 40, 255), (150, 50, 35, 255), (185, 75, 50, 255)))
            c.rect(x + off + 1.5, y + 1.5, 29, 13, red)


def draw_stone_wall(c, rng):
    c.rect(0, 0, 64, 64, (50, 50, 55, 255))
    for y in range(6, 64, 12):
        x = rng.uniform(-6, 0)
        while x < 64:
            rx = rng.uniform(6, 10)
            g = rng.choice((110, 125, 140))
            c.ellipse(x + rx, y, rx - 0.8, 5.6, (g, g - 4, g - 10, 255))
            x += 2 * rx
    c.speckle(rng, 5)


def draw_bulkhead(c, rng):
    c.rect(0, 0, 64, 64, (80, 88, 100, 255))
    c.rect(3, 3, 58, 58, (110, 120, 135, 255))
    c.rect(3, 28, 58, 8, HAZARD)
    for x in range(-8, 64, 8):
        c.polygon([(x, 28), (x + 4, 28), (x + 12, 36), (x + 8, 36)], BLACK)
    for x in (8, 56):
        for y in (8, 20, 44, 56):
            c.circle(x, y, 1.8, (60, 65, 75, 255))


# ---------------------------------------------------------------------------------------------- backgrounds (pixel units)


def draw_parchment(c, rng):
    tones = [(170, 140, 95), (190, 160, 110), (205, 178, 128), (218, 193, 145), (228, 206, 160), (236, 218, 175)]
    for i, t in enumerate(tones):
        c.rect(i * 10, i * 10, c.w - i * 20, c.h - i * 20, t + (255,))
    for _ in range(40):
        c.ellipse(rng.uniform(60, 580), rng.uniform(60, 420), rng.uniform(8, 30), rng.uniform(6, 20), (226, 203, 156, 255))
    for _ in range(300):
        c.circle(rng.uniform(0, 640), rng.uniform(0, 480), rng.uniform(0.5, 1.5), (150, 120, 80, 255))
    ink = (90, 60, 40, 255)
    pts = [(90, 380), (170, 330), (260, 350), (330, 270), (420, 250), (500, 160), (560, 110)]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        for t in range(0, 10, 2):
            a, b = t / 10, (t + 1) / 10
            c.line(x0 + (x1 - x0) * a, y0 + (y1 - y0) * a, x0 + (x1 - x0) * b, y0 + (y1 - y0) * b, 3, ink)
    c.line(545, 95, 575, 125, 4, RED)
    c.line(575, 95, 545, 125, 4, RED)
    cx, cy = 110, 110
    star = []
    for i in range(16):
        r = 55 if i % 4 == 0 else (25 if i % 2 == 0 else 12)
        a = i * math.pi / 8 - math.pi / 2
        star.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    c.ring(cx, cy, 40, 2, ink)
    c.polygon(star, ink)
    c.polygon([(cx - 6, cy - 46), (cx + 6, cy - 46), (cx, cy - 58)], RED)


def draw_starfield(c, rng):
    c.vgradient((5, 5, 20), (25, 10, 45), steps=24)
    for _ in range(500):
        r = rng.choice((0.6, 0.6, 0.6, 1.0, 1.6))
        c.circle(rng.uniform(0, 800), rng.uniform(0, 600), r, rng.choice((WHITE, (180, 200, 255, 255), (255, 230, 180, 255))))
    c.circle(600, 420, 90, (200, 110, 60, 255))
    for i, y in enumerate(range(336, 504, 12)):
        half = math.sqrt(max(0.0, 90 ** 2 - (y + 3 - 420) ** 2))
        if i % 2:
            c.rect(600 - half, y, 2 * half, 6, (225, 150, 90, 255))
    c.circle(570, 390, 14, (235, 175, 120, 255))
    c.circle(420, 300, 22, (150, 150, 165, 255))
    c.circle(414, 294, 6, (120, 120, 135, 255))
    c.circle(428, 308, 4, (120, 120, 135, 255))


# ---------------------------------------------------------------------------------------------- packs


def render(draw, width, height, units, seed=None, background=(0, 0, 0, 0)):
    """Draws one picture; `seed` gives the drawing its own fixed random stream."""
    c = Canvas(width, height, units, background)
    if seed is None:
        draw(c)
    else:
        draw(c, random.Random(seed))
    return c.png()


def variants(path, draw, base_w, base_h, units, scales, seed=None, explicit_1x=False):
    """(name, png) for each scale of one asset: `path` without extension, scales like (1, 2, 4)."""
    out = []
    for s in scales:
        suffix = f"@{s}x" if s != 1 or explicit_1x else ""
        out.append((f"{path}{suffix}.png", render(draw, base_w * s, base_h * s, units, seed)))
    return out


def dungeon_basics():
    """Entries of Packs/dungeon-basics.zip, in order."""
    manifest = {"name": "dungeon-basics", "version": "1.0.0", "author": "Hoard sample art", "license": "CC0-1.0", "tilePixels": 64}
    e = [("pack.json", json.dumps(manifest, indent=2).encode() + b"\n")]
    e += variants("tokens/goblin", draw_goblin, 64, 64, 100, (1,))
    e += variants("tokens/ogre_2x2", draw_ogre, 128, 128, 100, (1,))
    e += variants("tokens/troll [3x3]", draw_troll, 192, 192, 100, (1,))
    e += variants("tokens/dragon_4x4", draw_dragon, 256, 256, 100, (1, 2))
    e += variants("tokens/rat_tiny", draw_rat, 64, 64, 100, (1,))
    e += variants("tokens/knight_medium", draw_knight, 64, 64, 100, (1,))
    e += variants("tokens/giant_huge", draw_giant, 192, 192, 100, (1,))
    e += variants("tokens/wolf_large", draw_wolf, 128, 128, 100, (1,))
    e += variants("objects/door_1x2", lambda c: draw_door(c, 1, 2), 64, 128, 64, (1,))
    e += variants("objects/door_2x1", lambda c: draw_door(c, 2, 1), 128, 64, 128, (1,))
    e += variants("objects/chest", draw_chest, 64, 64, 64, (1,))
    e += variants("objects/table_2x1", draw_table, 128, 64, 128, (1,))
    e += variants("textures/stone-floor", draw_stone_floor, 64, 64, 64, (1, 2, 4), seed=11)
    e += variants("textures/wood-floor", draw_wood_floor, 64, 64, 64, (1, 2), seed=12)
    e += variants("textures/grass", draw_grass, 64, 64, 64, (1, 2, 4), seed=13)
    e += variants("walls/brick", draw_brick, 64, 64, 64, (1, 2), seed=14)
    e += variants("walls/stone-wall", draw_stone_wall, 64, 64, 64, (1,), seed=15)
    e += variants("backgrounds/parchment", draw_parchment, 640, 480, 640, (1,), seed=16)
    return e


def scifi_outpost():
    """Entries of Packs/scifi-outpost.zip: folder names in other case and singular form on purpose."""
    manifest = {"name": "scifi-outpost", "version": "1.0.0", "author": "Hoard sample art", "license": "CC0-1.0", "tilePixels": 64}
    e = [("pack.json", json.dumps(manifest, indent=2).encode() + b"\n")]
    e += variants("Token/robot", draw_robot, 64, 64, 100, (1,))
    e += variants("Token/drone_tiny", draw_drone, 64, 64, 100, (1,))
    e += variants("Token/mech_2x2", draw_mech, 128, 128, 100, (1,))
    e += variants("Token/mothership [4x4]", draw_mothership, 256, 256, 100, (1, 2))
    e += variants("Objects/airlock_1x2", draw_airlock, 64, 128, 64, (1,))
    e += variants("Objects/crate", draw_crate, 64, 64, 64, (1,))
    e += variants("Objects/console_2x1", draw_console, 128, 64, 128, (1,))
    e += variants("TEXTURES/metal-floor", draw_metal_floor, 64, 64, 64, (1, 2), seed=21, explicit_1x=True)
    e += variants("TEXTURES/hex-grid", draw_hex_grid, 64, 64, 64, (1, 2, 4), seed=22)
    e += variants("wall/bulkhead", draw_bulkhead, 64, 64, 64, (1,), seed=23)
    e += variants("backgrounds/starfield", draw_starfield, 800, 600, 800, (1,), seed=24)
    return e


def zip_info(name, method):
    """A ZipInfo with fixed date, system and attributes, so archives are reproducible."""
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = method
    info.create_system = 3
    info.external_attr = 0o644 << 16
    return info


def write_pack(path, entries, method):
    """Writes entries in order to a zip at path."""
    with zipfile.ZipFile(path, "w", compression=method, compresslevel=9 if method == zipfile.ZIP_DEFLATED else None) as z:
        for name, data in entries:
            z.writestr(zip_info(name, method), data)
    print(f"{path}: {len(entries)} entries, {os.path.getsize(path)} bytes")


def make_samples(out_dir):
    """The sample packs."""
    os.makedirs(out_dir, exist_ok=True)
    write_pack(os.path.join(out_dir, "dungeon-basics.zip"), dungeon_basics(), zipfile.ZIP_DEFLATED)
    write_pack(os.path.join(out_dir, "scifi-outpost.zip"), scifi_outpost(), zipfile.ZIP_STORED)


# ---------------------------------------------------------------------------------------------- benchmark packs

BENCH_TILE = 256
PAD_CHUNK = b"hoRd"  # ancillary, private, safe-to-copy: decoders skip it
_idat_cache = {}


def solid_idat(width, height):
    """An IDAT chunk for an all-black greyscale 8-bit picture (tiny; cached per size)."""
    if (width, height) not in _idat_cache:
        z, row, parts = zlib.compressobj(9), b"\x00" * (width + 1), []
        parts += [z.compress(row * min(256, height - y)) for y in range(0, height, 256)]
        _idat_cache[width, height] = png_chunk(b"IDAT", b"".join(parts) + z.flush())
    return _idat_cache[width, height]


def blocky_idat(width, height, rng, block=8):
    """An IDAT chunk for a greyscale 8-bit picture of random grey blocks: every picture differs, so its generated
    preview does too, and a preview is about as large as one of drawn art."""
    rows = []
    for _ in range(0, height, block):
        values = bytes(rng.randrange(256) for _ in range(0, width, block))
        row = b"\x00" + b"".join(bytes([v]) * block for v in values)[:width]
        rows.append(row * min(block, height - len(rows) * block))
    return png_chunk(b"IDAT", zlib.compress(b"".join(rows), 9))


def bench_plan(files, total_bytes, rng):
    """(name, width, height, size) for each file: folders round-robin, sizes varied ±50% then scaled to the total."""
    weights = [rng.uniform(0.5, 1.5) for _ in range(files)]
    scale = total_bytes / sum(weights)
    plan = []
    for i in range(files):
        folder = ("tokens", "objects", "textures", "walls", "backgrounds")[i % 5]
        stem = f"{folder}/bench-{i + 1:05d}"
        if folder == "tokens":
            side = rng.randint(1, 4)
            name, w, h = f"{stem}_{side}x{side}.png", side * BENCH_TILE, side * BENCH_TILE
        elif folder == "objects":
            fw, fh = rng.choice(((1, 1), (1, 2), (2, 1), (2, 2)))
            name, w, h = f"{stem}_{fw}x{fh}.png", fw * BENCH_TILE, fh * BENCH_TILE
        elif folder == "textures":
            s = rng.choice((1, 2, 4))
            name, w, h = f"{stem}@{s}x.png" if s > 1 else f"{stem}.png", s * BENCH_TILE, s * BENCH_TILE
        elif folder == "walls":
            name, w, h = f"{stem}.png", BENCH_TILE, BENCH_TILE
        else:
            name, w, h = f"{stem}.png", 2048, 1536
        plan.append((name, w, h, max(1, round(weights[i] * scale))))
    return plan


def bench_variant_plan(assets, total_bytes, rng):
    """For a session-join benchmark: `assets` textures, each @1x/@2x/@4x (64/128/256 px), byte sizes 1:3:8, ±30%."""
    weights = [(rng.uniform(0.7, 1.3), 3 * rng.uniform(0.7, 1.3), 8 * rng.uniform(0.7, 1.3)) for _ in range(assets)]
    scale = total_bytes / sum(sum(w) for w in weights)
    plan = []
    for i, sizes in enumerate(weights):
        stem = f"textures/asset-{i + 1:05d}"
        for factor, weight in zip((1, 2, 4), sizes):
            suffix = "" if factor == 1 else f"@{factor}x"
            plan.append((f"{stem}{suffix}.png", 64 * factor, 64 * factor, max(64, round(weight * scale))))
    return plan


def write_bench_entry(z, name, width, height, size, rng, drawn=False):
    """Streams one valid PNG of about `size` bytes: IHDR, IDAT (black, or random grey blocks when `drawn`), random
    padding chunks of ≤1 MiB, IEND."""
    head = PNG_SIGNATURE + ihdr(width, height, 8, 0) + (blocky_idat(width, height, rng) if drawn else solid_idat(width, height))
    tail = png_chunk(b"IEND", b"")
    pad = max(0, size - len(head) - len(tail) - 12)
    info = zip_info(name, zipfile.ZIP_STORED)
    info.file_size = len(head) + len(tail) + pad + 12 * max(1, -(-pad // (1 << 20)))
    with z.open(info, "w") as out:  # zipfile switches to ZIP64 from info.file_size when needed
        out.write(head)
        first = True
        while pad > 0 or first:
            n, first = min(pad, 1 << 20), False
            data = rng.randbytes(n)
            out.write(struct.pack(">I", n) + PAD_CHUNK + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(PAD_CHUNK))))
            pad -= n
        out.write(tail)


def make_bench(path, files, total_mb, seed, with_variants=False, drawn=False):
    """A benchmark pack: pack.json then `files` PNGs (or `files` assets of three variants) totalling about total_mb MiB,
    every one unique."""
    rng = random.Random(seed)
    name = os.path.basename(path).rsplit(".", 1)[0]
    tile = 64 if with_variants else BENCH_TILE
    manifest = {"name": name, "version": "1.0.0", "author": "Hoard benchmark", "license": "CC0-1.0", "tilePixels": tile}
    planner = bench_variant_plan if with_variants else bench_plan
    plan = planner(files, int(total_mb * (1 << 20)), rng)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        z.writestr(zip_info("pack.json", zipfile.ZIP_STORED), json.dumps(manifest, indent=2).encode() + b"\n")
        for entry in plan:
            write_bench_entry(z, *entry, rng, drawn)
    print(f"{path}: {len(plan)} files, {os.path.getsize(path)} bytes")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", help="folder to write the sample packs into")
    parser.add_argument("--bench", metavar="OUT.zip", help="write a benchmark pack instead")
    parser.add_argument("--files", type=int, default=1000, help="benchmark: number of pictures")
    parser.add_argument("--total-mb", type=float, default=256, help="benchmark: total size in MiB")
    parser.add_argument("--seed", type=int, default=1, help="benchmark: random seed")
    parser.add_argument("--variants", action="store_true", help="benchmark: --files assets of three LOD variants each")
    parser.add_argument("--drawn", action="store_true",
                        help="benchmark: pictures of random grey blocks rather than black (distinct previews of realistic size)")
    args = parser.parse_args(argv)
    if args.bench:
        if args.files < 1 or args.total_mb <= 0:
            parser.error("--files and --total-mb must be positive")
        make_bench(args.bench, args.files, args.total_mb, args.seed, args.variants, args.drawn)
    elif args.out_dir:
        make_samples(args.out_dir)
    else:
        parser.error("give an output folder, or --bench OUT.zip")


if __name__ == "__main__":
    main(sys.argv[1:])
