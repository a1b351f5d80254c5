#!/usr/bin/env bash
# Hoard as a cluster on this machine, on loopback, for a person to try (and for Harness/cluster.py and
# Benchmarks/cluster.sh): PostgreSQL (the shared catalog), an S3 service (the shared blobs), two `hoard serve`
# replicas over them, nginx in front.
#
#   scripts/cluster.sh up [--hoard PATH] [--sqlite] [DIR] [-- SERVE OPTIONS…]
#       starts PostgreSQL (tools/postgres.sh, its folder DIR/postgres), the S3 service (tools/s3-server.sh, DIR/s3),
#       imports Packs/ once, makes an operator token, starts replicas a and b (`hoard serve`, each its own data
#       directory DIR/a and DIR/b for its blob cache, free loopback ports, logs DIR/a.log and DIR/b.log), then
#       nginx (DIR/nginx.conf: both replicas upstream, WebSocket upgrade, request bodies streamed, no cache), and
#       prints the URL and the token. DIR/cluster.env holds the settings as shell exports: source it to run `hoard`
#       commands against the cluster, or read HOARD_CLUSTER_* from it (the harness and the benchmark do).
#         --hoard PATH   this binary (default: the release build, built if needed)
#         --sqlite       one SQLite catalog file, DIR/catalog.sqlite, instead of PostgreSQL (no cross-replica live)
#         -- OPTIONS     passed to both `hoard serve`s (e.g. -- --joins-per-session 1000)
#   scripts/cluster.sh down [DIR]
#       stops what `up` started (the process ids in DIR) and removes DIR; nothing to stop is not an error.
#   scripts/cluster.sh nginx-conf DIR PORT UPSTREAM…
#       prints the nginx configuration `up` writes, for PORT in front of the UPSTREAM ports (the benchmark puts the
#       same configuration in front of one replica).
#
# DIR defaults to $HOARD_CLUSTER_DIR, else ./hoard-cluster. Needs: scripts/setup.sh --cluster (nginx, OpenStack
# Swift's S3 API, memcached; PostgreSQL 15 is always installed).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

die() { echo "cluster.sh: $*" >&2; exit 1; }
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

nginx_conf() { # DIR PORT UPSTREAM...
  local dir=$1 port=$2; shift 2
  local upstreams="" upstream
  for upstream in "$@"; do
    # One failed connection takes a dead replica out for 5 s: requests and reconnecting sockets go to the others.
    upstreams+="    server 127.0.0.1:$upstream max_fails=1 fail_timeout=5s;"$'\n'
  done
  cat <<CONF
worker_processes 2;
user $(id -un);
pid $dir/nginx.pid;
error_log $dir/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log $dir/nginx-access.log combined buffer=64k flush=1s;
  client_body_temp_path $dir/nginx-temp/body; proxy_temp_path $dir/nginx-temp/proxy;
  fastcgi_temp_path $dir/nginx-temp/fastcgi; uwsgi_temp_path $dir/nginx-temp/uwsgi; scgi_temp_path $dir/nginx-temp/scgi;
  # A WebSocket upgrade passes its Upgrade header on; any other request keeps its upstream connection alive.
  map \$http_upgrade \$connection_upgrade { default upgrade; '' ''; }
  # An upgrade goes on a connection of its own: Hoard (hummingbird-websocket) upgrades only a connection's first
  # request, and answers an upgrade on a kept-alive one with 307 and a close (a browser does not follow that).
  map \$http_upgrade \$hoard_upstream { default hoard_live; '' hoard; }
  upstream hoard {
$upstreams    keepalive 64;
  }
  upstream hoard_live {
$upstreams  }
  server {
    listen 127.0.0.1:$port;
    # Hoard enforces its own body limits (--max-pack-mb, --max-blob-mb) and says which one was passed.
    client_max_body_size 0;
    location / {
      proxy_pass http://\$hoard_upstream;
      proxy_http_version 1.1;
      proxy_set_header Upgrade \$http_upgrade;
      proxy_set_header Connection \$connection_upgrade;
      proxy_set_header Host \$http_host;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto \$scheme;
      # Uploads stream to the replica as they arrive (a 4 GiB pack is not spooled here first) ...
      proxy_request_buffering off;
      # ... and answers stream back without temporary files; nothing is cached (access is decided per request).
      proxy_max_temp_file_size 0;
      proxy_cache off;
      # A dead replica is noticed at its refused connection; a pack import may take minutes before its answer; a
      # live socket carries the server's pings every 10 s.
      proxy_connect_timeout 2s;
      proxy_send_timeout 300s;
      proxy_read_timeout 300s;
      proxy_next_upstream error timeout;
      # Which replica answered (its loopback address): for trying and testing, not for the Internet.
      add_header X-Hoard-Replica \$upstream_addr always;
    }
  }
}
CONF
}

