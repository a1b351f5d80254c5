#!/usr/bin/env bash
# Two replicas behind nginx against one, same machine, same run (issue 19): scripts/cluster.sh starts the cluster
# (PostgreSQL, Swift's S3 API, replicas a and b, nginx in front of both); a second nginx with the very same
# configuration (scripts/cluster.sh nginx-conf) stands in front of replica a alone.
#   blobs: wrk -t2 -c64 -d10s --latency, a random 64 KiB blob per request, keep-alive, through each nginx, twice,
#          interleaved; every answer must be 200 with 65,536 bytes (a yardstick that answers 403 looks fast).
#          Target: two replicas >= 0.95x one (coordination costs nothing on the hot path).
#   live:  Benchmarks/live.py with its 200 participants split over the two replicas (the host on a): p99 < 50 ms,
#          nothing lost or reordered.
# On 2 cores the two replicas, nginx and wrk share the same two cores: these figures show overhead, not scale.
# Usage: Benchmarks/cluster.sh [--hoard PATH] [--duration 10s] [--small N] [--no-live] [--sqlite] [--same-cores]
#                              [-- SERVE OPTIONS]
#   --sqlite      the replicas share a SQLite catalog file instead of PostgreSQL (no live run: it needs notices)
#   --same-cores  both sides get the same network threads: a and b one each (--threads 1), and the single replica
#                 is a third one, c, on the same catalog and bucket with two (--threads 2)
#   -- OPTIONS    passed to every `hoard serve` (e.g. -- --no-blob-fast-path)
# Needs: scripts/setup.sh --bench --cluster (nginx, wrk, Swift's S3 API). Everything listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

HOARD="" DURATION=10s SMALL=256 LIVE=yes SQLITE="" SAME_CORES="" SERVE=()
while [ $# -gt 0 ]; do
  case "$1" in
    --hoard) HOARD=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --small) SMALL=$2; shift 2 ;;
    --no-live) LIVE=""; shift ;;
    --sqlite) SQLITE=--sqlite LIVE=""; shift ;;
    --same-cores) SAME_CORES=yes; shift ;;
    --) shift; SERVE=("$@"); break ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "missing wrk: run scripts/setup.sh --bench" >&2; exit 1; }
if [ -z "$HOARD" ]; then
  swift build -c release --product hoard >/dev/null
  HOARD="$(swift build -c release --show-bin-path)/hoard"
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/hoard-cluster-bench.XXXXXX")
chmod 755 "$WORK"  # PostgreSQL runs as the postgres user when we are root
cleanup() {
  [ -f "$WORK/one/nginx.pid" ] && kill "$(cat "$WORK/one/nginx.pid")" 2>/dev/null || true
  [ -f "$WORK/c.pid" ] && kill "$(cat "$WORK/c.pid")" 2>/dev/null || true
  scripts/cluster.sh down "$WORK/cluster" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
TWO_THREADS=() SIDES="nginx in front of two replicas, of one"
[ -n "$SAME_CORES" ] && TWO_THREADS=(--threads 1) SIDES="nginx in front of two replicas of one thread each, of one of two threads"
scripts/cluster.sh up --hoard "$HOARD" $SQLITE "$WORK/cluster" -- --joins-per-session 1000 ${TWO_THREADS[@]+"${TWO_THREADS[@]}"} \
  ${SERVE[@]+"${SERVE[@]}"} >/dev/null 2>"$WORK/up.log" || { cat "$WORK/up.log" >&2; exit 1; }
. "$WORK/cluster/cluster.env"
SINGLE=$HOARD_CLUSTER_A
if [ -n "$SAME_CORES" ]; then
  SINGLE="http://127.0.0.1:$(free_port)"
  "$HOARD" serve --data-dir "$WORK/c" --port "${SINGLE##*:}" --log-level warning --catalog "$HOARD_CATALOG" \
    --trusted-proxy 127.0.0.1 --blob-store "$HOARD_BLOB_STORE" --s3-endpoint "$HOARD_S3_ENDPOINT" --joins-per-session 1000 \
    --threads 2 ${SERVE[@]+"${SERVE[@]}"} >"$WORK/c.log" 2>&1 &
  echo $! > "$WORK/c.pid"
  for _ in $(seq 100); do curl -fs "$SINGLE/healthz" >/dev/null && break; sleep 0.2; done
  curl -fs "$SINGLE/healthz" >/dev/null || { echo "replica c did not start:" >&2; cat "$WORK/c.log" >&2; exit 1; }
fi
ONE_PORT=$(free_port)
mkdir -p "$WORK/one/nginx-temp"
scripts/cluster.sh nginx-conf "$WORK/one" "$ONE_PORT" "${SINGLE##*:}" > "$WORK/one/nginx.conf"
nginx -c "$WORK/one/nginx.conf" -p "$WORK/one" -e "$WORK/one/nginx-error.log"
ONE="http://127.0.0.1:$ONE_PORT"

# Random blobs PUT through nginx, then each read once from each replica directly: every local cache is warm.
python3 - "$HOARD_CLUSTER_URL" "$HOARD_CLUSTER_A" "$HOARD_CLUSTER_B" "$HOARD_CLUSTER_TOKEN" "$WORK" "$SMALL" "$SINGLE" <<'PY'
import hashlib, http.client, random, sys
front, a, b, token, work, small, single = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), sys.argv[7]
connection = lambda base: http.client.HTTPConnection("127.0.0.1", int(base.rsplit(":", 1)[1]))
random.seed(7)
blobs = [random.randbytes(64 << 10) for _ in range(small)]
digests = ["sha256:" + hashlib.sha256(data).hexdigest() for data in blobs]
conn = connection(front)
for data, digest in zip(blobs, digests):
    conn.request("PUT", "/v1/blobs/" + digest, body=data, headers={"Authorization": "Bearer " + token})
    response = conn.getresponse(); response.read()
    assert response.status in (200, 201), response.status
