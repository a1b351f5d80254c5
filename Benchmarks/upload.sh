#!/usr/bin/env bash
# Pack upload over HTTP (POST /v1/packs, streamed body) against the CLI import of the same archive.
# Each run uses a fresh data directory; the server listens on 127.0.0.1 only.
# Usage: Benchmarks/upload.sh [--runs N]    (uses the 300 MB pack that Benchmarks/import.sh generates)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=3
[ "${1:-}" = "--runs" ] && RUNS=$2
PACK=Benchmarks/out/bench-2000x300mb.zip
[ -f "$PACK" ] || { mkdir -p Benchmarks/out; python3 tools/make-packs.py --bench "$PACK" --files 2000 --total-mb 300; }
swift build -c release --product hoard >/dev/null 2>&1
HOARD="$(swift build -c release --show-bin-path)/hoard"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hoard-upload-bench.XXXXXX")
PORT=18482
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

now() { date +%s.%N; }
cli=() http=()
for run in $(seq "$RUNS"); do
  sync
  start=$(now); "$HOARD" import "$PACK" --data-dir "$WORK/cli$run" >/dev/null; end=$(now)
  cli+=("$(echo "$end - $start" | bc)")
  TOKEN=$("$HOARD" group create up --data-dir "$WORK/http$run" >/dev/null && "$HOARD" token create --group up --data-dir "$WORK/http$run")
  "$HOARD" serve --data-dir "$WORK/http$run" --port $PORT --log-level warning & pid=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
  sync
  start=$(now)
  status=$(curl -s -o "$WORK/report.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/zip" \
    --data-binary "@$PACK" "http://127.0.0.1:$PORT/v1/packs?name=bench")
  end=$(now)
  [ "$status" = 201 ] || { echo "upload failed: HTTP $status $(cat "$WORK/report.json")" >&2; exit 1; }
  http+=("$(echo "$end - $start" | bc)")
  kill $pid; wait $pid 2>/dev/null || true
done
python3 - "$PACK" "${cli[*]}" "${http[*]}" <<'PY'
import os, statistics, sys
size = os.path.getsize(sys.argv[1]) / (1 << 20)
cli = statistics.median(float(x) for x in sys.argv[2].split())
http = statistics.median(float(x) for x in sys.argv[3].split())
print(f"{size:.0f} MiB pack: CLI import {cli:.2f} s ({size / cli:.0f} MiB/s), HTTP upload+import {http:.2f} s "
      f"({size / http:.0f} MiB/s), ratio {http / cli:.2f}x")
PY
