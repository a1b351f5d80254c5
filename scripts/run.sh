#!/usr/bin/env bash
# The main job: install what is missing, build Hoard, import the sample packs in Packs/ and serve them on localhost.
# Usage: scripts/run.sh [DATA_DIR]     (default: ./hoard-data; also HOARD_DATA_DIR; HOARD_PORT picks the port, default 8080)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
. scripts/env.sh

data="${1:-${HOARD_DATA_DIR:-hoard-data}}"
printf '\033[1m==> building (release)\033[0m\n' >&2
swift build -c release --product hoard
hoard="$(swift build -c release --show-bin-path)/hoard"

printf '\033[1m==> importing Packs/ into %s\033[0m\n' "$data" >&2
"$hoard" import Packs/*.zip --data-dir "$data"
"$hoard" packs --data-dir "$data"
"$hoard" verify --data-dir "$data"

port="${HOARD_PORT:-8080}"
token="$("$hoard" token create --group default --name "scripts/run.sh" --role owner --data-dir "$data")"
cat <<TEXT

Hoard is serving http://127.0.0.1:$port  (Ctrl-C stops it): open it in a browser and paste the token below.
An owner token for the group "default": it manages that group's packs and members, no other group's
(only its hash is stored; keep it):

  export HOARD_TOKEN=$token
  curl -H "Authorization: Bearer \$HOARD_TOKEN" http://127.0.0.1:$port/v1/packs

A token for the server's operator, which acts on every group, is made with:
  $hoard token create --group default --name ops --role operator --data-dir $data

TEXT
exec "$hoard" serve --data-dir "$data" --port "$port"
