#!/usr/bin/env python3
"""The live table with line of sight on: PARTICIPANTS players, each owning a token with sight, each moving it once a
second (at their own moment in the second) to a random tile of its room, on a map of rooms whose walls have open
doorways and closed doors. Every move makes the server decide again what its viewers see: the mover gets a `view` op
(the difference: what came into and went out of sight, newly explored floor) carrying their op id, and the players
whose tokens see the moving token get the move.

Every op's opId carries its send time; each participant measures the delay of every event that carries one (its own
moves' `view` ops and the moves of tokens it sees). Nothing lost means every participant got the answer to each of its
own moves, with sequence numbers only ever rising, and no error. Prints p50/p99/max delivery latency, the server's
share from its /metrics histograms (an op from its message to every socket's queue), and its peak memory. Loopback
only; bounded in time. The participants are spread over --workers processes (one Python process decoding thousands of
messages a second measures its own queue, not the server's).

Usage: python3 Benchmarks/vision.py HOARD_BINARY [--participants 200] [--seconds 20] [--room 8] [--range 8] [--workers 2]
Needs: pip install websockets
"""
import argparse, asyncio, json, multiprocessing, os, random, sys, time

import websockets

from benchlib import call, peak_rss_mb
from live import append_histogram, append_summary, op_message, put_art, table_server


def rooms_map(art, side, room, owners, sight_range, rng):
    """A side × side map cut into room × room rooms: each wall has an open doorway (two tiles) and every third a closed
    door instead; token i (owned by owners[i]) starts at a random tile of room i mod (rooms)."""
    walls, n = [], 0
    per_side = side // room
    def wall(a, b, **extra):
        nonlocal n
        n += 1
        walls.append(dict({"id": f"w{n}", "from": list(a), "to": list(b)}, **extra))
    for line in range(0, side + 1, room):
        for r in range(per_side):
            start, gap = r * room, r * room + room // 2 - 1
            outer = line in (0, side)
            closed = not outer and (line // room + r) % 3 == 0
            for vertical in (True, False):
                corner = (lambda u: (line, u)) if vertical else (lambda u: (u, line))
                if outer:
                    wall(corner(start), corner(start + room))
                    continue
                wall(corner(start), corner(gap))
                if closed:
                    wall(corner(gap), corner(gap + 2), door=True)
                wall(corner(gap + 2), corner(start + room))
    tokens = []
    for i, owner in enumerate(owners):
        rx, ry = (i % (per_side * per_side)) % per_side, (i % (per_side * per_side)) // per_side
        tokens.append({"id": f"t{i}", "asset": art, "x": rx * room + rng.randrange(room), "y": ry * room + rng.randrange(room),
                       "number": i + 1, "owner": owner, "sight": {"range": sight_range}})
    return {"schema": "hoard.map/v1", "grid": {"width": side, "height": side}, "background": {"tiles": []},
            "drawing": {"walls": walls, "strokes": []}, "objects": [], "tokens": tokens, "vision": {"enabled": True}}


async def seat(url, token, own, room_origin, room, seconds, start, rng, report):
    """One player: reads everything, and from `start` moves its token once a second within its room."""
    latencies, answered, errors, disorder = [], 0, 0, 0
    async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + token}, max_size=1 << 24,
                                  open_timeout=60, ping_interval=None) as ws:
        async def move():
            phase = (int(own[1:]) * 0.618034) % 1.0
            for n in range(int(seconds)):
                await asyncio.sleep(max(0, start + n + phase - time.time()))
                x, y = room_origin[0] + rng.randrange(room), room_origin[1] + rng.randrange(room)
                await ws.send(op_message({"kind": "move", "token": own, "x": x, "y": y}, own, n))
        mover = asyncio.create_task(move())
        deadline, last_seq = start + seconds + 20, None
        while time.time() < deadline and not (mover.done() and answered >= int(seconds)):
            try:
                message = json.loads(await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.time())))
            except asyncio.TimeoutError:
                break
            seq = message.get("seq")
            if seq is not None and message.get("type") != "snapshot":
                if last_seq is not None and seq <= last_seq:
                    disorder += 1
                last_seq = seq
            elif message.get("type") == "snapshot":
                last_seq = seq
            if message.get("type") == "error":
                errors += 1
            op_id = message.get("opId")
            if message.get("type") == "op" and op_id and op_id.count(".") >= 2 and time.time() >= start:
                latencies.append(time.time() - float(op_id.split(".", 2)[2]))
                if op_id.startswith(own + "."):
                    answered += 1
        mover.cancel()
    report.append((latencies, answered, errors, disorder))


