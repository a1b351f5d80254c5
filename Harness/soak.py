#!/usr/bin/env python3
"""Soak: mixed load on one `hoard serve` for a while, counting every error, every lost or reordered live event,
and sampling the server's memory.

Load, all at once, for --minutes (default 10):
  - blob GETs of the sample packs' pictures (bytes checked against the digest), --gets per second;
  - uploads: blob PUTs of fresh random bytes, about 2 a second (the server allows 600 uploads a minute per group),
    and a re-upload of a sample pack every 15 s (must answer 200 unchanged);
  - joins: a new participant joins the session every second and fetches it;
  - live: --participants participants on the session's WebSocket; the host sends --ops ops a second; every
    participant drops its connection at random (every --reconnect seconds on average) and reconnects with
    `since=<last seq>`. Each must see every sequence number exactly once and in order, and every op.
The server's RSS is sampled every 10 s; "flat" means the last third of the run averages at most 10 % (and 16 MiB)
above the middle third.

Usage: python3 Harness/soak.py HOARD_BINARY [--minutes 10] [--participants 200] [--ops 2] [--gets 50]
                                             [--reconnect 120] [--seed 1]
Needs: the websockets package (scripts/setup.sh --bench). Exit status 0 when there was no error, nothing was
lost or reordered and memory stayed flat.
"""
import asyncio, json, os, random, shutil, sys, tempfile, time

import websockets

from harnesslib import Interrupted, Server, admin_token, arguments, catalog_rows, cli, request, sha256, status_mb

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


class Figures:
    def __init__(self):
        self.counts = {}
        self.errors = []

    def count(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n

    def error(self, what):
        self.count("errors")
        if len(self.errors) < 30:
            self.errors.append(what)


async def http(figures, key, base, method, path, body=None, token=None, content_type="application/json", ok=(200, 201)):
    try:
        status, payload = await asyncio.to_thread(request, base, method, path, body, token, content_type)
    except Interrupted as error:
        figures.error(f"{method} {path}: {error}")
        return None
    if status not in ok:
        figures.error(f"{method} {path}: {status} {payload[:200]!r}")
        return None
    figures.count(key)
    return payload


async def getter(figures, base, token, digests, rate, until, rng):
    while time.time() < until:
        digest = rng.choice(digests)
        payload = await http(figures, "blob GETs", base, "GET", f"/v1/blobs/{digest}", token=token)
        if payload is not None and sha256(payload) != digest:
            figures.error(f"GET {digest}: the bytes do not match")
        await asyncio.sleep(1 / rate)


async def uploader(figures, base, token, until, rng):
    last_pack = 0.0
    archive = open(os.path.join(ROOT, "Packs", "scifi-outpost.zip"), "rb").read()
    while time.time() < until:
        blob = rng.randbytes(rng.randint(1, 64 << 10))
        await http(figures, "blob PUTs", base, "PUT", f"/v1/blobs/{sha256(blob)}", blob, token, "application/octet-stream")
        if time.time() - last_pack > 15:
            last_pack = time.time()
            payload = await http(figures, "pack re-uploads", base, "POST", "/v1/packs?name=scifi-outpost", archive, token, "application/zip")
            if payload is not None and json.loads(payload)["outcome"] != "unchanged":
                figures.error("re-uploading an unchanged pack did not answer unchanged")
        await asyncio.sleep(0.5)


async def joiner(figures, base, session, until):
    n = 0
    while time.time() < until:
        n += 1
        payload = await http(figures, "joins", base, "POST", "/v1/sessions/join", {"code": session["code"], "name": f"walk-in {n}"})
        if payload is not None:
            participant = json.loads(payload)["participantToken"]
            await http(figures, "session fetches", base, "GET", f"/v1/sessions/{session['id']}", token=participant)
        await asyncio.sleep(1)


class Participant:
    """One live client: reconnects at random with since=<last seq> and checks the sequence it sees."""

    def __init__(self, url, token, figures, rng, reconnect):
        self.url, self.token, self.figures, self.rng, self.reconnect = url, token, figures, rng, reconnect
        self.last_seq = None
        self.last_op = None
        self.ops = 0

    def see(self, message):
        seq = message.get("seq")
        if seq is None:
            if message.get("type") == "error":
                self.figures.error(f"live error: {message}")
            return
        if self.last_seq is not None and seq != self.last_seq + 1:
            self.figures.count("lost or reordered events")
            self.figures.error(f"expected seq {self.last_seq + 1}, got {seq} ({message.get('type')})")
        self.last_seq = seq
        if message.get("type") == "op":
            n = message["op"]["n"]
            if self.last_op is not None and n != self.last_op + 1:
                self.figures.count("lost or reordered events")
                self.figures.error(f"expected op {self.last_op + 1}, got {n}")
            self.last_op = n
            self.ops += 1

    async def run(self, ready, stop):
        while not stop.is_set():
            url = self.url + (f"?since={self.last_seq}" if self.last_seq is not None else "")
            try:
                async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + self.token},
                                              max_size=1 << 22, open_timeout=60) as ws:
                    if not ready.done():
                        ready.set_result(True)
                    self.figures.count("live connections")
                    hold = self.rng.expovariate(1 / self.reconnect)
                    deadline = time.time() + hold
                    while not stop.is_set() and time.time() < deadline:
                        try:
                            text = await asyncio.wait_for(ws.recv(), min(1.0, max(0.01, deadline - time.time())))
                        except asyncio.TimeoutError:
                            continue
                        self.see(json.loads(text))
            except websockets.exceptions.ConnectionClosed as closed:
                # The server closes a socket that missed a ping (10 s) or fell 2,048 messages behind: the
                # client reconnects with since=<last seq>, which the sequence checks then cover.
                if not stop.is_set():
                    self.figures.count(f"closed by the server ({closed.rcvd.reason if closed.rcvd else 'no close frame'})")
            except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError) as error:
                if not stop.is_set():
                    self.figures.error(f"live connection failed: {type(error).__name__}: {error}")
                    await asyncio.sleep(1)


