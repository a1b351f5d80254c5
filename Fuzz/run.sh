#!/usr/bin/env bash
# Builds and runs Hoard's libFuzzer targets (swiftc -sanitize=fuzzer,address), one executable per target.
#
#   Fuzz/run.sh TARGET [SECONDS]     fuzz one target for SECONDS (default 30), starting from Fuzz/corpus/TARGET
#   Fuzz/run.sh all [SECONDS]        every target in turn
#   Fuzz/run.sh regressions          replay every input in Fuzz/regressions/ (and the seed corpora) once
#
# Targets: naming, image-header, entry-gate, map-references, live-message, maptool-token.
# HoardCore is compiled once into a static library with coverage instrumentation; each target compiles its
# harness (Fuzz/Targets/) plus the few source files it needs from other modules. Everything goes to .build/fuzz/.
# New inputs libFuzzer finds go to .build/fuzz/corpus/TARGET (the committed seeds stay small); a crash writes
# .build/fuzz/artifacts/TARGET-crash-… and exits non-zero. Keep a crash as Fuzz/regressions/TARGET/NAME once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
out="$root/.build/fuzz"
mkdir -p "$out/artifacts"
# -wmo as SwiftPM release builds do: Swift 6.3.1 at -O without whole-module optimisation miscompiles EntryGate.admit
# (a bad pointer in the outlined destroy of Result<EntryPath, Problem>, with or without sanitizers).
flags=(-sanitize=fuzzer,address -parse-as-library -O -wmo -g -swift-version 6)

targets=(naming image-header entry-gate map-references live-message maptool-token)

sources_of() {
  case "$1" in
  naming) echo Fuzz/Targets/NamingTarget.swift ;;
  image-header) echo Fuzz/Targets/ImageHeaderTarget.swift ;;
  entry-gate) echo Fuzz/Targets/EntryGateTarget.swift Sources/HoardArchive/EntryGate.swift Sources/HoardArchive/ArchiveReader.swift Sources/HoardArchive/SharedBudget.swift ;;
  map-references) echo Fuzz/Targets/MapReferencesTarget.swift ;;
  live-message) echo Fuzz/Targets/LiveMessageTarget.swift ;;
  maptool-token) echo Fuzz/Targets/MapToolTokenTarget.swift ;;
  *) echo "unknown target '$1'; targets: ${targets[*]}" >&2; exit 2 ;;
  esac
}

# swiftc, quiet unless it fails (the gold linker warns about every ASan symbol).
# Runs in $out, where swiftc drops its by-products; paths given to it are absolute.
compile() {
  local log
  log=$(cd "$out" && swiftc "${flags[@]}" "$@" 2>&1) || { grep -v "Cannot export local symbol" <<<"$log" >&2; return 1; }
}

build_core() {
  local stamp="$out/HoardCore.stamp"
  if [ -f "$stamp" ] && [ -z "$(find Sources/HoardCore -newer "$stamp" -name '*.swift')" ]; then return; fi
  echo "==> building HoardCore with fuzzer instrumentation" >&2
  compile -module-name HoardCore -emit-module -emit-module-path "$out/HoardCore.swiftmodule" \
    -emit-library -static -o "$out/libHoardCore.a" "$root"/Sources/HoardCore/*.swift
  touch "$stamp"
}

build() {
  local target="$1" binary="$out/fuzz-$1"
  build_core
  # shellcheck disable=SC2046
  if [ ! -x "$binary" ] || [ -n "$(find Fuzz/Targets $(sources_of "$target") "$out/libHoardCore.a" -newer "$binary" 2>/dev/null | head -1)" ]; then
    echo "==> building fuzz-$target" >&2
    # shellcheck disable=SC2046
    compile -module-name "Fuzz_${target//-/_}" -I "$out" -L "$out" -lHoardCore \
      "$root/Fuzz/Targets/FuzzInput.swift" $(sources_of "$target" | tr ' ' '\n' | sed "s|^|$root/|") -o "$binary"
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
all) for target in "${targets[@]}"; do fuzz "$target" "${2:-30}"; done ;;
regressions) for target in "${targets[@]}"; do replay "$target"; done ;;
"") sed -n '2,13p' "$0"; exit 2 ;;
*) fuzz "$1" "${2:-30}" ;;
esac
