#!/usr/bin/env python3
"""The catalog at scale (issue 26): start-up, memory, listing, search, a PUT beside uncached GETs, and how soon a CLI
import is served, measured at growing catalog sizes on one data directory.

Packs are generated here (no downloads): zips (stored) of tiny unique 8x8 PNG tokens named
`tokens/<folder>/<adjective>-<noun>-<tag>.png` (the tag: eight letters from the number), imported with the CLI, generation off. For each size it starts
`hoard serve` and reports:
  start-up to a healthy /healthz, RSS after start and after the first listing;
  /v1/assets first page, a deep page (offset, and cursor when the server gives one), a search for a word that names
  1 asset in 200 ("noun") and for one that names a single asset ("exact"): p50/p99 over --requests requests;
  PUT /v1/blobs of a new 4 KiB blob (p50/max of 10) and the worst latency of a loop of GETs of blobs never asked
  before, running meanwhile;
  POST /v1/blobs/missing with 1,000 digests never asked before, then again, and the RSS per blob this adds;
  how long after a CLI `hoard import` of 100 assets exits its blobs answer 200.
Every answer is checked: status 200 and a non-empty body (a listing with assets, a blob with its bytes).

Usage: Benchmarks/catalog.py HOARD [--sizes 100000,1000000] [--pack-size 20000] [--requests 50] [--work DIR]
       [--check-flat RATIO]   (fail unless the largest size's listing and exact-search p50 are within RATIO x the
                               smallest size's: what scripts/test.sh runs, with small sizes)
A --work directory used before is taken up again: the generated packs already in its catalog are not imported again.
"""
import argparse, hashlib, http.client, json, os, random, shutil, signal, sqlite3, struct, subprocess, sys, tempfile
import threading, time, zipfile, zlib
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import free_port, status_mb  # noqa: E402

FOLDERS = [f"folder{n:02d}" for n in range(50)]
ADJECTIVES = ["red", "old", "tall", "grim", "pale", "wild", "dark", "tiny", "vast", "cold"]
NOUNS = [f"{a}{b}" for a in ["gob", "orc", "elf", "imp", "rat", "bat", "owl", "yak", "eel", "ant",
                              "cat", "dog", "fox", "hog", "kob", "lich", "mimic", "naga", "ooze", "wolf"]
         for b in ["lin", "ard", "ion", "ent", "ix", "on", "ur", "ax", "et", "um"]]  # 200 nouns


