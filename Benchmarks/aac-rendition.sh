#!/usr/bin/env bash
# AAC renditions: how long Plugins/aac-rendition takes per sound through the rendition queue, against the plugin's
# own ffmpeg command run bare on the same files. For each length in SECONDS (default 2 30 180) it makes three sounds
# (Ogg Vorbis, Ogg Opus and FLAC, stereo 44.1/48 kHz: a tone with a little noise), imports a pack of them with
# `hoard import --later` (nothing made), then times `hoard jobs run --plugins-dir Plugins` (each job: the sound sent
# as base64 over the plugin protocol, ffmpeg, the answer checked by AudioHeader, published and recorded) and the same
# ffmpeg command (aac_rendition.py's) on each file, one after the other. Prints seconds per sound for both, the ratio
# and how many renditions the catalog lists.
# Usage: Benchmarks/aac-rendition.sh [--hoard PATH] [--seconds "2 30 180"]   (default: the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
HOARD="" SECONDS_LIST="2 30 180"
while [ $# -gt 0 ]; do
  case "$1" in
    --hoard) HOARD=$2; shift 2 ;;
    --seconds) SECONDS_LIST=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$HOARD" ]; then swift build -c release --product hoard >&2; HOARD=.build/release/hoard; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
now() { python3 -c 'import time; print(time.monotonic())'; }
printf '%-8s %-22s %-22s %s\n' length "queue (s a sound)" "bare ffmpeg (s a sound)" "queue / bare"
for seconds in $SECONDS_LIST; do
  dir="$work/$seconds"
  mkdir -p "$dir/Music"
  tone="sine=frequency=330:sample_rate=%s:duration=$seconds"
  noise="anoisesrc=amplitude=0.02:sample_rate=%s:duration=$seconds"
  make() {  # file rate codec options…
    local file=$1 rate=$2; shift 2
    ffmpeg -v error -y -f lavfi -i "$(printf "$tone" "$rate")" -f lavfi -i "$(printf "$noise" "$rate")" \
      -filter_complex amix=inputs=2 -ac 2 "$@" "$dir/Music/$file"
  }
  make vorbis.ogg 44100 -c:a libvorbis
  make opus.opus 48000 -c:a libopus
  make flac.flac 44100 -c:a flac
  (cd "$dir" && python3 -c 'import sys, zipfile
with zipfile.ZipFile("pack.zip", "w") as z:
    z.writestr("pack.json", "{\"name\": \"sounds-%s\", \"version\": \"1\"}" % sys.argv[1])
    for name in ("vorbis.ogg", "opus.opus", "flac.flac"): z.write("Music/" + name)' "$seconds")
  "$HOARD" import "$dir/pack.zip" --later --data-dir "$dir/data" --plugins-dir Plugins >/dev/null 2>&1
  start=$(now)
  "$HOARD" jobs run --data-dir "$dir/data" --plugins-dir Plugins >/dev/null 2>&1
  queue=$(python3 -c "import sys; print((float(sys.argv[2]) - float(sys.argv[1])) / 3)" "$start" "$(now)")
  made=$("$HOARD" assets --data-dir "$dir/data" --json 2>/dev/null | grep -c '"compatible"' || true)
  start=$(now)
  for file in vorbis.ogg opus.opus flac.flac; do
    rate=48000; [ "$file" = opus.opus ] || rate=44100
    ffmpeg -nostdin -hide_banner -loglevel error -threads 1 -i "$dir/Music/$file" -map 0:a:0 -vn -sn -dn \
      -map_metadata -1 -map_chapters -1 -af loudnorm=I=-16:TP=-1.5:LRA=11 -ar "$rate" -c:a aac -b:a 160k -threads 1 \
      -fflags +bitexact -flags:a +bitexact -movflags +faststart -f mp4 -y "$dir/bare.m4a"
  done
  bare=$(python3 -c "import sys; print((float(sys.argv[2]) - float(sys.argv[1])) / 3)" "$start" "$(now)")
  python3 -c 'import sys; s, q, b, m = sys.argv[1:]; print(f"{s:>5} s   {float(q):<22.3f} {float(b):<22.3f} {float(q) / float(b):.2f}   ({m} of 3 listed)")' \
    "$seconds" "$queue" "$bare" "$made"
done
