#!/usr/bin/env bash
# Builds and runs Hoard's libFuzzer targets (-sanitize=fuzzer,address), one executable per target.
#
#   Fuzz/run.sh TARGET [SECONDS]     fuzz one target for SECONDS (default 30), starting from Fuzz/corpus/TARGET
#   Fuzz/run.sh all [SECONDS]        every target in turn
#   Fuzz/run.sh regressions          replay every input in Fuzz/regressions/ (and the seed corpora) once
#   Fuzz/run.sh build                build every target, run none
#
# Targets: naming, image-header, audio-header, entry-gate, map-references, live-message, maptool-token, map-document, dice-formula.
# A target is a harness in Fuzz/Targets/ (plus FuzzInput.swift) and the package's modules it imports. SwiftPM builds
# those modules from Package.swift, as a release build with the sanitizers, in .build/fuzz/spm: no source path is
# written here, and a module's dependencies come from the manifest. Each harness is then compiled against them and
# linked with every object file of that build (the modules of all harnesses and their dependencies).
# Everything goes to .build/fuzz/; the first build also compiles swift-crypto (HoardArchive needs it), a few minutes.
# New inputs libFuzzer finds go to .build/fuzz/corpus/TARGET (the committed seeds stay small); a crash writes
# .build/fuzz/artifacts/TARGET-crash-… and exits non-zero. Keep a crash as Fuzz/regressions/TARGET/NAME once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="$root/.build/fuzz"
mkdir -p "$out/artifacts"
# The harnesses get the flags of SwiftPM's release build of the modules: -O with -wmo, because Swift 6.3.1 at -O without
# whole-module optimisation miscompiles EntryGate.admit (a bad pointer in the outlined destroy of
# Result<EntryPath, Problem>, with or without sanitizers).
# shellcheck disable=SC2054 # the commas belong to one flag
flags=(-sanitize=fuzzer,address -parse-as-library -O -wmo -g -swift-version 6)
# SwiftPM hands swiftc `-sanitize=fuzzer -sanitize=address`, of which swiftc keeps the last (no coverage, so libFuzzer
# would fuzz blind): the -Xswiftc flag, which comes after them, asks for both.
# shellcheck disable=SC2054
spm=(swift build -c release --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address --scratch-path "$out/spm")

targets=(naming image-header audio-header entry-gate map-references live-message maptool-token map-document dice-formula)

harness_of() {
  case "$1" in
  naming) echo NamingTarget ;;
  image-header) echo ImageHeaderTarget ;;
  audio-header) echo AudioHeaderTarget ;;
  entry-gate) echo EntryGateTarget ;;
  map-references) echo MapReferencesTarget ;;
  live-message) echo LiveMessageTarget ;;
  maptool-token) echo MapToolTokenTarget ;;
  map-document) echo MapDocumentTarget ;;
  dice-formula) echo DiceFormulaTarget ;;
  *) echo "unknown target '$1'; targets: ${targets[*]}" >&2; exit 2 ;;
  esac
}

# From the manifest: the package's targets the harnesses import (`modules`), and for its C targets the module maps a
# Swift module that imports them needs (`maps`) and the pkg-config names of its system libraries (`pkg_configs`).
read_manifest() {
  [ -n "${modules:-}" ] && return
  local imports facts
  imports="$(sed -n 's/^import \([A-Za-z_]*\)$/\1/p' Fuzz/Targets/*.swift | sort -u)"
  facts="$(swift package dump-package | python3 -c '
import json, os, sys
imports = set(sys.argv[1].split())
targets = json.load(sys.stdin)["targets"]
print(" ".join(t["name"] for t in targets if t["name"] in imports))
maps = []
for t in targets:
    folder = t.get("path") or os.path.join("Sources", t["name"])
    for candidate in (os.path.join(folder, "module.modulemap"), os.path.join(folder, "include", "module.modulemap")):
        if os.path.isfile(candidate):
            maps.append(os.path.abspath(candidate))
print(" ".join(maps))
print(" ".join(t["pkgConfig"] for t in targets if t["type"] == "system" and t.get("pkgConfig")))
' "$imports")"
  { read -r modules; read -r maps; read -r pkg_configs; } <<<"$facts"
}

