#!/usr/bin/env bash
# Preview + thumbnail generation (hoard.generate-lods, libvips) against vipsthumbnail making the same two pictures
# from the same files, in the same run; and import with every processor on against every processor off.
#   files:      N real PNGs, SIDE×SIDE RGBA gradients with a tEXt comment, named tokens/tNNNNN_2x2.png (2×2 tiles
#               at 256 px: preview 64×64, thumbnail 256×256)
#   vips:       vipsthumbnail -s 64x64 (WebP Q80) + vipsthumbnail -s 256x256 (WebP Q80) over every file, the files
#               split over one vipsthumbnail process per core (xargs -P), as hoard spreads its work over every core
#   hoard off:  hoard import of the files with pack.json plugins {generate-lods: false, strip-metadata: false}
#   hoard gen:  the same with generate-lods on (stripping off): gen − off is the generation cost
#   hoard all:  the same with every processor on
# Target (issue 5): gen − off within 1.2× of vips. Run on a quiet machine: the figures are wall-clock.
# Usage: Benchmarks/thumbnails.sh [--files N] [--side PX] [--hoard PATH]. Prints a table and writes
# Benchmarks/out/thumbnails.json. --hoard uses that binary instead of building a release one (smoke tests only).
set -euo pipefail
cd "$(dirname "$0")/.."

FILES=2000 SIDE=512 HOARD=
while [ $# -gt 0 ]; do
  case "$1" in
    --files) FILES=$2; shift 2 ;;
    --side) SIDE=$2; shift 2 ;;
    --hoard) HOARD=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

for tool in vipsthumbnail python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/setup.sh --bench first" >&2; exit 1; }
done

OUT=Benchmarks/out
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hoard-thumbs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT" "$WORK/vips"

python3 - "$WORK" "$FILES" "$SIDE" <<'PY'
import json, os, struct, sys, zipfile, zlib
work, count, side = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
def png(seed):
    row = bytearray(side * 4)
    row[0::4] = bytes((x * 255 // side + seed) & 0xFF for x in range(side))
    row[2::4] = bytes([(seed * 37) & 0xFF]) * side
    row[3::4] = b"\xff" * side
    rows = bytearray()
    for y in range(side):
        row[1::4] = bytes([(y * 255 // side + seed) & 0xFF]) * side
        rows += b"\x00" + row
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 6, 0, 0, 0))
            + chunk(b"tEXt", b"Comment\x00made by Benchmarks/thumbnails.sh")
            + chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + chunk(b"IEND", b""))
os.makedirs(f"{work}/files/tokens")
names = []
for i in range(count):
    name = f"tokens/t{i:05d}_2x2.png"
    with open(f"{work}/files/{name}", "wb") as f:
        f.write(png(i))
    names.append(name)
for label, plugins in [("off", {"hoard.generate-lods": False, "hoard.strip-metadata": False}),
                       ("gen", {"hoard.strip-metadata": False}), ("all", {})]:
    with zipfile.ZipFile(f"{work}/{label}.zip", "w", zipfile.ZIP_STORED) as z:
        z.writestr("pack.json", json.dumps({"name": f"thumbs-{label}", "plugins": plugins}))
        for name in names:
            z.write(f"{work}/files/{name}", name)
PY

if [ -z "$HOARD" ]; then
  swift build -c release --product hoard >/dev/null
  HOARD=$(swift build -c release --show-bin-path)/hoard
fi

seconds() {  # runs a command, prints its wall-clock seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  python3 -c "print(round($end - $start, 3))"
}

sync
CORES=$(nproc)
vips=$(seconds sh -c "cd '$WORK/files/tokens' && ls | xargs -n 50 -P $CORES vipsthumbnail -s 64x64 -o '$WORK/vips/%s-preview.webp[Q=80,effort=4,strip]' \
  && ls | xargs -n 50 -P $CORES vipsthumbnail -s 256x256 -o '$WORK/vips/%s-thumb.webp[Q=80,effort=4,strip]'")
[ "$(ls "$WORK/vips" | wc -l)" -eq $((FILES * 2)) ] || { echo "vipsthumbnail made $(ls "$WORK/vips" | wc -l) files, expected $((FILES * 2))" >&2; exit 1; }
off=$(seconds "$HOARD" import --data-dir "$WORK/data-off" "$WORK/off.zip")
gen=$(seconds "$HOARD" import --data-dir "$WORK/data-gen" "$WORK/gen.zip")
all=$(seconds "$HOARD" import --data-dir "$WORK/data-all" "$WORK/all.zip")

python3 - "$FILES" "$SIDE" "$vips" "$off" "$gen" "$all" "$OUT/thumbnails.json" <<'PY'
import json, sys
files, side = int(sys.argv[1]), int(sys.argv[2])
vips, off, gen, all_on = map(float, sys.argv[3:7])
generation = gen - off
result = {"files": files, "side": side, "vipsthumbnailSeconds": vips, "importOffSeconds": off,
          "importGenerateSeconds": gen, "importAllSeconds": all_on, "generationSeconds": round(generation, 3),
          "generationVsVips": round(generation / vips, 2), "allProcessorsOverhead": round(all_on / off, 2)}
print(f"{files} PNGs of {side}×{side}")
print(f"  vipsthumbnail, preview + thumbnail   {vips:8.2f} s")
print(f"  hoard import, processors off         {off:8.2f} s")
print(f"  hoard import, generate-lods on       {gen:8.2f} s   → generation {generation:.2f} s = {generation / vips:.2f}× vipsthumbnail (target ≤ 1.2×)")
print(f"  hoard import, every processor on     {all_on:8.2f} s   → {all_on / off:.2f}× processors off")
json.dump(result, open(sys.argv[7], "w"), indent=2)
PY
