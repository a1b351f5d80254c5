#!/usr/bin/env bash
# The whole test suite: install what is missing, check line lengths, build, run every Swift test, check real output
# against the JSON Schemas in Schemas/, drive the web page in headless Chromium, fuzz the API with schemathesis, then
# run the cluster, crash, live-abuse, fault and fuzz harnesses (Harness/, Fuzz/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --browser --s3 --cluster
. scripts/env.sh

printf '\033[1m==> swift-format lint: no Swift line longer than the lineLength of .swift-format (seconds)\033[0m\n' >&2
# Only line length is enforced: the step fails on a [LineLength] finding or on a file swift-format cannot parse
# (a message without a rule name); its other findings (indentation, blank lines, …) are the formatter's taste.
command -v swift-format >/dev/null || { echo "swift-format not found (it comes with Swift 6 toolchains)" >&2; exit 1; }
lint="$(swift-format lint --strict --recursive --parallel --configuration .swift-format Sources Tests Fuzz 2>&1)" || true
if grep -E ': (error|warning): (\[LineLength\]|[^[])' <<<"$lint"; then
  echo "break the lines above (a long string literal splits with +), or fix what swift-format cannot parse" >&2
  exit 1
fi

printf '\033[1m==> building and running the tests\033[0m\n' >&2
swift build --build-tests
# HoardPostgresTests run against a real PostgreSQL on a loopback port (tools/postgres.sh), HoardS3Tests against a
# real S3 service (tools/s3-server.sh: OpenStack Swift's S3 API, which checks signatures); without them they fail,
# never skip. Both are stopped when the script ends, whatever happens.
HOARD_TEST_POSTGRES="$(tools/postgres.sh start)"
export HOARD_TEST_POSTGRES
s3dir="$(mktemp -d)"
trap 'tools/postgres.sh stop; tools/s3-server.sh stop "$s3dir"' EXIT
printf '\033[1m==> starting the S3 service for HoardS3Tests (tools/s3-server.sh, about 10 s)\033[0m\n' >&2
s3env="$(tools/s3-server.sh start "$s3dir")"
eval "$s3env"
swift test --skip-build
tools/postgres.sh stop
tools/s3-server.sh stop "$s3dir"
trap - EXIT

printf '\033[1m==> several replicas: PostgreSQL, S3, two replicas and nginx on loopback (scripts/cluster.sh); blobs, packs, live ops and grabs across replicas, kill -9 of a replica, S3 and PostgreSQL stopped (about a minute and a half)\033[0m\n' >&2
timeout 300 python3 Harness/cluster.py "$(swift build --show-bin-path)/hoard"

printf '\033[1m==> checking command output against Schemas/\033[0m\n' >&2
python3 -c "import jsonschema" 2>/dev/null || python3 -m pip install -q jsonschema
work="$(mktemp -d)"
trap 'rm -rf "$work"; tools/postgres.sh stop' EXIT
hoard="$(swift build --show-bin-path)/hoard"
"$hoard" import Packs/*.zip --data-dir "$work/data" --json > "$work/import.json"
"$hoard" assets --data-dir "$work/data" --json > "$work/assets.json"
python3 tools/check-schemas.py "$work/data" "$work/import.json" "$work/assets.json"
"$hoard" plugins --data-dir "$work/data" --plugins-dir Plugins --json > "$work/plugins.json"
python3 -c 'import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' \
  "$work/plugins.json" Schemas/plugin-list.schema.json
echo "schema checks passed"

printf '\033[1m==> the catalog at 1,000 and 10,000 assets: listing and search must not grow with it (about 90 s)\033[0m\n' >&2
python3 Benchmarks/catalog.py "$hoard" --sizes 1000,10000 --pack-size 1000 --requests 20 --check-flat 5

printf '\033[1m==> the web page in headless Chromium (screenshots in artefacts/browser/)\033[0m\n' >&2
python3 Tests/browser/test_web.py "$hoard"

printf '\033[1m==> the live table in headless Chromium: a host and two players (screenshots in artefacts/browser/)\033[0m\n' >&2
python3 Tests/browser/test_table.py "$hoard"

printf '\033[1m==> schemathesis against a live server (zero 5xx, zero schema violations)\033[0m\n' >&2
tools/schemathesis.sh "$hoard"

printf '\033[1m==> crash safety: SIGKILL the server 50 times under load, then verify (about 70 s)\033[0m\n' >&2
python3 Harness/crash.py "$hoard" --kills 50 --max-seconds 300

printf '\033[1m==> the live channel under abuse, against a release build: fragment floods, silent sockets, dropped readers, floods, SIGTERM (about 40 s)\033[0m\n' >&2
# Its bounds are the issue's, stated for a release build (a debug build's flood p99 is three times its quiet one).
swift build -c release --product hoard
timeout 300 python3 Harness/live_abuse.py "$(swift build -c release --show-bin-path)/hoard"

printf '\033[1m==> slowloris: 20,000 half-open connections are closed at the head timeout; /healthz answers within a second (about 30 s)\033[0m\n' >&2
timeout 300 python3 Harness/slowloris.py "$(swift build -c release --show-bin-path)/hoard"

printf '\033[1m==> fault injection: full disk, read-only data directory, busy catalog\033[0m\n' >&2
python3 Harness/fault.py "$hoard"   # full disk and read-only only where it may mount a tmpfs (root)

printf '\033[1m==> fuzzing: replay the kept crashes and seeds, then 20 s per target\033[0m\n' >&2
Fuzz/run.sh regressions
Fuzz/run.sh all 20
