#!/usr/bin/env bash
# Blobs in S3 against blobs on local files, same binary, same run (issue 19): one hoard serves a data directory whose
# blobs are files, another one whose blobs are in an S3 bucket (OpenStack Swift's S3 API on loopback,
# tools/s3-server.sh) behind its local cache of verified blobs.
#   cold: every blob read once, one at a time, right after the upload (nothing cached yet: S3 answers each)
#   hot:  wrk -t2 -c64 -d10s, a random 64 KiB blob per request (the cache answers; target: S3 >= 0.9x local files)
#   import: the 300 MB pack imported into each, interleaved rounds: local files, S3, PostgreSQL (local files), and
#           PostgreSQL + S3 (target: <= 3x the embedded default); a PostgreSQL from tools/postgres.sh. Beside them the
#           S3 service's floor: the blobs of one local import PUT into a new bucket by Benchmarks/s3-put.py, a plain
#           signing client (no look-ups, no staging or catalog), 16 at a time as Hoard's import uploads them
# Usage: Benchmarks/s3.sh [--hoard PATH] [--duration 10s] [--small N] [--rounds R] [--no-import]
# Needs: scripts/setup.sh --bench --s3 (wrk, Swift's S3 API). Everything listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

HOARD="" DURATION=10s SMALL=256 ROUNDS=3 IMPORT=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --hoard) HOARD=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --small) SMALL=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --no-import) IMPORT=""; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "missing wrk: run scripts/setup.sh --bench" >&2; exit 1; }
if [ -z "$HOARD" ]; then
  swift build -c release --product hoard >/dev/null
  HOARD="$(swift build -c release --show-bin-path)/hoard"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/hoard-s3-bench.XXXXXX")
