#!/usr/bin/env python3
"""Writes a corpus of hostile, broken and tricky archives for Hoard's importer tests (Python 3.11 stdlib only).

    python3 tools/make-hostile.py OUTDIR

OUTDIR/cases.json lists the archives the importer must refuse:
    {"file": ..., "codes": [acceptable error codes], "entry": "entry the error names" (absent when archive-wide),
     "limits": {ImportLimits overrides} (optional), "about": "..."}
OUTDIR/valid.json lists tricky archives it must accept: {"file": ..., "assets": N, "about": ...}, where N counts
assets (all LOD variants of one asset count once).
OUTDIR/bundles.json lists bundles (archives of archives) to import pack by pack: {"file": ..., "packs": {inner
archive: "imported" or [acceptable error codes]}, "limits": {...} (optional), "about": ...}: a hostile inner archive
must refuse only itself.

Apart from the fault under test every archive is a valid pack (pack.json with tilePixels 64, 64×64 PNG tokens),
and in most of them a good entry comes before the bad one. Zips are written byte by byte (not with zipfile)
so names, flags, sizes and offsets are exactly what each case needs. Output is deterministic.
"""
import bz2
import functools
import gzip
import hashlib
import io
import json
import lzma
import math
import os
import random
import struct
import sys
import tarfile
import time
import unicodedata
import zipfile
import zlib

PACK_NAME = ["hoard-hostile"]  # set to each archive's own name while it is built: no two packs share name and version


def manifest():
    """A valid pack.json (tilePixels 64) named after the archive being built."""
    return json.dumps({"name": PACK_NAME[0], "version": "1.0.0", "license": "CC0-1.0", "tilePixels": 64}).encode()


LIMIT_KEYS = {"maxEntries", "maxEntryBytes", "maxArchiveBytes", "maxCompressionRatio", "ratioFloorBytes", "maxPathBytes",
              "maxComponentBytes", "maxPathDepth", "maxImageSide", "maxImagePixels", "maxMapPixels", "maxManifestBytes"}
MIB = 1 << 20

# ------------------------------------------------------------------------------------------------ pictures


def png_chunk(kind, data):
    """One PNG chunk with its CRC."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_head(width, height, depth=8, colour=6):
    """PNG signature and IHDR."""
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0))


IEND = png_chunk(b"IEND", b"")


@functools.cache
def token_png(width=64, height=64, rgb=(90, 160, 70)):
    """A valid RGBA PNG: a coloured disc on a transparent square."""
    rows, r = [], min(width, height) / 2 - 1
    for y in range(height):
        row, dy = bytearray(width * 4), y + 0.5 - height / 2
        if abs(dy) < r:
            dx = math.sqrt(r * r - dy * dy)
            x0, x1 = max(0, round(width / 2 - dx)), min(width, round(width / 2 + dx))
            row[x0 * 4:x1 * 4] = bytes(rgb + (255,)) * (x1 - x0)
        rows.append(b"\x00" + bytes(row))
    return png_head(width, height) + png_chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + IEND


def padded_png(size, seed=None, width=64, height=64):
    """A valid PNG of exactly `size` bytes: a private ancillary chunk (random bytes, or zeros without a seed) pads it."""
    base = token_png(width, height)
    n = size - len(base) - 12
    assert n >= 0, size
    pad = random.Random(seed).randbytes(n) if seed is not None else bytes(n)
    return base[:-len(IEND)] + png_chunk(b"hoRd", pad) + IEND


def jpeg(width, height, complete=True):
    """A baseline greyscale JPEG (mid grey). Huffman tables with one code each make every 8×8 block two zero bits;
    with complete=False the scan is cut short (headers only: enough for pixel-bomb cases)."""
    def seg(marker, data):
        return bytes([0xFF, marker]) + struct.pack(">H", len(data) + 2) + data
    blocks = -(-width // 8) * -(-height // 8)
    bits = 2 * blocks if complete else 64
    scan = bytes(bits // 8) + (bytes([(1 << (8 - bits % 8)) - 1]) if bits % 8 else b"")
    one_code = bytes([1] + [0] * 15) + b"\x00"
    return (b"\xff\xd8" + seg(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00") + seg(0xDB, b"\x00" + b"\x01" * 64)
            + seg(0xC0, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00")
            + seg(0xC4, b"\x00" + one_code) + seg(0xC4, b"\x10" + one_code)
            + seg(0xDA, b"\x01\x01\x00\x00\x3f\x00") + scan + b"\xff\xd9")


def riff_webp(*chunks):
    """A RIFF/WEBP file from (fourcc, payload) chunks, padded to even sizes."""
    body = b"".join(c + struct.pack("<I", len(p)) + p + b"\x00" * (len(p) % 2) for c, p in chunks)
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def vp8l(width, height, argb=(255, 200, 60, 160)):
    """A lossless VP8L bitstream of one colour: five one-symbol prefix codes, so pixels take zero bits (a real,
    decodable picture of any size up to 16384² in a dozen bytes)."""
    value, nbits = 0, 0
    def put(v, n):
        nonlocal value, nbits
        value |= v << nbits
        nbits += n
    put(width - 1, 14), put(height - 1, 14), put(1, 1), put(0, 3)  # size, alpha hint, version 0
    put(0, 1), put(0, 1), put(0, 1)  # no transform, no colour cache, no meta prefix codes
    a, r, g, b = argb
    for symbol in (g, r, b, a, 0):  # green, red, blue, alpha, distance
        put(1, 1), put(0, 1), put(1, 1), put(symbol, 8)  # simple code, one symbol, 8-bit symbol
    return b"\x2f" + value.to_bytes(-(-nbits // 8), "little")


def webp_lossless(width, height):
    """A simple-format lossless WebP."""
    return riff_webp((b"VP8L", vp8l(width, height)))


def gif(width, height, frames=1, delay=10, screen=None, rect=None):
    """A GIF89a of `frames` frames (each `delay` hundredths of a second) in one colour, with real LZW data (codes of
    3 bits: a clear code every two pixels keeps the code size fixed). `screen` overrides the logical screen size,
    `rect` each frame's (left, top, width, height)."""
    sw, sh = screen or (width, height)
    left, top, fw, fh = rect or (0, 0, width, height)
    codes = []
    for index in range(fw * fh):
        if index % 2 == 0:
            codes.append(4)  # clear
        codes.append(1)
    codes.append(5)  # end of information
    value = sum(code << (3 * i) for i, code in enumerate(codes))
    data = value.to_bytes(-(-3 * len(codes) // 8), "little")
    blocks = b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255] for i in range(0, len(data), 255)) + b"\x00"
    out = b"GIF89a" + struct.pack("<HHBBB", sw, sh, 0x80, 0, 0) + bytes([40, 120, 40, 200, 60, 60])  # 2-colour table
    if frames > 1:
        out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
    for _ in range(frames):
        out += b"\x21\xf9\x04\x00" + struct.pack("<H", delay) + b"\x00\x00"
        out += b"\x2c" + struct.pack("<HHHHB", left, top, fw, fh, 0) + b"\x02" + blocks
    return out + b"\x3b"


def apng(width, height, frames=3, delay_ms=100, declared=None):
    """An APNG: acTL (declaring `declared` frames, default `frames`), then fcTL + IDAT and fcTL + fdAT per frame."""
    still = token_png(width, height)
    idat = still[still.index(b"IDAT") - 4:-len(IEND)]
    pixels = idat[8:-4]
    sequence = iter(range(2 * frames))
    def fctl():
        return png_chunk(b"fcTL", struct.pack(">IIIIIHHBB", next(sequence), width, height, 0, 0, delay_ms, 1000, 0, 0))
    body = png_chunk(b"acTL", struct.pack(">II", declared if declared is not None else frames, 0)) + fctl() + idat
    for _ in range(frames - 1):
        body += fctl() + png_chunk(b"fdAT", struct.pack(">I", next(sequence)) + pixels)
    return still[:33] + body + IEND


def animated_webp(width, height, frames=3, duration=100, frame_size=None):
    """An animated WebP: VP8X with the animation flag, ANIM, and one ANMF per frame holding a one-colour VP8L."""
    fw, fh = frame_size or (width, height)
    vp8x = bytes([0x02, 0, 0, 0]) + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    anmf = (0).to_bytes(3, "little") * 2 + (fw - 1).to_bytes(3, "little") + (fh - 1).to_bytes(3, "little")
    anmf += duration.to_bytes(3, "little") + b"\x00"
    frame = vp8l(fw, fh)
    frame_chunk = b"VP8L" + struct.pack("<I", len(frame)) + frame + b"\x00" * (len(frame) % 2)
    return riff_webp((b"VP8X", vp8x), (b"ANIM", b"\x00\x00\x00\x00\x00\x00"), *[(b"ANMF", anmf + frame_chunk)] * frames)


def ebml(element_id, payload, size=None):
    """One EBML element: its ID bytes, an 8-byte size (or `size` forced: a lie), its payload."""
    length = len(payload) if size is None else size
    return element_id + bytes([0x01]) + length.to_bytes(7, "big") + payload


