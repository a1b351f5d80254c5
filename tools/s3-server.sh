#!/usr/bin/env bash
# A real S3 service on loopback for the S3 blob store's tests: OpenStack Swift's S3 API (s3api + tempauth), from
# Debian's swift-proxy, swift-object, swift-container and swift-account, with memcached for the proxy's cache filter.
# It checks SigV4 signatures, so a wrong secret is refused as on AWS.
#
#   tools/s3-server.sh start DIR    builds one-replica rings and configurations in DIR (made empty first), starts
#                                   memcached and the four servers on free loopback ports, waits until they answer,
#                                   then prints shell lines to eval:
#                                     export HOARD_TEST_S3_ENDPOINT=http://127.0.0.1:PORT
#                                     export HOARD_TEST_S3_ACCESS_KEY=test:tester
#                                     export HOARD_TEST_S3_SECRET=testing
#   tools/s3-server.sh stop DIR     stops what start started (the process ids in DIR/pids) and removes DIR.
#   tools/s3-server.sh pause DIR    stops the S3 API alone (its proxy server): the service is down, its data kept.
#   tools/s3-server.sh resume DIR   starts the proxy again on its port and waits until it answers.
#
# Path-style URLs, region us-east-1. Logs go to DIR/*.log. Install the packages with scripts/setup.sh --s3.
set -euo pipefail

command=${1:-}
dir=${2:-}
[[ "$command" =~ ^(start|stop|pause|resume)$ && -n "$dir" ]] || {
  echo "usage: tools/s3-server.sh start|stop|pause|resume DIR" >&2
  exit 2
}

if [[ "$command" == stop ]]; then
  if [[ -f "$dir/pids" ]]; then
    while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$dir/pids"
    sleep 0.3
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$dir/pids"
  fi
  rm -rf "$dir"
  exit 0
fi

# Ready when every port (the proxy's first) accepts connections and the proxy's health check answers (at most 60 s).
wait_ready() {
  python3 - "$@" <<'EOF'
import socket, sys, time, urllib.request
ports = [int(p) for p in sys.argv[1:]]
deadline = time.monotonic() + 60
waiting = list(ports)
while waiting and time.monotonic() < deadline:
    try:
        socket.create_connection(("127.0.0.1", waiting[0]), timeout=1).close()
        waiting.pop(0)
    except OSError:
        time.sleep(0.1)
while not waiting and time.monotonic() < deadline:
    try:
        if urllib.request.urlopen(f"http://127.0.0.1:{ports[0]}/healthcheck", timeout=2).status == 200:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.1)
sys.exit(1)
EOF
}

if [[ "$command" == pause ]]; then
  [[ -f "$dir/proxy.pid" ]] || { echo "s3-server.sh: no S3 service in $dir" >&2; exit 1; }
  pid=$(cat "$dir/proxy.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  exit 0
fi

if [[ "$command" == resume ]]; then
  [[ -f "$dir/etc/proxy-server.conf" ]] || { echo "s3-server.sh: no S3 service in $dir" >&2; exit 1; }
  swift-proxy-server "$dir/etc/proxy-server.conf" >>"$dir/proxy.log" 2>&1 &
  echo $! >>"$dir/pids"
  echo $! >"$dir/proxy.pid"
  wait_ready "$(sed -n 's/^bind_port = //p' "$dir/etc/proxy-server.conf")" || {
    echo "s3-server.sh: the S3 API did not start again within 60 s" >&2; tail -n 20 "$dir/proxy.log" >&2; exit 1
  }
  exit 0
fi

for program in swift-ring-builder swift-proxy-server swift-object-server swift-container-server \
  swift-account-server memcached; do
  command -v "$program" >/dev/null || {
    echo "s3-server.sh: $program not found; run scripts/setup.sh --s3 (Debian: swift-proxy swift-object" \
      "swift-container swift-account memcached)" >&2
    exit 1
  }
done

rm -rf "$dir"
mkdir -p "$dir/etc" "$dir/srv/d1" "$dir/run"
dir=$(cd "$dir" && pwd)
: >"$dir/pids"
user=$(id -un)

# Five free loopback ports, asked of the kernel at once so they differ.
read -r proxy_port object_port container_port account_port memcache_port < <(python3 - <<'EOF'
import socket
sockets = [socket.socket() for _ in range(5)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))
EOF
)

cat >"$dir/etc/swift.conf" <<EOF
[swift-hash]
swift_hash_path_suffix = hoard-test-suffix
swift_hash_path_prefix = hoard-test-prefix

[storage-policy:0]
name = Policy-0
default = yes
EOF

for ring in object:$object_port container:$container_port account:$account_port; do
  name=${ring%%:*}
  port=${ring##*:}
  builder="$dir/etc/$name.builder"
  swift-ring-builder "$builder" create 2 1 1 >/dev/null
  swift-ring-builder "$builder" add "r1z1-127.0.0.1:$port/d1" 1 >/dev/null
  # Exit 1 is a warning (nothing to move in a one-device ring); the ring file is what counts.
  swift-ring-builder "$builder" rebalance >/dev/null || true
  [[ -f "$dir/etc/$name.ring.gz" ]] || { echo "s3-server.sh: could not build the $name ring" >&2; exit 1; }
done

common() {
  cat <<EOF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $1
workers = 0
user = $user
swift_dir = $dir/etc
devices = $dir/srv
mount_check = false
log_level = WARNING
EOF
}

for server in object container account; do
  port_var="${server}_port"
  {
    common "${!port_var}"
    cat <<EOF

[pipeline:main]
pipeline = $server-server

[app:$server-server]
use = egg:swift#$server
EOF
  } >"$dir/etc/$server-server.conf"
done

{
  common "$proxy_port"
  cat <<EOF

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:s3api]
use = egg:swift#s3api
location = us-east-1

[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = testing .admin

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:$memcache_port
EOF
  # The filters that need no setting of their own.
  for filter in catch_errors gatekeeper healthcheck proxy_logging listing_formats copy slo dlo; do
    printf '\n[filter:%s]\nuse = egg:swift#%s\n' "${filter/proxy_logging/proxy-logging}" "$filter"
  done
} >"$dir/etc/proxy-server.conf"

memcached -l 127.0.0.1 -p "$memcache_port" -U 0 -m 64 -u "$user" >"$dir/memcached.log" 2>&1 &
echo $! >>"$dir/pids"
for server in object container account proxy; do
  "swift-$server-server" "$dir/etc/$server-server.conf" >"$dir/$server.log" 2>&1 &
  echo $! >>"$dir/pids"
done
echo $! >"$dir/proxy.pid"

if ! wait_ready "$proxy_port" "$object_port" "$container_port" "$account_port" "$memcache_port"; then
  echo "s3-server.sh: the S3 service did not start within 60 s; its logs:" >&2
  tail -n 20 "$dir"/*.log >&2
  "$0" stop "$dir"
  exit 1
fi

echo "export HOARD_TEST_S3_ENDPOINT=http://127.0.0.1:$proxy_port"
echo "export HOARD_TEST_S3_ACCESS_KEY=test:tester"
echo "export HOARD_TEST_S3_SECRET=testing"
