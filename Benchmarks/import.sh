#!/usr/bin/env bash
# Import speed and memory, measured side by side with the reference from issue #2:
#   reference: bsdtar -xf pack.zip -C tmp && openssl dgst -sha256 (every extracted file)
#   floor:     dd of the pack's bytes to a new file with fdatasync: what making 300 MB durable costs on this disk
#              alone (the reference writes the same bytes but never waits for the disk; hoard must)
#   durable reference: the reference followed by `sync -f` (syncfs) on its folder, i.e. the same extraction and
#              hashing made as durable as hoard's import is
#   hoard:     hoard import pack.zip (durable: data synced before the catalog commit), with preview and thumbnail
#              generation off: the reference makes no pictures (Benchmarks/thumbnails.sh measures generation)
# Then Benchmarks/usable.py: the pack uploaded into hoard serve, time to usable (listed and served) and to complete (its
# generated pictures made), default plugins against generation off.
# Usage: Benchmarks/import.sh [--files N] [--mb M] [--big-mb G] [--runs R] [--consecutive [--reverse]]
#   (--consecutive: each command's runs back to back, reference first, or hoard first with --reverse; the default
#   interleaves them round by round, which keeps the disk's drift from landing on one command)
# Prints a table and writes Benchmarks/out/import.json.
set -euo pipefail
cd "$(dirname "$0")/.."

FILES=2000 MB=300 BIG_MB=2048 RUNS=5 ORDER=()
while [ $# -gt 0 ]; do
  case "$1" in
    --files) FILES=$2; shift 2 ;;
    --mb) MB=$2; shift 2 ;;
    --big-mb) BIG_MB=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --consecutive) ORDER+=(--consecutive); shift ;;
    --reverse) ORDER+=(--reverse); shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

for tool in bsdtar openssl /usr/bin/time python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/setup.sh first" >&2; exit 1; }
done

OUT=Benchmarks/out
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hoard-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

PACK="$OUT/bench-${FILES}x${MB}mb.zip"
[ -f "$PACK" ] || python3 tools/make-packs.py --bench "$PACK" --files "$FILES" --total-mb "$MB"

swift build -c release --product hoard >/dev/null
HOARD=$(swift build -c release --show-bin-path)/hoard

# Before every run the pack is read once, so each command starts with it in the page cache: this VM pages out cold
# page cache on its own (DAMON), which otherwise makes some runs read the pack from disk.
# Every run writes into a new folder and nothing is deleted until the end: deleting thousands of files just
# before creating thousands more makes ext4 scan its recently-deleted inodes on every create, which would
# measure the benchmark's own clean-up rather than either command.
NOGEN="--plugin hoard.generate-lods=off"
# The programs timed and their libraries are read into the page cache too, for the same reason.
WARM="$(for program in bsdtar openssl dd "$HOARD"; do path=$(command -v "$program"); echo "$path"; ldd "$path" | awk '$3 ~ /^\// { print $3 }'; done | sort -u | tr '\n' ' ')"
echo "== import of $(du -h "$PACK" | cut -f1) pack, $FILES files, $RUNS interleaved rounds (after one warm-up round)"
# Interleaved rounds, not one command's runs after another's: this VM's disk drifts (a burst budget drains, ext4 slows
# after deletions), and whichever command ran last would pay for it.
python3 Benchmarks/interleave.py --rounds "$RUNS" --warmup 1 --out "$OUT/import.json" ${ORDER[@]+"${ORDER[@]}"} \
  --prepare "mkdir -p $WORK/x{n}; sync; cat $PACK $WARM > /dev/null" \
  "reference=bsdtar -xf $PACK -C $WORK/x{n} && find $WORK/x{n} -type f -print0 | xargs -0 openssl dgst -sha256 > /dev/null" \
  "durable reference=bsdtar -xf $PACK -C $WORK/x{n} && find $WORK/x{n} -type f -print0 | xargs -0 openssl dgst -sha256 > /dev/null && sync -f $WORK/x{n}" \
  "floor=dd if=$PACK of=$WORK/x{n}/floor bs=1M conv=fdatasync status=none" \
  "hoard=$HOARD import $PACK --data-dir $WORK/x{n}/data $NOGEN > /dev/null"

python3 - "$OUT/import.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
ref, durable, floor, hoard = (results[name]["median"] for name in ("reference", "durable reference", "floor", "hoard"))
print(f"median: reference {ref:.3f} s, hoard {hoard:.3f} s, ratio {hoard / ref:.2f}x (target <= 1.5x)")
print(f"median: durable write of the same bytes alone {floor:.3f} s = {floor / ref:.2f}x the reference")
print(f"median: reference made durable (sync -f) {durable:.3f} s = {durable / ref:.2f}x the reference; hoard {hoard / durable:.2f}x of it")
PY

peak() { # prints peak RSS in MB of a hoard import of $1
  rm -rf "$WORK/data"
  /usr/bin/time -f "%M" -o "$WORK/rss" "$HOARD" import "$1" --data-dir "$WORK/data" $NOGEN > /dev/null
  echo $(( $(cat "$WORK/rss") / 1024 ))
}
echo "peak memory, $MB MB pack: $(peak "$PACK") MB (target < 64 MB)"

# Time to usable and to complete (issue 38): the same pack uploaded into a running server, with the default plugins
# (its generated pictures made afterwards by the render workers) and with generation off.
echo "== time to usable and to complete: POST /v1/packs into hoard serve, default plugins and generation off"
python3 Benchmarks/usable.py "$HOARD" "$PACK" --rounds "$RUNS" --out "$OUT/usable.json"

if [ "$BIG_MB" -gt 0 ]; then
  BIG="$OUT/bench-big-${BIG_MB}mb.zip"
  [ -f "$BIG" ] || python3 tools/make-packs.py --bench "$BIG" --files $(( BIG_MB * 2 )) --total-mb "$BIG_MB"
  echo "peak memory, $BIG_MB MB pack: $(peak "$BIG") MB (target < 64 MB)"
fi