def webm(width, height, duration_ms=2000, doctype=b"webm", tracks_size=None):
    """A WebM's headers: EBML (DocType), a Segment of unknown size with Info (duration) and Tracks (one VP8 video
    track of width × height), then an empty Cluster. `tracks_size` forces the Tracks element's size."""
    header = ebml(b"\x1a\x45\xdf\xa3", ebml(b"\x42\x86", b"\x01") + ebml(b"\x42\x82", doctype))
    info = ebml(b"\x15\x49\xa9\x66", ebml(b"\x2a\xd7\xb1", (1000000).to_bytes(3, "big")) + ebml(b"\x44\x89", struct.pack(">d", duration_ms)))
    video = ebml(b"\xe0", ebml(b"\xb0", width.to_bytes(4, "big")) + ebml(b"\xba", height.to_bytes(4, "big")))
    track = ebml(b"\xae", ebml(b"\xd7", b"\x01") + ebml(b"\x83", b"\x01") + ebml(b"\x86", b"V_VP8") + video)
    tracks = ebml(b"\x16\x54\xae\x6b", track, tracks_size)
    cluster = ebml(b"\x1f\x43\xb6\x75", ebml(b"\xe7", b"\x00"))
    return header + b"\x18\x53\x80\x67\x01\xff\xff\xff\xff\xff\xff\xff" + info + tracks + cluster


# ------------------------------------------------------------------------------------------------ zip writing

DOS_DATE, DOS_TIME = ((2024 - 1980) << 9) | (1 << 5) | 1, 0


class ZE:
    """One zip entry as written: every header field can be forced to test a reader."""

    def __init__(self, name, data=b"", method=8, **fields):
        self.name, self.data, self.method = name, data, method
        self.flags = fields.pop("flags", 0)
        self.external_attr = fields.pop("external_attr", 0o100644 << 16)
        self.made_by = fields.pop("made_by", (3 << 8) | 30)  # Unix, spec 3.0
        self.payload = fields.pop("payload", None)  # compressed bytes, when not computed from data
        self.crc, self.csize, self.usize = fields.pop("crc", None), fields.pop("csize", None), fields.pop("usize", None)
        self.extra = fields.pop("extra", b"")
        self.descriptor = fields.pop("descriptor", False)  # sizes and CRC after the data (flag bit 3)
        assert not fields, fields


def deflate(data, level=9):
    """Raw deflate (no zlib header), as zip stores it."""
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def local_header(name, flags, method, crc, csize, usize, extra=b""):
    """A local file header."""
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, DOS_TIME, DOS_DATE, crc, csize, usize,
                       len(name), len(extra)) + name + extra


def central_header(name, flags, method, crc, csize, usize, offset, made_by=(3 << 8) | 30, attr=0o100644 << 16, extra=b""):
    """A central directory header."""
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, made_by, 20, flags, method, DOS_TIME, DOS_DATE, crc, csize,
                       usize, len(name), len(extra), 0, 0, 0, attr, offset) + name + extra


def end_record(count, cd_size, cd_offset, comment=b""):
    """The end of central directory record."""
    return struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size, cd_offset, len(comment)) + comment


def build_zip(entries, garbage_cd=False, comment=b""):
    """A zip from ZE entries. str names are UTF-8 (flag bit 11 when not ASCII); bytes names are written raw."""
    out, cd = bytearray(), bytearray()
    for e in entries:
        flags = e.flags
        if isinstance(e.name, str):
            name = e.name.encode()
            flags |= 0x800 if not e.name.isascii() else 0
        else:
            name = e.name
        payload = e.payload if e.payload is not None else deflate(e.data) if e.method == 8 else e.data
        crc = zlib.crc32(e.data) if e.crc is None else e.crc
        csize = len(payload) if e.csize is None else e.csize
        usize = len(e.data) if e.usize is None else e.usize
        offset = len(out)
        if e.descriptor:
            flags |= 0x08
            out += local_header(name, flags, e.method, 0, 0, 0, e.extra) + payload
            out += struct.pack("<IIII", 0x08074B50, crc, csize, usize)
        else:
            out += local_header(name, flags, e.method, crc, csize, usize, e.extra) + payload
        cd += central_header(name, flags, e.method, crc, csize, usize, offset, e.made_by, e.external_attr, e.extra)
    cd_offset = len(out)
    if garbage_cd:
        cd = bytearray(random.Random(7).randbytes(len(cd)))
    return bytes(out + cd + end_record(len(entries), len(cd), cd_offset, comment))


def base(*more):
    """pack.json and a good token, then the given entries."""
    return [ZE("pack.json", manifest()), ZE("tokens/orc.png", token_png(rgb=(120, 90, 60)))] + list(more)


def zip_with(*more):
    """A zip holding the good base entries and then `more`."""
    return build_zip(base(*more))


def with_zipfile(entries):
    """A zip written by Python's zipfile, for compression methods written by a real implementation: (name, data, method)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, data, method in entries:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type, info.create_system, info.external_attr = method, 3, 0o644 << 16
            z.writestr(info, data)
    return buffer.getvalue()


# ------------------------------------------------------------------------------------------------ MapTool token files

# Ids of MapTool's square-grid footprints (squareGridFootprints.xml), and one MapTool 1.3 wrote for Huge.
FOOTPRINT_IDS = {"Medium": "djLnNrpmT/mtic6UWrosXA==", "Large": "ElV+IsLXSf2p0cU48MKWTQ==", "Huge13": "fwABAdBlFSoHAAAAKgABAA==",
                 "Gargantuan": "aWMVJcYTRX2zn1vSP1eXpw==", "Tiny": "hOHPGQMbQySliL5tJxjVow=="}


def token_content(name, md5, footprint_id=None, grid="net.rptools.maptool.model.SquareGrid", head="", root="net.rptools.maptool.model.Token"):
    """A token's content.xml as MapTool's XStream writes it (the fields Hoard reads, and a few it skips)."""
    size = (f"<sizeMap><entry><java-class>{grid}</java-class><net.rptools.maptool.model.GUID><baGUID>{footprint_id}"
            "</baGUID></net.rptools.maptool.model.GUID></entry></sizeMap>") if footprint_id else ""
    escaped = name.replace("&", "&amp;").replace("<", "&lt;")
    return (f"{head}<{root}>\n  <id><baGUID>wKgCA0jwi2MzAAAAQIgAAA==</baGUID></id>\n  <beingImpersonated>false</beingImpersonated>\n"
            f"  <imageAssetMap>\n    <entry>\n      <null/>\n      <net.rptools.lib.MD5Key>\n        <id>{md5}</id>\n"
            "      </net.rptools.lib.MD5Key>\n    </entry>\n  </imageAssetMap>\n  <x>0</x>\n  <y>0</y>\n"
            f"  <snapToScale>true</snapToScale>\n  <width>64</width>\n  <height>64</height>\n  {size}\n"
            f"  <snapToGrid>true</snapToGrid>\n  <name>{escaped}</name>\n  <tokenShape>CIRCLE</tokenShape>\n"
            f"  <layer>TOKEN</layer>\n  <propertyMapCI><store/></propertyMapCI>\n</{root}>").encode()


def rptok(name, image, footprint=None, ext="png", content=None, entries=()):
    """A MapTool token file (.rptok): the zip of ``rptok_entries``."""
    return build_zip(rptok_entries(name, image, footprint, ext, content, entries))


def rptok_entries(name, image, footprint=None, ext="png", content=None, entries=()):
    """The entries of a MapTool token file as PersistenceUtil.saveToken writes them: content.xml, properties.xml, the
    image's descriptor assets/<md5> and bytes assets/<md5>.<ext>, two thumbnails; `content` replaces content.xml,
    `entries` are added."""
    md5 = hashlib.md5(image).hexdigest()
    descriptor = (f"<net.rptools.maptool.model.Asset>\n  <id>\n    <id>{md5}</id>\n  </id>\n  <name>{md5[:8]}</name>\n"
                  f"  <extension>{ext}</extension>\n  <image/>\n</net.rptools.maptool.model.Asset>").encode()
    properties = b"<map>\n  <entry>\n    <string>version</string>\n    <string>1.13.2</string>\n  </entry>\n</map>"
    thumb = token_png(16, 16)
    return [ZE("content.xml", content if content is not None else token_content(name, md5, FOOTPRINT_IDS.get(footprint))),
            ZE("properties.xml", properties), ZE(f"assets/{md5}", descriptor), ZE(f"assets/{md5}.{ext}", image, 0),
            ZE("thumbnail", thumb), ZE("thumbnail_large", thumb)] + list(entries)


# ------------------------------------------------------------------------------------------------ tar writing


def tar_member(name, data=b"", kind=tarfile.REGTYPE, **fields):
    """(TarInfo, data) with fixed owner and time."""
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mtime, info.mode = kind, len(data) if kind == tarfile.REGTYPE else 0, 1704067200, 0o644
    for key, value in fields.items():
        setattr(info, key, value)
    return info, data


def build_tar(members, fmt=tarfile.USTAR_FORMAT, encoding="utf-8"):
    """An uncompressed tar from tar_member()s."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt, encoding=encoding) as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if info.type == tarfile.REGTYPE else None)
    return buffer.getvalue()


