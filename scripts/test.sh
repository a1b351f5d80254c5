#!/usr/bin/env bash
# The whole test suite: install what is missing, check line lengths, build once, run every Swift test, check real
# output against the JSON Schemas in Schemas/, drive the web page in headless Chromium, fuzz the API with schemathesis,
# then run the cluster, crash, LAN (DNS-SD), live-abuse, slowloris, fault and fuzz harnesses (Harness/, Fuzz/).
#
#   scripts/test.sh            everything (CI runs this); each stage's time is printed at the end
#   scripts/test.sh --quick    line lengths, the build and the Swift tests only: the loop while working
#
# One build serves everything: the debug build the Swift tests run is the `hoard` every harness starts (their bounds
# hold for it; a release build of the tests does not compile with Swift 6.3.1, see OPERATIONS.md). Only the libFuzzer
# targets need a build of their own (sanitizers, the package's modules only). After the build, things run side by side:
#   the Swift tests, with the cluster harness beside them; then three lanes at once:
#   lane 1: the fuzz build, then the kept crashes replayed and 6 s per target, one at a time (about one core)
#   lane 2: the schema checks, schemathesis, crashes, faults (servers started and killed: about half a core)
#   lane 3: the web page, the live table, the editor, hex maps, sound, invite links and the LAN (Chromium and servers
#           that mostly wait on each other; checks that are not timings)
# then, alone, the stages whose bounds are timings: the catalog, live abuse, slowloris.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=no
case "${1:-}" in
--quick) quick=yes ;;
"") ;;
*) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac

started=$SECONDS
stage_name=""
stage_start=$SECONDS
timings=()
# Starts a stage: closes the one before (its time is kept for the summary) and prints the new one's name.
stage() {
  [ -n "$stage_name" ] && timings+=("$(printf '%5ds  %s' $((SECONDS - stage_start)) "$stage_name")")
  stage_name="$1"
  stage_start=$SECONDS
  [ -n "$stage_name" ] && printf '\033[1m==> %s\033[0m\n' "$stage_name" >&2
  return 0
}
# Runs one stage's command under a time limit, so a stage that hangs fails the run naming itself long before CI's own
# limit ends it silently. The signal is SIGABRT, sent to the whole process group: a Swift process then prints every
# thread's backtrace (SWIFT_BACKTRACE) and a Python one every thread's traceback (PYTHONFAULTHANDLER) before it goes.
bounded() {
  local seconds=$1 status=0
  shift
  SWIFT_BACKTRACE=enable=yes,threads=all,interactive=no PYTHONFAULTHANDLER=1 \
    timeout --signal=ABRT --kill-after=60 "$seconds" "$@" || status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then echo "stopped after ${seconds} s, unfinished: $*" >&2; fi
  return "$status"
}
summary() {
  stage ""
  printf '\033[1m==> stage times (%d s in all)\033[0m\n' $((SECONDS - started)) >&2
  printf '%s\n' "${timings[@]}" >&2
  [ ! -f "$work/times" ] || cat "$work/times" >&2
}

if [ "$quick" = yes ]; then scripts/setup.sh --s3; else scripts/setup.sh --browser --s3 --cluster --lan; fi
. scripts/env.sh

# Services the Swift tests need start at once and come up while the build runs: a throwaway PostgreSQL for
# HoardPostgresTests (tools/postgres.sh) and a real S3 service for HoardS3Tests (tools/s3-server.sh: OpenStack Swift's
# S3 API, which checks signatures); without them those tests fail, never skip. Stopped when the script ends.
s3dir="$(mktemp -d)"
work="$(mktemp -d)"
lane_pid=""
# Runs at the end, whatever happened: it stops what is left and keeps the run's own exit status (a step of its own that
# fails, such as a folder a straggling process still writes into, must not fail a green run).
cleanup() {
  local status=$?
  set +e
  [ -n "$lane_pid" ] && kill "$lane_pid" 2>/dev/null
  [ -n "${browser_pid:-}" ] && kill "$browser_pid" 2>/dev/null
  [ -n "${cluster_pid:-}" ] && kill "$cluster_pid" 2>/dev/null
  tools/postgres.sh stop
  tools/s3-server.sh stop "$s3dir"
  rm -rf "$work" 2>/dev/null || { sleep 1; rm -rf "$work" || echo "left behind: $work" >&2; }
  exit "$status"
}
trap cleanup EXIT
HOARD_TEST_POSTGRES="$(tools/postgres.sh start)"
export HOARD_TEST_POSTGRES
tools/s3-server.sh start "$s3dir" >"$work/s3.env" 2>"$work/s3.log" &
s3_pid=$!

