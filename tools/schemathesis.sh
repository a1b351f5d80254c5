#!/usr/bin/env bash
# Runs schemathesis against a live `hoard serve` and Schemas/openapi.yaml: zero 5xx, and every response conforms to
# the document (status code, content type, headers, body schema).
#
#   tools/schemathesis.sh PATH/TO/hoard        (build it first: swift build --product hoard)
#
# Builds nothing. Makes a temporary data directory, imports Packs/*.zip into group "default", issues an admin token,
# serves on a free loopback port, runs schemathesis with that token, stops the server and exits with
# schemathesis's status. Environment: ST_MAX_EXAMPLES (default 30), ST_SEED (a fixed seed, optional),
# ST_WORKERS (default 1: more threads have crashed Python 3.11's ast module inside Hypothesis), ST_EXTRA (more schemathesis arguments, split on spaces).
set -euo pipefail

HOARD=${1:?usage: tools/schemathesis.sh PATH/TO/hoard}
[[ -x "$HOARD" ]] || { echo "schemathesis.sh: $HOARD is not an executable" >&2; exit 2; }
HOARD=$(cd "$(dirname "$HOARD")" && pwd)/$(basename "$HOARD")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SCHEMA="$ROOT/Schemas/openapi.yaml"
MAX_EXAMPLES=${ST_MAX_EXAMPLES:-30}
WORKERS=${ST_WORKERS:-1}

# schemathesis 4.x (its CLI differs from 3.x: `st run LOCATION --url`, `--checks`, `--phases`, `--max-examples`).
if ! command -v st >/dev/null 2>&1; then
    echo "== installing schemathesis from PyPI"
    python3 -m pip install --quiet --disable-pip-version-check 'schemathesis>=4,<5'
fi
ST_VERSION=$(st --version 2>/dev/null | awk '{print $NF}')
case "$ST_VERSION" in
    4.*) ;;
    *) echo "schemathesis.sh: needs schemathesis 4.x, found '$ST_VERSION' (pip install 'schemathesis>=4,<5')" >&2; exit 2 ;;
esac

DATA=$(mktemp -d "${TMPDIR:-/tmp}/hoard-schemathesis.XXXXXX")
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$DATA"
}
trap cleanup EXIT

echo "== data directory $DATA"
"$HOARD" group create default --data-dir "$DATA/data" >/dev/null
shopt -s nullglob
packs=("$ROOT"/Packs/*.zip)
if ((${#packs[@]})); then
    "$HOARD" import --group default --data-dir "$DATA/data" "${packs[@]}" >/dev/null
    echo "== imported ${#packs[@]} pack(s): ${packs[*]##*/}"
fi
TOKEN=$("$HOARD" token create --group default --admin --name schemathesis --data-dir "$DATA/data" | tail -n 1 | tr -d '[:space:]')
[[ -n "$TOKEN" ]] || { echo "schemathesis.sh: no token was printed" >&2; exit 2; }

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
BASE="http://127.0.0.1:$PORT"
"$HOARD" serve --data-dir "$DATA/data" --host 127.0.0.1 --port "$PORT" --log-level warning >"$DATA/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do
    if curl -fsS "$BASE/healthz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "schemathesis.sh: the server exited:" >&2
        cat "$DATA/server.log" >&2
        exit 2
    fi
    sleep 0.2
done
curl -fsS "$BASE/healthz" >/dev/null || { echo "schemathesis.sh: $BASE/healthz never answered" >&2; cat "$DATA/server.log" >&2; exit 2; }
echo "== hoard serving at $BASE (pid $SERVER_PID); schemathesis $ST_VERSION"

# Known-good requests first: they seed test data (an empty blob, a 5 MiB blob, a session, a saved map, a pack
# copy to delete) and check the success paths fuzzing rarely reaches (201/200 imports, 206, 304, HEAD, batch…)
# against the document with the same schemathesis checks. Then the values they found become schemathesis
# dictionaries, so fuzzing hits real digests, packs, sessions and ranges about half the time.
# schemathesis serializes only the binary media types it knows; archives are bytes like application/octet-stream.
cat >"$DATA/hoard_schemathesis_hooks.py" <<'PY'
import schemathesis

