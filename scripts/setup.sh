#!/usr/bin/env bash
# Installs what Hoard needs and the machine lacks: Debian/Ubuntu through apt, macOS through Homebrew.
# Usage: scripts/setup.sh [--bench] [--browser] [--s3] [--cluster] [--lan]
#   --bench    adds the benchmark tools: bsdtar, nginx, wrk
#   --browser  adds what the browser test needs: Debian's chromium and chromium-driver, zbar-tools (zbarimg reads the
#              invite's QR code), and selenium and axe-selenium-python (which ships axe-core) from PyPI
#   --lan      adds what Harness/lan.py needs: avahi-daemon and avahi-utils, dbus, iproute2 (installed without being
#              started: the test runs its own in a network namespace)
#   --s3       adds the S3 service the S3 blob store's tests run against (tools/s3-server.sh): OpenStack Swift's
#              proxy (with its S3 API), object, container and account servers, and memcached
#   --cluster  adds what scripts/cluster.sh and Harness/cluster.py run: nginx (nginx-light) in front of two replicas,
#              and what --s3 adds (their shared blob store)
# Safe to run again: it installs only what is missing.
set -euo pipefail

want_bench=no
want_browser=no
want_s3=no
want_cluster=no
want_lan=no
for argument in "$@"; do
  case "$argument" in
  --bench) want_bench=yes ;;
  --browser) want_browser=yes ;;
  --s3) want_s3=yes ;;
  --cluster) want_cluster=yes; want_s3=yes ;;
  --lan) want_lan=yes ;;
  *) echo "usage: scripts/setup.sh [--bench] [--browser] [--s3] [--cluster] [--lan]" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

if ! command -v swift >/dev/null 2>&1; then
  echo "Swift 6 is required and was not found on PATH. Install it from swift.org (or swiftly) and run this again." >&2
  exit 1
fi

case "$(uname -s)" in
Linux)
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "No apt-get here: install libarchive, libvips and Avahi's dns_sd compatibility library (with pkg-config files), SQLite 3 headers, pkg-config, python3 and PostgreSQL 15 by hand." >&2
    exit 0
  fi
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  # postgresql-15: the server tools/postgres.sh starts for HoardPostgresTests (its initdb and pg_ctl stay in
  # /usr/lib/postgresql/15/bin, off PATH; the package also makes the postgres user that runs them for root).
  # libavahi-compat-libdnssd-dev: the dns_sd API (Sources/CDNSSD) through which `hoard serve --lan` is announced.
  # ffmpeg: tools/make-audio.py's corpus (its ffprobe is what the audio header tests agree with), the sound browser
  # test's tone, and Plugins/aac-rendition (AAC renditions of Ogg and FLAC); the server runs without it (the plugin is off).
  needed=(pkg-config libarchive-dev libsqlite3-dev libvips-dev python3 postgresql-15 libavahi-compat-libdnssd-dev ffmpeg)
  [ "$want_bench" = yes ] && needed+=(libarchive-tools nginx-light wrk time libvips-tools)
  [ "$want_browser" = yes ] && needed+=(chromium chromium-driver zbar-tools)
  [ "$want_lan" = yes ] && needed+=(avahi-daemon avahi-utils dbus iproute2)
  [ "$want_s3" = yes ] && needed+=(swift-proxy swift-object swift-container swift-account memcached)
  [ "$want_cluster" = yes ] && needed+=(nginx-light)
  missing=()
  for package in "${needed[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    $sudo apt-get update -qq
    # No service is started by the install (avahi-daemon would speak mDNS on the machine's network): a policy-rc.d
    # that refuses, for the install's length, unless the machine has one already.
    policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      policy=/usr/sbin/policy-rc.d
      printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod +x "$policy"
    fi
    set +e
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    installed=$?
    set -e
    [ -n "$policy" ] && $sudo rm -f "$policy"
    [ "$installed" -eq 0 ] || exit "$installed"
  fi
  ;;
Darwin)
  command -v brew >/dev/null 2>&1 || { echo "Homebrew is required on macOS: https://brew.sh" >&2; exit 1; }
  formulas=(libarchive pkg-config vips python3 postgresql@15 ffmpeg)
  [ "$want_bench" = yes ] && formulas+=(nginx wrk)
  [ "$want_cluster" = yes ] && formulas+=(nginx)
  [ "$want_browser" = yes ] && echo "--browser: install Chromium and its chromedriver by hand on macOS" >&2
  [ "$want_s3" = yes ] && echo "--s3: install OpenStack Swift (proxy with s3api, object, container, account) and memcached by hand" >&2
  for formula in "${formulas[@]}"; do
    brew list --versions "$formula" >/dev/null 2>&1 || { say "installing $formula"; brew install "$formula"; }
  done
  ;;
*)
  echo "Unsupported system $(uname -s); install libarchive, libvips and pkg-config by hand." >&2
  ;;
esac

if [ "$want_bench" = yes ] && ! python3 -c "import websockets" 2>/dev/null; then
  say "installing the websockets Python package (for Benchmarks/live.py)"
  python3 -m pip install --quiet websockets
fi

if [ "$want_browser" = yes ] && ! python3 -c "import selenium" 2>/dev/null; then
  say "installing the selenium Python package (for Tests/browser/test_web.py)"
  python3 -m pip install --quiet selenium
fi

if [ "$want_browser" = yes ] && ! python3 -c "import axe_selenium_python" 2>/dev/null; then
  say "installing the axe-selenium-python package (axe-core, for Tests/browser/test_web.py)"
  python3 -m pip install --quiet axe-selenium-python
fi
