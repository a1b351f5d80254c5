#!/usr/bin/env bash
# Dice: how many `4d6kh3` one core parses and rolls a second (issue 41's target: at least 100,000), each from its own
# HMAC-SHA256 stream as the server rolls them. Builds the release `hoard` and runs `hoard rolls bench`, which prints
# the rate and the mean total (12.24 for 4d6kh3: a check that the dice are right, not only fast).
# Usage: Benchmarks/dice.sh [--formula F] [--count N]
set -euo pipefail
cd "$(dirname "$0")/.."
FORMULA=4d6kh3 COUNT=1000000
while [ $# -gt 0 ]; do
  case "$1" in
    --formula) FORMULA=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
swift build -c release --product hoard >&2
# One core: the loop is single-threaded; taskset keeps the scheduler from moving it when available.
runner=()
command -v taskset >/dev/null && runner=(taskset -c 0)
"${runner[@]}" .build/release/hoard rolls bench --formula "$FORMULA" --count "$COUNT"
