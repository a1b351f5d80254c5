#!/usr/bin/env bash
# Blob serving speed against nginx serving the very same blob files, same machine, same run:
#   wrk -t2 -c64 -d10s --latency, 64 KiB blobs and 1 MiB blobs, random blob per request, keep-alive.
# Targets (issue #3): 64 KiB: >= 0.8x nginx requests/s, p99 <= 2x nginx; 1 MiB: >= 0.9x nginx throughput.
# Usage: Benchmarks/serve.sh [--duration 10s] [--small N] [--large N] [--threads N] [--hoard PATH] [--baseline PATH] [--tls]
#   --hoard PATH     measure this binary instead of building the release one
#   --baseline PATH  also measure an earlier hoard binary, same data, same run (before/after figures)
#   --tls            also measure hoard over HTTPS (a self-signed certificate made with openssl)
# Needs: scripts/setup.sh --bench (nginx, wrk). Everything listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=10s SMALL=256 LARGE=64 THREADS="" HOARD="" BASELINE="" TLS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION=$2; shift 2 ;;
    --small) SMALL=$2; shift 2 ;;
    --large) LARGE=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --hoard) HOARD=$2; shift 2 ;;
    --baseline) BASELINE=$2; shift 2 ;;
    --tls) TLS=1; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
for tool in nginx wrk python3 curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/setup.sh --bench" >&2; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/hoard-serve-bench.XXXXXX")
HOARD_PORT=18480 NGINX_PORT=18481 BASE_PORT=18482 TLS_PORT=18483
cleanup() {
  [ -n "${HOARD_PID:-}" ] && kill "$HOARD_PID" 2>/dev/null || true
  [ -n "${BASE_PID:-}" ] && kill "$BASE_PID" 2>/dev/null || true
  [ -n "${TLS_PID:-}" ] && kill "$TLS_PID" 2>/dev/null || true
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "$HOARD" ]; then
  swift build -c release --product hoard >/dev/null
  HOARD="$(swift build -c release --show-bin-path)/hoard"
fi
DATA="$WORK/data"
"$HOARD" group create bench --data-dir "$DATA" >/dev/null
TOKEN=$("$HOARD" token create --group bench --data-dir "$DATA")
"$HOARD" serve --data-dir "$DATA" --port "$HOARD_PORT" --log-level warning ${THREADS:+--threads "$THREADS"} &
HOARD_PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$HOARD_PORT/healthz" >/dev/null && break; sleep 0.2; done

# Upload random blobs through the API (PUT, verified by digest); write the digest lists.
python3 - "$HOARD_PORT" "$TOKEN" "$WORK" "$SMALL" "$LARGE" <<'PY'
import hashlib, http.client, os, random, sys
port, token, work, small, large = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
random.seed(7)
conn = http.client.HTTPConnection("127.0.0.1", int(port))
for name, count, size in (("small", small, 64 << 10), ("large", large, 1 << 20)):
    digests = []
    for _ in range(count):
        data = random.randbytes(size)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        conn.request("PUT", "/v1/blobs/" + digest, body=data, headers={"Authorization": "Bearer " + token})
        response = conn.getresponse(); response.read()
        assert response.status in (200, 201), response.status
        digests.append(digest)
    with open(f"{work}/{name}.txt", "w") as f:
        f.write("\n".join(digests) + "\n")
PY