for media_type in ("application/zip", "application/x-tar", "application/gzip", "image/png", "image/jpeg", "image/webp"):
    schemathesis.serializer.alias(media_type, "application/octet-stream")
PY
export PYTHONPATH="$DATA${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=hoard_schemathesis_hooks

smoke_status=0
python3 - "$SCHEMA" "$BASE" "$TOKEN" "$DATA/schemathesis.toml" "${packs[0]:-}" <<'PY' || smoke_status=$?
import hashlib, json, os, sys
import requests
import schemathesis
import hoard_schemathesis_hooks  # noqa: F401  (archive serializers)
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance, response_headers_conformance, response_schema_conformance, status_code_conformance)

schema_path, base, token, config_path, archive = sys.argv[1:6]
schema = schemathesis.openapi.from_path(schema_path)
checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
          response_schema_conformance]
auth = {"Authorization": f"Bearer {token}"}
session = requests.Session()
passed, failed = 0, []

def call(method, path, status, *, params=None, query=None, headers=None, body=None, media_type=None, token=True):
    """One request through schemathesis, checked against the document; its status must be `status`."""
    global passed
    case = schema[path][method].Case(
        path_parameters=params or {}, query=query, headers={**(auth if token else {}), **(headers or {})},
        **({} if body is None else {"body": body, "media_type": media_type or "application/json"}))
    label = f"{method} {path} {params or ''}{query or ''}{headers or ''}".strip()
    try:
        response = case.call(base_url=base, session=session)
    except Exception as error:  # a connection error is a failure too
        failed.append(f"{label}: {error}")
        return None
    try:
        case.validate_response(response, checks=checks)
        if response.status_code != status:
            raise AssertionError(f"status {response.status_code}, expected {status}: {response.text[:300]}")
        passed += 1
    except (Exception, BaseExceptionGroup) as error:  # schemathesis raises its failures as an exception group
        failed.append(f"{label}: {error}")
    return response

def raw(method, path, status):
    """A request sent as written (percent-encoding kept), for what schemathesis would re-encode; status only."""
    global passed
    response = session.request(method, base + path, headers=auth)
    if response.status_code == status:
        passed += 1
    else:
        failed.append(f"{method} {path}: status {response.status_code}, expected {status}: {response.text[:300]}")

def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()

call("GET", "/", 200); call("GET", "/healthz", 200); call("GET", "/metrics", 200)
call("GET", "/metrics", 401, token=False)
call("GET", "/healthz", 401, headers={"Authorization": "Bearer nope"})
call("GET", "/v1/packs", 401, headers={"Authorization": "Basic eDp5"})
packs = call("GET", "/v1/packs", 200).json()["packs"]
call("GET", "/v1/packs", 200, token=False)
pack_names = [p["name"] for p in packs]
call("GET", "/v1/packs/{name}", 200, params={"name": pack_names[0].upper()})
call("GET", "/v1/packs/{name}", 404, params={"name": "no-such-pack"})
listing = call("GET", "/v1/assets", 200, query={"limit": 1000}).json()["assets"]
call("GET", "/v1/assets", 200, query={"limit": 2, "offset": 1, "pack": pack_names[0], "kind": listing[0]["kind"], "q": listing[0]["name"][:2]})
call("GET", "/v1/assets", 200, query={"offset": 2147483647})
call("GET", "/v1/assets", 400, query={"limit": 0})
call("GET", "/v1/assets", 400, query={"offset": "x"})
assets = [a["digest"] for a in listing]
variants = [v["digest"] for a in listing for v in a["variants"]]
manifests = [p["manifestDigest"] for p in packs if p.get("manifestDigest")]
call("GET", "/v1/assets/{digest}", 200, params={"digest": assets[0]})
call("GET", "/v1/assets/{digest}", 404, params={"digest": variants[0]})
call("GET", "/v1/assets/{digest}", 400, params={"digest": "sha256:ABC"})

