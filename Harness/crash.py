#!/usr/bin/env python3
"""Crash safety: SIGKILL `hoard serve` (and `hoard gc`) at random moments while they write, restart, repeat;
then prove nothing was lost and nothing is half there.

Each round starts the server on a loopback port over one temporary data directory and runs, concurrently:
pack uploads (new packs, re-uploads of acknowledged ones, deletions of scratch packs), blob PUTs, game sessions
created and their maps replaced, and `hoard gc --grace 2` on the same data directory (the CLI; it shares
`gc.lock` with the server's writers). After a random delay it SIGKILLs the server and any running gc.
At the end, with the server stopped:
  - `hoard verify` must report a healthy store;
  - an independent check (SQLite read directly, every file hashed in Python) finds every blob row's bytes
    matching its digest, no foreign-key violation, and every pack version whole (manifest, every asset row,
    every descriptor, every variant row and blob);
  - every acknowledged write is there: each acknowledged pack version, each acknowledged PUT (blob and upload
    rows), each acknowledged session with its last acknowledged map (or a later one whose answer was lost);
  - an interrupted pack upload left its pack whole or absent;
  - `hoard gc --grace 0` then leaves no unreferenced blob, no staging folder and no spooled upload.

Usage: python3 Harness/crash.py HOARD_BINARY [--kills 50] [--seed 1] [--max-seconds 600]
Exit status 0 when every check passes. Standard library only.
"""
import json, os, random, shutil, signal, subprocess, sys, tempfile, threading, time

from harnesslib import Interrupted, Server, admin_token, arguments, catalog_rows, check_store, cli, make_pack, request, sha256