# nginx serves the same files, straight from the blob store's directory.
mkdir -p "$WORK/nginx"
cat > "$WORK/nginx.conf" <<CONF
worker_processes 2;
user $(id -un);
pid $WORK/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 1000000;
  open_file_cache max=10000 inactive=60s;
  client_body_temp_path $WORK/nginx; proxy_temp_path $WORK/nginx; fastcgi_temp_path $WORK/nginx;
  uwsgi_temp_path $WORK/nginx; scgi_temp_path $WORK/nginx;
  types { } default_type image/png;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location /sha256/ { root $DATA/blobs/v1; etag on; add_header Cache-Control "public, max-age=31536000, immutable"; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" -p "$WORK/nginx"

# The baseline binary and the TLS server serve the same data directory (read-only serving; SQLite in WAL mode).
if [ -n "$BASELINE" ]; then
  "$BASELINE" serve --data-dir "$DATA" --port "$BASE_PORT" --log-level warning ${THREADS:+--threads "$THREADS"} &
  BASE_PID=$!
fi
if [ -n "$TLS" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
  "$HOARD" serve --data-dir "$DATA" --port "$TLS_PORT" --log-level warning ${THREADS:+--threads "$THREADS"} \
    --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" &
  TLS_PID=$!
fi
for _ in $(seq 50); do
  { [ -z "$BASELINE" ] || curl -sf "http://127.0.0.1:$BASE_PORT/healthz" >/dev/null; } &&
    { [ -z "$TLS" ] || curl -sfk "https://127.0.0.1:$TLS_PORT/healthz" >/dev/null; } && break
  sleep 0.2
done

# wrk picks a random blob per request from the list.
cat > "$WORK/pick.lua" <<'LUA'
local paths = {}
init = function(args)
  for line in io.lines(args[1]) do
    if args[2] == "hoard" then paths[#paths + 1] = "/v1/blobs/" .. line
    else local hex = line:sub(8); paths[#paths + 1] = "/sha256/" .. hex:sub(1, 2) .. "/" .. hex end
  end
  math.randomseed(42)
end
request = function()
  return wrk.format("GET", paths[math.random(#paths)], { ["Authorization"] = "Bearer " .. (args_token or "") })
end
LUA
sed -i "s/args_token or \"\"/\"$TOKEN\"/" "$WORK/pick.lua"

run() { # name port list server [scheme]
  wrk -t2 -c64 -d"$DURATION" --latency -s "$WORK/pick.lua" "${5:-http}://127.0.0.1:$2" -- "$3" "$4" > "$WORK/$1.out"
  python3 - "$WORK/$1.out" "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
tps = re.search(r"Transfer/sec:\s+([\d.]+)(\w+)", text)
scale = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[tps.group(2)]
p99 = re.search(r"99%\s+([\d.]+)(\w+)", text)
p99ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print(f"{sys.argv[2]} {rps:.0f} {float(tps.group(1)) * scale / (1 << 20):.1f} {p99ms:.2f} {errors.group(1) if errors else 0}")
PY
}

# Warm both: every blob once.
for list in small large; do
  while read -r d; do
    curl -sf -o /dev/null -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$HOARD_PORT/v1/blobs/$d"
    curl -sf -o /dev/null "http://127.0.0.1:$NGINX_PORT/sha256/${d:7:2}/${d:7}"
    [ -z "$BASELINE" ] || curl -sf -o /dev/null -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$BASE_PORT/v1/blobs/$d"
    [ -z "$TLS" ] || curl -sfk -o /dev/null -H "Authorization: Bearer $TOKEN" "https://127.0.0.1:$TLS_PORT/v1/blobs/$d"
  done < "$WORK/$list.txt"
done

echo "== wrk -t2 -c64 -d$DURATION, $SMALL blobs of 64 KiB and $LARGE of 1 MiB (name req/s MiB/s p99-ms non-2xx)"
{
  run nginx-64k "$NGINX_PORT" "$WORK/small.txt" nginx
  [ -z "$BASELINE" ] || run base-64k "$BASE_PORT" "$WORK/small.txt" hoard
  run hoard-64k "$HOARD_PORT" "$WORK/small.txt" hoard
  [ -z "$TLS" ] || run tls-64k "$TLS_PORT" "$WORK/small.txt" hoard https
  run nginx-1m "$NGINX_PORT" "$WORK/large.txt" nginx
  [ -z "$BASELINE" ] || run base-1m "$BASE_PORT" "$WORK/large.txt" hoard
  run hoard-1m "$HOARD_PORT" "$WORK/large.txt" hoard
  [ -z "$TLS" ] || run tls-1m "$TLS_PORT" "$WORK/large.txt" hoard https
} | tee "$WORK/results.txt"
mkdir -p Benchmarks/out
cp "$WORK/results.txt" Benchmarks/out/serve.txt
python3 - "$WORK/results.txt" <<'PY'
import sys
r = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(sys.argv[1])}
print(f"64 KiB: {r['hoard-64k'][0] / r['nginx-64k'][0]:.2f}x nginx requests/s (target >= 0.8), "
      f"p99 {r['hoard-64k'][2]:.2f} ms vs {r['nginx-64k'][2]:.2f} ms = {r['hoard-64k'][2] / r['nginx-64k'][2]:.2f}x (target <= 2)")
print(f"1 MiB: {r['hoard-1m'][1] / r['nginx-1m'][1]:.2f}x nginx throughput (target >= 0.9)")
PY
python3 - "$WORK/results.txt" <<'PY'
import sys
r = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in open(sys.argv[1])}
for other, label in (("base", "baseline"), ("tls", "HTTPS")):
    for size in ("64k", "1m"):
        if f"{other}-{size}" in r:
            a, b = r[f"hoard-{size}"], r[f"{other}-{size}"]
            print(f"{size}: hoard {a[0]:.0f} req/s p99 {a[2]:.2f} ms; {label} {b[0]:.0f} req/s p99 {b[2]:.2f} ms "
                  f"({label}/hoard: {b[0] / a[0]:.2f}x req/s)")
PY
