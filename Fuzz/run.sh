#!/usr/bin/env bash
# Builds and runs Hoard's libFuzzer targets (-sanitize=fuzzer,address), one executable per target.
#
#   Fuzz/run.sh TARGET [SECONDS]     fuzz one target for SECONDS (default 30), starting from Fuzz/corpus/TARGET
#   Fuzz/run.sh all [SECONDS]        every target in turn
#   Fuzz/run.sh regressions          replay every input in Fuzz/regressions/ (and the seed corpora) once
#   Fuzz/run.sh build                build every target, run none
#
# Targets: naming, image-header, audio-header, entry-gate, map-references, live-message, maptool-token, map-document, dice-formula.
# A target is a harness in Fuzz/Targets/ (plus FuzzInput.swift) and the package's modules it imports. Those modules
# (and the package's modules they depend on) are compiled with the sanitizers, -O -wmo, with the flags of SwiftPM's
# debug build plan: no source path is written here. What they depend on outside the package (swift-crypto) is linked
# from the debug build, uninstrumented. Everything goes to .build/fuzz/; the first build takes about a minute.
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

# The harnesses' modules are instrumented; what they depend on outside the package (swift-crypto, BoringSSL) is not
# (its code is not what is fuzzed) and comes from the debug build the tests use, built first if need be: the
# sanitizers' build of the package's own modules then takes a minute where a sanitized swift-crypto took three more.
# Each module is compiled with the flags SwiftPM's debug plan gives it (module maps, defines, package name, the
# sources it lists), changed to -O -wmo with the sanitizers. The dependencies' object files are put in one static
# archive, from which the linker takes only what the harness needs.
build_modules() {
  [ -n "${modules_built:-}" ] && return
  local imports
  imports="$(sed -n 's/^import \([A-Za-z_]*\)$/\1/p' Fuzz/Targets/*.swift | sort -u)"
  read_plan "$imports"
  local module
  for module in $modules; do swift build --target "$module" >/dev/null 2>&1 || swift build --target "$module" >&2; done
  python3 - "$root/.build/debug.yaml" "$out" "$modules" <<'PLAN' >"$out/plan.sh"
import json, re, shlex, sys
plan, out, modules = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3].split()
dropped_with_value = {"-output-file-map", "-index-store-path", "-emit-objc-header-path", "-emit-module-path", "-j",
                      "-module-cache-path"}
dropped = {"-incremental", "-enable-batch-mode", "-emit-dependencies", "-serialize-diagnostics", "-parseable-output",
           "-emit-objc-header", "-enable-testing", "-Onone", "-DDEBUG", "-c", "-emit-module"}
for module in modules:
    block = re.search(r'\n  "C\.%s-[^"]*-debug\.module":\n(?:    .*\n)*?    args: (\[.*\])\n' % module, plan)
    args, kept, skip = json.loads(block.group(1)), [], False
    for arg in args[1:]:
        if skip: skip = False; continue
        if arg in dropped_with_value: skip = True; continue
        if arg in dropped or re.fullmatch(r"-j\d+", arg): continue
        kept.append(arg)
    kept = ["-I", out + "/modules", "-module-cache-path", out + "/ModuleCache", "-O", "-wmo",
            "-sanitize=fuzzer,address", "-emit-module", "-emit-module-path", "%s/modules/%s.swiftmodule" % (out, module),
            "-c", "-o", "%s/objects/%s.o" % (out, module)] + kept
    sources = next(a[1:] for a in args if a.startswith("@"))
    print("compile_module %s %s %s" % (module, shlex.quote(sources), " ".join(shlex.quote(a) for a in kept)))
PLAN
  mkdir -p "$out/modules" "$out/objects"
  compiled=()
  # shellcheck disable=SC1091
  . "$out/plan.sh"
  deps_archive
  modules_built=1
}