# Blobs: a picture, a descriptor, a manifest, an empty blob and one over the in-memory limit (streamed from disk).
empty, large_bytes = b"", os.urandom(5 << 20)
large = digest(large_bytes)
call("PUT", "/v1/blobs/{digest}", 201, params={"digest": digest(empty)}, body=empty, media_type="application/octet-stream")
call("PUT", "/v1/blobs/{digest}", 201, params={"digest": digest(empty)}, body=empty, media_type="application/octet-stream")
call("PUT", "/v1/blobs/{digest}", 201, params={"digest": large}, body=large_bytes, media_type="application/octet-stream")
call("PUT", "/v1/blobs/{digest}", 400, params={"digest": digest(b"x")}, body=b"y", media_type="application/octet-stream")
call("PUT", "/v1/blobs/{digest}", 401, params={"digest": digest(b"x")}, body=b"x", media_type="application/octet-stream", token=False)
blobs = [variants[0], assets[0], manifests[0], digest(empty), large]
etag = lambda d: f'"{d}"'
for method in ("GET", "HEAD"):
    path = "/v1/blobs/{digest}"
    for d in blobs:
        call(method, path, 200, params={"digest": d})
        call(method, path, 304, params={"digest": d}, headers={"If-None-Match": f'"x", W/{etag(d)}'})
    for d in (variants[0], assets[0], large):
        call(method, path, 206, params={"digest": d}, headers={"Range": "bytes=0-9"})
        call(method, path, 206, params={"digest": d}, headers={"Range": "bytes=-7"})
        call(method, path, 206, params={"digest": d}, headers={"Range": "bytes=3-", "If-Range": etag(d)})
        call(method, path, 200, params={"digest": d}, headers={"Range": "bytes=3-", "If-Range": '"other"'})
        call(method, path, 200, params={"digest": d}, headers={"Range": "bytes=0-1,4-5"})
        call(method, path, 416, params={"digest": d}, headers={"Range": "bytes=99999999-"})
    call(method, path, 416, params={"digest": digest(empty)}, headers={"Range": "bytes=0-"})
    call(method, path, 404, params={"digest": digest(b"never stored")})
    call(method, path, 400, params={"digest": "sha256:123"})
    call(method, path, 404, params={"digest": variants[0]}, token=False)
call("POST", "/v1/blobs/missing", 200, body={"digests": blobs + [digest(b"never stored")]})
call("POST", "/v1/blobs/missing", 200, body={"digests": blobs}, token=False)
call("POST", "/v1/blobs/missing", 400, body={"digests": ["sha256:no"]})
call("POST", "/v1/blobs/missing", 400, body={"digest": []})
call("POST", "/v1/blobs/batch", 200, body={"digests": blobs + [digest(b"never stored")]})
call("POST", "/v1/blobs/batch", 413, body={"digests": [digest(b"x")] * 1001})

# Packs: import a copy under another name, again (unchanged), publish it, delete it; a refused archive.
if archive:
    with open(archive, "rb") as f:
        zip_bytes = f.read()
    call("POST", "/v1/packs", 201, query={"name": "smoke-copy"}, body=zip_bytes, media_type="application/zip")
    call("POST", "/v1/packs", 200, query={"name": "smoke-copy"}, body=zip_bytes, media_type="application/octet-stream")
    call("PATCH", "/v1/packs/{name}", 200, params={"name": "smoke-copy"}, body={"isPublic": True})
    call("GET", "/v1/packs/{name}", 200, params={"name": "smoke-copy"}, token=False)
    call("PATCH", "/v1/packs/{name}", 400, params={"name": "smoke-copy"}, body={"isPublic": "yes"})
    call("DELETE", "/v1/packs/{name}", 204, params={"name": "smoke-copy"})
    call("DELETE", "/v1/packs/{name}", 404, params={"name": "smoke-copy"})
    call("POST", "/v1/packs", 201, query={"name": "doomed"}, body=zip_bytes, media_type="application/zip")
    call("POST", "/v1/packs", 400, query={"group": "", "name": "nameless-group"}, body=zip_bytes, media_type="application/zip")
