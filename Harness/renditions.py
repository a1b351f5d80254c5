#!/usr/bin/env python3
"""The rendition queue survives `kill -9`: SIGKILL `hoard serve` at random moments while its render workers make an
import's generated pictures, restart it, repeat; then prove every job was done once, nothing is half written and the
pictures are those an uninterrupted import makes.

A pack of PICTURES tokens (random pixels, shipped at @4x only, so each job makes @1x and @2x LODs, a preview and a
thumbnail) is imported with `hoard import --later` (committed, its jobs queued). Each round starts `hoard serve` with a
short lease (--render-lease 1: a job whose server died is taken again a second later), waits a random moment while
jobs are being made (paced so that every round finds work), and SIGKILLs it. A last round lets the queue drain and stops the server. Then, with no server:
  - every job is done: none pending, none failed, each with exactly the four pictures it makes, and each of the
    pack's assets has them (two generated variant rows, a preview and a thumbnail);
  - every picture is byte for byte what `hoard import` (uninterrupted, in another data directory) made of the same
    pack: the same digests for the same asset and role;
  - the store is whole (harnesslib.check_store: SQLite read directly, every file hashed in Python) and `hoard verify`
    agrees;
  - nothing was stored twice or left half there: `hoard gc --grace 0` finds no unreferenced blob (a job made twice,
    once before a kill and once after, published the same bytes, which the second made rows for) and leaves no
    staging folder.

Usage: python3 Harness/renditions.py HOARD_BINARY [--kills 20] [--pictures 160] [--seed 1]
Exit status 0 when every check passes. Standard library only.
"""
import io, json, os, random, shutil, sqlite3, sys, tempfile, time, zipfile

from harnesslib import Check, Server, arguments, check_store, cli, noise_png


def make_pack(rng, pictures, side):
    """A zip of `pictures` tokens shipped at @4x only (side × side pixels), 64 pixels a tile."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("pack.json", json.dumps({"name": "crash-renditions", "tilePixels": side // 4}))
        for n in range(pictures):
            archive.writestr(f"tokens/t{n:04}@4x.png", noise_png(rng, side, side))
    return out.getvalue()


def queue_states(data):
    db = sqlite3.connect(f"file:{os.path.join(data, 'catalog.sqlite')}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT state, count(*) FROM job GROUP BY state").fetchall())
    finally:
        db.close()


def pictures_by_asset(data):
    """{(asset digest, role): blob digest} of every generated picture: generated variants and renditions."""
    db = sqlite3.connect(f"file:{os.path.join(data, 'catalog.sqlite')}?mode=ro", uri=True)
    try:
        found = {(a, f"@{s}x"): b for a, s, b in db.execute("SELECT assetDigest, scale, blobDigest FROM variant WHERE isGenerated")}
        found.update({(a, r): b for a, r, b in db.execute("SELECT assetDigest, role, blobDigest FROM rendition")})
        return found
    finally:
        db.close()


def main():
    parser = arguments(__doc__)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--pictures", type=int, default=160)
    parser.add_argument("--side", type=int, default=512)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    check = Check()
    work = tempfile.mkdtemp(prefix="hoard-renditions-")
    try:
        pack = os.path.join(work, "crash-renditions.zip")
        with open(pack, "wb") as f:
            f.write(make_pack(rng, args.pictures, args.side))
        data, reference = os.path.join(work, "data"), os.path.join(work, "reference")
        started = time.time()
        cli(args.hoard, reference, "import", pack)
        print(f"reference: imported and made in {time.time() - started:.1f} s", flush=True)
        cli(args.hoard, data, "import", pack, "--later")
        total = queue_states(data).get("pending", 0)
        check.that(total == args.pictures, f"the import queued one job per picture ({total})")

        server = Server(args.hoard, data, extra=["--render-lease", "1"])
        kills_during_work, longest = 0, 1.5
        for round_number in range(args.kills):
            before = queue_states(data)
            if before.get("pending", 0) == 0:
                break
            server.start()
            alive = rng.uniform(0.05, longest)
            time.sleep(alive)
            working = queue_states(data).get("pending", 0) > 0
            server.kill()
            kills_during_work += working
            after = queue_states(data)
            # Paced to the machine: an idle one made 120 pictures in five rounds, leaving no work for the other kills.
            # The next round lives long enough, at this round's rate, for its share of what is left, and no longer.
            done, left = after.get("done", 0) - before.get("done", 0), after.get("pending", 0)
            if done:
                longest = min(1.5, max(0.1, left / (args.kills - round_number) / (done / alive)))
            print(f"round {round_number + 1}: killed with {after.get('pending', 0)} jobs pending "
                  f"({after.get('done', 0) - before.get('done', 0)} done this round)", flush=True)
        check.that(kills_during_work >= min(args.kills, 5), f"{kills_during_work} kills landed while jobs were being made")

        server.start()
        deadline = time.time() + 600
        while queue_states(data).get("pending", 0) > 0 and time.time() < deadline:
            time.sleep(0.5)
        server.stop()

        states = queue_states(data)
        check.that(states == {"done": args.pictures}, f"every job is done, none failed ({states})")
        db = sqlite3.connect(f"file:{os.path.join(data, 'catalog.sqlite')}?mode=ro", uri=True)
        outputs = [n for (n,) in db.execute("SELECT count(o.role) FROM job j LEFT JOIN jobOutput o ON o.jobId = j.id GROUP BY j.id")]
        retaken = db.execute("SELECT count(*), COALESCE(max(attempts), 0) FROM job WHERE attempts > 1").fetchone()
        db.close()
        check.that(outputs == [4] * args.pictures, "each job recorded its four pictures once")
        print(f"       {retaken[0]} jobs were taken again after a kill (at most {retaken[1]} takes)", flush=True)

        made, expected = pictures_by_asset(data), pictures_by_asset(reference)
        check.that(len(expected) == 4 * args.pictures, f"the uninterrupted import made {len(expected)} pictures")
        check.that(made == expected, "every picture is byte for byte what an uninterrupted import makes")

        figures, problems = check_store(data)
        check.that(not problems, f"the store is whole ({figures['blobRows']} blob rows): {problems[:5]}")
        verify = cli(args.hoard, data, "verify", check=False)
        check.that(verify.returncode == 0, "hoard verify: " + verify.stdout.strip().splitlines()[-1])
        staging = os.path.join(data, "blobs", "v1", "staging")
        killed = len(os.listdir(staging)) if os.path.isdir(staging) else 0
        print(f"       {killed} staging folders were left by the kills", flush=True)
        gc = json.loads(cli(args.hoard, data, "gc", "--grace", "0", "--json").stdout)
        check.that(gc.get("deletedBlobs") == 0, f"nothing unreferenced was left behind (gc removed {gc.get('deletedBlobs')} blobs)")
        left = os.listdir(staging) if os.path.isdir(staging) else []
        check.that(not left, f"gc then leaves no staging folder ({len(left)})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(check.report(what="rendition crash"))


if __name__ == "__main__":
    main()
