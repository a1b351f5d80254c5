#!/usr/bin/env python3
"""Fault injection that needs root: a full disk, a read-only data directory and a catalog kept busy by another
process. Each fault must give a clear error (the right code, a message that says what to do) and leave a
consistent store (`hoard verify` healthy; after `hoard gc --grace 0` no staging folder or spooled upload left).

  disk-full     the data directory is a 8 MiB tmpfs: a 10 MiB pack import (CLI and POST /v1/packs) and a blob PUT
                into the last few KiB fail with STORAGE_FAILURE; a small pack still imports afterwards
  read-only     the data directory is a read-only mount: verify, import, gc and serve refuse, saying it must be
                writable (SQLite's WAL mode writes even to read), and nothing changes
  sqlite-busy   another process holds the catalog's write lock past the 10 s busy timeout: a CLI import gives up
                saying the catalog is busy, a blob PUT to the running server answers 507 STORAGE_FAILURE, what they
                published stays unreferenced (gc removes it), and both succeed once the catalog is free

Corrupt and unreadable blob files are tested in Swift (Tests/HoardServerTests/StoredBlobFaultTests.swift).
Usage: sudo python3 Harness/fault.py HOARD_BINARY [SCENARIO ...]     (default: all; disk-full and read-only are
       skipped where a tmpfs cannot be mounted: not root, or a container without CAP_SYS_ADMIN)
"""
import json, os, random, shutil, subprocess, sys, tempfile, time

from harnesslib import Interrupted, Server, admin_token, cli, make_pack, request, sha256

SCENARIOS = ["disk-full", "read-only", "sqlite-busy"]


class Scenario:
    def __init__(self, hoard, name):
        self.hoard, self.name, self.failures = hoard, name, []
        self.work = tempfile.mkdtemp(prefix=f"hoard-fault-{name}.")
        self.data = os.path.join(self.work, "data")
        os.mkdir(self.data)
        self.mounted = False
        self.rng = random.Random(7)

    def expect(self, condition, what):
        print(f"  {'ok  ' if condition else 'FAIL'} {what}")
        if not condition:
            self.failures.append(what)

    def mount_tmpfs(self, size):
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", self.data], check=True)
        self.mounted = True

    def archive(self, name, tokens):
        path = os.path.join(self.work, f"{name}.zip")
        with open(path, "wb") as f:
            f.write(make_pack(self.rng, name, tokens=tokens, tile=128))
        return path

    def healthy(self, label):
        verify = cli(self.hoard, self.data, "verify", "--json", check=False)
        report = json.loads(verify.stdout) if verify.stdout.strip() else {}
        self.expect(verify.returncode == 0, f"{label}: hoard verify is healthy ({report.get('blobsChecked')} blobs)")

    def no_leftovers(self, label):
        cli(self.hoard, self.data, "gc", "--grace", "0", "--json")
        left = [p for p in ("blobs/v1/staging", "uploads") if os.path.isdir(os.path.join(self.data, p)) and os.listdir(os.path.join(self.data, p))]
        after = json.loads(cli(self.hoard, self.data, "verify", "--json").stdout)
        self.expect(not left and after["unreferenced"] == 0, f"{label}: after gc, no staging, spool or unreferenced blob left {left}")

    def cleanup(self):
        if self.mounted:
            subprocess.run(["umount", "-l", self.data], check=False)
        shutil.rmtree(self.work, ignore_errors=True)


def disk_full(s):
    s.mount_tmpfs("8m")
    token = admin_token(s.hoard, s.data)
    big = s.archive("big", tokens=32)  # about 10 MiB of incompressible pictures
    result = cli(s.hoard, s.data, "import", big, check=False)
    s.expect(result.returncode != 0 and "STORAGE_FAILURE" in result.stdout + result.stderr,
             f"CLI import of a 10 MiB pack into 8 MiB fails with STORAGE_FAILURE: {(result.stdout + result.stderr).strip()[-200:]!r}")
    s.healthy("after the failed CLI import")
    s.no_leftovers("after the failed CLI import")
    server = Server(s.hoard, s.data)
    server.start()
    try:
        with open(big, "rb") as f:
            status, body = request(server.base, "POST", "/v1/packs", f.read(), token, "application/zip")
        error = json.loads(body).get("error", {})
        s.expect(status == 507 and error.get("code") == "STORAGE_FAILURE",
                 f"POST /v1/packs of the same pack answers 507 STORAGE_FAILURE: {status} {error.get('code')} {error.get('message', '')[:120]!r}")
        small = s.archive("small", tokens=2)
        with open(small, "rb") as f:
            status, _ = request(server.base, "POST", "/v1/packs", f.read(), token, "application/zip")
        s.expect(status == 201, f"a small pack still imports: {status}")
        free = os.statvfs(s.data)
        filler = os.path.join(s.data, "filler")
        with open(filler, "wb") as f:
            f.write(b"\0" * max(0, free.f_bavail * free.f_frsize - (64 << 10)))
        blob = s.rng.randbytes(512 << 10)
        status, body = request(server.base, "PUT", f"/v1/blobs/{sha256(blob)}", blob, token, "application/octet-stream")
        error = json.loads(body).get("error", {}) if body else {}
        s.expect(status == 507 and error.get("code") == "STORAGE_FAILURE",
                 f"a blob PUT into the last 64 KiB answers 507 STORAGE_FAILURE: {status} {error.get('code')} {error.get('message', '')[:120]!r}")
        os.unlink(filler)
        status, _ = request(server.base, "PUT", f"/v1/blobs/{sha256(blob)}", blob, token, "application/octet-stream")
        s.expect(status == 201, f"once space is freed the same PUT succeeds: {status}")
    finally:
        server.stop()
    s.healthy("after the disk filled up under the server")
    s.no_leftovers("after the disk filled up under the server")


