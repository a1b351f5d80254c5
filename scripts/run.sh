#!/usr/bin/env bash
# The main job: install what is missing, build Hoard, import the sample packs in Packs/ and show what they hold.
# Usage: scripts/run.sh [DATA_DIR]     (default: ./hoard-data; also HOARD_DATA_DIR)
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
"$hoard" assets --data-dir "$data"
"$hoard" verify --data-dir "$data"
echo
echo "Hoard is built at $hoard. Try: $hoard --help"