# SwiftPM builds each module the harnesses import (and what it depends on); quick when nothing changed.
build_modules() {
  [ -n "${modules_built:-}" ] && return
  read_manifest
  local module log
  for module in $modules; do
    echo "==> building $module with fuzzer instrumentation (SwiftPM, release)" >&2
    log=$("${spm[@]}" --target "$module" 2>&1) || { tail -n 40 <<<"$log" >&2; return 1; }
  done
  bin="$("${spm[@]}" --show-bin-path)"  # its Modules/ folder holds the .swiftmodule files
  modules_built=1
}

# swiftc, quiet unless it fails (the gold linker warns about every ASan symbol).
# Runs in $out, where swiftc drops its by-products; paths given to it are absolute.
compile() {
  local log
  log=$(cd "$out" && swiftc "${flags[@]}" "$@" 2>&1) || { grep -v "Cannot export local symbol" <<<"$log" >&2; return 1; }
}

build() {
  local target="$1" binary="$out/fuzz-$1" harness
  harness="$root/Fuzz/Targets/$(harness_of "$target").swift"
  build_modules
  # The object files of the modules built, as SwiftPM's build plan names them (an object of a source since moved
  # or removed stays on disk, but not in the plan).
  local objects=() object
  while read -r object; do [ -f "$object" ] && objects+=("$object"); done < <(grep -o '"[^"]*\.o"' "$out/spm/release.yaml" | tr -d '"' | sort -u)
  if [ ! -x "$binary" ] || [ -n "$(find Fuzz/Targets "${objects[@]}" -newer "$binary" 2>/dev/null | head -1)" ]; then
    echo "==> building fuzz-$target" >&2
    local libraries=() map_flags=() map
    # shellcheck disable=SC2086
    [ -z "$pkg_configs" ] || read -ra libraries <<<"$(pkg-config --libs $pkg_configs)"
    for map in $maps; do map_flags+=(-Xcc "-fmodule-map-file=$map"); done
    compile -module-name "Fuzz_${target//-/_}" -I "$bin/Modules" "${map_flags[@]}" \
      "$root/Fuzz/Targets/FuzzInput.swift" "$harness" "${objects[@]}" -Xlinker --as-needed "${libraries[@]}" -lstdc++ \
      -o "$binary"
  fi
}

fuzz() {
  local target="$1" seconds="$2"
  build "$target"
  mkdir -p "$out/corpus/$target"
  echo "==> fuzzing $target for ${seconds}s" >&2
  "$out/fuzz-$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$target-" "$out/corpus/$target" "Fuzz/corpus/$target" 2>&1 | tail -n 12
}

replay() {
  local target="$1"
  build "$target"
  local inputs=(Fuzz/corpus/"$target"/*)
  [ -d "Fuzz/regressions/$target" ] && inputs+=(Fuzz/regressions/"$target"/*)
  "$out/fuzz-$target" -runs=0 "${inputs[@]}" > "$out/replay-$target.log" 2>&1 || { tail -n 30 "$out/replay-$target.log"; exit 1; }
  echo "$target: ${#inputs[@]} inputs replayed, no crash" >&2
}

case "${1:-}" in
all)
  # Built first, then fuzzed two at a time (libFuzzer uses one core each); a crash in any fails the run.
  for target in "${targets[@]}"; do build "$target"; done
  running=0
  for target in "${targets[@]}"; do
    if [ "$running" -ge "${FUZZ_JOBS:-2}" ]; then wait -n; running=$((running - 1)); fi
    fuzz "$target" "${2:-30}" > "$out/fuzz-$target.log" 2>&1 && cat "$out/fuzz-$target.log" || { cat "$out/fuzz-$target.log"; exit 1; } &
    running=$((running + 1))
  done
  while [ "$running" -gt 0 ]; do wait -n; running=$((running - 1)); done
  ;;
build) for target in "${targets[@]}"; do build "$target"; done ;;
regressions) for target in "${targets[@]}"; do replay "$target"; done ;;
"") sed -n '2,16p' "$0"; exit 2 ;;
*) fuzz "$1" "${2:-30}" ;;
esac
