#!/usr/bin/env python3
"""A processor plugin for Hoard (protocol 1, Plugins/README.md): an AAC-in-M4A rendition of sounds Apple devices
cannot play (Ogg Vorbis and Opus, FLAC, WebM audio), loudness-normalised, made by ffmpeg.

Hoard sends it only the types its plugin.json names in `sources`, and loads it only when `ffmpeg` is on PATH
(`requires`). Each sound is converted with one ffmpeg run: the first audio stream, EBU R128 loudness normalisation in
one pass (`loudnorm`, -16 LUFS, peaks under -1.5 dBTP), resampled back to the source's rate (loudnorm works at 192 kHz;
AAC stops at 96 kHz, and 48 kHz is plenty), AAC at 160 kb/s for stereo (96 for mono), `moov` first, no metadata, one
thread and bit-exact flags so the same sound always gives the same bytes. The answer is one `compatible` output;
Hoard reads its header and refuses it unless it is AAC in M4A as long as the source.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

PLUGIN_ID = "aac-rendition"
SOURCES = {"audio/ogg": "ogg", "audio/flac": "flac", "audio/webm": "webm"}


class Refusal(Exception):
    """A sound this plugin cannot convert: answered as an error with this code and message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def convert(data, suffix, rate, channels):
    with tempfile.TemporaryDirectory(prefix="hoard-aac-") as folder:
        source, output = os.path.join(folder, "source." + suffix), os.path.join(folder, "rendition.m4a")
        with open(source, "wb") as file:
            file.write(data)
        command = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-threads", "1", "-i", source,
                   "-map", "0:a:0", "-vn", "-sn", "-dn", "-map_metadata", "-1", "-map_chapters", "-1",
                   "-af", "loudnorm=I=-16:TP=-1.5:LRA=11", "-ar", str(rate), "-c:a", "aac",
                   "-b:a", "96k" if channels == 1 else "160k", "-threads", "1", "-fflags", "+bitexact",
                   "-flags:a", "+bitexact", "-movflags", "+faststart", "-f", "mp4", output]
        try:
            run = subprocess.run(command, capture_output=True, timeout=110)
        except FileNotFoundError:
            raise Refusal("PLUGIN_FAILURE", "ffmpeg is not installed; install it (scripts/setup.sh does) and retry the job")
        except subprocess.TimeoutExpired:
            raise Refusal("PLUGIN_FAILURE", "ffmpeg took over 110 s to convert the sound")
        if run.returncode != 0:
            last = run.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise Refusal("UNREADABLE_AUDIO", f"ffmpeg could not convert the sound: {last[0][:300]}")
        with open(output, "rb") as file:
            return file.read()


def process(params):
    suffix = SOURCES.get(params.get("mediaType"))
    if suffix is None:
        return {"outputs": []}
    rate = params.get("sampleRate") or 48000
    rate = rate if 8000 <= rate <= 48000 else 48000
    channels = params.get("channels") or 2
    rendition = convert(base64.b64decode(params["data"]), suffix, rate, channels)
    return {"outputs": [{"role": "compatible", "mediaType": "audio/mp4", "data": base64.b64encode(rendition).decode()}]}


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
        except Refusal as refusal:
            reply = {"id": request.get("id"), "error": {"code": refusal.code, "message": str(refusal)}}
        except (ValueError, KeyError, OSError) as error:
            reply = {"id": request.get("id"), "error": {"code": "PLUGIN_FAILURE", "message": f"cannot convert the sound: {error}"}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
