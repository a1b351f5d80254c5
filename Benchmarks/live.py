#!/usr/bin/env python3
"""The live table under load: N participants on one session, the host moving a token R times a second and M players
moving their own tokens once a second each, for D seconds; then a join of a session with J ops since its map was set.

Every op's opId carries its sender's send time; every participant records (receive time - send time) for every op
event. Prints p50/p99/max delivery latency, lost and reordered events (each participant checks its sequence numbers
are consecutive and counts the ops it got), the server's peak memory, and the join's time (POST join + GET session,
the answer checked to hold the last move). With --during-import, PACK is uploaded over HTTP into the same server a third
of the way in (issue 38's "table during an import"); with --queued, PACK is imported with `--later` before the server
starts, so its render workers make PACK's pictures all through the measurement (generation alone). With --roll FORMULA
the host rolls dice instead of moving a token (issue 41: each roll is drawn, logged and sent as a `rolled` event to
everyone). A server this script starts also serves /metrics on a port of its own: the server's own share of the
latency is printed from it (how long each event's catalog write took, `hoard_session_event_append_duration_seconds`,
over the measurement), so a tail can be told apart from the clients', and its CPU time per host op (a roll's cost
against a move's, which the machine's load does not blur as it does latency). Loopback only; bounded in time.
The participants are spread over --workers processes: one Python process decoding 10,000 WebSocket messages a
second saturates its core and measures its own queue instead of the server (p99 80-330 ms with one, on 2 cores).
Usage: python3 Benchmarks/live.py HOARD_BINARY [--participants 200] [--rate 50] [--movers 20] [--seconds 10]
                                               [--workers 2] [--join-ops 10000] [--during-import PACK]
                                               [--generation-off] [--queued PACK] [--roll 4d6kh3]
       python3 Benchmarks/live.py --servers URL,URL… --token TOKEN [options]
         against running replicas (scripts/cluster.sh): the host on the first, the participants spread over all
         (participant i on server i mod n); TOKEN hosts (a member or an operator). No memory figure.
Needs: pip install websockets
"""
import argparse, asyncio, contextlib, hashlib, json, multiprocessing, os, statistics, subprocess, sys, tempfile, time
import urllib.error, urllib.parse, urllib.request

import websockets

from benchlib import call, cpu_seconds, free_port, peak_rss_mb, stop, wait_healthy


def append_histogram(metrics, name="hoard_session_event_append_duration_seconds"):
    """The cumulative buckets of histogram `name` at `metrics` (a /metrics URL): {bound seconds: count}."""
    if not metrics:
        return None
    text = urllib.request.urlopen(metrics, timeout=10).read().decode()
    buckets = {}
    for line in text.splitlines():
        if line.startswith(name + "_bucket{"):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            buckets[float("inf") if bound == "+Inf" else float(bound)] = float(line.rsplit(" ", 1)[1])
    return buckets


def append_summary(before, after, what="event appends"):
    """The appends between two snapshots: how many, the bucket bounds of their median and p99, how many over 10 and
    50 ms."""
    if before is None or after is None:
        return ""
    bounds = sorted(after)
    counts = [after[b] - before.get(b, 0) for b in bounds]
    total = counts[-1] if counts else 0
    if not total:
        return f"server: no {what}"
    def quantile(q):
        return next((b for b, c in zip(bounds, counts) if c >= q * total), bounds[-1])
    over = lambda seconds: total - max((c for b, c in zip(bounds, counts) if b <= seconds), default=0)
    ms = lambda b: "inf" if b == float("inf") else f"{b * 1000:g}"
    return (f"server: {total:.0f} {what}, p50 <= {ms(quantile(0.5))} ms, p99 <= {ms(quantile(0.99))} ms, "
            f"{over(0.010):.0f} over 10 ms, {over(0.050):.0f} over 50 ms")


def op_message(kind_fields, sender, n):
    """An op whose opId names its sender, its number and its send time."""
    return json.dumps({"type": "op", "opId": f"{sender}.{n}.{time.time():.6f}", "op": kind_fields})


