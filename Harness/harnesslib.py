"""What Hoard's harnesses share: a server process on a loopback port over a data directory, raw HTTP calls,
generated packs and blobs, and an independent check of a stopped data directory (SQLite read directly, every
file re-hashed in Python), so a harness never trusts the code it is testing to grade itself.

Standard library only. The JSON helpers of the benchmarks (Benchmarks/benchlib.py) are reused.
"""
import argparse, base64, hashlib, http.client, io, json, os, random, signal, socket, sqlite3, struct, subprocess, sys, time, zipfile, zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks"))
from benchlib import free_port, status_mb, wait_healthy  # noqa: E402,F401  (re-exported for the harnesses)


def arguments(doc):
    """The command line every harness shares: the hoard binary and --seed; add the harness's own options."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("hoard")
    parser.add_argument("--seed", type=int, default=1)
    return parser


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------- the server


class Server:
    """`hoard serve` over one data directory on a free loopback port; restartable, killable."""

    def __init__(self, hoard, data, log_level="error", extra=()):
        self.hoard, self.data, self.log_level, self.extra = hoard, data, log_level, list(extra)
        self.port = free_port()
        self.process = None

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        self.process = subprocess.Popen(
            [self.hoard, "serve", "--data-dir", self.data, "--port", str(self.port), "--log-level", self.log_level, *self.extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_healthy(self.base, tries=300)
        except RuntimeError:
            self.process.kill()
            raise RuntimeError("the server did not start: " + self.process.communicate()[1].decode(errors="replace")[-2000:])

    def kill(self):
        """SIGKILL: no request finishes, no file is closed."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.kill()


def cli(hoard, data, *args, check=True):
    """Runs one `hoard` command on the data directory; returns the CompletedProcess."""
    return subprocess.run([hoard, *args, "--data-dir", data], capture_output=True, text=True, check=check)


def admin_token(hoard, data, group="harness"):
    cli(hoard, data, "group", "create", group)
    return cli(hoard, data, "token", "create", "--group", group, "--name", "admin", "--admin").stdout.strip()


class Interrupted(Exception):
    """The connection broke before an answer arrived: the operation may or may not have happened."""


def request(base, method, path, body=None, token=None, content_type="application/json", timeout=60):
    """One HTTP request on a fresh connection. Returns (status, body bytes); raises Interrupted when the server
    went away before answering."""
    host, port = base.removeprefix("http://").split(":")
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = "Bearer " + token
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as error:
        raise Interrupted(str(error)) from error
    finally:
        connection.close()