stage "swift-format lint: no Swift line longer than the lineLength of .swift-format"
# Only line length is enforced: the step fails on a [LineLength] finding or on a file swift-format cannot parse
# (a message without a rule name); its other findings (indentation, blank lines, …) are the formatter's taste.
command -v swift-format >/dev/null || { echo "swift-format not found (it comes with Swift 6 toolchains)" >&2; exit 1; }
lint="$(swift-format lint --strict --recursive --parallel --configuration .swift-format Sources Tests Fuzz 2>&1)" || true
if grep -E ': (error|warning): (\[LineLength\]|[^[])' <<<"$lint"; then
  echo "break the lines above (a long string literal splits with +), or fix what swift-format cannot parse" >&2
  exit 1
fi

stage "building, then no compiler warning in Sources/, Tests/ or Fuzz/"
set +e
swift build --build-tests 2>&1 | tee "$work/build.log" | grep --line-buffered -E '(error|warning): |Build complete' >&2
built=${PIPESTATUS[0]}
set -e
[ "$built" -eq 0 ] || { tail -n 40 "$work/build.log" >&2; exit 1; }
tools/check-warnings.sh "$work/build.log"
tools/check-warnings.sh --self-test
hoard="$(swift build --show-bin-path)/hoard"

stage "waiting for the S3 service (started with the build)"
wait "$s3_pid" || { cat "$work/s3.log" >&2; exit 1; }
eval "$(cat "$work/s3.env")"

# One stage of a lane that runs in the background: its name, its command under a time limit, its time (also kept in
# $work/times for the summary). The lane's output is shown when it is waited for.
lane_step() {
  local name="$1" seconds="$2" begun=$SECONDS status=0
  shift 2
  echo "==> $name"
  bounded "$seconds" "$@" || status=$?
  printf '%5ds  %s\n' $((SECONDS - begun)) "$name" >>"$work/times"
  return "$status"
}

fuzz_lane() {
  lane_step "lane 1: the fuzz targets' build (sanitizers)" 600 Fuzz/run.sh build
  lane_step "lane 1: the kept crashes and seeds replayed" 300 Fuzz/run.sh regressions
  FUZZ_JOBS=1 lane_step "lane 1: fuzzing, 6 s per target, one at a time" 900 Fuzz/run.sh all 6
}

browser_lane() {
  lane_step "lane 3: the web page in headless Chromium (screenshots in artefacts/browser/)" 600 \
    python3 Tests/browser/test_web.py "$hoard"
  lane_step "lane 3: the live table in headless Chromium, a host and two players" 400 \
    python3 Tests/browser/test_table.py "$hoard"
  lane_step "lane 3: a game made by clicks in the map editor, a player who joins it (Chromium, axe-core)" 300 \
    python3 Tests/browser/test_editor.py "$hoard"
  lane_step "lane 3: hex maps drawn as hex art is made (Chromium; the canvas's pixels against the square grid's)" 300 \
    python3 Tests/browser/test_hex.py "$hoard"
  lane_step "lane 3: line of sight at the table: a player behind a closed door, the door opened, the host as her (Chromium, ~15 s)" 120 \
    python3 Tests/browser/test_vision.py "$hoard"
  lane_step "lane 3: sound at the table: the host's jukebox, two players in step within 100 ms (Chromium, ~30 s)" 120 \
    python3 Tests/browser/test_sound.py "$hoard"
  lane_step "lane 3: invite links, the LAN URL and its QR code, decoded (Chromium in a network namespace)" 180 \
    python3 Tests/browser/test_invite.py "$hoard"
  lane_step "lane 3: hoard serve --lan announced by DNS-SD (avahi-daemon in a network namespace), found, joined" 120 \
    python3 Harness/lan.py "$hoard"
}

