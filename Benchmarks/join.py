#!/usr/bin/env python3
"""Session joins, measured side by side with nginx serving the same blob files (issue #4).

1. cold join of a map referencing 1,000 assets x 3 variants (~100 MB) with `hoard join` (which fetches the @1x
   variants: the default resolution), against fetching the same files from nginx with curl 8-way parallel (xargs
   -P8), and against MapTool's way: one request per blob, 5 KiB Range chunks, sequential;
2. warm join (everything cached): time and HTTP requests, for that map and for a map of 10,000 references;
3. 200 simultaneous cold joins of a ~20 MB map: all must succeed; server peak memory;
4. a very large map (issue 22): 512 x 512 tiles painted tile by tile from 64 textures of the pack, with 2,000 tokens:
   its size as hoard.map/v1 (what the host posts) and as stored and answered (v2), the POST's time,
   `GET /v1/sessions/{id}` for a participant (first, then p50/p99), a cold `hoard join` of it (time and bytes), and a
   `paint` op over 10,000 tiles (100 x 100) sent 20 times, each delivered to 200 participants (p50/p99/max);
5. a remote player (issue 20): a cold `hoard join` of a 460-asset map (x 3 variants, 42 MB, imported with previews
   generated) through a 20 Mbit/s link with 40 ms round trips (Benchmarks/slowlink.py): bytes and seconds to the first
   render (previews) and to playable (the @1x variants), against the link's own time for those bytes and for what a
   first render cost before previews were listed (every @1x variant).
Loopback only; every step is bounded. Usage: python3 Benchmarks/join.py HOARD_BINARY [--quick] [--only large-map|link]
Needs: scripts/setup.sh --bench (nginx, curl, websockets).
"""
from benchlib import call, free_port, peak_rss_mb, wait_healthy
from slowlink import SlowLink
import argparse, asyncio, http.client, json, os, random, shutil, socket, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from sample_map import build_map  # maps in the shape of Schemas/map.schema.json






def drawn_blobs(items):
    """What a cold join at the default resolution fetches, as the client plans it: each asset's preview, when it has
    one, and its @1x variant (its lowest scale when it has no @1x)."""
    blobs = []
    for asset in items:
        if asset.get("preview"):
            blobs.append(asset["preview"]["digest"])
        variants = sorted(asset["variants"], key=lambda v: (v["scale"] != 1, v["scale"], v["size"]))
        blobs.append(variants[0]["digest"])
    return list(dict.fromkeys(blobs))


def pack(path, assets, mb, variants=True, drawn=False):
    if not os.path.exists(path):
        args = [sys.executable, os.path.join(ROOT, "tools/make-packs.py"), "--bench", path, "--files", str(assets), "--total-mb", str(mb)]
        subprocess.run(args + (["--variants"] if variants else []) + (["--drawn"] if drawn else []), check=True, capture_output=True)
    return path


def join(hoard, base, code, cache):
    start = time.time()
    out = subprocess.run([hoard, "join", base, code, "--cache", cache, "--name", "bench", "--json"], capture_output=True, text=True)
    elapsed = time.time() - start
    if out.returncode != 0:
        raise RuntimeError(f"hoard join failed: {out.stderr[-2000:]}")
    summary = json.loads(out.stdout)
    summary["wall"] = elapsed
    return summary