class WS:
    """A WebSocket client written byte by byte: masks with a zero key (payload bytes unchanged, cheap to send)."""

    def __init__(self, port, path, token, rcvbuf=None, timeout=10):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed during the handshake")
            data += chunk
        head, self.buf = data.split(b"\r\n\r\n", 1)
        self.status = int(head.split()[1])
        lines = head.decode("latin-1").split("\r\n")[1:]
        self.headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}

    def header(self, name):
        """A header of the handshake's answer, None when absent."""
        return self.headers.get(name.lower())

    @staticmethod
    def frame(payload, opcode=1, fin=True):
        if isinstance(payload, str):
            payload = payload.encode()
        first = (0x80 if fin else 0) | opcode
        n = len(payload)
        if n < 126:
            header = struct.pack("!BB", first, 0x80 | n)
        elif n < 65536:
            header = struct.pack("!BBH", first, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", first, 0x80 | 127, n)
        return header + b"\0\0\0\0" + payload

    def send(self, payload, opcode=1, fin=True):
        self.sock.sendall(self.frame(payload, opcode, fin))

    def _fill(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError
            self.buf += chunk

    def frame_in(self):
        """(opcode, payload) of the next server frame; EOFError at the end of the connection."""
        self._fill(2)
        opcode, length = self.buf[0] & 0x0F, self.buf[1] & 0x7F
        start = 2
        if length == 126:
            self._fill(4)
            length, start = struct.unpack("!H", self.buf[2:4])[0], 4
        elif length == 127:
            self._fill(10)
            length, start = struct.unpack("!Q", self.buf[2:10])[0], 10
        self._fill(start + length)
        payload, self.buf = self.buf[start:start + length], self.buf[start + length:]
        if opcode == 0x9:
            self.sock.sendall(self.frame(payload, 0xA))
        return opcode, payload

    def message(self):
        """The next text message as JSON; None for a close frame."""
        while True:
            opcode, payload = self.frame_in()
            if opcode == 0x8:
                return None
            if opcode == 0x1:
                return json.loads(payload)

    def close_code(self):
        """Reads until the server's close frame (its code) or the end of the connection (None)."""
        try:
            while True:
                opcode, payload = self.frame_in()
                if opcode == 0x8:
                    return struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
        except (EOFError, OSError):
            return None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------- content


def noise_png(rng, width, height):
    """A valid RGBA PNG of random pixels (unique, incompressible: real bytes to write and sync)."""
    raw = b"".join(b"\x00" + rng.randbytes(width * 4) for _ in range(height))
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def make_pack(rng, name, tokens=6, tile=64, version=None):
    """A zip pack in memory: `tokens` tokens, each with @1x and @2x variants of random pixels."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        manifest = {"name": name, "tilePixels": tile}
        if version:
            manifest["version"] = version
        archive.writestr("pack.json", json.dumps(manifest))
        for n in range(tokens):
            archive.writestr(f"tokens/t{n}.png", noise_png(rng, tile, tile))
            archive.writestr(f"tokens/t{n}@2x.png", noise_png(rng, tile * 2, tile * 2))
    return out.getvalue()


# ---------------------------------------------------------------------------------------------- the check


def file_digest(data, digest):
    """The digest of a blob file's bytes as they are on disk, None when the file is missing."""
    content = read_blob(data, digest)
    return None if content is None else sha256(content)


def check_store(data):
    """Checks a stopped data directory without Hoard's code. Returns (figures, problems):
    every blob row's file exists and hashes to its name; every pack version is whole (its manifest blob, exactly
    the manifest's assets in packVersionAsset, each descriptor blob, every variant row and blob the descriptor
    names); foreign keys hold."""
    problems = []
    db = sqlite3.connect(f"file:{os.path.join(data, 'catalog.sqlite')}?mode=ro", uri=True)
    bad = {}
    blobs = [row[0] for row in db.execute("SELECT digest FROM blob")]
    for digest in blobs:
        actual = file_digest(data, digest)
        if actual != digest:
            bad[digest] = "missing" if actual is None else "corrupt"
    problems += [f"blob {d} is {why}" for d, why in bad.items()]
    violations = db.execute("PRAGMA foreign_key_check").fetchall()
    problems += [f"foreign key violation {v}" for v in violations]
    versions = db.execute(
        "SELECT pv.id, p.name, pv.version, pv.manifestDigest, pv.assetCount FROM packVersion pv JOIN pack p ON p.id = pv.packId").fetchall()
    for version_id, pack, version, manifest_digest, asset_count in versions:
        label = f"pack {pack} version {version}"
        manifest_bytes = read_blob(data, manifest_digest)
        if manifest_bytes is None or sha256(manifest_bytes) != manifest_digest:
            problems.append(f"{label}: manifest blob missing or corrupt")
            continue
        manifest = json.loads(manifest_bytes)
        named = {entry["digest"] for entry in manifest["assets"]}
        rows = {row[0] for row in db.execute("SELECT assetDigest FROM packVersionAsset WHERE packVersionId = ?", (version_id,))}
        if named != rows or len(rows) != asset_count:
            problems.append(f"{label}: {len(rows)} asset rows, manifest names {len(named)}, assetCount {asset_count}")
        for asset in named:
            descriptor_bytes = read_blob(data, asset)
            if descriptor_bytes is None or sha256(descriptor_bytes) != asset:
                problems.append(f"{label}: descriptor {asset} missing or corrupt")
                continue
            descriptor = json.loads(descriptor_bytes)
            variant_rows = dict(db.execute("SELECT scale, blobDigest FROM variant WHERE assetDigest = ?", (asset,)).fetchall())
            for variant in descriptor["variants"]:
                if variant_rows.get(variant["scale"]) != variant["digest"]:
                    problems.append(f"{label}: asset {asset} lacks its @{variant['scale']}x variant row")
                elif file_digest(data, variant["digest"]) != variant["digest"]:
                    problems.append(f"{label}: variant blob {variant['digest']} missing or corrupt")
    figures = {"blobRows": len(blobs), "packVersions": len(versions),
               "sessions": db.execute("SELECT count(*) FROM session").fetchone()[0]}
    db.close()
    return figures, problems


def read_blob(data, digest):
    """A blob file's bytes, None when missing."""
    hexdigest = digest.removeprefix("sha256:")
    try:
        with open(os.path.join(data, "blobs", "v1", "sha256", hexdigest[:2], hexdigest), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def catalog_rows(data, sql, arguments=()):
    db = sqlite3.connect(f"file:{os.path.join(data, 'catalog.sqlite')}?mode=ro", uri=True)
    try:
        return db.execute(sql, arguments).fetchall()
    finally:
        db.close()


class Check:
    """Checks that print as they go and are counted: `that(condition, message)`, then `report` for the exit status."""

    def __init__(self):
        self.failures = []

    def that(self, condition, message):
        print(("ok    " if condition else "FAIL  ") + message, flush=True)
        if not condition:
            self.failures.append(message)
        return condition

    def report(self, shots=None, what="browser"):
        """Says how the run went (and where the screenshots are); the process's exit status."""
        if shots:
            print(f"\nscreenshots in {shots}")
        if self.failures:
            print(f"{len(self.failures)} {what} check(s) failed", file=sys.stderr)
            return 1
        print(f"all {what} checks passed")
        return 0