call("POST", "/v1/packs", 422, body=b"not an archive", media_type="application/octet-stream")
# Path parameters may arrive percent-encoded: `sha256%3A…` is the same digest, `dungeon%2Dbasics` the same pack.
raw("GET", "/v1/blobs/" + variants[0].replace(":", "%3A"), 200)
raw("HEAD", "/v1/blobs/" + variants[0].replace(":", "%3a"), 200)
raw("GET", "/v1/assets/" + assets[0].replace(":", "%3A"), 200)
raw("GET", "/v1/packs/" + pack_names[0].replace("-", "%2D"), 200)
call("POST", "/v1/packs", 401, body=b"x", media_type="application/octet-stream", token=False)

# Sessions and maps.
# A map in the shape of Schemas/map.schema.json; a bare picture digest stands for an uploaded drawing.
game_map = {"schema": "hoard.map/v1", "grid": {"width": 8, "height": 6},
            "background": {"texture": assets[0], "tiles": [{"x": 1, "y": 1, "texture": variants[0]}]},
            "drawing": {"walls": [{"from": [0, 0], "to": [8, 0]}], "strokes": []}, "objects": [],
            "tokens": [{"id": "t1", "asset": assets[-1], "x": 1, "y": 2, "number": 1}]}
created = call("POST", "/v1/sessions", 201, body={"name": "smoke", "map": game_map}).json()
call("POST", "/v1/sessions", 409, body={"name": "smoke", "map": {"a": digest(b"never stored")}})
call("POST", "/v1/sessions", 400, body={"name": "smoke", "visibility": "public", "map": {}})
call("GET", "/v1/sessions", 200)
call("GET", "/v1/sessions/{id}", 200, params={"id": created["id"]})
call("GET", "/v1/sessions/{id}", 404, params={"id": "no-such-session"})
call("PUT", "/v1/sessions/{id}/map", 200, params={"id": created["id"]}, body={**game_map, "tokens": [{**game_map["tokens"][0], "x": 2}]})
call("GET", "/v1/sessions/{id}/live", 200, params={"id": created["id"]})
call("GET", "/v1/sessions/{id}/live", 404, params={"id": "no-such-session"})
joined = call("POST", "/v1/sessions/join", 200, body={"code": created["code"].lower().replace("-", " "), "name": "Ann"}, token=False).json()
call("POST", "/v1/sessions/join", 404, body={"code": "AAAA-AAAA", "name": "Ann"}, token=False)
call("GET", "/v1/sessions/{id}", 200, params={"id": created["id"]}, headers={"Authorization": f"Bearer {joined['participantToken']}"})
call("GET", "/v1/blobs/{digest}", 200, params={"digest": variants[0]}, headers={"Authorization": f"Bearer {joined['participantToken']}"})
call("GET", "/v1/maps", 403, headers={"Authorization": f"Bearer {joined['participantToken']}"})
call("POST", "/v1/maps", 201, body={"name": "smoke-map", "map": game_map})
call("POST", "/v1/maps", 409, body={"name": "smoke-map", "map": game_map})
call("POST", "/v1/maps", 201, body={"name": "keep-map", "map": game_map})
call("GET", "/v1/maps", 200)
call("GET", "/v1/maps/{name}", 200, params={"name": "smoke-map"})
call("POST", "/v1/sessions", 201, body={"name": "from saved", "visibility": "private", "fromMap": "smoke-map"})
call("DELETE", "/v1/maps/{name}", 204, params={"name": "smoke-map"})
call("GET", "/v1/maps/{name}", 404, params={"name": "smoke-map"})