def png(seed):
    """An 8x8 greyscale PNG whose pixels encode `seed`: every seed gives different bytes."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = seed.to_bytes(8, "big") * 8
    rows = b"".join(b"\x00" + raw[row * 8:row * 8 + 8] for row in range(8))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def tag(number):
    """Eight letters unique to `number` in practice, spread over the alphabet: its trigrams are rare at any size."""
    digest = hashlib.md5(str(number).encode()).digest()
    return "".join(chr(ord("a") + byte % 26) for byte in digest[:8])


def asset_name(number):
    return (f"{FOLDERS[number % len(FOLDERS)]}/{ADJECTIVES[number // 7 % len(ADJECTIVES)]}-"
            f"{NOUNS[number // 3 % len(NOUNS)]}-{tag(number)}")


def make_pack(path, first, count):
    """A zip of `count` tokens numbered from `first`; returns the digests of its pictures."""
    digests = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for number in range(first, first + count):
            data = png(number)
            digests.append("sha256:" + hashlib.sha256(data).hexdigest())
            archive.writestr(f"tokens/{asset_name(number)}.png", data)
    return digests


def catalogued_packs(data):
    """Names of the packs already in the catalog of `data` (empty when there is none yet)."""
    if not os.path.exists(f"{data}/catalog.sqlite"):
        return set()
    with sqlite3.connect(f"file:{data}/catalog.sqlite?mode=ro", uri=True) as db:
        return {row[0] for row in db.execute("SELECT name FROM pack")}


def run(command, **kwargs):
    return subprocess.run(command, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


class Client:
    """One keep-alive connection; each call returns (seconds, status, body)."""

    def __init__(self, port, token):
        self.port, self.token = port, token
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method, path, body=None):
        headers = {"Authorization": "Bearer " + self.token}
        start = time.perf_counter()
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        return time.perf_counter() - start, response.status, data


def percentiles(samples):
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return pick(0.5), pick(0.99)


def timed_listing(client, path, requests):
    times = []
    body = None
    for _ in range(requests):
        seconds, status, data = client.call("GET", path)
        body = json.loads(data)
        assert status == 200 and body["assets"], f"{path}: {status} {data[:200]!r}"
        times.append(seconds)
    return percentiles(times), body


def measure(hoard, data, port, token, requests, work, next_number, size):
    result = {}
    start = time.perf_counter()
    server = subprocess.Popen([hoard, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning"],
                              stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.01)
            assert time.perf_counter() - start < 600, "the server did not start"
        result["startup_s"] = time.perf_counter() - start
        time.sleep(0.5)
        result["rss_start_mb"] = status_mb(server.pid, "VmRSS")
        client = Client(port, token)
        (result["first_p50"], result["first_p99"]), first = timed_listing(client, "/v1/assets?limit=100", requests)
        result["rss_listed_mb"] = status_mb(server.pid, "VmRSS")
        total = first["total"]
        result["total"] = total
        deep = max(0, total - 150)
        (result["deep_offset_p50"], result["deep_offset_p99"]), page = timed_listing(
            client, f"/v1/assets?offset={deep}&limit=100", requests)
        _, _, answer = client.call("GET", f"/v1/assets?offset={deep}&limit=1")
        cursor = json.loads(answer).get("nextCursor")
        if cursor:
            (result["deep_cursor_p50"], result["deep_cursor_p99"]), _ = timed_listing(
                client, f"/v1/assets?cursor={quote(cursor)}&limit=100", requests)
        noun = NOUNS[17]
        (result["search_p50"], result["search_p99"]), found = timed_listing(client, f"/v1/assets?q={noun}&limit=100", requests)
        result["search_total"] = found["total"]
        exact = tag(size // 2)
        (result["exact_p50"], result["exact_p99"]), found = timed_listing(client, f"/v1/assets?q={exact}&limit=100", requests)
        assert found["total"] >= 1, found["total"]

        # A PUT of a new blob while another connection GETs blobs never asked for before (not in the hot cache).
        with sqlite3.connect(f"{data}/catalog.sqlite") as db:
            cold = [row[0] for row in db.execute(
                "SELECT digest FROM blob WHERE mediaType = 'image/png' ORDER BY random() LIMIT 20000")]
        stop = threading.Event()
        gets = []

        def get_loop():
            getter = Client(port, token)
            for digest in cold:
                if stop.is_set():
                    break
                seconds, status, body = getter.call("GET", f"/v1/blobs/{digest}")
                assert status == 200 and body, f"GET {digest}: {status}"
                gets.append((time.perf_counter(), seconds))

        loop = threading.Thread(target=get_loop)
        loop.start()
        time.sleep(0.5)
        putter = Client(port, token)
        puts = []
        windows = []
        for _ in range(10):
            blob = random.randbytes(4096)
            digest = "sha256:" + hashlib.sha256(blob).hexdigest()
            begin = time.perf_counter()
            seconds, status, body = putter.call("PUT", f"/v1/blobs/{digest}", blob)
            assert status == 201 and body, f"PUT: {status} {body[:200]!r}"
            seconds2, status, body = putter.call("GET", f"/v1/blobs/{digest}")
            assert status == 200 and body == blob, "an acknowledged PUT is not readable"
            puts.append(seconds)
            windows.append((begin, begin + seconds))
            time.sleep(0.2)
        time.sleep(0.2)
        stop.set()
        loop.join()
        during = [seconds for end, seconds in gets if any(a <= end and end - seconds <= b for a, b in windows)]
        result["put_p50"], _ = percentiles(puts)
        result["put_max"] = max(puts) * 1000
        result["get_worst_during_put"] = max(during) * 1000 if during else float("nan")
        result["get_p50"], result["get_p99"] = percentiles([s for _, s in gets])
        result["gets"] = len(gets)

        # POST /v1/blobs/missing with 1,000 digests never asked before (each one looked up in the catalog), then
        # the same again (answered from memory); the RSS this adds, per blob, is what the access index keeps.
        with sqlite3.connect(f"{data}/catalog.sqlite") as db:
            every = [row[0] for row in db.execute("SELECT digest FROM blob LIMIT 200000")]
        rss_before = status_mb(server.pid, "VmRSS")
        cold_times, warm_times = [], []
        for times in (cold_times, warm_times):
            for index in range(0, len(every), 1000):
                seconds, status, answer = client.call(
                    "POST", "/v1/blobs/missing", json.dumps({"digests": every[index:index + 1000]}).encode())
                assert status == 200 and json.loads(answer)["missing"] == [], f"missing: {status} {answer[:200]!r}"
                times.append(seconds)
            if times is cold_times:
                result["rss_per_blob_b"] = (status_mb(server.pid, "VmRSS") - rss_before) * 1048576 / len(every)
        result["missing_cold_p50"], result["missing_cold_p99"] = percentiles(cold_times)
        result["missing_warm_p50"], result["missing_warm_p99"] = percentiles(warm_times)
        result["missing_blobs"] = len(every)

        # A CLI import (another process) and how soon the server serves its blobs.
        pack = f"{work}/late-{next_number}.zip"
        digests = make_pack(pack, next_number, 100)
        run([hoard, "import", pack, "--data-dir", data, "--group", "bench", "--plugin", "hoard.generate-lods=off"])
        exited = time.perf_counter()
        while True:
            _, status, body = client.call("GET", f"/v1/blobs/{digests[-1]}")
            if status == 200:
                assert body, "an empty blob"
                break
            assert time.perf_counter() - exited < 60, "the CLI import was never served"
            time.sleep(0.005)
        result["cli_import_served_s"] = time.perf_counter() - exited
        result["rss_end_mb"] = status_mb(server.pid, "VmRSS")
        result["rss_peak_mb"] = status_mb(server.pid, "VmHWM")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("hoard")
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--pack-size", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--work")
    parser.add_argument("--check-flat", type=float)
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    work = options.work or tempfile.mkdtemp(prefix="hoard-catalog-bench.")
    os.makedirs(work, exist_ok=True)
    data = f"{work}/data"
    hoard = os.path.abspath(options.hoard)
    try:
        subprocess.run([hoard, "group", "create", "bench", "--data-dir", data], capture_output=True)  # may exist (--work)
        token = run([hoard, "token", "create", "--group", "bench", "--data-dir", data]).stdout.strip()
        imported = 0
        results = []
        packs = catalogued_packs(data)
        for size in sizes:
            import_seconds = 0.0
            while imported < size:
                count = min(options.pack_size, size - imported)
                pack = f"{work}/pack-{imported:08d}.zip"
                if os.path.basename(pack).removesuffix(".zip") in packs:
                    imported += count
                    continue
                make_pack(pack, imported, count)
                start = time.perf_counter()
                run([hoard, "import", pack, "--data-dir", data, "--group", "bench", "--plugin", "hoard.generate-lods=off"])
                import_seconds += time.perf_counter() - start
                os.remove(pack)
                imported += count
            # The late packs of earlier sizes and runs count too; numbers past `size` keep every picture new.
            late = sum(name.startswith("late-") for name in catalogued_packs(data))
            result = measure(hoard, data, free_port(), token, options.requests, work, 10_000_000 + size + 100 * late, size)
            result["size"] = size
            result["import_s"] = import_seconds
            results.append(result)
            print(f"{size:>9,} assets (listing total {result['total']:,}), imports {import_seconds:.1f} s:")
            print(f"  start-up {result['startup_s']:.2f} s; RSS {result['rss_start_mb']:.0f} MB after start, "
                  f"{result['rss_listed_mb']:.0f} after the first listing, {result['rss_end_mb']:.0f} at the end, "
                  f"peak {result['rss_peak_mb']:.0f}")
            print(f"  /v1/assets p50/p99 ms: first page {result['first_p50']:.1f}/{result['first_p99']:.1f}, "
                  f"deep page by offset {result['deep_offset_p50']:.1f}/{result['deep_offset_p99']:.1f}"
                  + (f", by cursor {result['deep_cursor_p50']:.1f}/{result['deep_cursor_p99']:.1f}"
                     if "deep_cursor_p50" in result else ", no cursor")
                  + f", q=noun ({result['search_total']:,} found) {result['search_p50']:.1f}/{result['search_p99']:.1f}"
                  f", q=exact {result['exact_p50']:.1f}/{result['exact_p99']:.1f}")
            print(f"  PUT p50 {result['put_p50']:.1f} ms, max {result['put_max']:.1f} ms; worst uncached GET during "
                  f"the PUTs {result['get_worst_during_put']:.1f} ms (all {result['gets']:,} GETs p50/p99 "
                  f"{result['get_p50']:.1f}/{result['get_p99']:.1f} ms)")
            print(f"  POST /v1/blobs/missing, 1,000 digests, p50/p99 ms: never asked {result['missing_cold_p50']:.1f}/"
                  f"{result['missing_cold_p99']:.1f}, asked before {result['missing_warm_p50']:.1f}/"
                  f"{result['missing_warm_p99']:.1f}; RSS {result['rss_per_blob_b']:.0f} B per blob after asking for "
                  f"{result['missing_blobs']:,}")
            print(f"  a CLI import's blobs served {result['cli_import_served_s']:.2f} s after the CLI exits", flush=True)
        if options.check_flat and len(results) > 1:
            small, large = results[0], results[-1]
            for key in ["first_p50", "deep_offset_p50", "deep_cursor_p50", "exact_p50"]:
                if key not in small:
                    continue
                ratio = large[key] / max(small[key], 0.5)
                print(f"  {key}: {small[key]:.1f} ms at {small['size']:,}, {large[key]:.1f} ms at {large['size']:,} "
                      f"({ratio:.2f}x for {large['size'] / small['size']:.0f}x the assets)")
                if ratio > options.check_flat:
                    sys.exit(f"{key} grew {ratio:.1f}x with the catalog (limit {options.check_flat}x)")
    finally:
        if not options.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
