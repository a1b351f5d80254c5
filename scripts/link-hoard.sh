#!/usr/bin/env bash
# Puts `hoard` where people look for it: a link in ~/.local/bin to the binary given (replacing only a link there,
# never someone's file), and says how to get that folder on PATH when it is not; else prints the command to run.
# Usage: scripts/link-hoard.sh PATH/TO/hoard          (scripts/run.sh calls it after building)
set -euo pipefail
[ $# -eq 1 ] && [ -x "$1" ] || { echo "usage: scripts/link-hoard.sh PATH/TO/hoard (an executable)" >&2; exit 2; }
hoard="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
bin="$HOME/.local/bin"
if mkdir -p "$bin" 2>/dev/null && { [ ! -e "$bin/hoard" ] || [ -L "$bin/hoard" ]; } && ln -sfn "$hoard" "$bin/hoard" 2>/dev/null; then
  printf '\033[1m==> hoard is linked at %s/hoard\033[0m\n' "$bin" >&2
  case ":$PATH:" in
  *":$bin:"*) ;;
  *) echo "    $bin is not on your PATH; add it with:  export PATH=\"$bin:\$PATH\"" >&2 ;;
  esac
else
  echo "    cannot link $bin/hoard (a file of something else is there, or the folder is not writable); to run hoard by name:  ln -s \"$hoard\" /usr/local/bin/hoard" >&2
fi
