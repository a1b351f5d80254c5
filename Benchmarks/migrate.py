#!/usr/bin/env python3
"""`hoard migrate-catalog` at scale (issue 19): a catalog of --assets generated tokens (Benchmarks/catalog.py's packs,
imported with the CLI, generation off) copied into a new PostgreSQL database. Reports the rows copied, the copy's
own seconds (its summary: copy, verification and commit) and the command's wall time (opening the SQLite catalog and
migrating the new database's schema included).

Usage: Benchmarks/migrate.py HOARD [--assets 10000] [--pack-size 5000] [--work DIR]
The PostgreSQL server is $HOARD_TEST_POSTGRES, else the one `tools/postgres.sh start` starts (and leaves running);
the new database is made with its createdb. A --work directory used before keeps its imported packs.
"""
import argparse, glob, json, os, subprocess, sys, tempfile, time, uuid
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from catalog import catalogued_packs, make_pack, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def server_url():
    url = os.environ.get("HOARD_TEST_POSTGRES")
    return url or run([os.path.join(ROOT, "tools/postgres.sh"), "start"]).stdout.strip()


def new_database(server):
    """Makes a database on the server of `server` (a postgres:// URL) with PostgreSQL's createdb; returns its URL."""
    parts = urlsplit(server)
    name = "hoard_migrate_" + uuid.uuid4().hex[:12]
    createdb = ([os.environ["HOARD_POSTGRES_BIN"] + "/createdb"] if os.environ.get("HOARD_POSTGRES_BIN")
                else sorted(glob.glob("/usr/lib/postgresql/*/bin/createdb")) or ["createdb"])[-1]
    run([createdb, "--host", parts.hostname, "--port", str(parts.port or 5432), "--username", parts.username, name])
    return f"postgres://{parts.username}@{parts.hostname}:{parts.port or 5432}/{name}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("hoard")
    parser.add_argument("--assets", type=int, default=10_000)
    parser.add_argument("--pack-size", type=int, default=5_000)
    parser.add_argument("--work")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="hoard-migrate-")
    data = os.path.join(work, "data")
    done = catalogued_packs(data)
    for first in range(0, args.assets, args.pack_size):
        name = f"bench-{first:07d}"
        if name in done:
            continue
        pack = os.path.join(work, name + ".zip")
        make_pack(pack, first, min(args.pack_size, args.assets - first))
        run([args.hoard, "import", pack, "--data-dir", data, "--group", "bench", "--plugin", "hoard.generate-lods=off"])
        os.remove(pack)
    target = new_database(server_url())
    start = time.perf_counter()
    result = run([args.hoard, "migrate-catalog", "--data-dir", data, "--to", target, "--json"])
    wall = time.perf_counter() - start
    report = json.loads(result.stdout)
    copied = [table for table in report["tables"] if not table["filledByTriggers"]]
    print(f"{args.assets} assets: {report['rows']} rows in {len(copied)} tables copied and verified in "
          f"{report['seconds']:.2f} s (command: {wall:.2f} s)")
    for table in sorted(report["tables"], key=lambda table: -table["rows"])[:5]:
        print(f"  {table['name']}: {table['rows']} rows")


if __name__ == "__main__":
    main()