async def participant(url, token, expected, latencies, problems, ready, mover):
    async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + token}, max_size=1 << 22,
                                  open_timeout=30, ping_interval=None) as ws:
        ready.set_result(True) if not ready.done() else None
        if mover is not None:
            mover["ws"] = ws
        last_seq, ops = None, 0
        while ops < expected:
            message = json.loads(await asyncio.wait_for(ws.recv(), 60))
            seq = message.get("seq")
            if message.get("type") == "snapshot":
                last_seq = seq
                continue
            if seq is not None:
                if last_seq is not None and seq != last_seq + 1:
                    problems["reordered_or_lost"] += 1
                last_seq = seq
            if message.get("type") == "error":
                problems["errors"] += 1
            if message.get("type") in ("op", "rolled"):
                latencies.append(time.time() - float(message["opId"].split(".", 2)[2]))
                ops += 1


async def move_own_token(mover, token_id, seconds, start):
    """A player moving their own token once a second, at their own moment in the second (players are not in step:
    twenty moves in the same millisecond would measure a burst no table makes)."""
    phase = (int(token_id[1:]) * 0.618034) % 1.0
    for n in range(int(seconds)):
        await asyncio.sleep(max(0, start + n + phase - time.time()))
        await mover["ws"].send(op_message({"kind": "move", "token": token_id, "x": n % 20, "y": 1}, token_id, n))


def listen(seats, expected, seconds, pipe):
    """A worker process: its share of the participants (token, own token id or None, live URL), reporting when done."""
    async def go():
        latencies, problems = [], {"reordered_or_lost": 0, "errors": 0}
        loop = asyncio.get_running_loop()
        readies = [loop.create_future() for _ in seats]
        movers = [{} if own else None for _, own, _ in seats]
        tasks = [asyncio.create_task(participant(url, token, expected, latencies, problems, ready, mover))
                 for (token, _, url), ready, mover in zip(seats, readies, movers)]
        await asyncio.wait_for(asyncio.gather(*readies), 60)
        pipe.send("ready")
        # Waited for off the event loop: the participants keep reading (the joins' presence events) meanwhile.
        start = await loop.run_in_executor(None, pipe.recv)
        moving = [asyncio.create_task(move_own_token(mover, own, seconds, start))
                  for (_, own, _), mover in zip(seats, movers) if own]
        await asyncio.wait_for(asyncio.gather(*tasks, *moving), seconds + 80)
        pipe.send((latencies, problems["reordered_or_lost"], problems["errors"]))
    asyncio.run(go())


def start_listeners(seats, expected, seconds, count):
    """`count` worker processes, each listening for its share of the seats; returns their pipes and processes once
    every participant is connected."""
    pipes, workers = [], []
    for index in range(count):
        ours, theirs = multiprocessing.Pipe()
        worker = multiprocessing.Process(target=listen, args=(seats[index::count], expected, seconds, theirs))
        worker.start()
        pipes.append(ours)
        workers.append(worker)
    for pipe in pipes:
        if not pipe.poll(180) or pipe.recv() != "ready":
            sys.exit("a worker's participants did not connect")
    return pipes, workers


def gather_reports(pipes, workers, timeout):
    """Every worker's latencies, lost or reordered events and errors, summed."""
    latencies, lost, errors = [], 0, 0
    for pipe in pipes:
        if not pipe.poll(timeout):
            sys.exit("a worker did not report")
        theirs, their_lost, their_errors = pipe.recv()
        latencies += theirs
        lost += their_lost
        errors += their_errors
    for worker in workers:
        worker.join(10)
    return sorted(latencies), lost, errors


def table_map(art, tokens):
    return {"schema": "hoard.map/v1", "grid": {"width": 20, "height": 20}, "background": {"tiles": []},
            "drawing": {"walls": [], "strokes": []}, "objects": [],
            "tokens": [dict({"id": tid, "asset": art, "x": 0, "y": 0, "number": i}, **({"owner": owner} if owner else {}))
                       for i, (tid, owner) in enumerate(tokens)]}