def tar_base(*more):
    """pack.json and a good token as tar members, then `more`."""
    return [tar_member("pack.json", manifest()), tar_member("tokens/orc.png", token_png(rgb=(120, 90, 60)))] + list(more)


def targz(data):
    """gzip with a zero timestamp, so output is reproducible."""
    return gzip.compress(data, 9, mtime=0)


# ------------------------------------------------------------------------------------------------ bombs

FINAL_EMPTY_BLOCK = b"\x03\x00"  # a final, empty fixed-Huffman deflate block


def flushed(data):
    """Raw deflate of data ending in a full flush: byte-aligned, self-contained, so it can be concatenated."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)


@functools.cache
def zeros_segment():
    """Raw deflate of 1 MiB of zeros, repeatable back to back."""
    return flushed(bytes(MIB))


def zero_bomb(prefix, mib, suffix=b""):
    """(deflate payload, CRC-32, size) of prefix + mib MiB of zeros + suffix, built without deflating it all."""
    payload = flushed(prefix) + zeros_segment() * mib + flushed(suffix) + FINAL_EMPTY_BLOCK
    return payload, zlib.crc32(suffix, crc_with_zeros(prefix, mib)), len(prefix) + mib * MIB + len(suffix)


PNG_PREFIX = png_head(64, 64)  # 33 bytes: a readable header, the rest of the "picture" is zeros


def overlap_bomb(files=50, kernel_mib=4):
    """A simplified Fifield overlapping-file bomb: each local header's deflate data quotes (in stored blocks) a PNG
    prefix and the next local header, then runs on into the next file's data, all ending in one shared kernel of
    zeros. Every file decodes to ≈ kernel_mib MiB, the archive is a few KiB."""
    names = [f"tokens/b{i:03d}.png".encode() for i in range(files)]
    kernel, _crc, kernel_size = zero_bomb(b"", kernel_mib)
    header_len = 30 + len(names[0])
    def stored(n):  # a non-final stored deflate block header for n bytes
        return struct.pack("<BHH", 0, n, n ^ 0xFFFF)
    # Backwards from the last file: its data is stored(P) P kernel, its output P + zeros. File i's data is
    # stored(P + LFH[i+1]) P LFH[i+1] data[i+1], its output P + LFH[i+1] + output[i+1].
    headers, info = [None] * files, [None] * files
    out_prefix, data_len = PNG_PREFIX, 5 + len(PNG_PREFIX) + len(kernel)
    for i in reversed(range(files)):
        info[i] = (crc_with_zeros(out_prefix, kernel_mib), data_len, len(out_prefix) + kernel_size)
        headers[i] = local_header(names[i], 0, 8, *info[i])
        out_prefix = PNG_PREFIX + headers[i] + out_prefix
        data_len += 5 + len(PNG_PREFIX) + header_len
    out, cd = bytearray(), bytearray()
    for i in range(files):
        cd += central_header(names[i], 0, 8, *info[i], len(out))
        quoted = PNG_PREFIX + (headers[i + 1] if i + 1 < files else b"")
        out += headers[i] + stored(len(quoted)) + PNG_PREFIX
    out += kernel
    assert len(out) - len(headers[0]) == info[0][1]
    return bytes(out + cd + end_record(files, len(cd), len(out)))


def crc_with_zeros(prefix, mib):
    """CRC-32 of prefix followed by mib MiB of zeros."""
    crc, zeros = zlib.crc32(prefix), bytes(MIB)
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return crc


def targz_bomb(mib=200):
    """A tar.gz whose one entry is a PNG header followed by mib MiB of zeros, built without compressing it all."""
    size = len(PNG_PREFIX) + mib * MIB
    header = tar_member("tokens/bomb.png")[0]
    header.size = size
    info, data = tar_member("pack.json", manifest())
    head = info.tobuf(tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512) + header.tobuf(tarfile.USTAR_FORMAT)
    payload, crc, total = zero_bomb(head + PNG_PREFIX, mib, bytes(-size % 512 + 1024))
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03" + payload + struct.pack("<II", crc, total & 0xFFFFFFFF)


# ------------------------------------------------------------------------------------------------ other builders


def zipcrypto(data, password, crc):
    """Traditional PKWARE encryption: 12-byte header (last byte = CRC high byte) + encrypted data."""
    table = [functools.reduce(lambda c, _: (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1, range(8), n) for n in range(256)]
    keys = [0x12345678, 0x23456789, 0x34567890]
    def update(byte):
        keys[0] = (keys[0] >> 8) ^ table[(keys[0] ^ byte) & 0xFF]
        keys[1] = ((keys[1] + (keys[0] & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        keys[2] = (keys[2] >> 8) ^ table[(keys[2] ^ (keys[1] >> 24)) & 0xFF]
    for byte in password:
        update(byte)
    out = bytearray()
    for byte in random.Random(3).randbytes(11) + bytes([crc >> 24]) + data:
        k = keys[2] | 2
        out.append(byte ^ (((k * (k ^ 1)) >> 8) & 0xFF))
        update(byte)
    return bytes(out)


def zstd_raw(data):
    """A zstd frame holding data in raw blocks (no compression library needed)."""
    out = bytearray(b"\x28\xb5\x2f\xfd\x00")  # magic; descriptor: no single segment, no checksum, no size
    out += bytes([0x58])  # window descriptor: 2^(10+11) = 2 MiB window
    blocks = [data[i:i + 131072] for i in range(0, len(data), 131072)] or [b""]
    for i, block in enumerate(blocks):
        out += (int(i == len(blocks) - 1) | (len(block) << 3)).to_bytes(3, "little") + block
    return bytes(out)


def truncate_at_entry_data(archive, name, keep):
    """The archive cut `keep` bytes into the data of zip entry `name`."""
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        info = z.getinfo(name)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    return archive[:start + keep]


# ------------------------------------------------------------------------------------------------ the cases

CASES, VALID = [], []


def case(file, codes, about, entry=None, limits=None):
    """Registers an archive the importer must refuse with one of `codes`, naming `entry` when given."""
    def register(build):
        CASES.append({"file": file, "codes": codes, "entry": entry, "limits": limits, "about": about, "build": build})
        return build
    return register


def valid(file, assets, about):
    """Registers an archive the importer must accept with `assets` assets."""
    def register(build):
        VALID.append({"file": file, "assets": assets, "about": about, "build": build})
        return build
    return register


def bad_entry_cases(rows):
    """Registers one zip per (file, codes, name, data, about, limits): the base entries then `name` holding `data`."""
    for file, codes, name, data, about, *limits in rows:
        entry = None if "INVALID_NAME" in codes else name  # invalid names cannot be shown verbatim
        case(file, codes, about, entry, limits[0] if limits else None)(lambda n=name, d=data: zip_with(ZE(n, d)))


GOOD = token_png()
EVIL = token_png(rgb=(200, 30, 30))
LONG_PATH = "tokens/" + "/".join(["p" * 99] * 11) + "/x.png"

bad_entry_cases([
    ("traversal-dotdot.zip", ["UNSAFE_PATH"], "../evil.png", EVIL, "entry climbs out of the pack with .."),
    ("traversal-nested.zip", ["UNSAFE_PATH"], "tokens/../../evil.png", EVIL, ".. inside the path climbs out of the pack"),
    ("traversal-absolute.zip", ["UNSAFE_PATH"], "/etc/evil.png", EVIL, "absolute path"),
    ("traversal-unc.zip", ["UNSAFE_PATH"], "//server/share/evil.png", EVIL, "UNC-style absolute path"),
    ("traversal-drive.zip", ["UNSAFE_PATH"], "C:/evil.png", EVIL, "Windows drive letter with slash"),
    ("traversal-drive-relative.zip", ["UNSAFE_PATH"], "C:evil.png", EVIL, "Windows drive-relative path"),
    ("name-control-bel.zip", ["INVALID_NAME"], "tokens/evil\x07.png", GOOD, "BEL control character in the name"),
    ("name-control-newline.zip", ["INVALID_NAME"], "tokens/evil\n.png", GOOD, "newline in the name"),
    ("name-control-c1.zip", ["INVALID_NAME"], "tokens/evil\u0085.png", GOOD, "C1 control NEL (U+0085) in the name"),
    ("name-bidi-override.zip", ["INVALID_NAME"], "tokens/gnp.\u202eevil.png", GOOD,
     "right-to-left override U+202E makes the name display as another"),
    ("name-bidi-isolate.zip", ["INVALID_NAME"], "tokens/\u2067evil.png", GOOD, "right-to-left isolate U+2067"),
    ("name-component-too-long.zip", ["NAME_TOO_LONG"], "tokens/" + "a" * 296 + ".png", GOOD,
     "a 300-byte file name (limit 255 bytes per component)"),
    ("name-component-too-long-utf8.zip", ["NAME_TOO_LONG"], "tokens/" + "ド" * 90 + ".png", GOOD,
     "a 94-character name of 274 UTF-8 bytes: the limit counts bytes"),
    ("name-path-too-long.zip", ["NAME_TOO_LONG"], LONG_PATH, GOOD,
     f"a {len(LONG_PATH)}-byte path of 99-byte components, 12 folders deep (limit 1024 bytes)"),
    ("path-too-deep.zip", ["PATH_TOO_DEEP"], "tokens/" + "d/" * 39 + "goblin.png", GOOD, "nested in 40 folders (limit 16)"),
    ("path-too-deep-limit.zip", ["PATH_TOO_DEEP"], "tokens/a/b/c/d/goblin.png", GOOD,
     "5 folders deep with maxPathDepth 4", {"maxPathDepth": 4}),
    ("type-jpeg-as-png.zip", ["TYPE_MISMATCH"], "tokens/goblin.png", jpeg(64, 64), "a .png holding a JPEG"),
    ("type-text-as-png.zip", ["TYPE_MISMATCH"], "tokens/goblin.png", b"just some text, not a picture\n" * 4,
     "a .png holding text"),
    ("type-png-as-webp.zip", ["TYPE_MISMATCH"], "tokens/goblin.webp", GOOD, "a .webp holding a PNG"),
    ("type-webp-as-jpg.zip", ["TYPE_MISMATCH"], "tokens/goblin.jpg", webp_lossless(64, 64), "a .jpg holding a WebP"),
    ("pixelbomb-png-side.zip", ["IMAGE_TOO_LARGE"], "backgrounds/huge.png",
     png_head(100000, 100000) + png_chunk(b"IDAT", zlib.compress(bytes(64))) + IEND,
     "PNG header says 100000×100000 (side limit 16384)"),
    ("pixelbomb-jpeg.zip", ["IMAGE_TOO_LARGE"], "backgrounds/huge.jpg", jpeg(60000, 60000, complete=False),
     "JPEG SOF0 says 60000×60000"),
    ("pixelbomb-webp-vp8x.zip", ["IMAGE_TOO_LARGE"], "tokens/huge.webp",
     riff_webp((b"VP8X", b"\x00\x00\x00\x00" + (16382).to_bytes(3, "little") * 2), (b"VP8L", vp8l(16383, 16383))),
     "extended WebP token, canvas 16383×16383 = 268 MP (sides under 16384, area over a token's 100 MP)"),
    ("pixelbomb-webp-vp8l.zip", ["IMAGE_TOO_LARGE"], "objects/huge.webp", webp_lossless(16384, 16384),
     "a real, decodable one-colour lossless WebP object of 16384×16384 in 40 bytes (over an object's 100 MP)"),
    ("pixelbomb-loose-default-kind.zip", ["IMAGE_TOO_LARGE"], "misc/huge.webp", webp_lossless(16384, 16384),
     "a 16384×16384 WebP in a folder no kind claims: it gets the default kind (token) and its 100 MP budget"),
    ("pixelbomb-map-budget.zip", ["IMAGE_TOO_LARGE"], "maps/huge.webp", webp_lossless(12000, 12000),
     "a 12000×12000 battlemap with maxMapPixels 100000000", {"maxMapPixels": 100000000}),
    ("footprint-map-too-big.zip", ["BAD_FOOTPRINT"], "maps/world_600x600.png", GOOD,
     "a battlemap footprint of 600x600 tiles (maps allow up to 512, the largest grid)"),
    ("footprint-token-in-battlemap-size.zip", ["BAD_FOOTPRINT"], "creatures/Cave_40x30.png", GOOD,
     "a 40x30 footprint in creatures/ (a token synonym; tokens allow up to 32)"),
    ("gif-frame-bomb.zip", ["IMAGE_TOO_LARGE"], "tokens/flicker.gif", gif(1, 1, frames=1001),
     "a 1×1 GIF of 1001 frames (limit 1000)"),
    ("gif-frame-pixel-bomb.zip", ["IMAGE_TOO_LARGE"], "maps/storm.gif", gif(1, 1, frames=5, screen=(16000, 16000), rect=(0, 0, 1, 1)),
     "a 16000×16000 GIF battlemap of 5 frames: 1.28 Gpx in all frames (limit 1 Gpx)"),
    ("gif-frame-outside.zip", ["UNREADABLE_IMAGE"], "tokens/spill.gif", gif(8, 8, frames=2, screen=(4, 4)),
     "a 4×4 GIF whose 8×8 frames lie outside it"),
    ("gif-truncated.zip", ["UNREADABLE_IMAGE"], "tokens/cut.gif", gif(8, 8, frames=3)[:-30], "a GIF cut inside its last frame's data"),
    ("webp-frame-bomb.zip", ["IMAGE_TOO_LARGE"], "tokens/flicker.webp", animated_webp(1, 1, frames=1500),
     "an animated 1×1 WebP of 1500 frames (limit 1000)"),
    ("webp-frame-outside.zip", ["UNREADABLE_IMAGE"], "tokens/spill.webp", animated_webp(4, 4, frames=2, frame_size=(9, 9)),
     "an animated 4×4 WebP whose 9×9 frames lie outside it"),
    ("apng-frame-count-lie.zip", ["UNREADABLE_IMAGE"], "tokens/spin.png", apng(64, 64, frames=3, declared=2),
     "an APNG whose acTL declares 2 frames but which holds 3"),
    ("webm-lying-size.zip", ["UNREADABLE_IMAGE"], "tokens/flame.webm", webm(64, 64, tracks_size=5000),
     "a WebM whose Tracks element says it holds 5000 bytes, past the end of the file"),
    ("webm-pixel-bomb.zip", ["IMAGE_TOO_LARGE"], "tokens/flame.webm", webm(100000, 100000),
     "a WebM whose video track says 100000×100000"),
    ("webm-matroska.zip", ["TYPE_MISMATCH"], "tokens/flame.webm", webm(64, 64, doctype=b"matroska"),
     "a .webm that is a Matroska file, not WebM"),
    ("wrapper-hides-dotdot.zip", ["UNSAFE_PATH"], "Goblins/../tokens/evil.png", EVIL,
     "a wrapper folder whose next component is '..': stripping the wrapper must not hide it"),
    ("wrapper-dotdot-deep.zip", ["UNSAFE_PATH"], "Goblins/tokens/../../../evil.png", EVIL,
     "'..' climbing out of the wrapper folder and out of the pack"),
    ("unreadable-truncated-ihdr.zip", ["UNREADABLE_IMAGE"], "tokens/broken.png", GOOD[:12],
     "PNG signature then the file ends inside IHDR (12 bytes)"),
    ("unreadable-ihdr-crc.zip", ["UNREADABLE_IMAGE"], "tokens/broken.png", GOOD[:29] + b"\x00\x00\x00\x00" + GOOD[33:],
     "PNG IHDR with a wrong CRC"),
    ("unreadable-zero-width.zip", ["UNREADABLE_IMAGE"], "tokens/broken.png",
     png_head(0, 64) + png_chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + IEND, "PNG IHDR with width 0"),
    ("unreadable-jpeg-no-sof.zip", ["UNREADABLE_IMAGE"], "tokens/broken.jpg", jpeg(8, 8)[:20] + b"\xff\xd9",
     "JPEG with SOI, APP0 and EOI but no frame header"),
    ("unreadable-webp-truncated.zip", ["UNREADABLE_IMAGE"], "tokens/broken.webp", webp_lossless(64, 64)[:22],
     "WebP cut inside its VP8L header"),
    ("footprint-too-big.zip", ["BAD_FOOTPRINT"], "tokens/titan_40x40.png", GOOD, "footprint 40x40 (allowed 1 to 32)"),
    ("footprint-zero.zip", ["BAD_FOOTPRINT"], "tokens/zero_0x2.png", GOOD, "footprint 0x2"),
    ("scale-5x.zip", ["BAD_SCALE"], "textures/stone@5x.png", token_png(320, 320), "@5x is not a LOD scale (1, 2, 3, 4, 8)"),
    ("scale-0x.zip", ["BAD_SCALE"], "textures/stone@0x.png", GOOD, "@0x is not a LOD scale"),
])


case("name-invalid-utf8-tar.tar", ["INVALID_NAME"], "tar name bytes FF FE: tar has no legacy encoding, the name is not UTF-8")(
    lambda: build_tar(tar_base(tar_member("tokens/\xff\xfe.png", GOOD)), encoding="latin-1"))
case("name-invalid-utf8-flagged.zip", ["INVALID_NAME"], "invalid UTF-8 (C3 28) although the UTF-8 flag (bit 11) is set")(
    lambda: zip_with(ZE(b"tokens/\xc3\x28.png", GOOD, flags=0x800)))


def pair_case(file, codes, about, first, second):
    """A zip with the base entries and two named pictures; the second is the one the error names."""
    case(file, codes, about, entry=second[0])(lambda: zip_with(ZE(*first), ZE(*second)))


pair_case("collision-case.zip", ["NAME_COLLISION"], "tokens/Goblin.png and tokens/goblin.png differ only in case",
          ("tokens/Goblin.png", GOOD), ("tokens/goblin.png", EVIL))
pair_case("collision-folder-case.zip", ["NAME_COLLISION"], "Tokens/goblin.png and tokens/goblin.png",
          ("Tokens/goblin.png", GOOD), ("tokens/goblin.png", EVIL))
pair_case("collision-nfc-nfd.zip", ["NAME_COLLISION"], "café in NFC then in NFD (e + combining acute)",
          ("tokens/caf\u00e9.png", GOOD), ("tokens/cafe\u0301.png", EVIL))
pair_case("collision-exact.zip", ["NAME_COLLISION"], "the same name twice",
          ("tokens/goblin.png", GOOD), ("tokens/goblin.png", EVIL))
pair_case("collision-sharp-s.zip", ["NAME_COLLISION"], "straße and STRASSE collide under full case folding",
          ("tokens/stra\u00dfe.png", GOOD), ("tokens/STRASSE.png", EVIL))
case("collision-dot-segment.zip", ["NAME_COLLISION"], "tokens/goblin.png and tokens/./goblin.png name the same file",
     entry="tokens/goblin.png")(lambda: zip_with(ZE("tokens/./goblin.png", GOOD), ZE("tokens/goblin.png", EVIL)))
pair_case("variant-scale.zip", ["VARIANT_MISMATCH"], "textures/stone@2x.png is 100×100, twice 64×64 is 128×128",
          ("textures/stone.png", GOOD), ("textures/stone@2x.png", token_png(100, 100)))
pair_case("variant-aspect.zip", ["VARIANT_MISMATCH"], "tokens/ogre_2x2@2x.png is 256×128 where its base is 128×128",
          ("tokens/ogre_2x2.png", token_png(128, 128)), ("tokens/ogre_2x2@2x.png", token_png(256, 128)))
pair_case("variant-duplicate.zip", ["DUPLICATE_VARIANT"], "textures/stone.png and textures/stone@1x.png are both @1x",
          ("textures/stone.png", GOOD), ("textures/stone@1x.png", GOOD))
pair_case("variant-duplicate-footprint-forms.zip", ["DUPLICATE_VARIANT"], "tokens/ogre [2x2].png and tokens/ogre_2x2.png",
          ("tokens/ogre [2x2].png", token_png(128, 128)), ("tokens/ogre_2x2.png", token_png(128, 128)))


@case("pixelbomb-png-area.zip", ["IMAGE_TOO_LARGE"], "a real, decodable 15000×15000 1-bit PNG token: 225 MP with both sides "
      "under 16384 (a token may have 100 MP), ≈27 KiB", entry="tokens/huge.png")
def _():
    z, rows = zlib.compressobj(9), bytes((1 + 15000 // 8) * 1000)
    idat = b"".join(z.compress(rows) for _ in range(15)) + z.flush()
    return zip_with(ZE("tokens/huge.png", png_head(15000, 15000, 1, 0) + png_chunk(b"IDAT", idat) + IEND))


@case("link-zip-symlink.zip", ["LINK_ENTRY"], "Unix symlink entry (mode 120777) pointing at ../../etc/passwd",
      entry="tokens/link.png")
def _():
    return zip_with(ZE("tokens/link.png", b"../../etc/passwd", 0, external_attr=0o120777 << 16))


@case("link-tar-symlink.tar", ["LINK_ENTRY"], "tar symlink to ../../etc/passwd", entry="tokens/link.png")
def _():
    return build_tar(tar_base(tar_member("tokens/link.png", kind=tarfile.SYMTYPE, linkname="../../etc/passwd")))


@case("link-tar-hardlink.tar", ["LINK_ENTRY"], "tar hard link to an earlier entry", entry="tokens/link.png")
def _():
    return build_tar(tar_base(tar_member("tokens/link.png", kind=tarfile.LNKTYPE, linkname="tokens/orc.png")))


@case("traversal-tar.tar", ["UNSAFE_PATH"], "tar entry ../evil.png", entry="../evil.png")
def _():
    return build_tar(tar_base(tar_member("../evil.png", EVIL)))


@case("traversal-backslash.zip", ["UNSAFE_PATH"], "zip entry tokens\\..\\..\\evil.png; no entry given: libarchive's zip "
      "reader turns backslashes into slashes, so the error may name tokens/../../evil.png")
def _():
    return zip_with(ZE("tokens\\..\\..\\evil.png", EVIL))


for _file, _name, _about in [("traversal-backslash.tar", "tokens\\..\\..\\evil.png", "tar entry with backslashes and .."),
                             ("traversal-backslash-plain.tar", "tokens\\evil.png", "tar entry with a backslash, no ..")]:
    case(_file, ["UNSAFE_PATH"], _about, entry=_name)(lambda n=_name: build_tar(tar_base(tar_member(n, EVIL))))


for _file, _kind, _about in [("special-tar-chardev.tar", tarfile.CHRTYPE, "tar character device (1,3)"),
                             ("special-tar-blockdev.tar", tarfile.BLKTYPE, "tar block device (8,0)"),
                             ("special-tar-fifo.tar", tarfile.FIFOTYPE, "tar FIFO")]:
    case(_file, ["SPECIAL_ENTRY"], _about, entry="tokens/dev.png")(
        lambda k=_kind: build_tar(tar_base(tar_member("tokens/dev.png", kind=k, devmajor=1, devminor=3))))


@case("encrypted-zipcrypto.zip", ["ENCRYPTED_ENTRY"], "traditional PKWARE encryption (password 'hoard'), stored",
      entry="tokens/secret.png")
def _():
    crc = zlib.crc32(GOOD)
    return zip_with(ZE("tokens/secret.png", GOOD, 0, flags=1, payload=zipcrypto(GOOD, b"hoard", crc)))


@case("encrypted-aes.zip", ["ENCRYPTED_ENTRY", "UNSUPPORTED_COMPRESSION"], "WinZip AES-256 entry (method 99, AE-2)",
      entry="tokens/secret.png")
def _():
    extra = struct.pack("<HHH2sBH", 0x9901, 7, 2, b"AE", 3, 8)
    payload = random.Random(4).randbytes(16 + 2 + len(GOOD) + 10)
    return zip_with(ZE("tokens/secret.png", GOOD, 99, flags=1, payload=payload, crc=0, extra=extra))


@case("method-bzip2.zip", ["UNSUPPORTED_COMPRESSION"], "entry compressed with bzip2 (method 12)", entry="tokens/goblin.png")
def _():
    return with_zipfile([("pack.json", manifest(), 0), ("tokens/orc.png", GOOD, 8), ("tokens/goblin.png", EVIL, zipfile.ZIP_BZIP2)])


@case("method-lzma.zip", ["UNSUPPORTED_COMPRESSION"], "entry compressed with LZMA (method 14)", entry="tokens/goblin.png")
def _():
    return with_zipfile([("pack.json", manifest(), 0), ("tokens/orc.png", GOOD, 8), ("tokens/goblin.png", EVIL, zipfile.ZIP_LZMA)])


@case("method-zstd.zip", ["UNSUPPORTED_COMPRESSION"], "entry compressed with Zstandard (method 93)", entry="tokens/goblin.png")
def _():
    return zip_with(ZE("tokens/goblin.png", EVIL, 93, payload=zstd_raw(EVIL)))


@case("method-deflate64.zip", ["UNSUPPORTED_COMPRESSION"], "entry with method 9 (Deflate64)", entry="tokens/goblin.png")
def _():
    return zip_with(ZE("tokens/goblin.png", EVIL, 9, payload=deflate(EVIL, 0)))


SIZE_CODES = ["SIZE_MISMATCH", "CORRUPT_ARCHIVE"]


@case("size-declared-smaller.zip", SIZE_CODES, "headers declare 100 bytes, the deflate data inflates to 5000",
      entry="tokens/liar.png")
def _():
    return zip_with(ZE("tokens/liar.png", padded_png(5000), usize=100))


@case("size-declared-larger.zip", SIZE_CODES, "headers declare 50000 bytes, the deflate data inflates to 5000",
      entry="tokens/liar.png")
def _():
    return zip_with(ZE("tokens/liar.png", padded_png(5000), usize=50000))


@case("size-stored-inconsistent.zip", SIZE_CODES, "stored entry: compressed size 5000, uncompressed size 6000",
      entry="tokens/liar.png")
def _():
    return zip_with(ZE("tokens/liar.png", padded_png(5000), 0, usize=6000))


@case("size-tar-truncated.tar", ["CORRUPT_ARCHIVE", "SIZE_MISMATCH"], "tar header says 5000 bytes, the file ends after 1000",
      entry="tokens/liar.png")
def _():
    data = build_tar(tar_base(tar_member("tokens/liar.png", padded_png(5000, seed=5))))
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        return data[:t.getmember("tokens/liar.png").offset_data + 1000]


@case("bomb-deflate.zip", ["COMPRESSION_RATIO"], "one entry: PNG header then 200 MiB of zeros, deflated to ≈200 KiB",
      entry="tokens/bomb.png")
def _():
    payload, crc, size = zero_bomb(PNG_PREFIX, 200)
    return zip_with(ZE("tokens/bomb.png", b"", payload=payload, crc=crc, usize=size))


@case("bomb-lying-size.zip", ["SIZE_MISMATCH", "CORRUPT_ARCHIVE", "COMPRESSION_RATIO"],
      "declares 1000 bytes but inflates to 200 MiB: must stop early, not inflate it all", entry="tokens/bomb.png")
def _():
    payload, crc, _size = zero_bomb(PNG_PREFIX, 200)
    return zip_with(ZE("tokens/bomb.png", b"", payload=payload, crc=crc, usize=1000))


@case("bomb-overlap.zip", ["COMPRESSION_RATIO", "ARCHIVE_TOO_LARGE", "CORRUPT_ARCHIVE", "NAME_COLLISION"],
      "50 overlapping entries (Fifield-style quoted local headers) sharing one 4 MiB kernel: ≈200 MiB from ≈10 KiB; "
      "a reader that walks local headers only (no central directory) sees one 4 MiB entry")
def _():
    return overlap_bomb()


@case("bomb-targz.tar.gz", ["COMPRESSION_RATIO"], "tar.gz whose entry is a PNG header then 200 MiB of zeros",
      entry="tokens/bomb.png")
def _():
    return targz_bomb()


@case("too-many-entries.zip", ["TOO_MANY_ENTRIES"], "pack.json and 12 tokens with maxEntries 10", limits={"maxEntries": 10})
def _():
    return build_zip([ZE("pack.json", manifest())] + [ZE(f"tokens/t{i:02d}.png", GOOD) for i in range(12)])


@case("entry-too-large.zip", ["ENTRY_TOO_LARGE"], "a stored 2 MiB PNG (random padding) with maxEntryBytes 1 MiB",
      entry="tokens/huge.png", limits={"maxEntryBytes": MIB})
def _():
    return zip_with(ZE("tokens/huge.png", padded_png(2 * MIB, seed=6), 0))


@case("archive-too-large.zip", ["ARCHIVE_TOO_LARGE"], "three 600 KiB PNGs (zero padding, deflated: the file is small, "
      "the decoded total is not) with maxArchiveBytes 1 MiB", limits={"maxArchiveBytes": MIB})
def _():
    return zip_with(*[ZE(f"tokens/big{i}.png", padded_png(600 * 1024)) for i in range(3)])


@case("corrupt-crc.zip", ["CORRUPT_ARCHIVE"], "one byte of a stored entry's padding flipped, sizes intact",
      entry="tokens/goblin.png")
def _():
    data = padded_png(4000, seed=8)
    archive = zip_with(ZE("tokens/goblin.png", data, 0))
    at = archive.index(data) + 2000
    return archive[:at] + bytes([archive[at] ^ 0xFF]) + archive[at + 1:]


@case("corrupt-deflate-stream.zip", ["CORRUPT_ARCHIVE"], "deflate data that is not a valid deflate stream",
      entry="tokens/goblin.png")
def _():
    return zip_with(ZE("tokens/goblin.png", GOOD, payload=b"\xff" * 64 + random.Random(9).randbytes(200)))


@case("corrupt-truncated.zip", ["CORRUPT_ARCHIVE"], "zip cut in the middle of an entry's data: no central directory")
def _():
    return truncate_at_entry_data(zip_with(ZE("tokens/goblin.png", padded_png(6000, seed=9), 0)), "tokens/goblin.png", 3000)


@case("corrupt-central-directory.zip", ["CORRUPT_ARCHIVE"], "end record points at a central directory of random bytes")
def _():
    return build_zip(base(ZE("tokens/goblin.png", GOOD)), garbage_cd=True)


@case("corrupt-cd-offset.zip", ["CORRUPT_ARCHIVE"], "end record gives a central directory offset past the end of the file")
def _():
    archive = zip_with(ZE("tokens/goblin.png", GOOD))
    return archive[:-6] + struct.pack("<I", len(archive) * 4) + archive[-2:]


@case("corrupt-local-signature.zip", ["CORRUPT_ARCHIVE"], "the central directory points at a local header with a bad signature")
def _():
    archive = zip_with(ZE("tokens/goblin.png", GOOD))
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        at = z.getinfo("tokens/goblin.png").header_offset
    return archive[:at] + b"XX" + archive[at + 2:]


@case("corrupt-truncated.tar.gz", ["CORRUPT_ARCHIVE"], "tar.gz cut in half")
def _():
    members = tar_base(*[tar_member(f"tokens/t{i}.png", padded_png(3000, seed=20 + i)) for i in range(4)])
    data = targz(build_tar(members))
    return data[:len(data) // 2]


FORMAT_ABOUT = "not a zip, tar or tar.gz"
for _file, _data, _about in [
        ("format-7z.zip", b"7z\xbc\xaf\x27\x1c\x00\x04" + random.Random(11).randbytes(200), "7-Zip signature, named .zip"),
        ("format-rar.zip", b"Rar!\x1a\x07\x01\x00" + random.Random(12).randbytes(200), "RAR 5 signature, named .zip"),
        ("format-png.zip", GOOD, "a PNG renamed .zip"),
        ("format-text.zip", b"This is not an archive.\n" * 10, "plain text named .zip"),
        ("empty.zip", b"", "an empty file"),
        ("format-xz.tar.xz", lambda: lzma.compress(build_tar(tar_base()), format=lzma.FORMAT_XZ), "xz-compressed tar"),
        ("format-bzip2.tar.bz2", lambda: bz2.compress(build_tar(tar_base()), 9), "bzip2-compressed tar"),
        ("format-zstd.tar.zst", lambda: zstd_raw(build_tar(tar_base())), "Zstandard-compressed tar")]:
    case(_file, ["UNSUPPORTED_FORMAT"], f"{_about}: {FORMAT_ABOUT}")(_data if callable(_data) else lambda d=_data: d)
case("format-gzip-not-tar.tar.gz", ["UNSUPPORTED_FORMAT", "CORRUPT_ARCHIVE"], "a gzipped PNG named .tar.gz")(lambda: targz(GOOD))

MANIFEST_CASES = [
    ("manifest-not-json.zip", b'{"name": "broken", "tilePixels": 64', "pack.json is cut-off JSON", None),
    ("manifest-wrong-type.zip", b'{"name": "typed", "tilePixels": "big"}', 'tilePixels is the string "big"', None),
    ("manifest-tile-zero.zip", b'{"name": "zero", "tilePixels": 0}', "tilePixels 0 (allowed 8 to 4096)", None),
    ("manifest-array.zip", b"[1, 2, 3]", "pack.json is a JSON array, not an object", None),
    ("manifest-bad-utf8.zip", b'{"name": "caf\xe9", "tilePixels": 64}', "pack.json is Latin-1, not UTF-8", None),
    ("manifest-too-large.zip", json.dumps({"name": "big", "tilePixels": 64, "description": "x" * 2000}).encode(),
     "a valid 2 KiB pack.json with maxManifestBytes 1024", {"maxManifestBytes": 1024}),
]
for _file, _json, _about, _limits in MANIFEST_CASES:
    case(_file, ["BAD_MANIFEST"], _about, entry="pack.json", limits=_limits)(
        lambda j=_json: build_zip([ZE("tokens/orc.png", GOOD), ZE("pack.json", j)]))

case("empty-readme-only.zip", ["EMPTY_PACK"], "a zip holding only README.txt")(
    lambda: build_zip([ZE("README.txt", b"Nothing to see here.\n")]))
case("empty-no-entries.zip", ["EMPTY_PACK"], "a valid zip with no entries (end record only)")(lambda: build_zip([]))
case("empty-manifest-only.zip", ["EMPTY_PACK"], "pack.json and nothing else")(lambda: build_zip([ZE("pack.json", manifest())]))
case("empty-default-convention-off.zip", ["EMPTY_PACK"], "pictures only in a folder no kind claims, hoard.default off")(
    lambda: build_zip([ZE("pack.json", json.dumps({"name": PACK_NAME[0], "tilePixels": 64, "plugins": {"hoard.default": False}}).encode()),
                       ZE("misc/goblin.png", GOOD)]))
case("empty-litter-only.zip", ["EMPTY_PACK"], "only what macOS adds: __MACOSX/._goblin.png and .DS_Store")(
    lambda: build_zip([ZE("Goblins/.DS_Store", b"\x00\x00\x00\x01Bud1" + bytes(64)),
                       ZE("__MACOSX/Goblins/._goblin.png", b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + bytes(64))]))

# ------------------------------------------------------------------------------------------------ valid tricky archives


def sample_members():
    """pack.json and three assets (a token, a 2×2 token, a texture with @2x)."""
    return [("pack.json", manifest()), ("tokens/goblin.png", GOOD), ("tokens/ogre_2x2.png", token_png(128, 128)),
            ("textures/stone.png", token_png(64, 64, (130, 130, 140))), ("textures/stone@2x.png", token_png(128, 128, (130, 130, 140)))]


valid("valid-pack.tar", 3, "uncompressed ustar pack")(lambda: build_tar([tar_member(n, d) for n, d in sample_members()]))
valid("valid-pack.tar.gz", 3, "tar.gz pack")(lambda: targz(build_tar([tar_member(n, d) for n, d in sample_members()])))
valid("valid-deflated.zip", 3, "the same pack, deflated zip")(lambda: build_zip([ZE(n, d) for n, d in sample_members()]))
valid("valid-data-descriptor.zip", 3, "sizes and CRCs in data descriptors (flag bit 3), as streaming zip writers do")(
    lambda: build_zip([ZE(n, d, descriptor=True) for n, d in sample_members()]))
valid("valid-zip64.zip", 3, "every entry with ZIP64 extra fields (force_zip64)")(lambda: zip64_pack())
valid("valid-macos-junk.zip", 1, "__MACOSX/ AppleDouble files and .DS_Store files beside one token")(lambda: build_zip([
    ZE("pack.json", manifest()), ZE("tokens/goblin.png", GOOD), ZE("tokens/.DS_Store", b"\x00\x00\x00\x01Bud1" + bytes(64)),
    ZE(".DS_Store", b"\x00\x00\x00\x01Bud1" + bytes(64)), ZE("__MACOSX/", b"", 0, external_attr=(0o40755 << 16) | 0x10),
    ZE("__MACOSX/tokens/._goblin.png", b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + bytes(64))]))
valid("valid-utf8-names.zip", 3, "UTF-8 names (flag bit 11): drache, gobelin-été (NFC), ドラゴン")(lambda: build_zip([
    ZE("pack.json", manifest()), ZE("tokens/drache_2x2.png", token_png(128, 128)),
    ZE(unicodedata.normalize("NFC", "tokens/gobelin-été.png"), GOOD), ZE("tokens/ドラゴン_2x2.png", token_png(128, 128))]))
valid("valid-directory-entries.zip", 2, "explicit folder entries (tokens/, textures/) before the files")(lambda: build_zip([
    ZE("pack.json", manifest())] + [ZE(d, b"", 0, external_attr=(0o40755 << 16) | 0x10) for d in ("tokens/", "textures/")] + [
    ZE("tokens/goblin.png", GOOD), ZE("textures/stone.png", GOOD)]))
valid("valid-jpeg-webp.zip", 3, "JPEG (.jpg and .jpeg) and lossless WebP tokens")(lambda: build_zip([
    ZE("pack.json", manifest()), ZE("tokens/goblin.jpg", jpeg(64, 64)), ZE("tokens/orc.jpeg", jpeg(64, 64)),
    ZE("tokens/slime.webp", webp_lossless(64, 64))]))
valid("valid-variants.zip", 4, "LOD variants, bracket footprints, size words and singular/upper-case folders")(lambda: build_zip([
    ZE("pack.json", manifest()), ZE("TEXTURES/stone.png", GOOD), ZE("TEXTURES/stone@2x.png", token_png(128, 128)),
    ZE("TEXTURES/stone@4x.png", token_png(256, 256)), ZE("Token/dragon [4x4].png", token_png(256, 256)),
    ZE("Token/dragon [4x4]@2x.png", token_png(512, 512)), ZE("Token/rat_tiny.png", GOOD),
    ZE("wall/metal@1x.png", GOOD), ZE("wall/metal@2x.png", token_png(128, 128))]))
valid("valid-cp437-names.zip", 2, "names in CP437 without the UTF-8 flag (Windows' compressor): Café_Goblin, ñandú")(
    lambda: build_zip([ZE("pack.json", manifest()), ZE("tokens/Caf\xe9_Goblin.png".encode("cp437"), GOOD),
                       ZE("tokens/\xf1and\xfa.png".encode("cp437"), token_png(64, 64, (10, 20, 30)))]))
valid("valid-utf8-without-flag.zip", 1, "a UTF-8 name without the UTF-8 flag (macOS Archive Utility) is read as UTF-8")(
    lambda: build_zip([ZE("pack.json", manifest()), ZE("tokens/gobelin-été.png".encode(), GOOD)]))
valid("valid-loose-folder.zip", 1, "a picture in a folder no kind claims gets the default kind (token)")(
    lambda: build_zip([ZE("pack.json", manifest()), ZE("misc/goblin.png", GOOD)]))
valid("valid-wrapper-folder.zip", 2, "everything under one folder (a zipped folder) with Finder's litter")(lambda: build_zip([
    ZE("Goblins/pack.json", manifest()), ZE("Goblins/tokens/goblin.png", GOOD), ZE("Goblins/Creatures/orc.png", EVIL),
    ZE("Goblins/.DS_Store", b"\x00\x00\x00\x01Bud1" + bytes(64)),
    ZE("__MACOSX/Goblins/tokens/._goblin.png", b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        " + bytes(64))]))
valid("valid-animated.zip", 5, "an animated GIF, a one-frame GIF, an APNG, an animated WebP and a WebM token")(lambda: build_zip([
    ZE("pack.json", manifest()), ZE("tokens/flame.gif", gif(64, 64, frames=4)), ZE("tokens/still.gif", gif(64, 64)),
    ZE("tokens/spin.png", apng(64, 64)), ZE("tokens/pulse.webp", animated_webp(64, 64)), ZE("tokens/torch.webm", webm(64, 64))]))
valid("valid-no-manifest.zip", 1, "no pack.json: defaults apply (tilePixels 256), a 256×256 token")(
    lambda: build_zip([ZE("tokens/goblin.png", token_png(256, 256))], comment=b"an archive comment"))



# MapTool token files inside a pack: each hostile one is refused naming itself (the pack with it).
TOKEN_MD5 = hashlib.md5(EVIL).hexdigest()
LAUGHS = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
          '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>')
for file, codes, about, token in [
    ("rptok-entity-expansion.zip", ["BAD_TOKEN_FILE"], "a token file whose content.xml declares entities (billion laughs)",
     rptok("lol", EVIL, content=token_content("&lol3;", TOKEN_MD5, head=LAUGHS).replace(b"&amp;lol3;", b"&lol3;"))),
    ("rptok-external-entity.zip", ["BAD_TOKEN_FILE"], "a token file whose content.xml names an external entity (file:///etc/passwd)",
     rptok("xxe", EVIL, content=token_content("&xxe;", TOKEN_MD5, head='<!DOCTYPE t [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>')
           .replace(b"&amp;xxe;", b"&xxe;"))),
    ("rptok-malformed-xml.zip", ["BAD_TOKEN_FILE"], "a token file whose content.xml is cut off inside an element",
     rptok("cut", EVIL, content=token_content("cut", TOKEN_MD5)[:200])),
    ("rptok-missing-image.zip", ["BAD_TOKEN_FILE"], "a token file whose content.xml names an image it does not hold",
     rptok("lost", EVIL, content=token_content("lost", "0123456789abcdef0123456789abcdef"))),
    ("rptok-no-content.zip", ["BAD_TOKEN_FILE"], "a token file without content.xml", build_zip([ZE("assets/x.png", EVIL)])),
    ("rptok-map.zip", ["BAD_TOKEN_FILE"], "a MapTool map (.rpmap content) named .rptok",
     rptok("map", EVIL, content=token_content("map", TOKEN_MD5, root="net.rptools.maptool.util.PersistenceUtil_-PersistedMap"))),
    ("rptok-traversal.zip", ["UNSAFE_PATH"], "a token file holding ../../evil.png", rptok("evil", EVIL, entries=[ZE("../../evil.png", EVIL)])),
    ("rptok-pixel-bomb.zip", ["IMAGE_TOO_LARGE"], "a token file whose image declares 100000×100000 pixels",
     rptok("huge", png_head(100000, 100000) + bytes(64))),
    ("rptok-type-mismatch.zip", ["TYPE_MISMATCH"], "a token file whose .png image is a JPEG", rptok("liar", jpeg(64, 64))),
    ("rptok-lying-size.zip", SIZE_CODES, "a token file whose image's headers declare 100 bytes for 5000",
     rptok("sizes", EVIL, entries=[ZE("assets/extra.png", padded_png(5000), usize=100)])),
    ("rptok-not-a-zip.zip", ["UNSUPPORTED_FORMAT", "CORRUPT_ARCHIVE"], "a token file that is 7-Zip bytes", b"7z\xbc\xaf\x27\x1c" + bytes(64)),
]:
    case(file, codes, about, entry="tokens/bad.rptok")(lambda t=token: zip_with(ZE("tokens/bad.rptok", t, 0)))


@case("rptok-bomb.zip", ["COMPRESSION_RATIO"], "a token file whose image is 200 MiB of zeros deflated to ≈200 KiB",
      entry="tokens/bad.rptok")
def _():
    payload, crc, size = zero_bomb(PNG_PREFIX, 200)
    md5 = "00112233445566778899aabbccddeeff"
    token = build_zip([ZE("content.xml", token_content("bomb", md5)), ZE(f"assets/{md5}.png", b"", payload=payload, crc=crc, usize=size)])
    return zip_with(ZE("tokens/bad.rptok", token, 0))


case("maptool-map.rpmap", ["BAD_TOKEN_FILE"], "a MapTool map imported alone: a MapTool file, but no token")(lambda: rptok("map", EVIL, content=token_content(
         "map", TOKEN_MD5, root="net.rptools.maptool.util.PersistenceUtil_-PersistedMap")))


case("rptok-shared-entries.zip", ["TOO_MANY_ENTRIES"], "within maxEntries 12, a pack of 4 entries and two token files of 6: "
     "the second passes the entries the pack shares with its token files", entry="tokens/bad.rptok", limits={"maxEntries": 12})(
    lambda: zip_with(ZE("tokens/a.rptok", rptok("A", GOOD), 0), ZE("tokens/bad.rptok", rptok("B", EVIL), 0)))


valid("valid-rptok.zip", 3, "a PNG token and two MapTool token files (Medium, Large)")(lambda: zip_with(
    ZE("tokens/goblin.rptok", rptok("Goblin", GOOD, "Medium"), 0), ZE("tokens/ogre.rptok", rptok("Ogre", token_png(128, 128), "Large"), 0)))


# ------------------------------------------------------------------------------------------------ bundles

BUNDLES = []


def bundle(file, about, packs, limits=None):
    """Registers a bundle: `packs` maps each inner archive to "imported" or its acceptable error codes; the decorated
    function returns [(inner name, bytes)], stored uncompressed in the bundle as art stores ship them."""
    def register(build):
        BUNDLES.append({"file": file, "about": about, "packs": packs, "limits": limits,
                        "build": lambda: build_zip([ZE(name, data, 0) for name, data in build()])})
        return build
    return register


def inner_pack(name, *entries, tokens=1, seed=0):
    """An inner pack: pack.json naming it, `tokens` distinct 64×64 tokens, then `entries`."""
    members = [ZE("pack.json", json.dumps({"name": name, "version": "1", "tilePixels": 64}).encode())]
    members += [ZE(f"tokens/{name}-{n}.png", token_png(64, 64, (seed % 250, n * 40 % 250, 90))) for n in range(tokens)]
    return build_zip(members + list(entries))


@bundle("bundle-of-bombs.zip", "a bundle of two good packs, a zip bomb, a path traversal and a pack nesting a bomb one "
        "level deeper (skipped: one level of nesting)",
        {"good-a.zip": "imported", "bomb.zip": ["COMPRESSION_RATIO"], "traversal.zip": ["UNSAFE_PATH"],
         "nested.zip": "imported", "good-b.zip": "imported"})
def _():
    payload, crc, size = zero_bomb(PNG_PREFIX, 200)
    bomb = build_zip([ZE("tokens/bomb.png", b"", payload=payload, crc=crc, usize=size)])
    deep = build_zip([ZE("tokens/deep-bomb.png", b"", payload=payload, crc=crc, usize=size)])
    return [("good-a.zip", inner_pack("good-a", seed=1)), ("bomb.zip", bomb),
            ("traversal.zip", inner_pack("traversal", ZE("../evil.png", EVIL), seed=2)),
            ("nested.zip", inner_pack("nested", ZE("more/deep.zip", deep, 0), seed=3)), ("good-b.zip", inner_pack("good-b", seed=4))]


@bundle("bundle-of-token-packs.zip", "a bundle of a pack of MapTool token files and a pack whose token file is a bomb",
        {"tokens.zip": "imported", "token-bomb.zip": ["COMPRESSION_RATIO"]})
def _():
    payload, crc, size = zero_bomb(PNG_PREFIX, 200)
    md5 = "00112233445566778899aabbccddeeff"
    bomb = build_zip([ZE("content.xml", token_content("bomb", md5)), ZE(f"assets/{md5}.png", b"", payload=payload, crc=crc, usize=size)])
    return [("tokens.zip", inner_pack("bundled-tokens", ZE("tokens/goblin.rptok", rptok("Goblin", GOOD, "Medium"), 0), seed=5)),
            ("token-bomb.zip", inner_pack("bundled-token-bomb", ZE("tokens/bomb.rptok", bomb, 0), seed=6))]


@bundle("bundle-shared-bytes.zip", "three packs of ≈100 KB within maxArchiveBytes 550000: the bundle (≈300 KB) and the "
        "first two fit, the third would pass the budget the bundle shares", {"a.zip": "imported", "b.zip": "imported",
        "c.zip": ["ARCHIVE_TOO_LARGE"]}, limits={"maxArchiveBytes": 550000})
def _():
    return [(f"{n}.zip", build_zip([ZE("pack.json", json.dumps({"name": f"shared-{n}", "tilePixels": 64}).encode()),
                                    ZE(f"tokens/{n}.png", padded_png(100000, seed=ord(n)), 0)])) for n in "abc"]


@bundle("bundle-shared-entries.zip", "three packs of 4 entries within maxEntries 12: 3 + 4 + 4 fit, the third pack "
        "would pass the entries the bundle shares", {"a.zip": "imported", "b.zip": "imported", "c.zip": ["TOO_MANY_ENTRIES"]},
        limits={"maxEntries": 12})
def _():
    return [(f"{n}.zip", inner_pack(f"entries-{n}", tokens=3, seed=ord(n))) for n in "abc"]


def zip64_pack():
    """The sample pack written by zipfile with ZIP64 extra fields on every entry."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in sample_members():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type, info.create_system, info.external_attr = zipfile.ZIP_DEFLATED, 3, 0o644 << 16
            with z.open(info, "w", force_zip64=True) as out:
                out.write(data)
    return buffer.getvalue()


