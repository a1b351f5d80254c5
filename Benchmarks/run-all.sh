#!/usr/bin/env bash
# Runs every committed benchmark in sequence and keeps their output in Benchmarks/out/.
# Usage: Benchmarks/run-all.sh [--settle SECONDS]
#
# --settle waits before measuring. On an ext4 file system without a journal (common on VMs), every new inode is
# allocated past the inodes deleted in the last 60 to 360 seconds, one by one; right after a test run or a
# benchmark deleted thousands of files, creating files is several times slower for everyone. Both sides of each
# comparison pay it, but unequally (an import creates two files per asset: the picture and its descriptor).
# 370 seconds lets that window pass; it is waited before the import and again before the join (the two that create
# thousands of files), after the import, upload and live runs have deleted theirs.
set -euo pipefail
cd "$(dirname "$0")/.."
SETTLE=0
[ "${1:-}" = "--settle" ] && SETTLE=$2
mkdir -p Benchmarks/out
swift build -c release --product hoard >/dev/null 2>&1
HOARD="$(swift build -c release --show-bin-path)/hoard"
[ "$SETTLE" -gt 0 ] && { echo "settling for $SETTLE s"; sleep "$SETTLE"; }
{
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores"
  echo "## import"; Benchmarks/import.sh --runs 8 2>&1 | grep -E "median|peak"   # with time to usable and to complete
  echo "## serve"; Benchmarks/serve.sh --duration 10s 2>&1 | grep -vE "distributed-tracing|CMakeLists"
  echo "## upload"; Benchmarks/upload.sh --runs 3 2>&1 | tail -1
  echo "## live"; python3 Benchmarks/live.py "$HOARD" --participants 200 --rate 50 --seconds 10 2>&1 | tail -3
  echo "## live during an import"; python3 Benchmarks/live.py "$HOARD" --participants 200 --seconds 30 --join-ops 0 \
    --during-import Benchmarks/out/bench-2000x300mb.zip 2>&1 | tail -3
  echo "## a new upload behind a backlog"; python3 Benchmarks/backlog.py "$HOARD" 2>&1 | tail -1
  echo "## blobs during generation"; Benchmarks/serve-during-generation.sh --hoard "$HOARD" 2>&1 | tail -1
  echo "## catalog"; python3 Benchmarks/catalog.py "$HOARD" --sizes 20000,100000 2>&1
  [ "$SETTLE" -gt 0 ] && { echo "settling for $SETTLE s" >&2; sleep "$SETTLE"; }
  echo "## join"; python3 Benchmarks/join.py "$HOARD" 2>&1 | tail -4
} | tee Benchmarks/out/all.txt