# Waits for a background lane, shows its output, fails the run if it failed.
join_lane() {
  local pid="$1" name="$2" status=0
  wait "$pid" || status=$?
  cat "$work/$name.log"
  [ "$status" -eq 0 ] || { echo "the $name lane failed (exit $status)" >&2; exit 1; }
}

# The cluster harness starts services of its own and mostly waits (on them, on a lease after a kill -9): it runs
# beside the Swift tests, its output shown after them.
cluster_pid=""
if [ "$quick" = no ]; then
  bounded 300 python3 Harness/cluster.py "$hoard" >"$work/cluster.log" 2>&1 &
  cluster_pid=$!
fi

beside=""
[ "$quick" = no ] && beside=", beside them several replicas (PostgreSQL, S3, two replicas, nginx), kill -9 of a replica"
stage "the Swift tests (PostgreSQL and S3 on loopback)$beside"
# Line-buffered, so a run stopped by its limit has printed every line it wrote; the tests it was waiting on are named.
tested=0
bounded 1500 stdbuf -oL -eL swift test --skip-build 2>&1 | tee "$work/swift-test.log" || tested=$?
if [ "$tested" -ne 0 ]; then
  python3 tools/unfinished-tests.py "$work/swift-test.log" | sed 's/^/unfinished: /' >&2 || true
  exit "$tested"
fi
tools/postgres.sh stop
tools/s3-server.sh stop "$s3dir"
if [ "$quick" = yes ]; then
  summary
  exit 0
fi
cluster_status=0
wait "$cluster_pid" || cluster_status=$?
cat "$work/cluster.log"
[ "$cluster_status" -eq 0 ] || { echo "the cluster harness failed (exit $cluster_status)" >&2; exit 1; }
# Lanes 1 and 3 start once the Swift tests are done: beside them, the fuzz build's compiler load slowed a server's start
# in a test past its patience.
fuzz_lane >"$work/fuzz.log" 2>&1 &
lane_pid=$!
browser_lane >"$work/browser.log" 2>&1 &
browser_pid=$!

stage "lane 2: command output against Schemas/"
python3 -c "import jsonschema" 2>/dev/null || python3 -m pip install -q jsonschema
# Beside the picture packs, a pack of sounds in every format Hoard reads (made by ffmpeg in a few seconds).
python3 tools/make-audio.py "$work/audio" > /dev/null
"$hoard" import Packs/*.zip "$work/audio/audio-pack.zip" --data-dir "$work/data" --json > "$work/import.json"
"$hoard" assets --data-dir "$work/data" --json > "$work/assets.json"
python3 tools/check-schemas.py "$work/data" "$work/import.json" "$work/assets.json"
"$hoard" plugins --data-dir "$work/data" --plugins-dir Plugins --json > "$work/plugins.json"
python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
  "$work/plugins.json" Schemas/plugin-list.schema.json
echo "schema checks passed"

stage "lane 2: schemathesis against a live server (zero 5xx, zero schema violations)"
bounded 600 tools/schemathesis.sh "$hoard"

stage "lane 2: crash safety: SIGKILL the server 50 times under load, then verify"
bounded 600 python3 Harness/crash.py "$hoard" --kills 50 --max-seconds 300

stage "lane 2: rendition jobs: SIGKILL the server 20 times while it makes an import's pictures, then verify"
bounded 300 python3 Harness/renditions.py "$hoard" --kills 20 --pictures 120

stage "lane 2: fault injection: full disk, read-only data directory, busy catalog"
bounded 300 python3 Harness/fault.py "$hoard"   # full disk and read-only only where it may mount a tmpfs (root)

stage "lane 3: waiting for the browser and LAN stages"
join_lane "$browser_pid" browser
browser_pid=""

stage "lane 1: waiting for the fuzzing"
join_lane "$lane_pid" fuzz
lane_pid=""

stage "the catalog at 1,000 and 10,000 assets: listing and search must not grow with it"
bounded 600 python3 Benchmarks/catalog.py "$hoard" --sizes 1000,10000 --pack-size 1000 --requests 20 --check-flat 5

stage "the live channel under abuse: fragment floods, silent sockets, dropped readers, floods, SIGTERM"
bounded 300 python3 Harness/live_abuse.py "$hoard"

stage "slowloris: 20,000 half-open connections are closed at the head timeout; /healthz answers within a second"
bounded 300 python3 Harness/slowloris.py "$hoard"

summary