# Beside WORK, not in it: PostgreSQL runs as its own user when we are root, and WORK is ours alone.
PGDIR="${TMPDIR:-/tmp}/hoard-s3-bench-pg-$$"
LOCAL_PORT=18490 S3_PORT=18491
cleanup() {
  [ -n "${LOCAL_PID:-}" ] && kill "$LOCAL_PID" 2>/dev/null || true
  [ -n "${S3_PID:-}" ] && kill "$S3_PID" 2>/dev/null || true
  tools/s3-server.sh stop "$WORK/s3" >/dev/null 2>&1 || true
  HOARD_POSTGRES_DIR="$PGDIR" tools/postgres.sh stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

eval "$(tools/s3-server.sh start "$WORK/s3")"
export AWS_ACCESS_KEY_ID=$HOARD_TEST_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$HOARD_TEST_S3_SECRET
S3=(--blob-store s3://bench/blobs --s3-endpoint "$HOARD_TEST_S3_ENDPOINT")

start() { # name port [options]
  local name=$1 port=$2; shift 2
  "$HOARD" group create bench --data-dir "$WORK/$name" "$@" >/dev/null
  "$HOARD" token create --group bench --data-dir "$WORK/$name" "$@" > "$WORK/$name.token"
  "$HOARD" serve --data-dir "$WORK/$name" --port "$port" --log-level warning "$@" &
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && return; sleep 0.2; done
  echo "the $name server did not start" >&2; exit 1
}
start local "$LOCAL_PORT"; LOCAL_PID=$!
start s3 "$S3_PORT" "${S3[@]}"; S3_PID=$!

# The same random blobs into both (PUT, verified by digest), then each read once, one at a time: the cold reads.
python3 - "$WORK" "$SMALL" "$LOCAL_PORT" "$S3_PORT" <<'PY'
import hashlib, http.client, random, sys, time
work, small, ports = sys.argv[1], int(sys.argv[2]), {"local": int(sys.argv[3]), "s3": int(sys.argv[4])}
random.seed(7)
blobs = [random.randbytes(64 << 10) for _ in range(small)]
digests = ["sha256:" + hashlib.sha256(b).hexdigest() for b in blobs]
for name, port in ports.items():
    token = open(f"{work}/{name}.token").read().strip()
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for data, digest in zip(blobs, digests):
        conn.request("PUT", "/v1/blobs/" + digest, body=data, headers={"Authorization": "Bearer " + token})
        response = conn.getresponse(); response.read()
        assert response.status in (200, 201), (name, response.status)
    start = time.perf_counter()
    for data, digest in zip(blobs, digests):
        conn.request("GET", "/v1/blobs/" + digest, headers={"Authorization": "Bearer " + token})
        response = conn.getresponse(); body = response.read()
        assert response.status == 200 and body == data, (name, response.status)
    cold = (time.perf_counter() - start) / small * 1000
    print(f"cold read, {name}: {cold:.2f} ms a 64 KiB blob ({small} blobs, one at a time, each checked)")
with open(f"{work}/small.txt", "w") as f:
    f.write("\n".join(digests) + "\n")
PY

cat > "$WORK/pick.lua" <<'LUA'
local paths = {}
init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = "/v1/blobs/" .. line end
  token = args[2]
  math.randomseed(42)
end
request = function()
  return wrk.format("GET", paths[math.random(#paths)], { ["Authorization"] = "Bearer " .. token })
end
LUA
hot() { # name port
  wrk -t2 -c64 -d"$DURATION" --latency -s "$WORK/pick.lua" "http://127.0.0.1:$2" -- "$WORK/small.txt" "$(cat "$WORK/$1.token")" \
    > "$WORK/$1.wrk"
  python3 - "$WORK/$1.wrk" "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p99 = re.search(r"99%\s+([\d.]+)(\w+)", text)
p99ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
assert not errors, f"{sys.argv[2]}: {errors.group(1)} answers were not 2xx: the figures would not be reads"
print(f"hot, {sys.argv[2]}: {rps:.0f} req/s, p99 {p99ms:.2f} ms")
open(sys.argv[1] + ".rps", "w").write(str(rps))
PY
}
hot local "$LOCAL_PORT"; hot s3 "$S3_PORT"; hot local "$LOCAL_PORT"; hot s3 "$S3_PORT"
python3 -c "print(f'hot 64 KiB, S3 behind the local cache / local files: {float(open(\"$WORK/s3.wrk.rps\").read()) / float(open(\"$WORK/local.wrk.rps\").read()):.2f}x (second round; target >= 0.9x)')"

if [ -n "$IMPORT" ]; then
  PACK=Benchmarks/out/bench-2000x300mb.zip
  mkdir -p Benchmarks/out
  [ -f "$PACK" ] || python3 tools/make-packs.py --bench "$PACK" --files 2000 --total-mb 300
  NOGEN="--plugin hoard.generate-lods=off"
  PG=$(HOARD_POSTGRES_DIR="$PGDIR" tools/postgres.sh start | tail -n 1)
  PGSERVER=${PG%/*}
  "$HOARD" import "$PACK" --data-dir "$WORK/floor" $NOGEN > /dev/null
  echo "== import of $(du -h "$PACK" | cut -f1), $ROUNDS interleaved rounds: local files, S3, PostgreSQL, PostgreSQL + S3," \
    "the same blobs PUT by a plain client (a new bucket and database each run); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 Benchmarks/interleave.py --rounds "$ROUNDS" --warmup 0 --out "$WORK/import.json" \
    --prepare "sync; cat $PACK > /dev/null; psql -q '$PG' -c 'CREATE DATABASE import{n}'" \
    "local=$HOARD import $PACK --data-dir $WORK/i{n} $NOGEN > /dev/null" \
    "s3=$HOARD import $PACK --data-dir $WORK/i{n} $NOGEN --blob-store s3://import{n}/b --s3-endpoint $HOARD_TEST_S3_ENDPOINT > /dev/null" \
    "pg=$HOARD import $PACK --data-dir $WORK/i{n} $NOGEN --catalog $PGSERVER/import{n} > /dev/null" \
    "pg+s3=$HOARD import $PACK --data-dir $WORK/i{n} $NOGEN --catalog $PGSERVER/import{n} --blob-store s3://import{n}/b \
--s3-endpoint $HOARD_TEST_S3_ENDPOINT > /dev/null" \
    "s3-put=python3 Benchmarks/s3-put.py $HOARD_TEST_S3_ENDPOINT floor{n} $WORK/floor/blobs > /dev/null"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  python3 - "$WORK/import.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
local = results["local"]["median"]
for name in ("s3", "pg", "pg+s3"):
    print(f"import: {name} {results[name]['median']:.2f} s = {results[name]['median'] / local:.2f}x local files ({local:.2f} s)")
floor = results["s3-put"]["median"]
print(f"the S3 service's floor, the same blobs PUT by s3-put.py: {floor:.2f} s = {floor / local:.2f}x local files;"
      f" PostgreSQL + S3 = {results['pg+s3']['median'] / floor:.2f}x the floor")
PY
fi
