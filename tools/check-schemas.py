#!/usr/bin/env python3
"""Checks Hoard's JSON Schemas and real output against them.

Usage: check-schemas.py DATA_DIR IMPORT_JSON ASSETS_JSON [--schemas DIR]

    DATA_DIR     a data directory packs were imported into (catalog.sqlite, blobs/v1/sha256/…)
    IMPORT_JSON  what `hoard import … --data-dir DATA_DIR --json` printed
    ASSETS_JSON  what `hoard assets --data-dir DATA_DIR --json` printed

It checks, and prints, each of these; it exits 1 on any violation, 2 on bad usage:
  1. every Schemas/*.schema.json is a valid draft 2020-12 schema whose $id is https://hoard.example/schemas/<file>;
  2. Schemas/problem-codes.json, the problemCode enum of common.schema.json and the cases of
     Sources/HoardCore/Model/ProblemCode.swift name the same codes; every code the live channel's error events use
     (TableError's, and those the server's live routes send) is among its liveCodes; op.schema.json has a kind for
     each of TableOp.kinds, and sample ops of every kind match it;
  3. IMPORT_JSON matches import-result.schema.json, and its numbers add up (new + existing = all, kinds sum to
     assets, error = first error problem, the manifest blob exists and agrees with the report);
  4. ASSETS_JSON matches asset-listing.schema.json, and each listed asset agrees with its descriptor blob;
  5. every blob file under DATA_DIR/blobs/v1/sha256 sits in the right shard, hashes to its name and is read-only;
     every blob that starts with '{' and is a descriptor or a manifest (by its catalog media type, else by its
     "schema" tag) matches asset-descriptor.schema.json or pack-manifest.schema.json, is canonical JSON (sorted keys,
     no white space, slashes unescaped) and only references blobs that exist;
  6. every blob row of the catalog has its file, of the recorded size;
  7. the pack.json of every archive IMPORT_JSON reports as imported (when the file is still there) matches
     pack-file.schema.json, which is stricter than Hoard: it refuses keys Hoard would silently ignore;
  8. the sample map built from ASSETS_JSON by tools/sample_map.py (what the benchmarks and the browser test send)
     matches map.schema.json and references only listed assets, and every map blob tagged hoard.map/v1 or v2 does too.

$refs between the schemas (common.schema.json#/$defs/…) are resolved locally with a referencing.Registry.
"""

import argparse
import hashlib
import json
import os
import re
import sqlite3
import stat
import sys
import tarfile
import zipfile
from pathlib import Path

try:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
except ImportError as error:  # pragma: no cover - depends on the machine
    sys.exit(f"check-schemas: {error}; install it with `python3 -m pip install jsonschema`")

ROOT = Path(__file__).resolve().parent.parent
ID_BASE = "https://hoard.example/schemas/"
DESCRIPTOR_MEDIA_TYPE = "application/vnd.hoard.asset+json"
MANIFEST_MEDIA_TYPE = "application/vnd.hoard.pack+json"
MAP_MEDIA_TYPE = "application/vnd.hoard.map+json"
HEX64 = re.compile(r"^[0-9a-f]{64}$")
MAX_SHOWN = 20


class Checker:
    """Collects violations and prints what was checked."""

    def __init__(self):
        self.violations = []

    def ok(self, message):
        print(f"ok    {message}")

    def fail(self, message):
        self.violations.append(message)
        if len(self.violations) <= 200:
            print(f"FAIL  {message}")

    def count(self):
        return len(self.violations)

    def note(self, message):
        print(f"note  {message}")


def load_json(path, checker, what):
    try:
        with open(path, "rb") as file:
            return json.loads(file.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        checker.fail(f"{what} {path} cannot be read as JSON: {error}")
        return None


def canonical(value):
    """The bytes CanonicalJSON.encode gives: keys sorted, no white space, slashes and non-ASCII unescaped."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def media_types(head):
    """The media types a blob's first 16 bytes allow (a WebM container holds video or sound; a PNG may be animated)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return {"image/png", "image/apng"}
    if head.startswith(b"\xff\xd8"):
        return {"image/jpeg"}
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return {"image/webp"}
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return {"audio/wav"}
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return {"image/gif"}
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return {"video/webm", "audio/webm"}
    if head.startswith(b"OggS"):
        return {"audio/ogg"}
    if head.startswith(b"fLaC"):
        return {"audio/flac"}
    if head.startswith(b"ID3") or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0):
        return {"audio/mpeg"}
    if head[4:8] == b"ftyp":
        return {"audio/mp4"}
    return set()