class Ledger:
    """What the clients saw: acknowledged and interrupted operations (thread-safe)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.packs = {}            # name -> {version: manifestDigest}, acknowledged imports
        self.interrupted_packs = set()
        self.deleted = set()       # packs deleted or whose deletion was interrupted: no longer expected
        self.blobs = set()         # acknowledged PUTs
        self.sessions = {}         # id -> {acked: map digests in order, interrupted: a later replacement's answer was lost}
        self.errors = []

    def count(self, key, n=1):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n

    def error(self, what):
        with self.lock:
            self.errors.append(what)


class Round:
    """One life of the server: workers write until the server dies under them."""

    def __init__(self, server, token, ledger, rng, hoard):
        self.server, self.token, self.ledger, self.hoard = server, token, ledger, hoard
        self.seeds = [rng.getrandbits(32) for _ in range(4)]
        self.dead = threading.Event()
        self.gc_process = None
        self.gc_lock = threading.Lock()

    def call(self, key, method, path, body=None, content_type="application/json", ok=(200, 201, 204)):
        """Returns the parsed answer of an acknowledged call, None when interrupted (counted either way)."""
        try:
            status, payload = request(self.server.base, method, path, body, self.token, content_type)
        except Interrupted:
            self.ledger.count(key + " interrupted")
            self.dead.set()
            return None
        if status not in ok:
            self.ledger.count(key + " failed")
            self.ledger.error(f"{method} {path}: {status} {payload[:300]!r}")
            return None
        self.ledger.count(key + " completed")
        return json.loads(payload) if payload else {}

    def packs(self, seed):
        rng = random.Random(seed)
        while not self.dead.is_set():
            with self.ledger.lock:
                known = sorted(self.ledger.packs)
            choice = rng.random()
            if known and choice < 0.15:
                name = rng.choice(known)
                if self.call("pack delete", "DELETE", f"/v1/packs/{name}", ok=(204, 404)) is not None or self.dead.is_set():
                    with self.ledger.lock:
                        self.ledger.deleted.add(name)
                continue
            name = f"crash-{seed:x}-{rng.getrandbits(24):06x}"
            archive = make_pack(rng, name, tokens=rng.randint(2, 8))
            answer = self.call("pack upload", "POST", "/v1/packs", archive, "application/zip")
            if answer is None:
                with self.ledger.lock:
                    self.ledger.interrupted_packs.add(name)
                continue
            with self.ledger.lock:
                self.ledger.packs.setdefault(name, {})[answer["version"]] = answer["manifestDigest"]
            # The same archive again: idempotent, nothing new.
            again = self.call("pack re-upload", "POST", "/v1/packs", archive, "application/zip")
            if again is not None and (again["outcome"], again["manifestDigest"]) != ("unchanged", answer["manifestDigest"]):
                self.ledger.error(f"re-uploading {name} gave {again['outcome']} {again['manifestDigest']}")

    def blobs(self, seed):
        rng = random.Random(seed)
        while not self.dead.is_set():
            content = rng.randbytes(rng.randint(1, 256 << 10))
            digest = sha256(content)
            if self.call("blob put", "PUT", f"/v1/blobs/{digest}", content, "application/octet-stream") is not None:
                with self.ledger.lock:
                    self.ledger.blobs.add(digest)

    def sessions(self, seed):
        rng = random.Random(seed)
        while not self.dead.is_set():
            with self.ledger.lock:
                pool = sorted(self.ledger.blobs)
            art = rng.sample(pool, min(len(pool), 5))
            created = self.call("session create", "POST", "/v1/sessions",
                                {"name": "crash", "map": {"art": art, "n": rng.getrandbits(32)}})
            if created is None:
                continue
            session = {"acked": [created["mapDigest"]], "interrupted": False}
            with self.ledger.lock:
                self.ledger.sessions[created["id"]] = session
            for _ in range(rng.randint(1, 6)):
                document = {"art": rng.sample(pool, min(len(pool), 3)), "n": rng.getrandbits(32)}
                replaced = self.call("map update", "PUT", f"/v1/sessions/{created['id']}/map", document)
                with self.ledger.lock:
                    if replaced is None:
                        session["interrupted"] = True
                        break
                    session["acked"].append(replaced["mapDigest"])

    def gc(self, seed):
        rng = random.Random(seed)
        while not self.dead.is_set():
            time.sleep(rng.uniform(0, 0.3))
            with self.gc_lock:
                if self.dead.is_set():
                    return
                self.gc_process = subprocess.Popen([self.hoard, "gc", "--grace", "2", "--json", "--data-dir", self.server.data],
                                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = self.gc_process.communicate()
            code = self.gc_process.returncode
            if code == -signal.SIGKILL:
                self.ledger.count("gc killed")
            elif code == 0:
                self.ledger.count("gc completed")
                self.ledger.count("gc blobs deleted", json.loads(out)["deletedBlobs"])
            else:
                self.ledger.error(f"hoard gc exited {code}: {err.decode(errors='replace')[-500:]}")

    def run(self, delay, kill_gc):
        workers = [threading.Thread(target=work, args=(seed,))
                   for work, seed in zip((self.packs, self.blobs, self.sessions, self.gc), self.seeds)]
        for worker in workers:
            worker.start()
        time.sleep(delay)
        with self.gc_lock:
            self.server.kill()
            if kill_gc and self.gc_process and self.gc_process.poll() is None:
                self.gc_process.send_signal(signal.SIGKILL)
            self.dead.set()
        for worker in workers:
            worker.join()


def final_checks(hoard, data, ledger):
    """Everything acknowledged is there; everything there is whole. Returns a list of problems."""
    problems = []
    verify = cli(hoard, data, "verify", "--json", check=False)
    report = json.loads(verify.stdout)
    if verify.returncode != 0:
        problems.append(f"hoard verify: {verify.stdout.strip()}")
    figures, found = check_store(data)
    problems += found
    versions = {}
    for name, version, manifest in catalog_rows(
            data, "SELECT p.name, pv.version, pv.manifestDigest FROM packVersion pv JOIN pack p ON p.id = pv.packId"):
        versions.setdefault(name, {})[version] = manifest
    for name, acked in ledger.packs.items():
        if name in ledger.deleted:
            continue
        for version, manifest in acked.items():
            if versions.get(name, {}).get(version) != manifest:
                problems.append(f"acknowledged pack {name} version {version} is lost")
    # check_store proved every version whole, so an interrupted upload is either committed whole or absent.
    interrupted = ledger.interrupted_packs - ledger.deleted
    whole_or_absent = (sum(1 for name in interrupted if name in versions), sum(1 for name in interrupted if name not in versions))
    uploads = {row[0] for row in catalog_rows(data, "SELECT digest FROM upload")}
    problems += [f"acknowledged blob {d} is lost" for d in sorted(ledger.blobs - uploads)]
    maps = dict(catalog_rows(data, "SELECT id, mapDigest FROM session"))
    for session, history in ledger.sessions.items():
        # The last acknowledged map, or (when the next replacement's answer was lost) a map never acknowledged.
        current = maps.get(session)
        if current != history["acked"][-1] and not (history["interrupted"] and current and current not in history["acked"]):
            problems.append(f"session {session} has map {maps.get(session)}, not its last acknowledged one")
    return report, figures, whole_or_absent, problems


def main():
    parser = arguments(__doc__)
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--max-seconds", type=float, default=600, help="stop killing after this long (counts are printed)")
    parser.add_argument("--keep", action="store_true", help="keep the data directory for inspection")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="hoard-crash.")
    data = os.path.join(work, "data")
    ledger = Ledger()
    started = time.time()
    kills = 0
    try:
        token = admin_token(args.hoard, data)
        server = Server(args.hoard, data)
        while kills < args.kills and time.time() - started < args.max_seconds:
            server.start()
            Round(server, token, ledger, rng, args.hoard).run(delay=rng.uniform(0.05, 1.5), kill_gc=rng.random() < 0.5)
            kills += 1
        server.start()  # one clean start after the last kill: the server must come up on what the kill left
        server.stop()
        report, figures, whole_or_absent, problems = final_checks(args.hoard, data, ledger)
        problems += ledger.errors
        collected = json.loads(cli(args.hoard, data, "gc", "--grace", "0", "--json").stdout)
        after = json.loads(cli(args.hoard, data, "verify", "--json", check=False).stdout)
        leftovers = [p for p in ("blobs/v1/staging", "uploads") if os.listdir(os.path.join(data, p)) if os.path.isdir(os.path.join(data, p))]
        if after["unreferenced"] or leftovers:
            problems.append(f"after gc --grace 0: {after['unreferenced']} unreferenced blobs, leftovers in {leftovers}")
        counts = dict(sorted(ledger.counts.items()))
        print(f"crash harness, seed {args.seed}: {kills} SIGKILLs of the server in {time.time() - started:.0f} s")
        for key, value in counts.items():
            print(f"  {key}: {value}")
        print(f"  interrupted pack uploads: {whole_or_absent[0]} committed whole, {whole_or_absent[1]} absent, none partial"
              if not problems else "  interrupted pack uploads: see the problems below")
        print(f"  catalog: {figures['blobRows']} blob rows, {figures['packVersions']} pack versions, {figures['sessions']} sessions;"
              f" acknowledged: {sum(map(len, ledger.packs.values()))} pack versions, {len(ledger.blobs)} blobs,"
              f" {len(ledger.sessions)} sessions")
        print(f"  hoard verify: {report['blobsChecked']} blobs checked, {len(report['missing'])} missing, {len(report['corrupt'])} corrupt,"
              f" {len(report['wrongSize'])} wrong size, {len(report['dangling'])} dangling, {report['unreferenced']} unreferenced"
              f" (then gc --grace 0 removed {collected['deletedBlobs']}, {collected['staleStagingAreas']} staging folders)")
        if kills < args.kills:
            problems.append(f"only {kills} of {args.kills} kills fit in --max-seconds {args.max_seconds}")
        for problem in problems[:50]:
            print("  PROBLEM:", problem)
        print("RESULT:", "PASS" if not problems else f"FAIL ({len(problems)} problems)")
        return 0 if not problems else 1
    finally:
        if args.keep:
            print("data directory kept:", data)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
