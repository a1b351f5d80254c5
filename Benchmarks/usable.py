#!/usr/bin/env python3
"""Time to usable and time to complete (issue 38): a pack uploaded over HTTP into a running `hoard serve`.

- usable: from the upload's first byte until its assets are listed and servable: the POST answered (the import has
  committed), `GET /v1/assets?pack=` lists every asset and one of its variants answers 200;
- complete: until `GET /v1/packs` says none of its generated pictures is pending (the render workers are done).

Each round uploads PACK into a fresh data directory twice: with the default plugins (generated pictures made by the
server's render workers after the commit) and with generation off (`--plugin hoard.generate-lods=off`), whose import
is the floor. The issue's target: usable within 1.3x the generation-off import. Prints medians and writes --out.
Usage: python3 Benchmarks/usable.py HOARD PACK [--rounds 3] [--out Benchmarks/out/usable.json]
Standard library only.
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile, time, urllib.request

from benchlib import free_port, wait_healthy


def call(base, path, token, method="GET", body=None, headers=None):
    request = urllib.request.Request(base + path, data=body, method=method,
                                     headers={"Authorization": "Bearer " + token, **(headers or {})})
    with urllib.request.urlopen(request, timeout=1200) as response:
        return response.status, response.read()


def one(hoard, pack, generation, work):
    data = os.path.join(work, f"data-{time.time_ns()}")
    subprocess.run([hoard, "group", "create", "bench", "--data-dir", data], check=True, capture_output=True)
    token = subprocess.run([hoard, "token", "create", "--group", "bench", "--data-dir", data], check=True, capture_output=True,
                           text=True).stdout.strip().splitlines()[-1]
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    extra = [] if generation else ["--plugin", "hoard.generate-lods=off"]
    server = subprocess.Popen([hoard, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning", *extra])
    try:
        wait_healthy(base)
        subprocess.run(["sync"], check=True)
        with open(pack, "rb") as f:
            body = f.read()
        started = time.time()
        status, answer = call(base, "/v1/packs?name=bench", token, "POST", body, {"Content-Type": "application/zip"})
        answered = time.time() - started
        report = json.loads(answer)
        _, page = call(base, "/v1/assets?pack=bench&limit=1000", token)
        listed = json.loads(page)
        variant = listed["assets"][0]["variants"][0]["digest"]
        served, _ = call(base, f"/v1/blobs/{variant}", token)
        usable = time.time() - started
        if status != 201 or listed["total"] != report["assets"] or served != 200:
            raise SystemExit(f"the pack was not usable: {status}, {listed['total']} of {report['assets']} listed, blob {served}")
        complete, pending = usable, 0
        while generation:
            _, packs = call(base, "/v1/packs", token)
            progress = next(p for p in json.loads(packs)["packs"] if p["name"] == "bench").get("renditions") or {}
            pending = progress.get("pending", 0)
            if pending == 0:
                complete = time.time() - started
                if progress.get("failed"):
                    raise SystemExit(f"{progress['failed']} pictures failed")
                break
            time.sleep(0.1)
        return {"answered": answered, "usable": usable, "complete": complete, "assets": report["assets"],
                "renditionJobs": report.get("renditionJobs", 0)}
    finally:
        server.terminate()
        server.wait(60)
        shutil.rmtree(data, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hoard")
    parser.add_argument("pack")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "usable.json"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hoard-usable.")
    runs = {"off": [], "on": []}
    try:
        for round_number in range(args.rounds):
            for mode in ("off", "on") if round_number % 2 == 0 else ("on", "off"):
                result = one(args.hoard, args.pack, mode == "on", work)
                runs[mode].append(result)
                print(f"round {round_number + 1}, generation {mode}: usable {result['usable']:.2f} s"
                      + (f", complete {result['complete']:.2f} s ({result['renditionJobs']} jobs)" if mode == "on" else ""), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    median = lambda mode, key: statistics.median(r[key] for r in runs[mode])
    off, usable, complete = median("off", "usable"), median("on", "usable"), median("on", "complete")
    size = os.path.getsize(args.pack) / 1e6
    print(f"median over {args.rounds} rounds, {size:.0f} MB pack: generation off usable {off:.2f} s; default plugins usable "
          f"{usable:.2f} s = {usable / off:.2f}x (target <= 1.3x), complete {complete:.2f} s")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"pack": os.path.basename(args.pack), "runs": runs, "off": off, "usable": usable, "complete": complete,
                   "ratio": usable / off}, f, indent=2)


if __name__ == "__main__":
    main()