# The page, private uploads, refs and share links.
call("GET", "/", 200, token=False)
call("GET", "/web/{file}", 200, params={"file": "app.js"}, token=False)
call("GET", "/web/{file}", 404, params={"file": "nope.js"}, token=False)
picture = session.get(f"{base}/v1/blobs/{variants[0]}", headers=auth).content + os.urandom(16)
uploaded = call("POST", "/v1/uploads", 201, body=picture, media_type="image/png").json()
call("POST", "/v1/uploads", 200, body=picture, media_type="image/png")
call("POST", "/v1/uploads", 201, query={"session": created["id"]}, body=picture, media_type="image/png")
call("POST", "/v1/uploads", 415, body=b"not a picture", media_type="application/octet-stream")
call("POST", "/v1/uploads", 404, query={"session": "no-such-session"}, body=picture, media_type="image/png")
call("GET", "/v1/uploads/{digest}", 200, params={"digest": uploaded["digest"]})
call("GET", "/v1/uploads/{digest}", 404, params={"digest": digest(b"never uploaded")})
call("GET", "/v1/uploads/{digest}", 401, params={"digest": uploaded["digest"]}, token=False)
call("PUT", "/v1/refs/{name}", 200, params={"name": "last-drawing"}, headers={"If-None-Match": "*"}, body={"digest": uploaded["digest"]})
call("PUT", "/v1/refs/{name}", 412, params={"name": "last-drawing"}, headers={"If-None-Match": "*"}, body={"digest": uploaded["digest"]})
call("PUT", "/v1/refs/{name}", 200, params={"name": "last-drawing"}, headers={"If-Match": etag(uploaded["digest"])}, body={"digest": assets[0]})
call("PUT", "/v1/refs/{name}", 404, params={"name": "stolen"}, body={"digest": digest(b"never stored")})
call("GET", "/v1/refs/{name}", 200, params={"name": "last-drawing"})
call("GET", "/v1/refs", 200)
call("DELETE", "/v1/refs/{name}", 412, params={"name": "last-drawing"}, headers={"If-Match": etag(uploaded["digest"])})
call("DELETE", "/v1/refs/{name}", 204, params={"name": "last-drawing"})
call("GET", "/v1/refs/{name}", 404, params={"name": "last-drawing"})
shared = call("POST", "/v1/shares", 201, body={"blob": uploaded["digest"], "name": "<b>drawing</b>"}).json()
call("POST", "/v1/shares", 201, body={"asset": assets[0]})
call("POST", "/v1/shares", 400, body={"blob": uploaded["digest"], "asset": assets[0]})
call("GET", "/v1/shares", 200)
call("GET", "/v1/shares/{id}", 200, params={"id": shared["id"]}, token=False)
call("GET", "/v1/shares/{id}/picture", 200, params={"id": shared["id"]}, token=False)
call("GET", "/s/{id}", 200, params={"id": shared["id"]}, token=False)
call("DELETE", "/v1/shares/{id}", 204, params={"id": shared["id"]})
call("GET", "/v1/shares/{id}", 404, params={"id": shared["id"]}, token=False)
call("GET", "/v1/uploads", 200, query={"limit": 1, "offset": 1})
call("GET", "/v1/uploads", 400, query={"limit": 0})
call("DELETE", "/v1/uploads/{digest}", 204, params={"digest": uploaded["digest"]}, query={"session": created["id"]})
call("DELETE", "/v1/uploads/{digest}", 204, params={"digest": uploaded["digest"]})
call("DELETE", "/v1/uploads/{digest}", 404, params={"digest": uploaded["digest"]})
call("GET", "/v1/uploads/{digest}", 404, params={"digest": uploaded["digest"]})
ended = call("POST", "/v1/sessions", 201, body={"name": "ended", "map": game_map}).json()
call("DELETE", "/v1/sessions/{id}", 204, params={"id": ended["id"]})
call("DELETE", "/v1/sessions/{id}", 404, params={"id": ended["id"]})
call("POST", "/v1/sessions/join", 404, body={"code": ended["code"], "name": "Late"}, token=False)