class Host:
    """Sends ops numbered 0, 1, 2…. Ops are not acknowledged one by one: when the server closes the host's socket,
    the host reconnects with since=<last seq it saw>, reads the backlog to learn which ops the server logged, and
    goes on from the next one, so the log holds every number exactly once."""

    def __init__(self, url, token, rate, figures):
        self.url, self.token, self.rate, self.figures = url, token, rate, figures
        self.last_seq = None
        self.logged = -1  # the highest op number the server logged (seen back on the channel)

    async def drain(self, ws):
        try:
            async for text in ws:
                message = json.loads(text)
                if message.get("type") == "error":
                    self.figures.error(f"host got an error: {message}")
                if message.get("seq") is not None:
                    self.last_seq = message["seq"]
                if message.get("type") == "op":
                    self.logged = max(self.logged, message["op"]["n"])
        except websockets.exceptions.ConnectionClosed:
            pass

    async def run(self, until):
        n = 0
        while time.time() < until:
            url = self.url + (f"?since={self.last_seq}" if self.last_seq is not None else "")
            try:
                async with websockets.connect(url, additional_headers={"Authorization": "Bearer " + self.token}, open_timeout=60) as ws:
                    drain = asyncio.create_task(self.drain(ws))
                    if n:
                        await asyncio.sleep(3)  # the backlog tells which ops were logged before the socket closed
                        self.figures.count("host ops resent after a reconnect", n - 1 - self.logged)
                        n = self.logged + 1
                    while time.time() < until:
                        await asyncio.sleep(1 / self.rate)
                        await ws.send(json.dumps({"type": "op", "op": {"n": n, "t": time.time()}}))
                        n += 1
                    await asyncio.sleep(3)
                    drain.cancel()
            except websockets.exceptions.ConnectionClosed as closed:
                self.figures.count(f"host closed by the server ({closed.rcvd.reason if closed.rcvd else 'no close frame'})")
        return self.logged + 1


async def sampler(pid, samples, until):
    while time.time() < until:
        samples.append((time.time(), status_mb(pid, "VmRSS")))
        await asyncio.sleep(10)
    samples.append((time.time(), status_mb(pid, "VmRSS")))