# 1. The schemas themselves.

def load_schemas(directory, checker):
    schemas = {}
    for path in sorted(Path(directory).glob("*.schema.json")):
        schema = load_json(path, checker, "schema")
        if schema is None:
            continue
        try:
            Draft202012Validator.check_schema(schema)
        except Exception as error:  # jsonschema.SchemaError
            checker.fail(f"{path.name} is not a valid draft 2020-12 schema: {getattr(error, 'message', error)}")
            continue
        problems = []
        if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            problems.append("$schema is not draft 2020-12")
        if schema.get("$id") != ID_BASE + path.name:
            problems.append(f"$id is {schema.get('$id')!r}, not {ID_BASE + path.name!r}")
        for key in ("title", "description"):
            if not schema.get(key):
                problems.append(f"it has no {key}")
        if problems:
            checker.fail(f"{path.name}: " + "; ".join(problems))
        else:
            checker.ok(f"{path.name} is a valid draft 2020-12 schema with $id, title and description")
        schemas[path.name] = schema
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema, default_specification=DRAFT202012))
        for schema in schemas.values() if "$id" in schema
    )
    for name, schema in schemas.items():
        # Resolve every $ref once, so a dangling one is reported even if no instance reaches it.
        resolver = registry.resolver(base_uri=schema.get("$id", ""))
        for reference in sorted(set(collect_refs(schema))):
            try:
                resolver.lookup(reference)
            except Exception as error:
                checker.fail(f"{name}: $ref {reference} does not resolve: {error}")
    return schemas, registry


def collect_refs(value):
    if isinstance(value, dict):
        for key, child in value.items():
            if key == "$ref" and isinstance(child, str):
                yield child
            else:
                yield from collect_refs(child)
    elif isinstance(value, list):
        for child in value:
            yield from collect_refs(child)


def validator(schemas, registry, name):
    return Draft202012Validator(schemas[name], registry=registry)