# The package's targets the harnesses import and the package targets they depend on, dependencies first (`modules`);
# for its C targets the module maps a Swift module that imports them needs (`maps`) and the pkg-config names of its
# system libraries (`pkg_configs`); every target name of the package (`own`).
read_plan() {
  local facts
  facts="$(swift package dump-package | python3 -c '
import json, os, sys
targets = {t["name"]: t for t in json.load(sys.stdin)["targets"]}
order = []
def visit(name):
    target = targets.get(name)
    if target is None or name in order or target["type"] != "regular": return
    for dependency in target["dependencies"]:
        visit((dependency.get("byName") or dependency.get("target") or [None])[0])
    if os.path.isfile(".build/debug/%s.build/sources" % name): order.append(name)
for name in sys.argv[1].split(): visit(name)
print(" ".join(order))
maps = []
for t in targets.values():
    folder = t.get("path") or os.path.join("Sources", t["name"])
    for candidate in (os.path.join(folder, "module.modulemap"), os.path.join(folder, "include", "module.modulemap")):
        if os.path.isfile(candidate):
            maps.append(os.path.abspath(candidate))
print(" ".join(maps))
print(" ".join(t["pkgConfig"] for t in targets.values() if t["type"] == "system" and t.get("pkgConfig")))
print(" ".join(targets))
' "$1")"
  { read -r modules; read -r maps; read -r pkg_configs; read -r own; } <<<"$facts"
}

# One module, instrumented; again only when one of its sources or a module compiled before it is newer than its object.
compile_module() {
  local module="$1" sources="$2" object="$out/objects/$1.o"
  shift 2
  local inputs
  mapfile -t inputs <"$sources"
  if [ -f "$object" ] && [ -z "$(find "${inputs[@]}" "${compiled[@]}" -newer "$object" | head -1)" ]; then
    compiled+=("$object")
    return
  fi
  echo "==> building $module with fuzzer instrumentation (-O -wmo)" >&2
  local log
  log=$(cd "$out" && swiftc "$@" 2>&1) || { tail -n 40 <<<"$log" >&2; return 1; }
  touch "$object"  # swiftc leaves an object file whose contents did not change as it was
  compiled+=("$object")
}

# The debug build's object files of every target that is not the package's own, in one archive.
deps_archive() {
  local debug archive="$out/dependencies.a"
  debug="$(swift build --show-bin-path)"
  [ -f "$archive" ] && [ -z "$(find "$debug" -name '*.o' -newer "$archive" -print -quit)" ] && return
  local folder name objects=()
  for folder in "$debug"/*.build; do
    name="$(basename "$folder" .build)"
    case " $own " in *" $name "*) continue ;; esac
    case "$name" in *-tool | Hoard*) continue ;; esac
    while IFS= read -r -d '' object; do objects+=("$object"); done < <(find "$folder" -name '*.o' -print0)
  done
  rm -f "$archive"
  ar rcs "$archive" "${objects[@]}"
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
  local objects=("$out"/objects/*.o)
  if [ ! -x "$binary" ] || [ -n "$(find Fuzz/Targets "$out/objects" "$out/dependencies.a" -newer "$binary" 2>/dev/null | head -1)" ]; then
    echo "==> building fuzz-$target" >&2
    local libraries=() map_flags=() map debug
    debug="$(swift build --show-bin-path)"
    # shellcheck disable=SC2086
    [ -z "$pkg_configs" ] || read -ra libraries <<<"$(pkg-config --libs $pkg_configs)"
    for map in $maps; do map_flags+=(-Xcc "-fmodule-map-file=$map"); done
    compile -module-name "Fuzz_${target//-/_}" -I "$out/modules" -I "$debug/Modules" "${map_flags[@]}" \
      "$root/Fuzz/Targets/FuzzInput.swift" "$harness" "${objects[@]}" "$out/dependencies.a" \
      -Xlinker --as-needed "${libraries[@]}" -lstdc++ -o "$binary"
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
  # Built first, then fuzzed FUZZ_JOBS at a time (2 unless set; libFuzzer uses one core each); a crash in any fails the run.
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
