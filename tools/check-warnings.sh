#!/usr/bin/env bash
# Fails when a build log holds a compiler warning about the project's own code (Sources/, Tests/, Fuzz/); the
# dependencies' warnings are theirs. scripts/test.sh runs it on the log of its build, which on a fresh clone compiles
# every file (an incremental build only repeats the warnings of the files it compiles again).
#
#   tools/check-warnings.sh LOG       list the project's warnings in LOG; exit 1 if there is any
#   tools/check-warnings.sh --self-test
#                                     compile a file with a deliberate warning and check that LOG's check fails on it
#                                     and passes on the same file without it
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

check() {
  local found
  # A diagnostic line names its file by absolute path: ROOT/Sources/…:LINE:COLUMN: warning: …
  # A warning inside a macro's expansion is printed as `macro expansion #require:1:26: warning: …`, the next line
  # naming where the expanded code comes from (`- ROOT/Tests/…:LINE:COLUMN: note: expanded code originates here`).
  found="$( {
    grep -E "^($root/)?(Sources|Tests|Fuzz)/[^:]+:[0-9]+:[0-9]+: warning: " "$1" || true
    awk -v root="$root/" '
      /^macro expansion .*: warning: / { warning = $0; next }
      warning != "" { if (index($0, root "Sources/") || index($0, root "Tests/") || index($0, root "Fuzz/")) print warning " (" $0 ")"; warning = "" }
    ' "$1"
  } | sort -u)"
  if [ -n "$found" ]; then
    printf '%s\n' "$found" >&2
    echo "the project's code has $(wc -l <<<"$found") compiler warning(s) above: fix each at its cause" >&2
    return 1
  fi
}

if [ "${1:-}" = "--self-test" ]; then
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/Sources/Deliberate"
  printf 'func deliberate() -> Int {\n    let unused = 1\n    return 2\n}\n' >"$scratch/Sources/Deliberate/Warned.swift"
  printf 'func deliberate() -> Int {\n    return 2\n}\n' >"$scratch/Sources/Deliberate/Clean.swift"
  for name in Warned Clean; do
    # Diagnostics name the file as given on the command line: give it as the build gives it, by absolute path under
    # a root, and check with that root.
    (cd "$scratch" && swiftc -typecheck "$scratch/Sources/Deliberate/$name.swift" >"$scratch/$name.log" 2>&1) || true
  done
  root="$scratch"
  if check "$scratch/Warned.log" 2>/dev/null; then
    echo "self-test failed: a log with a deliberate warning passed the check" >&2
    cat "$scratch/Warned.log" >&2
    exit 1
  fi
  check "$scratch/Clean.log" || { echo "self-test failed: a clean log failed the check" >&2; exit 1; }
  echo "warning check self-test passed: a deliberate warning fails it, a clean build passes"
  exit 0
fi

[ $# -eq 1 ] || { echo "usage: tools/check-warnings.sh LOG | --self-test" >&2; exit 2; }
check "$1"
echo "no compiler warnings in Sources/, Tests/ or Fuzz/"