async def soak(args, server, token, digests, figures):
    rng = random.Random(args.seed)
    base = server.base
    session = json.loads((await asyncio.to_thread(request, base, "POST", "/v1/sessions",
                                                   {"name": "soak", "map": {"art": digests[:20]}}, token))[1])
    url = f"ws://127.0.0.1:{server.port}/v1/sessions/{session['id']}/live"
    tokens = []
    for i in range(args.participants):
        payload = await http(figures, "joins", base, "POST", "/v1/sessions/join", {"code": session["code"], "name": f"p{i}"})
        tokens.append(json.loads(payload)["participantToken"])
    participants = [Participant(url, t, figures, random.Random(rng.getrandbits(32)), args.reconnect) for t in tokens]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    readies = [loop.create_future() for _ in participants]
    live = [asyncio.create_task(p.run(r, stop)) for p, r in zip(participants, readies)]
    await asyncio.wait_for(asyncio.gather(*readies), 120)
    started = time.time()
    until = started + args.minutes * 60
    samples = []
    load = [asyncio.create_task(getter(figures, base, token, digests, args.gets, until, random.Random(rng.getrandbits(32)))),
            asyncio.create_task(uploader(figures, base, token, until, random.Random(rng.getrandbits(32)))),
            asyncio.create_task(joiner(figures, base, session, until)),
            asyncio.create_task(sampler(server.process.pid, samples, until))]
    sent = await Host(url, token, args.ops, figures).run(until)
    await asyncio.gather(*load)
    # The last ops reach everyone, including participants that are reconnecting (60 s at most).
    for _ in range(120):
        if all(p.ops == sent for p in participants):
            break
        await asyncio.sleep(0.5)
    stop.set()
    await asyncio.gather(*live)
    short = [p for p in participants if p.ops != sent]
    figures.count("participants missing ops", len(short))
    for p in short[:5]:
        figures.error(f"a participant saw {p.ops} of {sent} ops")
    return sent, samples, time.time() - started


def main():
    parser = arguments(__doc__)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--participants", type=int, default=200)
    parser.add_argument("--ops", type=float, default=2, help="host ops per second")
    parser.add_argument("--gets", type=float, default=50, help="blob GETs per second")
    parser.add_argument("--reconnect", type=float, default=120, help="mean seconds a live connection stays up")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hoard-soak.")
    data = os.path.join(work, "data")
    server = Server(args.hoard, data)
    try:
        token = admin_token(args.hoard, data, group="soak")
        for pack in ("dungeon-basics.zip", "scifi-outpost.zip"):
            cli(args.hoard, data, "import", os.path.join(ROOT, "Packs", pack), "--group", "soak")
        digests = [row[0] for row in catalog_rows(data, "SELECT blobDigest FROM variant")]
        server.start()
        figures = Figures()
        sent, samples, seconds = asyncio.run(soak(args, server, token, digests, figures))
        server.stop()
        rss = [mb for _, mb in samples]
        third = max(1, len(rss) // 3)
        middle, last = rss[third:2 * third] or rss, rss[-third:]
        growth = sum(last) / len(last) - sum(middle) / len(middle)
        flat = growth <= max(16, 0.10 * sum(middle) / len(middle))
        c = figures.counts
        print(f"soak, {seconds / 60:.1f} min, {args.participants} live participants, seed {args.seed}:")
        print(f"  blob GETs {c.get('blob GETs', 0)}, blob PUTs {c.get('blob PUTs', 0)}, pack re-uploads {c.get('pack re-uploads', 0)},"
              f" joins {c.get('joins', 0)}, session fetches {c.get('session fetches', 0)}")
        print(f"  live: {sent} ops sent to {args.participants} participants, {c.get('live connections', 0)} connections"
              f" ({c.get('live connections', 0) - args.participants} reconnects), lost or reordered events:"
              f" {c.get('lost or reordered events', 0)}, participants missing ops: {c.get('participants missing ops', 0)}")
        print(f"  errors: {c.get('errors', 0)}")
        for key in sorted(k for k in c if "closed by the server" in k):
            print(f"  {key}: {c[key]} (the client reconnected with since=<last seq>)")
        print(f"  server RSS (MiB, every 10 s): {' '.join(f'{mb:.0f}' for mb in rss)}")
        print(f"  RSS last third vs middle third: {growth:+.1f} MiB ({'flat' if flat else 'GROWING'})")
        for error in figures.errors[:20]:
            print("  ERROR:", error)
        passed = not c.get("errors") and not c.get("lost or reordered events") and flat
        print("RESULT:", "PASS" if passed else "FAIL")
        return 0 if passed else 1
    finally:
        if server.process and server.process.poll() is None:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
