#!/usr/bin/env python3
"""Writes Hoard's audio corpus with ffmpeg, and hostile audio files cut from it (Python 3.11 stdlib, ffmpeg, ffprobe).

    python3 tools/make-audio.py OUTDIR

OUTDIR/corpus.json lists the good files, each with what ffprobe says of it:
    {"file": ..., "codec": ..., "channels": N, "sampleRate": N, "durationMs": float, "mediaType": ...}
OUTDIR/hostile.json lists files the header reader must refuse: {"file": ..., "codes": [acceptable codes], "about": ...}:
lying sizes, truncated headers and frames, huge headers, wrong formats.
OUTDIR/audio-pack.zip is a pack of audio the way creators ship it (Music/, Ambience/, SFX/ folders, a cover picture,
a sound under tokens/); OUTDIR/hostile-pack.zip the same with one lying file. Every sound is a few tenths of a second
to a few seconds of tones and noise (lavfi), so the whole corpus is small and made in a few seconds.
"""
import json
import os
import struct
import subprocess
import sys
import zipfile
import zlib

if len(sys.argv) > 2 or any(a in ("-h", "--help") or a.startswith("-") for a in sys.argv[1:]):
    sys.exit(__doc__ if any(a in ("-h", "--help") for a in sys.argv[1:]) else "usage: python3 tools/make-audio.py OUTDIR")
OUT = sys.argv[1] if len(sys.argv) > 1 else "audio-corpus"

# (file, ffmpeg output options, seconds, rate, channels)
GOOD = [
    ("vorbis-mono-44k.ogg", ["-c:a", "libvorbis", "-q:a", "2"], 1.3, 44100, 1),
    ("vorbis-stereo-48k.ogg", ["-c:a", "libvorbis"], 2.05, 48000, 2),
    ("opus-stereo.opus", ["-c:a", "libopus", "-b:a", "48k"], 1.7, 48000, 2),
    ("opus-mono-16k.ogg", ["-c:a", "libopus"], 0.9, 16000, 1),
    ("cbr-128k.mp3", ["-c:a", "libmp3lame", "-b:a", "128k"], 2.4, 44100, 2),
    ("vbr-xing.mp3", ["-c:a", "libmp3lame", "-q:a", "5"], 3.1, 44100, 2),
    ("mono-22k-noxing.mp3", ["-c:a", "libmp3lame", "-b:a", "64k", "-write_xing", "0"], 1.5, 22050, 1),
    ("id3-tagged.mp3", ["-c:a", "libmp3lame", "-b:a", "96k", "-id3v2_version", "3", "-metadata", "title=Tavern",
                        "-metadata", "artist=Hoard"], 1.2, 32000, 2),
    ("stereo-44k.flac", ["-c:a", "flac"], 2.2, 44100, 2),
    ("mono-96k-24bit.flac", ["-c:a", "flac", "-sample_fmt", "s32"], 0.6, 96000, 1),
    ("s16-stereo.wav", ["-c:a", "pcm_s16le"], 1.1, 44100, 2),
    ("f32-mono.wav", ["-c:a", "pcm_f32le"], 0.75, 48000, 1),
    ("u8-mono.wav", ["-c:a", "pcm_u8"], 0.5, 8000, 1),
    ("aac-stereo.m4a", ["-c:a", "aac", "-b:a", "96k"], 2.3, 44100, 2),
    ("aac-faststart.m4a", ["-c:a", "aac", "-movflags", "+faststart"], 1.4, 48000, 1),
    ("opus.webm", ["-c:a", "libopus", "-f", "webm"], 1.9, 48000, 2),
    ("vorbis.weba", ["-c:a", "libvorbis", "-f", "webm"], 1.2, 44100, 2),
]

MEDIA = {"ogg": "audio/ogg", "opus": "audio/ogg", "mp3": "audio/mpeg", "flac": "audio/flac", "wav": "audio/wav",
         "m4a": "audio/mp4", "webm": "audio/webm", "weba": "audio/webm"}


def ffmpeg(path, options, seconds, rate, channels):
    """One file of a tone mixed with a little noise, so every codec has something to code."""
    source = f"sine=frequency=440:sample_rate={rate}:duration={seconds}"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-ac", str(channels), "-ar", str(rate),
                    *options, path], check=True)


def probe(path):
    """What ffprobe says: codec, channels, rate of the first audio stream, and the duration."""
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration:stream=codec_name,channels,sample_rate",
                          "-of", "json", path], check=True, capture_output=True).stdout
    data = json.loads(out)
    stream = data["streams"][0]
    return {"codec": stream["codec_name"], "channels": int(stream["channels"]), "sampleRate": int(stream["sample_rate"]),
            "durationMs": float(data["format"]["duration"]) * 1000}