def listen(seats, seconds, room, pipe):
    """A worker process: its share of the seats (token, own token id, room origin, URL)."""
    async def go():
        report = []
        rng = random.Random(os.getpid())
        start = pipe.recv()
        await asyncio.gather(*(seat(url, token, own, origin, room, seconds, start, rng, report)
                               for token, own, origin, url in seats))
        pipe.send(report)
    asyncio.run(go())


async def bench(args, base, host):
    rng = random.Random(args.seed)
    art = put_art(base, host)
    session = call(base, "POST", "/v1/sessions", {"name": "vision bench", "map": rooms_map(art, args.side, args.room, [], 0, rng)}, host)
    joined = [call(base, "POST", "/v1/sessions/join", {"code": session["code"], "name": f"p{i}"}) for i in range(args.participants)]
    owners = [j["participantId"] for j in joined]
    table = rooms_map(art, args.side, args.room, owners, args.range, rng)
    call(base, "PUT", f"/v1/sessions/{session['id']}/map", table, host)
    live = base.replace("http://", "ws://") + f"/v1/sessions/{session['id']}/live"
    seats = [(j["participantToken"], t["id"], (t["x"] - t["x"] % args.room, t["y"] - t["y"] % args.room), live)
             for j, t in zip(joined, table["tokens"])]
    start = time.time() + 5 + args.participants / 40   # the sockets connect and the joins' presence events drain first
    pipes, workers = [], []
    for index in range(args.workers):
        ours, theirs = multiprocessing.Pipe()
        worker = multiprocessing.Process(target=listen, args=(seats[index::args.workers], args.seconds, args.room, theirs))
        worker.start()
        ours.send(start)
        pipes.append(ours)
        workers.append(worker)
    await asyncio.sleep(max(0, start - time.time()))
    ops_before = append_histogram(args.metrics, "hoard_live_op_duration_seconds")
    latencies, answered, errors, disorder = [], 0, 0, 0
    for pipe in pipes:
        if not pipe.poll(args.seconds + 120):
            sys.exit("a worker did not report")
        for theirs, their_answered, their_errors, their_disorder in pipe.recv():
            latencies += theirs
            answered += their_answered
            errors += their_errors
            disorder += their_disorder
    for worker in workers:
        worker.join(10)
    server_ops = append_summary(ops_before, append_histogram(args.metrics, "hoard_live_op_duration_seconds"),
                                "ops from message to every socket's queue")
    latencies.sort()
    count = len(latencies)
    pct = lambda p: latencies[min(count - 1, int(p * count))] * 1000
    expected = args.participants * int(args.seconds)
    walls = len(table["drawing"]["walls"])
    print(f"{args.participants} players with sight {args.range} on a {args.side}x{args.side} map of {args.room}x{args.room} rooms "
          f"({walls} walls and doors), each moving once a second for {args.seconds:g} s: {count} deliveries; latency "
          f"p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, max {latencies[-1] * 1000:.1f} ms; own moves answered "
          f"{answered} of {expected}; out of order {disorder}; errors {errors}\n  {server_ops}")
    return answered == expected and errors == 0 and disorder == 0


async def run(args):
    with table_server(args.hoard) as (base, host, args.metrics, server):
        ok = await bench(args, base, host)
        print(f"server peak RSS {peak_rss_mb(server.pid):.0f} MB")
        return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hoard", help="the binary to start a server of")
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--side", type=int, default=64, help="the map's width and height in tiles")
    parser.add_argument("--room", type=int, default=8, help="a room's side in tiles")
    parser.add_argument("--range", type=int, default=8, help="each token's sight range in tiles")
    parser.add_argument("--workers", type=int, default=2, help="processes the participants are spread over")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