print(f"== known-good requests: {passed} passed, {len(failed)} failed")
for failure in failed:
    print("FAILED", failure)

# Dictionaries for the fuzzing run.
def toml_list(values):
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"
dictionaries = {
    "digests": sorted(set(blobs + assets[:5] + variants[:5] + manifests)),
    "packs": pack_names,
    "doomed": ["doomed"],
    "kinds": sorted({a["kind"] for a in listing}),
    "ranges": ["bytes=0-9", "bytes=-5", "bytes=10-", "bytes=0-0", "bytes=5-2", "bytes=0-1,3-4", "bytes=99999999-",
               "bytes=-0", "items=0-1", "bytes=x-y"],
    "etags": [etag(d) for d in blobs] + ["*", "W/" + etag(blobs[0]), '"sha256:0"'],
    "sessions": [created["id"]],
    "codes": [created["code"]],
    "maps": ["keep-map"],
}
with open(config_path, "w") as f:
    for name, values in dictionaries.items():
        f.write(f"[dictionaries.{name}]\nvalues = {toml_list(values)}\n\n")
    f.write('[parameters]\n')
    bindings = {"path.digest": "digests", "query.pack": "packs", "query.kind": "kinds", "header.Range": "ranges",
                "header.If-None-Match": "etags", "header.If-Range": "etags", "path.id": "sessions"}
    for key, name in bindings.items():
        f.write(f'"{key}" = {{ dictionary = "{name}", probability = 0.5 }}\n')
    for operation, bindings in {
        "getPack": {"path.name": "packs"}, "setPackVisibility": {"path.name": "packs"},
        "deletePack": {"path.name": "doomed"}, "joinSession": {"body.code": "codes"},
        "loadMap": {"path.name": "maps"}, "deleteMap": {"path.name": "maps"}, "createSession": {"body.fromMap": "maps"},
    }.items():
        f.write(f'\n[[operations]]\ninclude-operation-id = "{operation}"\n[operations.parameters]\n')
        for key, name in bindings.items():
            f.write(f'"{key}" = {{ dictionary = "{name}", probability = 0.5 }}\n')
sys.exit(1 if failed else 0)
PY

args=(
    --config-file "$DATA/schemathesis.toml"
    run "$SCHEMA"
    --url "$BASE"
    --header "Authorization: Bearer $TOKEN"
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance
    --phases examples,coverage,fuzzing,stateful
    --max-examples "$MAX_EXAMPLES"
    --workers "$WORKERS"
    --request-timeout 20
    --generation-database none
    --no-color
)
[[ -n "${ST_SEED:-}" ]] && args+=(--seed "$ST_SEED")
# shellcheck disable=SC2206
[[ -n "${ST_EXTRA:-}" ]] && args+=($ST_EXTRA)

echo "== st ${args[*]//$TOKEN/<token>}"
status=0
start=$SECONDS
st "${args[@]}" || status=$?

echo
echo "== summary: known-good requests exited $smoke_status; schemathesis exited $status after $((SECONDS - start)) s against $BASE"
if grep -qiE 'fatal|panic|critical' "$DATA/server.log"; then
    echo "== server log lines worth reading:"
    grep -iE 'fatal|panic|critical|error' "$DATA/server.log" | head -n 40
fi
if kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "== server still alive at the end"
else
    echo "== the server DIED during the run; its log:"
    tail -n 40 "$DATA/server.log"
    [[ $status -eq 0 ]] && status=1
fi
[[ $status -eq 0 && $smoke_status -ne 0 ]] && status=$smoke_status
exit "$status"