for base in sorted({a, b, single}):
    conn = connection(base)
    for data, digest in zip(blobs, digests):
        conn.request("GET", "/v1/blobs/" + digest, headers={"Authorization": "Bearer " + token})
        response = conn.getresponse()
        assert response.status == 200 and response.read() == data, (base, response.status)
with open(f"{work}/small.txt", "w") as f:
    f.write("\n".join(digests) + "\n")
PY

# A random blob per request; every answer counted as bad unless 200 with 65,536 bytes.
cat > "$WORK/pick.lua" <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  paths = {}
  for line in io.lines(args[1]) do paths[#paths + 1] = "/v1/blobs/" .. line end
  token = args[2]
  bad = 0
  math.randomseed(42)
end
function request()
  return wrk.format("GET", paths[math.random(#paths)], { ["Authorization"] = "Bearer " .. token })
end
function response(status, headers, body)
  if status ~= 200 or #body ~= 65536 then bad = bad + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("bad") end
  io.write(string.format("bad answers: %d\n", total))
end
LUA
run() { # name url
  wrk -t2 -c64 -d"$DURATION" --latency -s "$WORK/pick.lua" "$2" -- "$WORK/small.txt" "$HOARD_CLUSTER_TOKEN" > "$WORK/$1.wrk"
  python3 - "$WORK/$1.wrk" "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p99 = re.search(r"99%\s+([\d.]+)(\w+)", text)
p99ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
bad = int(re.search(r"bad answers: (\d+)", text).group(1))
assert bad == 0, f"{sys.argv[2]}: {bad} answers were not 200 with 64 KiB: the figures would not be reads"
print(f"{sys.argv[2]}: {rps:.0f} req/s, p99 {p99ms:.2f} ms, every answer 200 with 64 KiB")
open(sys.argv[1] + ".rps", "w").write(str(rps))
PY
}
echo "== wrk -t2 -c64 -d$DURATION, $SMALL blobs of 64 KiB, interleaved: $SIDES" \
  "($([ -n "$SQLITE" ] && echo "a SQLite catalog" || echo PostgreSQL)${SERVE[*]:+; serve ${SERVE[*]}})"
run two "$HOARD_CLUSTER_URL"; run one "$ONE"; run two "$HOARD_CLUSTER_URL"; run one "$ONE"
python3 -c "print(f'64 KiB through nginx, two replicas / one: {float(open(\"$WORK/two.wrk.rps\").read()) / float(open(\"$WORK/one.wrk.rps\").read()):.2f}x (second round; target >= 0.95x)')"

if [ -n "$LIVE" ]; then
  echo "== the live table, 200 participants split over replicas a and b (the host on a)"
  python3 Benchmarks/live.py --servers "$HOARD_CLUSTER_A,$HOARD_CLUSTER_B" --token "$HOARD_CLUSTER_TOKEN" --join-ops 0
fi
