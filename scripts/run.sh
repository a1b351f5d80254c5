#!/usr/bin/env bash
# The main job: install what is missing, build Hoard, put `hoard` on PATH, import the sample packs in Packs/ and serve
# them: on this machine only, or with --lan on the local network (the URLs players can open are printed, and the server
# is announced by DNS-SD).
# Usage: scripts/run.sh [--lan] [DATA_DIR]
#   DATA_DIR defaults to $HOARD_DATA_DIR, else ./hoard-data when it exists here, else ~/.local/share/hoard
#   (~/Library/Application Support/Hoard on macOS): where every `hoard` command looks without --data-dir.
#   HOARD_PORT picks the port (default 8080).
set -euo pipefail
cd "$(dirname "$0")/.."

lan=no
data=""
for argument in "$@"; do
  case "$argument" in
  --lan) lan=yes ;;
  -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "usage: scripts/run.sh [--lan] [DATA_DIR]" >&2; exit 2 ;;
  *) data="$argument" ;;
  esac
done

scripts/setup.sh
. scripts/env.sh

if [ -z "$data" ]; then
  if [ -n "${HOARD_DATA_DIR:-}" ]; then data="$HOARD_DATA_DIR"
  elif [ -d hoard-data ]; then data="$PWD/hoard-data"
  elif [ "$(uname -s)" = Darwin ]; then data="$HOME/Library/Application Support/Hoard"
  elif [[ "${XDG_DATA_HOME:-}" == /* ]]; then data="$XDG_DATA_HOME/hoard"
  else data="$HOME/.local/share/hoard"
  fi
fi

printf '\033[1m==> building (release)\033[0m\n' >&2
swift build -c release --product hoard
hoard="$(swift build -c release --show-bin-path)/hoard"

scripts/link-hoard.sh "$hoard"   # `hoard` on PATH: a link in ~/.local/bin

printf '\033[1m==> importing Packs/ into %s\033[0m\n' "$data" >&2
"$hoard" import Packs/*.zip --data-dir "$data"
"$hoard" packs --data-dir "$data"
"$hoard" verify --data-dir "$data"

port="${HOARD_PORT:-8080}"
token="$("$hoard" token create --group default --name "scripts/run.sh" --role owner --data-dir "$data")"
if [ "$lan" = yes ]; then
  where="on the local network (the URLs players can open are printed below)"
  serve=(--lan)
else
  where="on http://127.0.0.1:$port, this machine only (scripts/run.sh --lan serves the local network)"
  serve=()
fi
cat <<TEXT

Hoard is serving $where. Ctrl-C stops it.
Open http://127.0.0.1:$port in a browser here and paste the token below.
An owner token for the group "default": it manages that group's packs and members, no other group's
(only its hash is stored; keep it):

  export HOARD_TOKEN=$token
  curl -H "Authorization: Bearer \$HOARD_TOKEN" http://127.0.0.1:$port/v1/packs

A token for the server's operator, which acts on every group, is made with:
  hoard token create --group default --name ops --role operator --data-dir "$data"

TEXT
exec "$hoard" serve --data-dir "$data" --port "$port" ${serve[@]+"${serve[@]}"}
