#!/usr/bin/env bash
# 64 KiB blob serving while the render workers make an import's pictures (issue 38: "64 KiB blob p99 during
# generation within 2x of idle"). The 300 MB pack of import.sh is imported with `hoard import --later` (2,000 jobs
# queued), 256 random 64 KiB blobs are PUT, and `wrk -t2 -c64 --latency` GETs a random one per request: first with the
# render workers off (--render-workers 0: idle), then with the default workers making the 2,000 pictures meanwhile.
# Usage: Benchmarks/serve-during-generation.sh [--duration 10s] [--rounds 3] [--hoard PATH]
# Needs: scripts/setup.sh --bench (wrk). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=10s ROUNDS=3 HOARD=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --hoard) HOARD=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "missing wrk: run scripts/setup.sh --bench" >&2; exit 1; }
PACK=Benchmarks/out/bench-2000x300mb.zip
[ -f "$PACK" ] || { mkdir -p Benchmarks/out; python3 tools/make-packs.py --bench "$PACK" --files 2000 --total-mb 300; }
if [ -z "$HOARD" ]; then
  swift build -c release --product hoard >/dev/null
  HOARD="$(swift build -c release --show-bin-path)/hoard"
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hoard-gen-serve.XXXXXX")
PORT=18484 PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

serve() { # extra serve arguments
  "$HOARD" serve --data-dir "$DATA" --port $PORT --log-level warning "$@" & PID=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && return; sleep 0.1; done
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""; }
measure() { # label
  wrk -t2 -c64 -d"$DURATION" --latency -s "$WORK/pick.lua" "http://127.0.0.1:$PORT" -- "$WORK/small.txt" > "$WORK/$1.out"
  python3 - "$WORK/$1.out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p99 = re.search(r"99%\s+([\d.]+)(\w+)", text)
print(f"{rps:.0f} {float(p99.group(1)) * {'us': 0.001, 'ms': 1, 's': 1000}[p99.group(2)]:.3f}")
PY
}

idle=() during=() rates=()
for round in $(seq "$ROUNDS"); do
  DATA="$WORK/data$round"
  "$HOARD" group create bench --data-dir "$DATA" >/dev/null 2>&1
  TOKEN=$("$HOARD" token create --group bench --data-dir "$DATA" 2>/dev/null | tail -1)
  "$HOARD" import "$PACK" --later --group bench --data-dir "$DATA" >/dev/null 2>&1
  serve --render-workers 0
  python3 - "$PORT" "$TOKEN" "$WORK" <<'PY'
import hashlib, http.client, random, sys
port, token, work = sys.argv[1], sys.argv[2], sys.argv[3]
random.seed(7)
conn = http.client.HTTPConnection("127.0.0.1", int(port))
digests = []
for _ in range(256):
    data = random.randbytes(64 << 10)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    conn.request("PUT", "/v1/blobs/" + digest, body=data, headers={"Authorization": "Bearer " + token})
    response = conn.getresponse(); response.read()
    digests.append(digest)
open(f"{work}/small.txt", "w").write("\n".join(digests) + "\n")
PY
  cat > "$WORK/pick.lua" <<LUA
local paths = {}
init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = "/v1/blobs/" .. line end
  math.randomseed(42)
end
request = function() return wrk.format("GET", paths[math.random(#paths)], { ["Authorization"] = "Bearer $TOKEN" }) end
LUA
  measure warm >/dev/null   # the blobs into the cache
  read -r rate p99 <<<"$(measure idle)"; idle+=("$p99")
  stop
  serve
  sleep 1   # the workers are into the 2,000 jobs
  read -r rate2 p992 <<<"$(measure during)"; during+=("$p992")
  made=$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/packs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["packs"][0]["renditions"]["done"])')
  stop
  echo "round $round: idle $rate req/s, p99 $p99 ms; during generation $rate2 req/s, p99 $p992 ms ($made of 2000 pictures made by then)"
done
python3 - "${idle[*]}" "${during[*]}" <<'PY'
import statistics, sys
idle = statistics.median(float(x) for x in sys.argv[1].split())
during = statistics.median(float(x) for x in sys.argv[2].split())
print(f"median p99: idle {idle:.2f} ms, during generation {during:.2f} ms = {during / idle:.2f}x (target <= 2x)")
PY