def validate(checker, schemas, registry, name, instance, what):
    """Validates one instance; reports each error with its JSON path. Returns whether it passed."""
    if name not in schemas:
        checker.fail(f"{name} is missing from the schemas folder")
        return False
    errors = sorted(validator(schemas, registry, name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    for error in errors[:MAX_SHOWN]:
        checker.fail(f"{what} does not match {name} at {error.json_path}: {error.message[:300]}")
    if len(errors) > MAX_SHOWN:
        checker.fail(f"{what}: {len(errors) - MAX_SHOWN} more violations of {name}")
    return not errors


# 2. The problem-code registry.

SAMPLE_OPS = [
    {"kind": "move", "token": "t1", "x": 5, "y": 6},
    {"kind": "add", "token": {"id": "t2", "asset": "sha256:" + "ab" * 32, "x": 0, "y": 0, "number": 3, "hidden": True}},
    {"kind": "add", "object": {"id": "o1", "asset": "sha256:" + "ab" * 32, "x": 0, "y": 0, "rotation": 90}},
    {"kind": "remove", "token": "t1"},
    {"kind": "set", "token": "t1", "label": None, "markers": ["prone"], "layer": "host"},
    {"kind": "assign", "token": "t1", "owner": None},
    {"kind": "hide", "token": "t1"},
    {"kind": "reveal", "token": "t1"},
    {"kind": "stroke", "stroke": {"id": "s1", "color": "#ff0000", "width": 0.5, "points": [[0, 0], [1.5, 2]], "layer": "p:ana"}},
    {"kind": "erase", "stroke": "s1"},
    {"kind": "ping", "x": 1.5, "y": 2},
    {"kind": "message", "text": "behind you", "to": ["host"]},
    {"kind": "custom", "payload": {"dice": [6, 6]}},
    {"kind": "layer", "layer": "p:ana", "visibleTo": "*"},
    {"kind": "reveal", "token": "t1", "to": ["p1"], "seconds": 5},
    {"kind": "hide", "token": "t1", "from": ["p1"]},
    {"kind": "seen", "token": "t1", "by": ["p1"]},
    {"kind": "view", "tokens": [{"id": "t2", "asset": "sha256:" + "ab" * 32, "x": 0, "y": 0, "number": 3}], "objects": [],
     "walls": [], "removed": ["o1"], "floor": {"palette": [], "rects": [[0, 0, 2, 1, -1]]}, "explored": [[0, 0, 2, 1]],
     "seen": [[0, 0, 1, 1]]},
    {"kind": "paint", "rects": [[0, 0, 4, 2], [5, 5, 1, 1]], "texture": "sha256:" + "a" * 64},
    {"kind": "paint", "rects": [[0, 0, 1, 1]], "texture": None},
    {"kind": "wall", "add": {"id": "d1", "from": [2, 0], "to": [2, 1], "door": True, "open": False}},
    {"kind": "wall", "remove": "d1"},
    {"kind": "door", "wall": "d1", "open": True},
    {"kind": "fog", "enabled": True},
    {"kind": "fog", "reveal": [[0, 0, 8, 8]]},
    {"kind": "fog", "cover": [[1, 1, 1, 1]]},
    {"kind": "settings", "playersOpenDoors": True},
    {"kind": "roll", "formula": "4d6kh3+2", "label": "Stealth", "to": ["p1"], "blind": True},
    {"kind": "play", "channel": "rain", "track": "sha256:" + "ab" * 32, "loop": True, "volume": 0.5, "offset": 12.5, "at": [3, 4],
     "radius": 5, "serverTime": 1800000000000},
    {"kind": "play", "channel": "music", "to": ["host"]},
    {"kind": "pause", "channel": "music", "serverTime": 1800000000000},
    {"kind": "stop", "channel": "music"},
    {"kind": "volume", "channel": "music", "volume": 0.25},
    {"kind": "dice", "asset": "sha256:" + "7" * 64}, {"kind": "dice", "asset": None, "by": "p1"},
]


def check_live_codes(directory, schemas, registry, checker):
    document = load_json(Path(directory) / "problem-codes.json", checker, "registry") or {}
    live = {entry.get("code") for entry in document.get("liveCodes", []) if entry.get("meaning")}
    sources = ROOT / "Sources"
    used = set(re.findall(r'case\s+\w+\s*=\s*"([A-Z_]+)"', (sources / "HoardCore/Model/Table/TableError.swift").read_text(encoding="utf-8")))
    for name in ("LiveRoutes.swift", "SessionHub.swift"):
        text = (sources / "HoardServer" / "Sessions" / name).read_text(encoding="utf-8")
        used |= set(re.findall(r'(?:reply\([^"]*|return )"([A-Z][A-Z_]+)"', text))
    if used - live:
        checker.fail(f"live error codes missing from problem-codes.json liveCodes: {sorted(used - live)}")
    else:
        checker.ok(f"the {len(used)} live error codes the server sends are in problem-codes.json liveCodes")
    kinds = re.search(r"static let kinds = \[([^\]]*)\]", (sources / "HoardCore/Model/Table/TableOp.swift").read_text(encoding="utf-8"))
    kinds = set(re.findall(r'"(\w+)"', kinds.group(1))) if kinds else set()
    defined = set(schemas.get("op.schema.json", {}).get("$defs", {}))
    if kinds != defined:
        checker.fail(f"TableOp.kinds and op.schema.json $defs differ: {sorted(kinds ^ defined)}")
    failures = 0
    for sample in SAMPLE_OPS:
        failures += not validate(checker, schemas, registry, "op.schema.json", sample, f"sample op {sample['kind']}")
    if failures == 0 and kinds == defined:
        checker.ok(f"op.schema.json defines the {len(kinds)} kinds of TableOp and {len(SAMPLE_OPS)} sample ops match it")

def check_problem_codes(directory, schemas, checker):
    document = load_json(Path(directory) / "problem-codes.json", checker, "registry")
    if document is None:
        return
    entries = document.get("codes", [])
    codes = [entry.get("code") for entry in entries]
    bad = [entry for entry in entries if not (isinstance(entry.get("meaning"), str) and entry["meaning"]
                                              and entry.get("severity") in ("error", "warning"))]
    if bad:
        checker.fail(f"problem-codes.json: {len(bad)} entries lack a meaning or a severity: {[e.get('code') for e in bad]}")
    if len(set(codes)) != len(codes):
        checker.fail("problem-codes.json lists a code twice")
    enum = schemas.get("common.schema.json", {}).get("$defs", {}).get("problemCode", {}).get("enum", [])
    if set(enum) != set(codes):
        checker.fail(f"common.schema.json problemCode and problem-codes.json differ: "
                     f"{sorted(set(enum) ^ set(codes))}")
    source = ROOT / "Sources" / "HoardCore" / "Model" / "ProblemCode.swift"
    if source.exists():
        swift = re.findall(r'case\s+\w+\s*=\s*"([A-Z_]+)"', source.read_text(encoding="utf-8"))
        if set(swift) != set(codes):
            checker.fail(f"ProblemCode.swift and problem-codes.json differ: {sorted(set(swift) ^ set(codes))}")
        else:
            checker.ok(f"problem-codes.json, common.schema.json and ProblemCode.swift list the same {len(codes)} codes")
    else:
        checker.note(f"{source} not found; the registry was checked against common.schema.json only")


# 5. Blobs on disk.

class Store:
    """What the data directory holds: blob files and catalog rows."""

    def __init__(self, data_dir, checker):
        self.data_dir = Path(data_dir)
        self.base = self.data_dir / "blobs" / "v1" / "sha256"
        self.files = {}  # digest → path
        self.rows = {}  # digest → (size, mediaType)
        self.has_catalog = False
        if not self.base.is_dir():
            checker.fail(f"{self.base} does not exist: is {data_dir} a Hoard data directory?")
            return
        for shard in sorted(self.base.iterdir()):
            for path in sorted(shard.iterdir()) if shard.is_dir() else [shard]:
                self.files["sha256:" + path.name] = path
        catalog = self.data_dir / "catalog.sqlite"
        if catalog.exists():
            try:
                connection = sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)
                for digest, size, media_type in connection.execute("SELECT digest, size, mediaType FROM blob"):
                    self.rows[digest] = (size, media_type)
                connection.close()
                self.has_catalog = True
            except sqlite3.Error as error:
                checker.fail(f"cannot read the blob table of {catalog}: {error}")
        else:
            checker.note(f"{catalog} not found; blobs are classified by their content only")

    def read(self, digest):
        path = self.files.get(digest)
        return path.read_bytes() if path else None

    def head(self, digest, count):
        path = self.files.get(digest)
        if path is None:
            return None
        with open(path, "rb") as file:
            return file.read(count)


def check_blob_files(store, checker):
    wrong = []
    count = 0
    total = 0
    for digest, path in store.files.items():
        count += 1
        hex_part = path.name
        if path.parent.parent != store.base or not path.is_file():
            wrong.append(f"{path} is not a file in a shard folder")
            continue
        if not HEX64.match(hex_part) or path.parent.name != hex_part[:2]:
            wrong.append(f"{path} is not named <ab>/<64 lowercase hex> with ab its first two digits")
            continue
        sha = hashlib.sha256()
        with open(path, "rb") as file:
            while chunk := file.read(1 << 20):
                sha.update(chunk)
                total += len(chunk)
        actual = sha.hexdigest()
        if actual != hex_part:
            wrong.append(f"{path} hashes to sha256:{actual}, not its name")
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if mode & 0o222:
            wrong.append(f"{path} is writable (mode {mode:o}); published blobs are read-only (0444)")
    for message in wrong:
        checker.fail(message)
    if not wrong:
        checker.ok(f"{count} blob files ({total} bytes) sit in their shard, hash to their name and are read-only")
    if store.has_catalog:
        missing = [d for d in store.rows if d not in store.files]
        sized = [d for d, (size, _) in store.rows.items() if d in store.files and store.files[d].stat().st_size != size]
        for digest in missing[:MAX_SHOWN]:
            checker.fail(f"catalog blob row {digest} has no file")
        for digest in sized[:MAX_SHOWN]:
            checker.fail(f"catalog blob row {digest} records {store.rows[digest][0]} bytes, its file has {store.files[digest].stat().st_size}")
        if not missing and not sized:
            unknown = len([d for d in store.files if d not in store.rows])
            checker.ok(f"every one of {len(store.rows)} catalog blob rows has its file, of the recorded size"
                       + (f" ({unknown} files unknown to the catalog: garbage until gc)" if unknown else ""))


def check_documents(store, schemas, registry, checker):
    """Validates every descriptor and manifest blob; returns the parsed descriptors by digest."""
    descriptors, manifests, skipped = {}, {}, 0
    mark = checker.count()
    for digest in sorted(store.files):
        data = store.head(digest, 1)
        if data == b"{":
            data = store.read(digest)
        if not data.startswith(b"{"):
            if store.rows.get(digest, (0, ""))[1] in (DESCRIPTOR_MEDIA_TYPE, MANIFEST_MEDIA_TYPE):
                checker.fail(f"{digest} is catalogued as {store.rows[digest][1]} but does not start with '{{'")
            continue
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            if digest in store.rows and store.rows[digest][1] in (DESCRIPTOR_MEDIA_TYPE, MANIFEST_MEDIA_TYPE):
                checker.fail(f"{digest} is catalogued as {store.rows[digest][1]} but is not JSON: {error}")
            else:
                skipped += 1
            continue
        media_type = store.rows[digest][1] if digest in store.rows else None
        tag = document.get("schema") if isinstance(document, dict) else None
        if media_type == DESCRIPTOR_MEDIA_TYPE or (media_type is None and tag == "hoard.asset/v1"):
            kind, schema_name, bucket = "descriptor", "asset-descriptor.schema.json", descriptors
        elif media_type == MANIFEST_MEDIA_TYPE or (media_type is None and tag == "hoard.pack/v1"):
            kind, schema_name, bucket = "manifest", "pack-manifest.schema.json", manifests
        else:
            skipped += 1  # a map document, an uploaded blob, or JSON art: not ours to check here
            continue
        if validate(checker, schemas, registry, schema_name, document, f"{kind} {digest}"):
            bucket[digest] = document
        if canonical(document) != data:
            checker.fail(f"{kind} {digest} is not canonical JSON (sorted keys, no white space, slashes unescaped)")
    if checker.count() == mark:
        checker.ok(f"{len(descriptors)} descriptor and {len(manifests)} manifest blobs match their schemas and are canonical JSON"
                   + (f" ({skipped} other JSON blobs, such as maps, not checked)" if skipped else ""))
    mark = checker.count()
    for digest, descriptor in descriptors.items():
        scales = [variant["scale"] for variant in descriptor["variants"]]
        if scales != sorted(set(scales)):
            checker.fail(f"descriptor {digest}: variant scales {scales} are not strictly increasing")
        for variant in descriptor["variants"]:
            head = store.head(variant["digest"], 16)
            if head is None:
                checker.fail(f"descriptor {digest} references variant {variant['digest']}, which is not stored")
                continue
            size = store.files[variant["digest"]].stat().st_size
            if size != variant["size"]:
                checker.fail(f"descriptor {digest}: variant {variant['digest']} is {size} bytes, not {variant['size']}")
            if variant["mediaType"] not in media_types(head):
                checker.fail(f"descriptor {digest}: variant {variant['digest']} is not {variant['mediaType']} by its bytes")
    for digest, manifest in manifests.items():
        keys = [(entry["kind"], entry["name"]) for entry in manifest["assets"]]
        if keys != sorted(keys):
            checker.fail(f"manifest {digest}: assets are not sorted by kind then name")
        for entry in manifest["assets"]:
            descriptor = descriptors.get(entry["digest"])
            if descriptor is None:
                checker.fail(f"manifest {digest} lists {entry['digest']}, which is not a stored, valid descriptor")
            elif (descriptor["kind"], descriptor["name"]) != (entry["kind"], entry["name"]):
                checker.fail(f"manifest {digest}: entry {entry['digest']} says {entry['kind']} {entry['name']!r}, "
                             f"its descriptor {descriptor['kind']} {descriptor['name']!r}")
    if checker.count() == mark:
        checker.ok("descriptor variants and manifest entries reference stored blobs that agree with them")
    return descriptors, manifests


# 3. `hoard import --json`.

def check_import_output(results, store, manifests, schemas, registry, checker, path):
    if not validate(checker, schemas, registry, "import-result.schema.json", results, path):
        return
    mark = checker.count()
    imported = refused = 0
    for index, result in enumerate(results):
        where = f"{path}[{index}] ({result['archive']})"
        if "report" in result:
            imported += 1
            report = result["report"]
            if report["bytes"] != report["newBytes"] + report["existingBytes"]:
                checker.fail(f"{where}: bytes {report['bytes']} ≠ newBytes + existingBytes")
            if sum(report["assetsByKind"].values()) != report["assets"]:
                checker.fail(f"{where}: assetsByKind does not add up to assets {report['assets']}")
            if report["files"] < report["assets"]:
                checker.fail(f"{where}: fewer files than assets")
            manifest = manifests.get(report["manifestDigest"])
            if manifest is None:
                checker.fail(f"{where}: manifest {report['manifestDigest']} is not a stored, valid manifest in {store.data_dir}")
                continue
            if (manifest["name"], manifest["version"]) != (report["pack"], report["version"]):
                checker.fail(f"{where}: the manifest names {manifest['name']} {manifest['version']}, "
                             f"the report {report['pack']} {report['version']}")
            by_kind = {}
            for entry in manifest["assets"]:
                by_kind[entry["kind"]] = by_kind.get(entry["kind"], 0) + 1
            if by_kind != report["assetsByKind"]:
                checker.fail(f"{where}: assetsByKind {report['assetsByKind']} but the manifest holds {by_kind}")
        else:
            refused += 1
            first = next(problem for problem in result["problems"] if problem["severity"] == "error")
            if (first["code"], first["message"]) != (result["error"]["code"], result["error"]["message"]):
                checker.fail(f"{where}: error is not the first error problem")
    if checker.count() == mark:
        checker.ok(f"{path}: {len(results)} results ({imported} imported or unchanged, {refused} refused) match "
                   "import-result.schema.json and agree with the stored manifests")


def read_pack_file(archive):
    """The bytes of pack.json at the root of a zip, tar or tar.gz archive; None when it has none."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            names = [n for n in z.namelist() if n.lstrip("./") == "pack.json"]
            return z.read(names[0]) if names else None
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive) as t:
            members = [m for m in t.getmembers() if m.isfile() and m.name.lstrip("./") == "pack.json"]
            return t.extractfile(members[0]).read() if members else None
    return None


def check_pack_files(results, schemas, registry, checker):
    checked = 0
    mark = checker.count()
    for result in results:
        archive = Path(result["archive"])
        if "report" not in result or not archive.is_file():
            continue
        try:
            data = read_pack_file(archive)
        except (OSError, zipfile.BadZipFile, tarfile.TarError) as error:
            checker.fail(f"{archive}: imported, but its pack.json cannot be read here: {error}")
            continue
        if data is None:
            continue
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            checker.fail(f"{archive}: imported, but its pack.json is not JSON here: {error}")
            continue
        validate(checker, schemas, registry, "pack-file.schema.json", document, f"{archive}:pack.json")
        checked += 1
    if checker.count() == mark:
        checker.ok(f"{checked} pack.json files of imported archives match pack-file.schema.json")


# 4. `hoard assets --json`.

def check_assets_output(assets, descriptors, schemas, registry, checker, path):
    if not validate(checker, schemas, registry, "asset-listing.schema.json", assets, path):
        return
    mark = checker.count()
    nocase = lambda text: "".join(c.lower() if c.isascii() else c for c in text)  # SQLite's NOCASE: ASCII only
    keys = [(nocase(asset["pack"]), asset["kind"], asset["name"]) for asset in assets]
    if keys != sorted(keys):
        checker.fail(f"{path}: assets are not ordered by pack (ignoring ASCII case), kind and name")
    for asset in assets:
        descriptor = descriptors.get(asset["digest"])
        if descriptor is None:
            checker.fail(f"{path}: asset {asset['digest']} has no stored, valid descriptor")
            continue
        listed = {key: asset[key] for key in ("kind", "name", "footprint")}
        described = {key: descriptor[key] for key in ("kind", "name", "footprint")}
        # The listing leaves out what only the descriptor says: animation (animated, frames, durationMs) and what a
        # sound is (codec, channels, sampleRate, durationMs).
        only_described = ("animated", "frames", "durationMs", "codec", "channels", "sampleRate")
        normalise = lambda variants: [{k: v for k, v in variant.items()
                                       if not (k == "generated" and v is False) and k not in only_described}
                                      for variant in variants]
        if listed != described or normalise(asset["variants"]) != normalise(descriptor["variants"]):
            checker.fail(f"{path}: asset {asset['digest']} ({asset['pack']} {asset['name']}) differs from its descriptor")
    if checker.count() == mark:
        checker.ok(f"{path}: {len(assets)} assets match asset-listing.schema.json and their descriptor blobs")


# 8. Map documents.

def check_maps(assets, store, schemas, registry, checker):
    sys.path.insert(0, str(ROOT / "tools"))
    from sample_map import build_map

    document = build_map(assets, name="check-schemas")
    if validate(checker, schemas, registry, "map.schema.json", document, "the sample map of the listed assets"):
        listed = {asset["digest"] for asset in assets}
        referenced = set(re.findall(r"sha256:[0-9a-f]{64}", json.dumps(document)))
        if referenced - listed:
            checker.fail(f"the sample map references {len(referenced - listed)} digest(s) that are not listed assets")
        elif referenced != listed:
            checker.fail(f"the sample map leaves out {len(listed - referenced)} listed asset(s)")
        else:
            checker.ok(f"the sample map matches map.schema.json and references each of the {len(listed)} assets")
    mark, maps = checker.count(), 0
    for digest, (_, media_type) in sorted(store.rows.items()):
        if media_type != MAP_MEDIA_TYPE:
            continue
        try:
            document = json.loads(store.read(digest).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, OSError) as error:
            checker.fail(f"map {digest} cannot be read as JSON: {error}")
            continue
        if isinstance(document, dict) and document.get("schema") in ("hoard.map/v1", "hoard.map/v2"):
            maps += 1
            validate(checker, schemas, registry, "map.schema.json", document, f"map {digest}")
    if maps and checker.count() == mark:
        checker.ok(f"{maps} stored hoard.map map(s) match map.schema.json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir")
    parser.add_argument("import_json")
    parser.add_argument("assets_json")
    parser.add_argument("--schemas", default=str(ROOT / "Schemas"), help="the schemas folder (default: Schemas/ of this repository)")
    arguments = parser.parse_args()
    checker = Checker()

    print(f"==> schemas in {arguments.schemas}")
    schemas, registry = load_schemas(arguments.schemas, checker)
    check_problem_codes(arguments.schemas, schemas, checker)
    check_live_codes(arguments.schemas, schemas, registry, checker)

    print(f"==> blobs and catalog in {arguments.data_dir}")
    store = Store(arguments.data_dir, checker)
    check_blob_files(store, checker)
    descriptors, manifests = check_documents(store, schemas, registry, checker)

    print("==> command output")
    results = load_json(arguments.import_json, checker, "import output")
    if results is not None:
        check_import_output(results, store, manifests, schemas, registry, checker, arguments.import_json)
        if isinstance(results, list) and all(isinstance(r, dict) and "archive" in r for r in results):
            check_pack_files(results, schemas, registry, checker)
    assets = load_json(arguments.assets_json, checker, "assets output")
    if assets is not None:
        check_assets_output(assets, descriptors, schemas, registry, checker, arguments.assets_json)
        print("==> map documents")
        check_maps(assets, store, schemas, registry, checker)

    if checker.violations:
        print(f"\n{len(checker.violations)} violation(s)", file=sys.stderr)
        return 1
    print("\nall schema checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