def put_art(base, host):
    """One picture-sized blob the maps reference."""
    body = b"\x89PNG\r\n\x1a\n" + os.urandom(200)
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    request = urllib.request.Request(f"{base}/v1/blobs/{digest}", method="PUT", data=body,
                                     headers={"Authorization": "Bearer " + host, "Content-Type": "application/octet-stream"})
    urllib.request.urlopen(request, timeout=30).read()
    return digest


async def fan_out(args, bases, host, art):
    base = bases[0]
    session = call(base, "POST", "/v1/sessions", {"name": "bench", "map": table_map(art, [("h", None)])}, host)
    joined = [call(bases[i % len(bases)], "POST", "/v1/sessions/join", {"code": session["code"], "name": f"p{i}"})
              for i in range(args.participants)]
    movers = {j["participantId"]: f"t{i}" for i, j in enumerate(joined[:args.movers])}
    call(base, "PUT", f"/v1/sessions/{session['id']}/map",
         table_map(art, [("h", None)] + [(tid, pid) for pid, tid in movers.items()]), host)
    live = lambda base: base.replace("http://", "ws://") + f"/v1/sessions/{session['id']}/live"
    seats = [(j["participantToken"], movers.get(j["participantId"]), live(bases[i % len(bases)])) for i, j in enumerate(joined)]
    host_ops = int(args.rate * args.seconds)
    expected = host_ops + args.movers * int(args.seconds)
    pipes, workers = start_listeners(seats, expected, args.seconds, args.workers)
    # Let the burst of "joined" presence events (N x N messages) drain before measuring.
    await asyncio.sleep(2 + args.participants / 40)
    async with websockets.connect(live(base), additional_headers={"Authorization": "Bearer " + host}, ping_interval=None,
                                  max_size=1 << 24) as ws:
        # The host reads its own echoes all along, as a real client does: a socket that is not read falls behind and
        # the server rightly drops it (before this, a run longer than about 19 s failed so).
        echoes = 0

        async def read_echoes():
            nonlocal echoes
            async for _ in ws:
                echoes += 1
        reader = asyncio.create_task(read_echoes())
        start = time.time() + 0.2
        appends_before = append_histogram(args.metrics)
        ops_before = append_histogram(args.metrics, "hoard_live_op_duration_seconds")
        # The server's CPU time over the measurement: what each op costs it, whatever the machine's load does to the
        # latency (a roll against a move, issue 41).
        cpu_before = cpu_seconds(args.server_pid) if args.server_pid else None
        for pipe in pipes:
            pipe.send(start)
        upload = None
        for n in range(host_ops):
            if args.during_import and upload is None and time.time() >= start + args.seconds / 3:
                upload = asyncio.create_task(asyncio.to_thread(upload_pack, base, host, args.during_import))
            await asyncio.sleep(max(0, start + n / args.rate - time.time()))
            fields = {"kind": "roll", "formula": args.roll} if args.roll else {"kind": "move", "token": "h", "x": n % 20, "y": 0}
            await ws.send(op_message(fields, "h", n))
        latencies, lost, errors = await asyncio.to_thread(gather_reports, pipes, workers, args.seconds + 90)
        cpu = cpu_seconds(args.server_pid) - cpu_before if cpu_before is not None else None
        appends = append_summary(appends_before, append_histogram(args.metrics))
        if args.metrics:
            appends += "\n  " + append_summary(ops_before, append_histogram(args.metrics, "hoard_live_op_duration_seconds"),
                                              "ops from message to every socket's queue")
        reader.cancel()
        imported = await upload if upload else None
    count = len(latencies)
    pct = lambda p: latencies[min(count - 1, int(p * count))] * 1000
    total = expected * args.participants
    during = f" (an upload of {os.path.basename(args.during_import)} from {args.seconds / 3:.0f} s: {imported})" \
        if args.during_import else ""
    what = f"rolling {args.roll}" if args.roll else "moving"
    print(f"{args.participants} participants, host {what} at {args.rate:g} ops/s and {args.movers} players at 1 op/s for "
          f"{args.seconds:g} s{during}: {count} deliveries (expected {total}); latency p50 {pct(0.5):.1f} ms, "
          f"p99 {pct(0.99):.1f} ms, max {latencies[-1] * 1000:.1f} ms; lost or reordered: {lost + total - count}; "
          f"errors: {errors}; host echoes read: {echoes}" + (f"\n  {appends}" if appends else "")
          + (f"\n  server CPU {cpu:.2f} s over the measurement: {cpu * 1000 / max(host_ops, 1):.2f} ms per host op"
             f" ({host_ops} ops, {args.participants} recipients each)" if cpu is not None else ""))
    return count == total and lost == 0 and errors == 0 and (not args.during_import or imported.startswith("20"))