def read_only(s):
    s.mount_tmpfs("16m")
    admin_token(s.hoard, s.data)
    cli(s.hoard, s.data, "import", s.archive("before", tokens=2))
    # A server killed outright leaves the catalog's WAL files behind, with which SQLite would open the catalog
    # read-only: Hoard must refuse all the same, before any write fails half-way.
    server = Server(s.hoard, s.data)
    server.start()
    server.kill()
    s.expect(os.path.exists(os.path.join(s.data, "catalog.sqlite-wal")), "a killed server left the catalog's WAL file")
    subprocess.run(["mount", "-o", "remount,ro", s.data], check=True)
    # Every command refuses, clearly, saying the data directory must be writable.
    verify = cli(s.hoard, s.data, "verify", check=False)
    s.expect(verify.returncode != 0 and "writable" in verify.stderr + verify.stdout,
             f"verify on a read-only data directory says to make it writable: {(verify.stdout + verify.stderr).strip()[-160:]!r}")
    result = cli(s.hoard, s.data, "import", s.archive("after", tokens=2), check=False)
    message = (result.stdout + result.stderr).strip()
    s.expect(result.returncode != 0 and "writable" in message,
             f"import into a read-only data directory refuses clearly: {message[-200:]!r}")
    gc = cli(s.hoard, s.data, "gc", check=False)
    s.expect(gc.returncode != 0 and "Traceback" not in gc.stderr, f"gc on a read-only data directory refuses clearly: {(gc.stdout + gc.stderr).strip()[-200:]!r}")
    serve = subprocess.run([s.hoard, "serve", "--data-dir", s.data, "--port", "0"], capture_output=True, text=True, timeout=30)
    s.expect(serve.returncode != 0, f"serve on a read-only data directory exits with a message: {(serve.stdout + serve.stderr).strip()[-200:]!r}")
    subprocess.run(["mount", "-o", "remount,rw", s.data], check=True)
    s.healthy("after the data directory is writable again")


def hold_catalog(data, seconds):
    """Another process holding the catalog's write lock; returns once it holds it."""
    holder = subprocess.Popen([sys.executable, "-c", """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
""", os.path.join(data, "catalog.sqlite"), str(seconds)], stdout=subprocess.PIPE, text=True)
    holder.stdout.readline()
    return holder


def sqlite_busy(s):
    token = admin_token(s.hoard, s.data)
    archive = s.archive("busy", tokens=2)
    server = Server(s.hoard, s.data)
    server.start()
    try:
        holder = hold_catalog(s.data, 24)
        started = time.time()
        result = cli(s.hoard, s.data, "import", archive, check=False)
        message = (result.stdout + result.stderr).strip()
        s.expect(result.returncode != 0 and "busy" in message and time.time() - started > 8,
                 f"a CLI import against a catalog locked for 24 s gives up after the busy timeout: {message[-160:]!r}")
        blob = s.rng.randbytes(4096)
        started = time.time()
        status, body = request(server.base, "PUT", f"/v1/blobs/{sha256(blob)}", blob, token, "application/octet-stream")
        error = json.loads(body).get("error", {}) if body else {}
        s.expect(status == 507 and error.get("code") == "STORAGE_FAILURE" and time.time() - started > 8,
                 f"a blob PUT to the server meanwhile answers 507 STORAGE_FAILURE after the timeout: {status} {error.get('code')}")
        holder.wait()
        status, _ = request(server.base, "PUT", f"/v1/blobs/{sha256(blob)}", blob, token, "application/octet-stream")
        s.expect(status in (200, 201), f"the same PUT succeeds once the catalog is free: {status}")
    finally:
        server.stop()
    s.healthy("after the busy catalog was released")
    retry = cli(s.hoard, s.data, "import", archive, check=False)
    s.expect(retry.returncode == 0, "the same import succeeds once the catalog is free")
    s.no_leftovers("after the busy catalog")


def can_mount():
    """Whether this process may mount a tmpfs (root, and not in a container without CAP_SYS_ADMIN)."""
    if os.geteuid() != 0:
        return False
    probe = tempfile.mkdtemp(prefix="hoard-fault-probe.")
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], capture_output=True).returncode != 0:
            return False
        subprocess.run(["umount", probe], check=False)
        return True
    finally:
        os.rmdir(probe)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    hoard = os.path.abspath(sys.argv[1])
    chosen = sys.argv[2:] or SCENARIOS
    if any(c in ("disk-full", "read-only") for c in chosen) and not can_mount():
        print("fault harness: disk-full and read-only need to mount a tmpfs (root with CAP_SYS_ADMIN); skipping them")
        chosen = [c for c in chosen if c not in ("disk-full", "read-only")]
    failed = 0
    for name in chosen:
        print(f"== {name}")
        scenario = Scenario(hoard, name)
        try:
            {"disk-full": disk_full, "read-only": read_only, "sqlite-busy": sqlite_busy}[name](scenario)
        except (Interrupted, subprocess.SubprocessError, OSError, json.JSONDecodeError) as error:
            scenario.failures.append(f"{type(error).__name__}: {error}")
            print(f"  FAIL {type(error).__name__}: {error}")
        finally:
            scenario.cleanup()
        failed += bool(scenario.failures)
    print(f"RESULT: {len(chosen) - failed} of {len(chosen)} fault scenarios passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
