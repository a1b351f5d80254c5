#!/usr/bin/env bash
# Sound streaming: the time to the first byte of an audio blob's `Range: bytes=0-1` (Safari's first request) on
# loopback (issue 42's target: within 50 ms). Makes tools/make-audio.py's pack (ffmpeg), imports it into a fresh data
# directory, serves it and asks COUNT times for the first two bytes of each sound with curl; prints the median, p90 and
# largest time_starttransfer per format, and checks every answer is a 206 of its audio type.
# Usage: Benchmarks/audio-first-byte.sh [--hoard PATH] [--count N]   (default: the release build, 30)
set -euo pipefail
cd "$(dirname "$0")/.."
HOARD="" COUNT=30
while [ $# -gt 0 ]; do
  case "$1" in
    --hoard) HOARD=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$HOARD" ]; then swift build -c release --product hoard >&2; HOARD=.build/release/hoard; fi
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
python3 tools/make-audio.py "$work/corpus" >/dev/null
"$HOARD" group create default --data-dir "$work/data" >/dev/null
"$HOARD" import "$work/corpus/audio-pack.zip" --group default --data-dir "$work/data" >/dev/null 2>&1
token="$("$HOARD" token create --group default --name bench --data-dir "$work/data" | tail -1)"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$HOARD" serve --data-dir "$work/data" --port "$port" --log-level error >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
curl -s -H "Authorization: Bearer $token" "http://127.0.0.1:$port/v1/assets?kind=audio" \
  | python3 -c 'import json, sys; [print(a["variants"][0]["mediaType"], a["variants"][0]["digest"]) for a in json.load(sys.stdin)["assets"]]' \
  | while read -r type digest; do
    for _ in $(seq "$COUNT"); do
      curl -s -o /dev/null -w "%{http_code} %{content_type} %{time_starttransfer}\n" -H "Authorization: Bearer $token" \
        -H "Range: bytes=0-1" "http://127.0.0.1:$port/v1/blobs/$digest"
    done | python3 -c '
import sys
rows = [line.split() for line in sys.stdin]
bad = [r for r in rows if r[0] != "206" or r[1] != sys.argv[1]]
times = sorted(float(r[2]) * 1000 for r in rows)
print(f"{sys.argv[1]:12} median {times[len(times) // 2]:5.1f} ms  p90 {times[int(len(times) * 0.9)]:5.1f} ms  max {times[-1]:5.1f} ms"
      + (f"  {len(bad)} answers not 206 {sys.argv[1]}" if bad else ""))
sys.exit(1 if bad else 0)' "$type"
  done