def upload_pack(base, token, path):
    """POST /v1/packs with the archive streamed from disk; gives the status and the seconds it took."""
    started = time.time()
    with open(path, "rb") as body:
        request = urllib.request.Request(
            base + "/v1/packs?name=" + urllib.parse.quote(f"during-{int(started)}"), data=body, method="POST",
            headers={"Authorization": "Bearer " + token, "Content-Type": "application/zip",
                     "Content-Length": str(os.path.getsize(path))})
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                status = response.status
        except urllib.error.HTTPError as error:
            status = error.code
    return f"{status} in {time.time() - started:.1f} s"


async def join_after_ops(args, base, host, art):
    """A session whose map was set J ops ago: how long a join takes (snapshot, not replay). The ops are 20 players
    moving their own tokens, within the server's rates: per participant a burst of 100 then 50 a second, per session
    a burst of 1,000 then 500 a second (so 40 each at once, then 20 a second each)."""
    movers = 20
    session = call(base, "POST", "/v1/sessions", {"name": "long game", "map": table_map(art, [("h", None)])}, host)
    players = [call(base, "POST", "/v1/sessions/join", {"code": session["code"], "name": f"m{i}"}) for i in range(movers)]
    call(base, "PUT", f"/v1/sessions/{session['id']}/map",
         table_map(art, [("h", None)] + [(f"t{i}", p["participantId"]) for i, p in enumerate(players)]), host)
    url = base.replace("http://", "ws://") + f"/v1/sessions/{session['id']}/live"
    per_player = args.join_ops // movers

    async def send(index, token):
        async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + token}, ping_interval=None,
                                      max_size=1 << 24) as ws:
            done = asyncio.Event()

            async def read():  # reads all along: a player who only sends falls behind everyone's moves and is dropped
                async for raw in ws:
                    message = json.loads(raw)
                    if message.get("type") == "ping" and message.get("opId", "").startswith(f"done{index}."):
                        done.set()
            reader = asyncio.create_task(read())
            start = time.time()
            for n in range(per_player):
                if n >= 40:
                    await asyncio.sleep(max(0, start + (n - 40) / 20 - time.time()))
                await ws.send(op_message({"kind": "move", "token": f"t{index}", "x": n % 20, "y": index % 20}, f"s{index}", n))
            await ws.send(op_message({"kind": "ping", "x": 1, "y": 1}, f"done{index}", 0))
            await asyncio.wait_for(done.wait(), 60)  # this player's ping, sent after their last op, came back
            reader.cancel()
    begun = time.time()
    await asyncio.gather(*(send(i, p["participantToken"]) for i, p in enumerate(players)))
    sent = movers * per_player
    final = call(base, "GET", f"/v1/sessions/{session['id']}", None, host)
    expected = {t["id"]: (t["x"], t["y"]) for t in final["map"]["tokens"]}
    times = []
    for i in range(20):
        t0 = time.time()
        joined = call(base, "POST", "/v1/sessions/join", {"code": session["code"], "name": f"late{i}"})
        shown = call(base, "GET", f"/v1/sessions/{session['id']}", None, joined["participantToken"])
        times.append((time.time() - t0) * 1000)
        if {t["id"]: (t["x"], t["y"]) for t in shown["map"]["tokens"]} != expected or shown["seq"] < sent:
            sys.exit(f"a late joiner did not see the current table: seq {shown['seq']}, {sent} ops sent")
    times.sort()
    print(f"join after {sent} ops (sent in {time.time() - begun:.1f} s): join + GET p50 {statistics.median(times):.1f} ms, "
          f"max {times[-1]:.1f} ms over 20 joins; seq {final['seq']}")
    return times[len(times) // 2] < 100


async def measure(args, bases, host):
    art = put_art(bases[0], host)
    ok = True
    if args.participants:
        ok &= await fan_out(args, bases, host, art)
    if args.join_ops:
        ok &= await join_after_ops(args, bases[0], host, art)
    return ok


@contextlib.contextmanager
def table_server(hoard, serve_options=(), queued=None):
    """`hoard serve` on a fresh data directory with a group and its host's token, /metrics on a port of its own (and
    `queued` imported with --later before it starts); yields (base URL, host token, metrics URL, process), then stops
    it and removes the directory."""
    work = tempfile.mkdtemp(prefix="hoard-live-bench.")
    port, metrics_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    data = os.path.join(work, "data")
    server = None
    try:
        subprocess.run([hoard, "group", "create", "bench", "--data-dir", data], check=True, capture_output=True)
        host = subprocess.run([hoard, "token", "create", "--group", "bench", "--name", "gm", "--data-dir", data],
                              check=True, capture_output=True, text=True).stdout.strip()
        if queued:
            # Queued, not made: the server's render workers make its pictures all through the measurement.
            subprocess.run([hoard, "import", queued, "--later", "--group", "bench", "--data-dir", data], check=True,
                           capture_output=True)
        server = subprocess.Popen([hoard, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning",
                                   "--joins-per-session", "1000", "--metrics-address", f"127.0.0.1:{metrics_port}",
                                   *serve_options])
        wait_healthy(base)
        yield base, host, f"http://127.0.0.1:{metrics_port}/metrics", server
    finally:
        stop(server, work)


async def run(args):
    if args.servers:
        return 0 if await measure(args, args.servers.split(","), args.token) else 1
    generation = ["--plugin", "hoard.generate-lods=off"] if args.generation_off else []
    with table_server(args.hoard, generation, args.queued) as (base, host, args.metrics, server):
        args.server_pid = server.pid
        ok = await measure(args, [base], host)
        if args.queued:
            progress = [p.get("renditions") for p in call(base, "GET", "/v1/packs", None, host)["packs"]]
            print(f"queued pictures at the end (render workers): {progress}")
        print(f"server peak RSS {peak_rss_mb(server.pid):.0f} MB")
        return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hoard", nargs="?", help="the binary to start a server of (not with --servers)")
    parser.add_argument("--servers", help="running servers' URLs, comma-separated, instead of starting one")
    parser.add_argument("--token", help="with --servers: the host's token")
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--rate", type=float, default=50, help="the host's ops a second")
    parser.add_argument("--movers", type=int, default=20, help="players moving their own token once a second")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--workers", type=int, default=2, help="processes the participants are spread over")
    parser.add_argument("--join-ops", type=int, default=10000, help="ops before the late join (0: skip)")
    parser.add_argument("--roll", metavar="FORMULA", help="the host rolls FORMULA (a `roll` op) instead of moving a token")
    parser.add_argument("--during-import", metavar="PACK",
                        help="upload PACK over HTTP into the same server a third of the way into the measurement")
    parser.add_argument("--queued", metavar="PACK",
                        help="import PACK with --later before the server starts: its render workers make the pictures meanwhile")
    parser.add_argument("--generation-off", action="store_true",
                        help="start the server with --plugin hoard.generate-lods=off (an import then queues no pictures)")
    args = parser.parse_args()
    args.metrics = None
    args.server_pid = None
    if bool(args.hoard) == bool(args.servers) or bool(args.servers) != bool(args.token):
        parser.error("give HOARD_BINARY, or --servers with --token")
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