free_ports() { # COUNT: that many free loopback ports, asked of the kernel at once so they differ
  python3 - "$1" <<'EOF'
import socket, sys
sockets = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))
EOF
}

wait_healthy() { # URL LOG: at most 60 s
  python3 - "$1" <<'EOF' || { tail -n 20 "$2" >&2; return 1; }
import sys, time, urllib.request
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        urllib.request.urlopen(sys.argv[1] + "/healthz", timeout=2)
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)
EOF
}

down() { # DIR
  local dir=$1
  [[ -e "$dir" ]] || { echo "cluster.sh: nothing to stop in $dir" >&2; return 0; }
  # Only a folder `up` made is removed (a mistyped DIR must not lose someone's files).
  [[ -f "$dir/cluster.env" || -f "$dir/.hoard-cluster" ]] || die "$dir was not made by scripts/cluster.sh up; not removing it"
  if [[ -f "$dir/nginx.pid" ]]; then kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true; fi
  if [[ -f "$dir/pids" ]]; then
    while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$dir/pids"
    # SIGTERM lets a replica finish its requests; after 8 s it is killed.
    for _ in $(seq 80); do
      local alive=no
      while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=yes; done <"$dir/pids"
      [[ $alive == no ]] && break
      sleep 0.1
    done
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$dir/pids"
  fi
  [[ -d "$dir/s3" ]] && tools/s3-server.sh stop "$dir/s3"
  HOARD_POSTGRES_DIR="$dir/postgres" tools/postgres.sh stop
  rm -rf "$dir"
  echo "cluster.sh: stopped and removed $dir" >&2
}

up() {
  local hoard="" sqlite=no dir="" serve_options=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
    --hoard) hoard=$2; shift 2 ;;
    --sqlite) sqlite=yes; shift ;;
    --) shift; serve_options=("$@"); break ;;
    -*) die "unknown option $1 (usage: scripts/cluster.sh up [--hoard PATH] [--sqlite] [DIR] [-- SERVE OPTIONS])" ;;
    *) dir=$1; shift ;;
    esac
  done
  dir=${dir:-${HOARD_CLUSTER_DIR:-hoard-cluster}}
  command -v nginx >/dev/null || die "nginx not found: run scripts/setup.sh --cluster (Debian: apt-get install nginx-light)"
  if [[ -e "$dir" ]]; then
    [[ -f "$dir/cluster.env" ]] && die "$dir holds a cluster already: scripts/cluster.sh down $dir first"
    [[ -z "$(ls -A "$dir")" ]] || die "$dir exists and is not empty; name another folder"
  fi
  if [[ -z "$hoard" ]]; then
    say "building hoard (release)"
    . scripts/env.sh
    swift build -c release --product hoard >&2
    hoard="$(swift build -c release --show-bin-path)/hoard"
  fi
  [[ -x "$hoard" ]] || die "$hoard is not an executable"
  mkdir -p "$dir/nginx-temp"
  dir=$(cd "$dir" && pwd)
  touch "$dir/.hoard-cluster"
  # PostgreSQL runs as the postgres user when we are root: it must be able to reach DIR/postgres.
  chmod 755 "$dir"
  : >"$dir/pids"
  # Whatever stops `up` before the end (a failed step, die, Ctrl-C) stops what it started.
  trap 'echo "cluster.sh: up failed; stopping what it started" >&2; down "$dir"' EXIT

  say "starting the S3 service (OpenStack Swift's S3 API, about 10 s)$([[ $sqlite == yes ]] || echo " and PostgreSQL")"
  tools/s3-server.sh start "$dir/s3" >"$dir/s3.env" 2>"$dir/s3-start.log" &
  local s3_starter=$!
  local catalog
  if [[ $sqlite == yes ]]; then
    catalog="$dir/catalog.sqlite"
  else
    catalog=$(HOARD_POSTGRES_DIR="$dir/postgres" tools/postgres.sh start)
  fi
  wait "$s3_starter" || { cat "$dir/s3-start.log" >&2; die "the S3 service did not start"; }
  . "$dir/s3.env"

  local port_a port_b port_nginx
  read -r port_a port_b port_nginx < <(free_ports 3)
  cat >"$dir/cluster.env" <<EOF