def read(name):
    with open(os.path.join(OUT, name), "rb") as f:
        return f.read()


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def hostile():
    """Files cut or patched from the good ones; each must be refused with one of its codes."""
    cases = []

    def case(name, data, codes, about):
        write(name, data)
        cases.append({"file": name, "codes": codes, "about": about})

    MAL, TRUNC, NOT = "MALFORMED_HEADER", "TRUNCATED_HEADER", "NOT_AUDIO"
    wav = bytearray(read("s16-stereo.wav"))
    data_at = wav.index(b"data")
    lying = bytearray(wav)
    struct.pack_into("<I", lying, data_at + 4, 0x7FFF0000)
    case("wav-lying-data-size.wav", bytes(lying), [MAL], "the data chunk says 2 GB in a 190 KB file")
    streamed = bytearray(wav)
    struct.pack_into("<I", streamed, data_at + 4, 0xFFFFFFFF)
    case("wav-streamed-size.wav", bytes(streamed), [MAL], "a WAV written to a pipe: the data size is 0xFFFFFFFF")
    fmt_at = wav.index(b"fmt ")
    rate = bytearray(wav)
    struct.pack_into("<I", rate, fmt_at + 8 + 8, 1)
    case("wav-lying-byte-rate.wav", bytes(rate), [MAL], "the byte rate says 1 byte a second: a 2-day sound")
    case("wav-truncated-fmt.wav", bytes(wav[:fmt_at + 12]), [MAL, TRUNC], "cut inside the fmt chunk")
    adpcm = bytearray(wav)
    struct.pack_into("<H", adpcm, fmt_at + 8, 2)
    case("wav-adpcm.wav", bytes(adpcm), [NOT], "MS ADPCM, which browsers do not play")

    flac = bytearray(read("stereo-44k.flac"))
    total = bytearray(flac)
    # STREAMINFO's last 36 bits of its packed 64 (bytes 18..25 of the file) count the samples: claim 2^36-1.
    packed = struct.unpack_from(">Q", total, 18)[0] | 0xF_FFFF_FFFF
    struct.pack_into(">Q", total, 18, packed)
    case("flac-lying-samples.flac", bytes(total), [MAL], "STREAMINFO claims 2^36 samples (18 days) in 100 KB")
    block = bytearray(flac)
    block[4] &= 0x7F  # STREAMINFO is not the last block any more; the next "block" is audio whose header lies
    block.extend(b"")
    padded = bytearray(flac[:42]) + bytes([0x81, 0xFF, 0xFF, 0xF0]) + flac[42:]
    padded[4] &= 0x7F
    case("flac-lying-block.flac", bytes(padded), [MAL], "a PADDING block that says 16 MB in a small file")
    huge = bytearray(flac[:42]) + bytes([0x86]) + struct.pack(">I", 17 << 20)[1:] + bytes(17 << 20) + flac[42:]
    huge[4] &= 0x7F
    case("flac-huge-picture.flac", bytes(huge), [MAL], "a 17 MB PICTURE block: a header over the 16 MB read")
    case("flac-truncated.flac", bytes(flac[:20]), [MAL, TRUNC], "cut inside STREAMINFO")

    mp3 = read("id3-tagged.mp3")
    tag = bytearray(mp3)
    tag[6:10] = bytes([0x7F, 0x7F, 0x7F, 0x7F])
    case("mp3-lying-id3.mp3", bytes(tag), [MAL], "an ID3 tag that says 256 MB")
    syncsafe = bytearray(mp3)
    syncsafe[6] = 0x80
    case("mp3-bad-id3-size.mp3", bytes(syncsafe), [MAL], "an ID3 size that is not syncsafe")
    vbr = bytearray(read("vbr-xing.mp3"))
    xing = vbr.index(b"Xing") if b"Xing" in vbr else vbr.index(b"Info")
    struct.pack_into(">I", vbr, xing + 8, 0x7FFFFFFF)
    case("mp3-lying-xing.mp3", bytes(vbr), [MAL], "a Xing header counting 2 billion frames")
    case("mp3-tags-only.mp3", bytes(mp3[:mp3.index(b"\xff\xfb") if b"\xff\xfb" in mp3 else 200]), [MAL, NOT],
         "ID3 tags and no frame after them")

    ogg = read("vorbis-stereo-48k.ogg")
    case("ogg-truncated-first-page.ogg", ogg[:40], [MAL], "cut inside the first page")
    granule = bytearray(ogg)
    last = granule.rindex(b"OggS")
    struct.pack_into("<Q", granule, last + 6, 1 << 50)
    case("ogg-lying-granule.ogg", bytes(granule), [MAL], "the last page's granule says 700 years")
    channels = bytearray(ogg)
    channels[27 + channels[26] + 11] = 0
    case("ogg-no-channels.ogg", bytes(channels), [MAL], "a Vorbis header with 0 channels")
    case("ogg-cut-tail.ogg", ogg[:len(ogg) // 2] + bytes(200 << 10), [MAL], "the end is 200 KB of zeros: no last page")

    m4a = bytearray(read("aac-stereo.m4a"))
    moov = m4a.index(b"moov")
    lying_box = bytearray(m4a)
    struct.pack_into(">I", lying_box, moov - 4, 0x7FFFFFF0)
    case("m4a-lying-moov.m4a", bytes(lying_box), [MAL], "a moov box that says 2 GB")
    mvhd = m4a.index(b"mvhd")
    duration = bytearray(m4a)
    struct.pack_into(">I", duration, mvhd + 4 + 16, 0xFFFFFFF0)
    case("m4a-lying-duration.m4a", bytes(duration), [MAL], "mvhd says 4 billion time units (a day)")
    case("m4a-no-moov.m4a", bytes(m4a[:moov - 4]), [MAL], "cut before its moov box")

    webm = bytearray(read("opus.webm"))
    segment = webm.index(bytes([0x18, 0x53, 0x80, 0x67]))
    lying_segment = bytearray(webm)
    lying_segment[segment + 4:segment + 12] = bytes([0x01, 0x00, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xF0])
    case("webm-lying-segment.webm", bytes(lying_segment), [MAL], "a Segment that says 2 GB")
    case("webm-truncated.webm", bytes(webm[:60]), [MAL, TRUNC], "cut inside the EBML header and Segment")

    case("random.mp3", bytes((i * 7919) % 251 for i in range(4096)), [NOT], "bytes that are no audio")
    case("png-named.ogg", b"\x89PNG\r\n\x1a\n" + bytes(100), [NOT], "a PNG with an audio name")
    return cases


def png(width, height):
    """A minimal grey PNG."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    raw = b"".join(b"\x00" + bytes(width) for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def pack(name, entries):
    with zipfile.ZipFile(os.path.join(OUT, name), "w", zipfile.ZIP_STORED) as z:
        for entry, data in entries:
            info = zipfile.ZipInfo(entry, date_time=(2024, 1, 1, 0, 0, 0))
            z.writestr(info, data)


def main():
    os.makedirs(OUT, exist_ok=True)
    corpus = []
    for name, options, seconds, rate, channels in GOOD:
        path = os.path.join(OUT, name)
        ffmpeg(path, options, seconds, rate, channels)
        entry = {"file": name, "mediaType": MEDIA[name.rsplit(".", 1)[1]]}
        entry.update(probe(path))
        corpus.append(entry)
    with open(os.path.join(OUT, "corpus.json"), "w") as f:
        json.dump(corpus, f, indent=1)
    with open(os.path.join(OUT, "hostile.json"), "w") as f:
        json.dump(hostile(), f, indent=1)
    manifest = json.dumps({"name": "tavern-sounds", "version": "1.0.0", "license": "CC0-1.0"}).encode()
    good = [("pack.json", manifest), ("Music/Tavern Theme.ogg", read("vorbis-stereo-48k.ogg")),
            ("Music/Battle.mp3", read("vbr-xing.mp3")), ("Music/cover.png", png(8, 8)),
            ("Ambience/Rain.flac", read("stereo-44k.flac")), ("Ambient/Wind.opus", read("opus-stereo.opus")),
            ("SFX/Door Creak.wav", read("s16-stereo.wav")), ("Sounds/Harp.m4a", read("aac-stereo.m4a")),
            ("Sounds/Chime.webm", read("opus.webm")), ("tokens/roar.mp3", read("cbr-128k.mp3")),
            ("tokens/goblin.png", png(64, 64))]
    pack("audio-pack.zip", good)
    bad = [("pack.json", manifest.replace(b"tavern-sounds", b"lying-sounds")), ("Music/Good.ogg", read("vorbis-mono-44k.ogg")),
           ("Music/Lying.wav", read("wav-lying-data-size.wav"))]
    pack("hostile-pack.zip", bad)


main()