# ------------------------------------------------------------------------------------------------ main


def write_corpus(out_dir):
    """Builds every case, writes it and the two JSON indexes; checks the corpus is well formed."""
    os.makedirs(out_dir, exist_ok=True)
    total = 0
    for listing, index in ((CASES, "cases.json"), (VALID, "valid.json"), (BUNDLES, "bundles.json")):
        rows = []
        for item in listing:
            PACK_NAME[0] = item["file"].replace(".", "-")
            data = item["build"]()
            assert isinstance(data, bytes), item["file"]
            with open(os.path.join(out_dir, item["file"]), "wb") as f:
                f.write(data)
            total += len(data)
            rows.append({k: v for k, v in item.items() if k != "build" and v is not None})
        files = [r["file"] for r in rows]
        assert len(set(files)) == len(files), "duplicate file names"
        for r in rows:
            assert set(r.get("limits", {})) <= LIMIT_KEYS, r
        with open(os.path.join(out_dir, index), "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2, ensure_ascii=False)
            f.write("\n")
    return total


def self_check(out_dir):
    """Reads the valid archives back with zipfile/tarfile and spot-checks hostile ones: a failure exits non-zero."""
    for item in VALID:
        path = os.path.join(out_dir, item["file"])
        if item["file"].endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                assert z.testzip() is None, path
        else:
            with tarfile.open(path) as t:
                assert len(t.getmembers()) >= 2, path
    with zipfile.ZipFile(os.path.join(out_dir, "encrypted-zipcrypto.zip")) as z:
        assert z.read("tokens/secret.png", pwd=b"hoard") == GOOD
    with zipfile.ZipFile(os.path.join(out_dir, "bomb-deflate.zip")) as z, z.open("tokens/bomb.png") as f:
        n = sum(len(chunk) for chunk in iter(lambda: f.read(8 * MIB), b""))  # CRC checked at the end by zipfile
        assert n == len(PNG_PREFIX) + 200 * MIB, n
    with zipfile.ZipFile(os.path.join(out_dir, "bomb-overlap.zip")) as z:
        names = z.namelist()
        assert len(names) == 50 and z.read(names[-1])[:33] == PNG_PREFIX and z.testzip() is None
    with zipfile.ZipFile(os.path.join(out_dir, "traversal-backslash.zip")) as z:
        assert z.infolist()[-1].orig_filename == "tokens\\..\\..\\evil.png"
    with tarfile.open(os.path.join(out_dir, "bomb-targz.tar.gz")) as t:
        assert t.getmember("tokens/bomb.png").size == len(PNG_PREFIX) + 200 * MIB


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: make-hostile.py OUTDIR")
    started = time.monotonic()
    total = write_corpus(argv[0])
    self_check(argv[0])
    print(f"{argv[0]}: {len(CASES)} hostile + {len(VALID)} valid archives, {total} bytes, {time.monotonic() - started:.1f} s")
    assert total < 5 * MIB, "corpus grew over 5 MiB"


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Exception as error:  # any internal failure must fail the build that calls this script
        import traceback
        traceback.print_exc()
        sys.exit(f"make-hostile: internal failure: {error!r}")
