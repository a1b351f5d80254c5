#!/usr/bin/env bash
# A throwaway PostgreSQL for tests and trials: its own cluster in a temporary folder, on a free loopback port.
#
#   tools/postgres.sh start   initdb (as the postgres user when run as root: initdb refuses root), start, make the
#                             database `hoard`, print its URL. Already running: prints the URL again.
#   tools/postgres.sh url     prints postgres://hoard@127.0.0.1:PORT/hoard (fails when it is not running)
#   tools/postgres.sh stop    stops it and removes the folder (nothing to stop is not an error)
#   tools/postgres.sh pause   stops the server, keeping the folder (the database is down; its data kept)
#   tools/postgres.sh resume  starts a paused server again on its port
#
# The folder is $HOARD_POSTGRES_DIR, else one per checkout under ${TMPDIR:-/tmp}. The binaries are those of
# $HOARD_POSTGRES_BIN, else Debian's /usr/lib/postgresql/15/bin (the package postgresql-15 puts initdb and pg_ctl
# only there, not on PATH), else the newest /usr/lib/postgresql/*/bin, else Homebrew's postgresql@15, else PATH.
# Trust authentication on 127.0.0.1 only; fsync, full-page writes and synchronous commit off: a crash of this
# machine loses the cluster, which is a test's to lose. Starts in about a second.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${HOARD_POSTGRES_DIR:-${TMPDIR:-/tmp}/hoard-postgres-$(id -u)-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)}
USER_NAME=hoard
DATABASE=hoard

die() { echo "postgres.sh: $*" >&2; exit 1; }

find_bin() {
  if [[ -n "${HOARD_POSTGRES_BIN:-}" ]]; then echo "$HOARD_POSTGRES_BIN"; return; fi
  if [[ -x /usr/lib/postgresql/15/bin/initdb ]]; then echo /usr/lib/postgresql/15/bin; return; fi
  local newest
  newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [[ -n "$newest" && -x "$newest/initdb" ]]; then echo "$newest"; return; fi
  if command -v brew >/dev/null 2>&1 && [[ -x "$(brew --prefix postgresql@15 2>/dev/null)/bin/initdb" ]]; then
    echo "$(brew --prefix postgresql@15)/bin"; return
  fi
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  die "no PostgreSQL found: run scripts/setup.sh (it installs postgresql-15) or set HOARD_POSTGRES_BIN"
}

# Runs a PostgreSQL program as the cluster's owner: the postgres user when we are root, else ourselves.
as_owner() {
  if [[ "$(id -u)" -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the postgres user (the postgresql-15 package makes it)"
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

is_running() { [[ -f "$DIR/url" ]] && as_owner "$(find_bin)/pg_ctl" status -D "$DIR/data" >/dev/null 2>&1; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  if is_running; then cat "$DIR/url"; return; fi
  [[ -e "$DIR" ]] && stop
  local bin port
  bin=$(find_bin)
  port=$(free_port)
  mkdir -m 0700 -p "$DIR"
  [[ "$(id -u)" -eq 0 ]] && chown postgres: "$DIR"
  as_owner "$bin/initdb" --pgdata="$DIR/data" --username="$USER_NAME" --auth=trust --encoding=UTF8 --locale=C \
    --no-sync >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
  cat >>"$DIR/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$DIR'
fsync = off
full_page_writes = off
synchronous_commit = off
max_connections = 100
EOF
  as_owner "$bin/pg_ctl" start --pgdata="$DIR/data" --log="$DIR/server.log" --wait --timeout=60 >/dev/null \
    || { cat "$DIR/server.log" >&2; die "PostgreSQL did not start"; }
  as_owner "$bin/createdb" --host=127.0.0.1 --port="$port" --username="$USER_NAME" "$DATABASE"
  echo "postgres://$USER_NAME@127.0.0.1:$port/$DATABASE" | as_owner tee "$DIR/url"
}

stop() {
  [[ -e "$DIR" ]] || return 0
  if [[ -f "$DIR/data/postmaster.pid" ]]; then
    as_owner "$(find_bin)/pg_ctl" stop --pgdata="$DIR/data" --mode=immediate --wait >/dev/null 2>&1 || true
  fi
  rm -rf "$DIR"
}

pause() {
  is_running || die "not running: tools/postgres.sh start"
  as_owner "$(find_bin)/pg_ctl" stop --pgdata="$DIR/data" --mode=fast --wait >/dev/null
}

resume() {
  [[ -f "$DIR/url" ]] || die "nothing to resume in $DIR: tools/postgres.sh start"
  is_running && return
  as_owner "$(find_bin)/pg_ctl" start --pgdata="$DIR/data" --log="$DIR/server.log" --wait --timeout=60 >/dev/null \
    || { tail -n 20 "$DIR/server.log" >&2; die "PostgreSQL did not start again"; }
}

case "${1:-}" in
start) start ;;
stop) stop ;;
pause) pause ;;
resume) resume ;;
url) is_running || die "not running: tools/postgres.sh start"; cat "$DIR/url" ;;
*) echo "usage: tools/postgres.sh start|stop|pause|resume|url" >&2; exit 2 ;;
esac