def maptool_style(port, token, digests):
    """One request per blob, 5 KiB Range chunks, strictly sequential, on one keep-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    start, total = time.time(), 0
    for digest in digests:
        offset = 0
        while True:
            conn.request("GET", "/v1/blobs/" + digest, headers={"Authorization": "Bearer " + token,
                                                                "Range": f"bytes={offset}-{offset + 5119}"})
            response = conn.getresponse()
            body = response.read()
            total += len(body)
            if response.status != 206 or len(body) < 5120:
                break
            offset += 5120
    return time.time() - start, total


def large_map(items, tokens=2000, side=512, textures=64, seed=22):
    """A hoard.map/v1 map of side x side tiles, each painted with one of `textures` asset digests at random (the worst
    case for the palette form: no two neighbours alike), and `tokens` tokens at random tiles."""
    rng = random.Random(seed)
    palette = [a["digest"] for a in items[:textures]]
    tiles = [{"x": x, "y": y, "texture": palette[rng.randrange(len(palette))]} for y in range(side) for x in range(side)]
    placed = [{"id": f"t{i}", "asset": items[i % len(items)]["digest"], "x": rng.randrange(side), "y": rng.randrange(side),
               "number": i % 1000} for i in range(tokens)]
    return {"schema": "hoard.map/v1", "name": "very large", "grid": {"width": side, "height": side},
            "background": {"tiles": tiles}, "drawing": {"walls": [], "strokes": []}, "objects": [], "tokens": placed}


def link_bench(hoard, data, port, base, pack_name, work, mbit=20.0, rtt_ms=40.0, runs=3):
    """Part 5: cold joins of the remote pack's map through a slow link, each into a fresh cache; medians of `runs`."""
    token = subprocess.run([hoard, "token", "create", "--group", "bench", "--name", "remote-gm", "--data-dir", data],
                           check=True, capture_output=True, text=True).stdout.strip()
    server = subprocess.Popen([hoard, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning", "--joins-per-session", "1000"])
    try:
        wait_healthy(base)
        items = call(base, "GET", f"/v1/assets?pack={pack_name}&limit=1000", token=token)["assets"]
        code = call(base, "POST", "/v1/sessions", {"name": "remote", "map": build_map(items, name="remote")}, token)["code"]
        manifest_assets = items
        previews = sum(a["preview"]["size"] for a in manifest_assets if a.get("preview"))
        at_1x = sum(v["size"] for a in manifest_assets for v in a["variants"] if v["scale"] == 1)
        everything = sum(v["size"] for a in manifest_assets for v in a["variants"])
        rate = mbit * 1e6 / 8
        results = []
        with SlowLink(port, mbit=mbit, rtt_ms=rtt_ms) as link:
            for run in range(runs):
                link.reset()
                results.append(join(hoard, f"http://127.0.0.1:{link.port}", code, os.path.join(work, f"cache-remote-{run}")))
                results[-1]["wire"] = link.down.bytes
        def median(key):
            return sorted(r.get(key) or 0 for r in results)[len(results) // 2]  # an older hoard has no firstRenderBytes
        first, first_bytes, playable, playable_bytes = (median("firstRenderSeconds"), median("firstRenderBytes"),
                                                        median("totalSeconds"), median("bytesFetched"))
        with_previews = sum(1 for a in manifest_assets if a.get("preview"))
        return [
            f"remote join over {mbit:.0f} Mbit/s, {rtt_ms:.0f} ms RTT, {len(items)} assets ({with_previews} with a preview), "
            f"median of {runs}: first render {first:.2f} s for {first_bytes / 1e3:.0f} kB (target < 0.5 s; the link alone "
            f"{first_bytes / rate:.2f} s), playable {playable:.2f} s for {playable_bytes / 1e6:.2f} MB (the link alone "
            f"{playable_bytes / rate:.2f} s); {median('wire') / 1e6:.2f} MB on the wire; before the sync, joining (two requests, "
            f"the manifest, the process's start) {median('wall') - median('totalSeconds'):.2f} s",
            f"  before previews were listed the first render needed every @1x variant: {at_1x / 1e6:.2f} MB, "
            f"{at_1x / rate:.2f} s on this link at best; every variant {everything / 1e6:.2f} MB, {everything / rate:.2f} s; "
            f"previews {previews / 1e3:.0f} kB",
        ]
    finally:
        server.terminate()
        server.wait(10)


def timed_get(port, path, token, times):
    """(seconds of each GET, bytes of the last answer) on one keep-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    seconds, size = [], 0
    for _ in range(times):
        start = time.perf_counter()
        conn.request("GET", path, headers={"Authorization": "Bearer " + token})
        response = conn.getresponse()
        body = response.read()
        seconds.append(time.perf_counter() - start)
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}: {body[:300]}")
        size = len(body)
    return seconds, size


def large_map_bench(hoard, base, port, token, items, work, participants):
    from live import gather_reports, op_message, start_listeners  # the live benchmark's participants, in worker processes
    import websockets

    game = large_map(items)
    v1 = json.dumps(game, separators=(",", ":")).encode()
    request = urllib.request.Request(base + "/v1/sessions", method="POST", data=json.dumps({"name": "large", "map": game}).encode(),
                                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=300) as response:
        made = json.loads(response.read())
    post_seconds = time.perf_counter() - start
    host_seconds, host_bytes = timed_get(port, f"/v1/sessions/{made['id']}", token, 1)
    host_view = call(base, "GET", f"/v1/sessions/{made['id']}", token=token)
    v2 = len(json.dumps(host_view["map"], separators=(",", ":")).encode())
    joined = [call(base, "POST", "/v1/sessions/join", {"code": made["code"], "name": f"p{i}"}) for i in range(participants)]
    player = joined[0]["participantToken"]
    first, _ = timed_get(port, f"/v1/sessions/{made['id']}", player, 1)
    again, answer_bytes = timed_get(port, f"/v1/sessions/{made['id']}", player, 30)
    again.sort()
    cold = join(hoard, base, made["code"], os.path.join(work, "cache-large"))

    # Participants continue from the state they fetched (as `hoard join` and the client library do): no snapshot.
    seq = call(base, "GET", f"/v1/sessions/{made['id']}", token=player)["seq"]
    url = f"ws://127.0.0.1:{port}/v1/sessions/{made['id']}/live"
    paints, workers_count = 20, 2
    seats = [(j["participantToken"], None) for j in joined]
    pipes, workers = start_listeners(f"{url}?since={seq}", seats, paints, 10, workers_count)

    async def host_paints():
        # Let the burst of "joined" presence events (N x N messages) drain before measuring.
        await asyncio.sleep(2 + participants / 40)
        async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + token}, ping_interval=None,
                                      max_size=1 << 26) as ws:
            await ws.recv()  # the host's own snapshot: they sit at the table before they paint
            start = time.time() + 0.2
            for pipe in pipes:
                pipe.send(start)
            for n in range(paints):
                await asyncio.sleep(max(0, start + n / 2 - time.time()))
                x, y = (n * 37) % 412, (n * 91) % 412
                texture = items[n % 64]["digest"]
                await ws.send(op_message({"kind": "paint", "rects": [[x, y, 100, 100]], "texture": texture}, "host", n))
    asyncio.run(host_paints())
    latencies, lost, errors = gather_reports(pipes, workers, 120)
    pct = lambda values, p: values[min(len(values) - 1, int(p * len(values)))] * 1000
    expected = paints * participants
    return [
        f"very large map, 512 x 512 tiles painted tile by tile from 64 textures, 2,000 tokens: hoard.map/v1 {len(v1) / 1e6:.1f} MB, "
        f"stored and answered as v2 {v2 / 1e6:.2f} MB; POST /v1/sessions {post_seconds:.2f} s; host's first GET "
        f"{host_seconds[0] * 1000:.0f} ms ({host_bytes / 1e6:.1f} MB)",
        f"  a participant's GET /v1/sessions/{{id}} ({answer_bytes / 1e6:.1f} MB with the manifest): first {first[0] * 1000:.0f} ms, "
        f"then p50 {pct(again, 0.5):.0f} ms, p99 {pct(again, 0.99):.0f} ms (target < 100 ms)",
        f"  cold join: {cold['wall']:.2f} s, {cold.get('bytesFetched', 0) / (1 << 20):.0f} MiB fetched "
        f"(first render {cold.get('firstRenderSeconds', 0):.2f} s)",
        f"  paint of 100 x 100 tiles to {participants} participants, {paints} times: {len(latencies)} deliveries (expected "
        f"{expected}), p50 {pct(latencies, 0.5):.1f} ms, p99 {pct(latencies, 0.99):.1f} ms, max {latencies[-1] * 1000:.1f} ms "
        f"(target p99 < 50 ms); lost or reordered {lost + expected - len(latencies)}, errors {errors}",
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hoard")
    parser.add_argument("--quick", action="store_true", help="smaller maps and 20 simultaneous joins, for a smoke run")
    parser.add_argument("--only", choices=["large-map", "link"], help="run only this part (the packs are still imported)")
    args = parser.parse_args()
    hoard = os.path.abspath(args.hoard)
    out_dir = os.path.join(ROOT, "Benchmarks/out")
    os.makedirs(out_dir, exist_ok=True)
    assets, mb, crowd, many = (100, 10, 20, 1000) if args.quick else (1000, 100, 200, 10000)
    work = tempfile.mkdtemp(prefix="hoard-join-bench.")
    data = os.path.join(work, "data")
    port, nginx_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    server = nginx = None
    try:
        # 460 assets whose @1x variants total 3.5 MB (what a first render needed before previews were listed: 1.4 s
        # on this link, as the issue measured), 42 MB with every variant.
        remote = pack(os.path.join(out_dir, "join-460x3-40mb-drawn.zip"), 460, 40, drawn=True)
        subprocess.run([hoard, "group", "create", "bench", "--data-dir", data], check=True, capture_output=True)
        done = subprocess.run([hoard, "import", remote, "--group", "bench", "--data-dir", data], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"hoard import {remote} exited {done.returncode}:\n{done.stdout[-4000:]}{done.stderr[-8000:]}")
        if args.only == "link":
            lines = link_bench(hoard, data, port, base, os.path.basename(remote)[:-4], work)
            print("\n".join(lines))
            return
        big = pack(os.path.join(out_dir, f"join-{assets}x3-{mb}mb.zip"), assets, mb)
        small = pack(os.path.join(out_dir, f"join-200x3-20mb.zip"), 200 if not args.quick else 40, 20 if not args.quick else 4)
        tiny = pack(os.path.join(out_dir, f"join-{many}x1-tiny.zip"), many, many * 300 / (1 << 20), variants=False)
        # Without generated previews and thumbnails: the joins then fetch exactly the files nginx serves, and the
        # 10,000 one-colour pictures of the tiny pack do not spend minutes in libvips first.
        for archive in (big, small, tiny):
            done = subprocess.run([hoard, "import", archive, "--group", "bench", "--data-dir", data, "--plugin", "hoard.generate-lods=off"],
                                  capture_output=True, text=True)
            if done.returncode != 0:  # keep what the import said (a crash's backtrace included)
                sys.exit(f"hoard import {archive} exited {done.returncode}:\n{done.stdout[-4000:]}{done.stderr[-8000:]}")
        token = subprocess.run([hoard, "token", "create", "--group", "bench", "--name", "gm", "--data-dir", data],
                               check=True, capture_output=True, text=True).stdout.strip()
        server = subprocess.Popen([hoard, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning", "--joins-per-session", "1000"])
        wait_healthy(base)

        def session_for(pack_name):
            listed = call(base, "GET", f"/v1/assets?pack={pack_name}&limit=1000", token=token)
            items, offset = listed["assets"], listed.get("nextOffset")
            while offset:
                page = call(base, "GET", f"/v1/assets?pack={pack_name}&limit=1000&offset={offset}", token=token)
                items += page["assets"]
                offset = page.get("nextOffset")
            made = call(base, "POST", "/v1/sessions", {"name": pack_name, "map": build_map(items, name=pack_name)}, token)
            return made["code"], drawn_blobs(items)

        if args.only == "large-map":
            listed = call(base, "GET", f"/v1/assets?pack={os.path.basename(big)[:-4]}&limit=1000", token=token)["assets"]
            lines = large_map_bench(hoard, base, port, token, listed, work, 20 if args.quick else 200)
            print("\n".join(lines))
            return
        big_code, big_blobs = session_for(os.path.basename(big)[:-4])
        small_code, _ = session_for(os.path.basename(small)[:-4])
        tiny_code, _ = session_for(os.path.basename(tiny)[:-4])

        # nginx serves the same blob files; curl fetches them 8-way parallel.
        os.makedirs(os.path.join(work, "nginx"))
        conf = os.path.join(work, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes 2; user {os.environ.get('USER', 'root')}; pid {work}/nginx.pid; error_log {work}/nginx/error.log warn;
events {{ worker_connections 1024; }}
http {{ access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  client_body_temp_path {work}/nginx; proxy_temp_path {work}/nginx; fastcgi_temp_path {work}/nginx; uwsgi_temp_path {work}/nginx; scgi_temp_path {work}/nginx;
  server {{ listen 127.0.0.1:{nginx_port}; location /sha256/ {{ root {data}/blobs/v1; }} }} }}
""")
        nginx = subprocess.run(["nginx", "-c", conf, "-p", os.path.join(work, "nginx")], check=True)
        urls = os.path.join(work, "urls.txt")
        with open(urls, "w") as f:
            for d in big_blobs:
                f.write(f"http://127.0.0.1:{nginx_port}/sha256/{d[7:9]}/{d[7:]}\n")
        fetched = os.path.join(work, "curl")
        os.makedirs(fetched)
        start = time.time()
        subprocess.run(f"xargs -P8 -n 40 curl -s --fail --remote-name-all --output-dir {fetched} < {urls}", shell=True, check=True)
        nginx_seconds = time.time() - start

        cold = join(hoard, base, big_code, os.path.join(work, "cache-big"))
        warm = join(hoard, base, big_code, os.path.join(work, "cache-big"))
        join(hoard, base, tiny_code, os.path.join(work, "cache-tiny"))
        warm_many = join(hoard, base, tiny_code, os.path.join(work, "cache-tiny"))
        maptool_seconds, maptool_bytes = maptool_style(port, token, big_blobs)

        start = time.time()
        crowd_run = subprocess.run(
            f"seq {crowd} | xargs -P{crowd} -I{{}} {hoard} join {base} {small_code} --cache {work}/crowd/{{}} --name p{{}} --json",
            shell=True, capture_output=True, text=True)
        crowd_seconds = time.time() - start
        crowd_ok = sum(1 for line in crowd_run.stdout.splitlines() if line.startswith("{"))
        if crowd_ok < crowd:
            print("failed joins said:", "\n".join(crowd_run.stderr.splitlines()[-10:]), file=sys.stderr)
        peak = peak_rss_mb(server.pid)
        large = large_map_bench(hoard, base, port, token, call(base, "GET", f"/v1/assets?pack={os.path.basename(big)[:-4]}&limit=1000",
                                                             token=token)["assets"], work, crowd)
        server.terminate()
        server.wait(10)
        server = None
        large += link_bench(hoard, data, port, base, os.path.basename(remote)[:-4], work)

        lines = [
            f"cold join, {assets} assets x 3 variants, at the default resolution (@1x, {cold.get('bytesFetched', 0) / (1 << 20):.1f} MiB): "
            f"hoard {cold['wall']:.2f} s "
            f"(first render {cold.get('firstRenderSeconds', 0):.2f} s = {100 * cold.get('firstRenderSeconds', 0) / cold['wall']:.0f}%), "
            f"nginx + curl -P8 {nginx_seconds:.2f} s, ratio {cold['wall'] / nginx_seconds:.2f}x (target <= 1.2x, first render <= 15%)",
            f"MapTool-style (sequential, 5 KiB chunks): {maptool_seconds:.2f} s for {maptool_bytes / (1 << 20):.0f} MiB "
            f"= {maptool_seconds / cold['wall']:.1f}x hoard",
            f"warm join, {assets} assets: {warm['wall'] * 1000:.0f} ms, {warm.get('requests')} requests; "
            f"warm join, {many} references: {warm_many['wall'] * 1000:.0f} ms, {warm_many.get('requests')} requests (target < 100 ms, <= 3)",
            f"{crowd} simultaneous cold joins of a ~20 MB map: {crowd_ok}/{crowd} succeeded in {crowd_seconds:.1f} s; "
            f"server peak RSS {peak:.0f} MB (target < 512 MB)",
        ] + large
        print("\n".join(lines))
        with open(os.path.join(out_dir, "join.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
    finally:
        if server:
            server.terminate()
            server.wait(10)
        if os.path.exists(os.path.join(work, "nginx.pid")):
            subprocess.run(["kill", open(os.path.join(work, "nginx.pid")).read().strip()])
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
