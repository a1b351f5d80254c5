#!/usr/bin/env bash
# Sight: how long one token's line of sight takes to recompute after a move (issue 40's targets: p99 ≤ 2 ms with
# 1,000 wall segments, ≤ 10 ms with 10,000, on a 512 × 512 map, range 30, one core). Builds the release `hoard` and
# runs `hoard map sight-bench` on generated maps of walled rooms with doors, square and hex.
# Usage: Benchmarks/sight.sh [--moves N]
set -euo pipefail
cd "$(dirname "$0")/.."
MOVES=5000
while [ $# -gt 0 ]; do
  case "$1" in
    --moves) MOVES=$2; shift 2 ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
swift build -c release --product hoard >&2
runner=()
command -v taskset >/dev/null && runner=(taskset -c 0)
for grid in square hex; do
  for walls in 1000 10000; do
    "${runner[@]}" .build/release/hoard map sight-bench --grid "$grid" --walls "$walls" --range 30 --moves "$MOVES"
  done
done