# scripts/cluster.sh's cluster: source this file to run hoard commands against it.
export HOARD_CATALOG='$catalog'
export HOARD_BLOB_STORE='s3://hoard/blobs'
export HOARD_S3_ENDPOINT='$HOARD_TEST_S3_ENDPOINT'
export AWS_ACCESS_KEY_ID='$HOARD_TEST_S3_ACCESS_KEY'
export AWS_SECRET_ACCESS_KEY='$HOARD_TEST_S3_SECRET'
export HOARD_DATA_DIR='$dir/cli'
export HOARD_CLUSTER_URL='http://127.0.0.1:$port_nginx'
export HOARD_CLUSTER_A='http://127.0.0.1:$port_a'
export HOARD_CLUSTER_B='http://127.0.0.1:$port_b'
export HOARD_CLUSTER_HOARD='$hoard'
EOF
  . "$dir/cluster.env"

  say "importing Packs/ into the shared catalog and bucket"
  "$hoard" import "$ROOT"/Packs/*.zip >"$dir/import.log" 2>&1 || { cat "$dir/import.log" >&2; die "the import failed"; }
  local token
  token=$("$hoard" token create --group default --name cluster.sh --role operator)
  echo "export HOARD_CLUSTER_TOKEN='$token'" >>"$dir/cluster.env"

  say "starting replicas a (:$port_a) and b (:$port_b) and nginx (:$port_nginx)"
  local name port
  for name in a b; do
    port=$([[ $name == a ]] && echo "$port_a" || echo "$port_b")
    "$hoard" serve --data-dir "$dir/$name" --port "$port" --log-level warning --catalog "$catalog" --trusted-proxy 127.0.0.1 \
      --blob-store "$HOARD_BLOB_STORE" --s3-endpoint "$HOARD_S3_ENDPOINT" ${serve_options[@]+"${serve_options[@]}"} \
      >"$dir/$name.log" 2>&1 &
    echo $! >>"$dir/pids"
    echo $! >"$dir/$name.pid"
  done
  nginx_conf "$dir" "$port_nginx" "$port_a" "$port_b" >"$dir/nginx.conf"
  nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/nginx-error.log" || die "nginx did not start ($dir/nginx-error.log)"
  wait_healthy "$HOARD_CLUSTER_A" "$dir/a.log" || die "replica a did not answer within 60 s ($dir/a.log)"
  wait_healthy "$HOARD_CLUSTER_B" "$dir/b.log" || die "replica b did not answer within 60 s ($dir/b.log)"
  wait_healthy "$HOARD_CLUSTER_URL" "$dir/nginx-error.log" || die "nginx did not answer ($dir/nginx-error.log)"
  trap - EXIT

  cat <<TEXT

Hoard is running as a cluster: open $HOARD_CLUSTER_URL (nginx, in front of replicas a and b) and paste the
token below. An operator token (it acts on every group; only its hash is stored):

  export HOARD_TOKEN=$token
  curl -H "Authorization: Bearer \$HOARD_TOKEN" $HOARD_CLUSTER_URL/v1/packs

Replicas: a $HOARD_CLUSTER_A, b $HOARD_CLUSTER_B (logs $dir/a.log, $dir/b.log); catalog $catalog;
blobs s3://hoard/blobs at $HOARD_S3_ENDPOINT. Run hoard commands against it after: . $dir/cluster.env
Stop it all: scripts/cluster.sh down $dir

TEXT
}

case "${1:-}" in
up) shift; up "$@" ;;
down) down "${2:-${HOARD_CLUSTER_DIR:-hoard-cluster}}" ;;
nginx-conf) [[ $# -ge 4 ]] || die "usage: scripts/cluster.sh nginx-conf DIR PORT UPSTREAM…"; shift; nginx_conf "$@" ;;
*) echo "usage: scripts/cluster.sh up [--hoard PATH] [--sqlite] [DIR] [-- SERVE OPTIONS] | down [DIR]" >&2; exit 2 ;;
esac
