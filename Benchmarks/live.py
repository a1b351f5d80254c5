#!/usr/bin/env python3
"""Live-channel fan-out latency: N participants on one session, the host sending R ops/s for D seconds.

Each op carries the host's send time; every participant records (receive time - send time). Prints p50/p99/max
delivery latency, lost and reordered events, and the server's peak memory. Loopback only; bounded in time.
The participants are spread over --workers processes: one Python process decoding 10,000 WebSocket messages a
second saturates its core and measures its own queue instead of the server (p99 80-330 ms with one, on 2 cores).
Usage: python3 Benchmarks/live.py HOARD_BINARY [--participants 200] [--rate 50] [--seconds 10] [--workers 2]
Needs: pip install websockets
"""
import argparse, asyncio, json, multiprocessing, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

import websockets

from benchlib import call, free_port, peak_rss_mb, wait_healthy








async def participant(url, token, expected, latencies, problems, ready):
    async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + token}, max_size=1 << 22,
                                  open_timeout=30, ping_interval=None) as ws:
        ready.set_result(True) if not ready.done() else None
        last_seq, ops = 0, 0
        while ops < expected:
            message = json.loads(await asyncio.wait_for(ws.recv(), 30))
            seq = message.get("seq")
            if seq is not None:
                if last_seq and seq != last_seq + 1:
                    problems["reordered_or_lost"] += 1
                last_seq = seq
            if message.get("type") == "op":
                latencies.append(time.time() - message["op"]["t"])
                ops += 1


def listen(url, tokens, expected, seconds, pipe):
    """A worker process: its share of the participants, reporting (latencies, lost or reordered) when done."""
    async def go():
        latencies, problems = [], {"reordered_or_lost": 0}
        loop = asyncio.get_running_loop()
        readies = [loop.create_future() for _ in tokens]
        tasks = [asyncio.create_task(participant(url, t, expected, latencies, problems, r)) for t, r in zip(tokens, readies)]
        await asyncio.wait_for(asyncio.gather(*readies), 60)
        pipe.send("ready")
        await asyncio.wait_for(asyncio.gather(*tasks), seconds + 80)
        pipe.send((latencies, problems["reordered_or_lost"]))
    asyncio.run(go())


async def run(args):
    work = tempfile.mkdtemp(prefix="hoard-live-bench.")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data = os.path.join(work, "data")
    try:
        subprocess.run([args.hoard, "group", "create", "bench", "--data-dir", data], check=True, capture_output=True)
        host = subprocess.run([args.hoard, "token", "create", "--group", "bench", "--name", "gm", "--data-dir", data],
                              check=True, capture_output=True, text=True).stdout.strip()
        server = subprocess.Popen([args.hoard, "serve", "--data-dir", data, "--port", str(port), "--log-level", "warning"])
        wait_healthy(base)
        session = call(base, "POST", "/v1/sessions", {"name": "bench", "map": {"grid": [20, 20]}}, host)
        tokens = [call(base, "POST", "/v1/sessions/join", {"code": session["code"], "name": f"p{i}"})["participantToken"]
                  for i in range(args.participants)]
        url = f"ws://127.0.0.1:{port}/v1/sessions/{session['id']}/live"
        expected = int(args.rate * args.seconds)
        pipes, workers = [], []
        for index in range(args.workers):
            ours, theirs = multiprocessing.Pipe()
            worker = multiprocessing.Process(target=listen, args=(url, tokens[index::args.workers], expected, args.seconds, theirs))
            worker.start()
            pipes.append(ours)
            workers.append(worker)
        for pipe in pipes:
            if not pipe.poll(90) or pipe.recv() != "ready":
                sys.exit("a worker's participants did not connect")
        # Let the burst of 200 "joined" presence events (200 x 200 messages) drain before measuring.
        await asyncio.sleep(2 + args.participants / 40)
        async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + host}, ping_interval=None) as ws:
            start = time.time()
            for n in range(expected):
                await asyncio.sleep(max(0, start + n / args.rate - time.time()))
                await ws.send(json.dumps({"type": "op", "op": {"n": n, "t": time.time()}}))
            latencies, problems = [], {"reordered_or_lost": 0}
            for pipe in pipes:
                if not pipe.poll(args.seconds + 90):
                    sys.exit("a worker did not report")
                theirs, lost = pipe.recv()
                latencies += theirs
                problems["reordered_or_lost"] += lost
            for worker in workers:
                worker.join(10)
        peak = peak_rss_mb(server.pid)
        server.terminate()
        server.wait(10)
        latencies.sort()
        count = len(latencies)
        pct = lambda p: latencies[min(count - 1, int(p * count))] * 1000
        print(f"{args.participants} participants, host at {args.rate} ops/s for {args.seconds} s: {count} deliveries "
              f"(expected {expected * args.participants}); latency p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, "
              f"max {latencies[-1] * 1000:.1f} ms; lost or reordered: {problems['reordered_or_lost'] + expected * args.participants - count}; "
              f"server peak RSS {peak:.0f} MB")
        return 0 if count == expected * args.participants else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hoard")
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--rate", type=float, default=50)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--workers", type=int, default=2, help="processes the participants are spread over")
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
