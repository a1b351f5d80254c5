#!/usr/bin/env python3
"""Several replicas, any one answers (issue 19): a real cluster on loopback, started by scripts/cluster.sh
(PostgreSQL, OpenStack Swift's S3 API, two `hoard serve` replicas A and B over them, nginx in front), then each
promise checked by name:

  blob-across     a blob PUT through replica A is read through B at once (its port directly), and through nginx
  pack-across     a pack uploaded through A is listed by B, and B serves its manifest, descriptors and pictures
  join-across     a player who joined a session made through A, joining through B, is known to A at once: A serves
                  them the session and its art (a balancer sends their next request anywhere)
  live-across     500 ops from a host connected to A reach a player connected to B in order, no gap, no repeat
  grab-across     players on A and B grab one entity at the same moment: exactly one winner, both see the same
  wrong-secret    a replica started with a wrong S3 secret stops at once with an error naming the secret
  s3-down         the S3 service stopped: a blob PUT answers 503 STORAGE_UNAVAILABLE and records nothing; PUTs work
                  again once it is back
  postgres-down   PostgreSQL stopped: a request that needs the catalog answers 503 CATALOG_UNAVAILABLE (never a hang),
                  the replica stays up; it works again once PostgreSQL is back (skipped with --sqlite)
  kill-replica    kill -9 of replica A during blob uploads and live play through nginx: every upload answered 201 is
                  readable through B, an interrupted one is whole or absent; the host and the player reconnect through
                  nginx (to B) with since=<last seq> and lose nothing: every op once, in order, no gap; a grab held
                  through A by a player who does not come back is released once A's lease on it ends (B releases it),
                  and that player leaves (once)

Usage: python3 Harness/cluster.py HOARD_BINARY [CHECK ...] [--sqlite] [--keep] [--cluster DIR]
  --sqlite       one shared SQLite catalog file instead of PostgreSQL (live-across and postgres-down are skipped)
  --keep         leave the cluster running at the end
  --cluster DIR  check the cluster `scripts/cluster.sh up DIR` started instead of starting one (left running)
Exit status 0 when every check passes. About a minute and a half, the cluster's start included. Standard library only.
"""
import json, os, random, shutil, signal, subprocess, sys, tempfile, threading, time

from harnesslib import WS, Interrupted, arguments, free_port, make_pack, request, sha256

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CHECKS = ["blob-across", "pack-across", "join-across", "live-across", "grab-across", "wrong-secret", "s3-down", "postgres-down",
          "kill-replica"]


class Cluster:
    """What scripts/cluster.sh started, read from DIR/cluster.env."""

    def __init__(self, hoard, directory, sqlite):
        self.hoard, self.dir, self.sqlite = hoard, directory, sqlite
        self.started_here = False

    def up(self):
        started = time.time()
        if not os.path.exists(os.path.join(self.dir, "cluster.env")):
            self.start()
        self.env = {}
        for line in open(os.path.join(self.dir, "cluster.env")):
            if line.startswith("export "):
                key, value = line[len("export "):].strip().split("=", 1)
                self.env[key] = value.strip("'")
        self.a, self.b, self.nginx = self.env["HOARD_CLUSTER_A"], self.env["HOARD_CLUSTER_B"], self.env["HOARD_CLUSTER_URL"]
        self.operator = self.env["HOARD_CLUSTER_TOKEN"]
        self.sqlite = not self.env["HOARD_CATALOG"].startswith("postgres")
        return time.time() - started

    def start(self):
        self.started_here = True
        options = ["--sqlite"] if self.sqlite else []
        up = subprocess.run([os.path.join(ROOT, "scripts", "cluster.sh"), "up", "--hoard", self.hoard, *options, self.dir],
                            capture_output=True, text=True)
        if up.returncode != 0:
            raise RuntimeError("scripts/cluster.sh up failed:\n" + up.stderr[-3000:])

    def down(self):
        subprocess.run([os.path.join(ROOT, "scripts", "cluster.sh"), "down", self.dir], capture_output=True)

    def cli(self, *args, env=None, timeout=60):
        """One `hoard` command against the cluster's catalog and bucket."""
        return subprocess.run([self.hoard, *args], capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **self.env, **(env or {})})

    def pid(self, replica):
        return int(open(os.path.join(self.dir, f"{replica}.pid")).read())

    def port(self, base):
        return int(base.rsplit(":", 1)[1])


class Harness:
    def __init__(self, cluster):
        self.cluster, self.failures, self.rng, self.late = cluster, [], random.Random(19), []

    def expect(self, condition, what):
        print(f"  {'ok  ' if condition else 'FAIL'} {what}", flush=True)
        if not condition:
            self.failures.append(what)
        return condition

    # ------------------------------------------------------------------------------------------ shared steps

    def setup(self):
        """A group with two members (one hosts every session here), known to both replicas."""
        c = self.cluster
        c.cli("group", "create", "harness")
        self.member = c.cli("token", "create", "--group", "harness", "--name", "gm").stdout.strip()
        self.viewer = c.cli("token", "create", "--group", "harness", "--name", "viewer").stdout.strip()
        for base in (c.a, c.b):
            if not wait_for(lambda: all(request(base, "GET", "/v1/packs", token=t)[0] == 200 for t in (self.member, self.viewer)), 10):
                raise RuntimeError(f"{base} does not know a member token made by `hoard token create` after 10 s")
        self.art = self.put(c.a, b"\x89PNG\r\n\x1a\n" + os.urandom(200))

    def put(self, base, content, timeout=60):
        digest = sha256(content)
        status, body = request(base, "PUT", f"/v1/blobs/{digest}", content, self.member, "application/octet-stream",
                               timeout=timeout)
        if status not in (200, 201):
            raise RuntimeError(f"PUT {digest} through {base}: {status} {body[:300]!r}")
        return digest

    def session(self, base, tokens=("h",)):
        game = {"schema": "hoard.map/v1", "grid": {"width": 20, "height": 20}, "background": {"tiles": []},
                "drawing": {"walls": [], "strokes": []}, "objects": [],
                "tokens": [{"id": t, "asset": self.art, "x": 0, "y": 0} for t in tokens]}
        status, body = request(base, "POST", "/v1/sessions", {"name": "cluster", "map": game}, self.member)
        if status != 201:
            raise RuntimeError(f"POST /v1/sessions through {base}: {status} {body[:300]!r}")
        return json.loads(body)

    def join(self, base, session, name):
        status, body = request(base, "POST", "/v1/sessions/join", {"code": session["code"], "name": name})
        if status not in (200, 201):
            raise RuntimeError(f"joining through {base}: {status} {body[:300]!r}")
        answer = json.loads(body)
        return answer["participantToken"], answer["participantId"]

    def read_across(self, path, token=None):
        """GET through replica B right after a write through A: at once on PostgreSQL (the catalog's notices);
        on a shared SQLite file within the 250 ms B takes to read the access log, so up to a second. A late answer
        is noted in self.late (path, milliseconds until B answered 200, or None after 2 s)."""
        c = self.cluster
        answer = request(c.b, "GET", path, token=token or self.member)
        if answer[0] != 200:
            started = time.time()
            served = wait_for(lambda: request(c.b, "GET", path, token=token or self.member)[0] == 200, 2)
            self.late.append((path, round((time.time() - started) * 1000) if served else None))
            if c.sqlite and served and time.time() - started < 1:
                answer = request(c.b, "GET", path, token=token or self.member)
        return answer

    def live(self, base, session, token, since=None):
        path = f"/v1/sessions/{session['id']}/live" + (f"?since={since}" if since is not None else "")
        ws = WS(self.cluster.port(base), path, token, timeout=15)
        if ws.status != 101:
            raise RuntimeError(f"the live channel through {base} answered {ws.status}")
        return ws

    # ------------------------------------------------------------------------------------------ the checks

    def blob_across(self):
        c, self.late = self.cluster, []
        content = self.rng.randbytes(100_000)
        digest = self.put(c.a, content)
        status, body = self.read_across(f"/v1/blobs/{digest}")
        self.expect(status == 200 and body == content,
                    f"a blob PUT through A is read through B at once (B answered {status}, "
                    f"{'the same bytes' if body == content else f'{len(body)} other bytes'}; late: {self.late})")
        answers = [request(c.nginx, "GET", f"/v1/blobs/{digest}", token=self.member) for _ in range(4)]
        self.expect(all(s == 200 and b == content for s, b in answers),
                    f"and through nginx, four times (both replicas): {[s for s, _ in answers]}")

    def pack_across(self):
        c, self.late = self.cluster, []
        archive = make_pack(self.rng, "cluster-pack", tokens=3)
        status, body = request(c.a, "POST", "/v1/packs", archive, self.member, "application/zip")
        if not self.expect(status in (200, 201), f"a pack upload through A is accepted ({status})"):
            print("   ", body[:500])
            return
        report = json.loads(body)
        status, body = request(c.b, "GET", "/v1/packs", token=self.member)
        names = [p["name"] for p in json.loads(body)["packs"]] if status == 200 else []
        self.expect("cluster-pack" in names, f"B lists the pack at once ({status}, {len(names)} packs)")
        problems, served = [], 0

        def fetch(digest):
            nonlocal served
            status, body = self.read_across(f"/v1/blobs/{digest}")
            if status != 200 or sha256(body) != digest:
                problems.append(f"{digest}: {status}")
                return None
            served += 1
            return body
        manifest = fetch(report["manifestDigest"])
        for asset in json.loads(manifest)["assets"] if manifest else []:
            descriptor = fetch(asset["digest"])
            for variant in json.loads(descriptor)["variants"] if descriptor else []:
                fetch(variant["digest"])
        self.expect(manifest is not None and not problems,
                    f"B serves its manifest, descriptors and pictures at once, each hashed ({served} blobs; problems: "
                    f"{problems[:3]}; B answered 200 after (ms) {[ms for _, ms in self.late][:3]})")

    def join_across(self):
        c = self.cluster
        session = self.session(c.a)
        player, _ = self.join(c.b, session, "joined through B")
        answers = [request(c.a, "GET", f"/v1/sessions/{session['id']}", token=player)[0]]
        if answers[0] != 200 and c.sqlite:
            wait_for(lambda: request(c.a, "GET", f"/v1/sessions/{session['id']}", token=player)[0] == 200, 1)
            answers.append(request(c.a, "GET", f"/v1/sessions/{session['id']}", token=player)[0])
        self.expect(answers[-1] == 200, f"A serves the session to a player who joined through B ({answers})")
        art = request(c.a, "GET", f"/v1/blobs/{self.art}", token=player)[0]
        self.expect(art == 200, f"and its art ({art})")

    def live_across(self):
        c = self.cluster
        if c.sqlite:
            print("  skip live-across: a SQLite catalog has no notices to carry events between replicas (--sqlite)")
            return
        session = self.session(c.a)
        player, _ = self.join(c.b, session, "player on B")
        reader = Reader(self.live(c.b, session, player))
        host = Reader(self.live(c.a, session, self.member))
        # The player is at the table (B sent the table as it is) before the host starts: an op applied before B
        # reads the table is in that snapshot, not an event of its own (once seen under load: the first two).
        self.expect(wait_for(lambda: reader.messages(), 15), "B sends the player the table as it is")
        count = 500
        for n in range(count):
            # Within the participant's budget: a burst of 100, then 50 a second.
            if n >= 80:
                time.sleep(1 / 45)
            host.ws.send(op(f"across.{n}", n))
        wait_for_progress(lambda: len(reader.ops()), count, 5)
        reader.stop(), host.stop()
        got = [m["opId"] for m in reader.ops()]
        expected = [f"across.{n}" for n in range(count)]
        gaps = reader.gaps()
        self.expect(got == expected and not gaps,
                    f"{count} ops from the host on A reach the player on B in order, no gap, no repeat "
                    f"({len(got)} received, {len(set(got))} distinct, {sum(1 for a, b in zip(got, expected) if a != b)} "
                    f"out of place, sequence gaps {gaps[:3]}, host errors {host.errors()[:2]})")

    def grab_across(self):
        c = self.cluster
        session = self.session(c.a, tokens=("h", "chest"))  # a player grabs only what is on the table
        (token_a, id_a), (token_b, id_b) = self.join(c.a, session, "grabber on A"), self.join(c.b, session, "grabber on B")
        readers = [Reader(self.live(c.a, session, token_a)), Reader(self.live(c.b, session, token_b))]
        time.sleep(0.5)  # both sockets registered on their replicas
        barrier = threading.Barrier(2)

        def grab(reader):
            barrier.wait()
            reader.ws.send(json.dumps({"type": "grab", "entity": "chest"}))
        threads = [threading.Thread(target=grab, args=(r,)) for r in readers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        def grabs(reader):
            return [m for m in reader.messages() if m.get("type") == "grab" and m.get("entity") == "chest"]

        def denied(reader):
            return [m for m in reader.messages() if m.get("type") == "error" and m.get("code") == "GRAB_DENIED"]
        wait_for(lambda: all(grabs(r) for r in readers) and sum(len(denied(r)) for r in readers) >= 1, 10)
        time.sleep(0.5)  # a second grab event or denial would arrive meanwhile
        for r in readers:
            r.stop()
        seen = [[g.get("by") for g in grabs(r)] for r in readers]
        denials = [len(denied(r)) for r in readers]
        winner = seen[0][0] if seen[0] else None
        self.expect(seen[0] == seen[1] and len(seen[0]) == 1 and winner in (id_a, id_b)
                    and denials == ([0, 1] if winner == id_a else [1, 0]),
                    f"players on A and B grab one entity at once: one winner, both see the same (grab events by "
                    f"{seen}, denials {denials})")

    def wrong_secret(self):
        c = self.cluster
        started = time.time()
        try:
            run = c.cli("serve", "--data-dir", os.path.join(c.dir, "wrong"), "--port", str(free_port()),
                        env={"AWS_SECRET_ACCESS_KEY": "wrong-secret"}, timeout=60)
            output, code = run.stderr + run.stdout, run.returncode
        except subprocess.TimeoutExpired:
            output, code = "(still running after 60 s)", None
        self.expect(code not in (0, None) and "AWS_SECRET_ACCESS_KEY" in output,
                    f"a replica with a wrong S3 secret stops in {time.time() - started:.1f} s naming the secret: "
                    f"{output.strip()[-200:]!r}")

    def s3_down(self):
        c = self.cluster
        s3 = os.path.join(c.dir, "s3")
        subprocess.run([os.path.join(ROOT, "tools", "s3-server.sh"), "pause", s3], check=True)
        content = self.rng.randbytes(50_000)
        digest = sha256(content)
        try:
            started = time.time()
            try:
                status, body = request(c.a, "PUT", f"/v1/blobs/{digest}", content, self.member, "application/octet-stream",
                                       timeout=40)
            except Interrupted as error:
                status, body = None, str(error).encode()
            took = time.time() - started
            error = error_of(body)
            self.expect(status == 503 and error.get("code") == "STORAGE_UNAVAILABLE" and error.get("message"),
                        f"with S3 down a blob PUT answers 503 STORAGE_UNAVAILABLE in {took:.1f} s "
                        f"({status}: {error.get('message', body[:200])!r})")
            answers = [request(base, "GET", f"/v1/blobs/{digest}", token=self.member)[0] for base in (c.a, c.b)]
            self.expect(answers == [404, 404], f"and records nothing: A and B answer {answers}")
        finally:
            subprocess.run([os.path.join(ROOT, "tools", "s3-server.sh"), "resume", s3], check=True)
        status = None
        deadline = time.time() + 20
        while time.time() < deadline and status not in (200, 201):
            status = request(c.a, "PUT", f"/v1/blobs/{digest}", content, self.member, "application/octet-stream")[0]
            if status not in (200, 201):
                time.sleep(0.5)
        read = request(c.b, "GET", f"/v1/blobs/{digest}", token=self.member)
        self.expect(status in (200, 201) and read == (200, content),
                    f"once S3 is back the PUT succeeds ({status}) and B serves it ({read[0]})")

    def postgres_down(self):
        c = self.cluster
        if c.sqlite:
            print("  skip postgres-down: the catalog is a SQLite file (--sqlite)")
            return
        environment = {**os.environ, "HOARD_POSTGRES_DIR": os.path.join(c.dir, "postgres")}
        postgres = os.path.join(ROOT, "tools", "postgres.sh")
        subprocess.run([postgres, "pause"], check=True, env=environment)
        game = {"schema": "hoard.map/v1", "grid": {"width": 5, "height": 5}, "tokens": []}
        try:
            started = time.time()
            try:
                status, body = request(c.b, "POST", "/v1/sessions", {"name": "no catalog", "map": game}, self.member,
                                       timeout=40)
            except Interrupted as error:
                status, body = None, str(error).encode()
            took = time.time() - started
            error = error_of(body)
            self.expect(status == 503 and error.get("code") == "CATALOG_UNAVAILABLE" and error.get("message") and took < 35,
                        f"with PostgreSQL down a new session answers 503 CATALOG_UNAVAILABLE in {took:.1f} s "
                        f"({status} {error.get('code')}: {error.get('message', body[:200])!r})")
            alive = c.pid("b") and process_alive(c.pid("b"))
            try:
                health = request(c.b, "GET", "/healthz", timeout=5)[0]
            except Interrupted:
                health = None
            self.expect(alive and health is not None, f"replica B stays up and answers /healthz ({health})")
        finally:
            subprocess.run([postgres, "resume"], check=True, env=environment)
        status = None
        deadline = time.time() + 30
        while time.time() < deadline and status != 201:
            try:
                status = request(c.b, "POST", "/v1/sessions", {"name": "catalog back", "map": game}, self.member, timeout=10)[0]
            except Interrupted:
                status = None
            if status != 201:
                time.sleep(0.5)
        self.expect(status == 201, f"once PostgreSQL is back a new session is made ({status})")

    def kill_replica(self):
        c = self.cluster
        session = self.session(c.nginx, tokens=("h", "lantern"))  # a player grabs only what is on the table
        self.read_across(f"/v1/sessions/{session['id']}")
        # Both clients on A, through nginx (it alternates between the replicas), so both must reconnect. The one
        # that listens is another member of the group (it sees the table as a participant): join-across checks
        # the players who joined through one replica are known to the other.
        host = Client(self, session, self.member, on="a")
        listener = Client(self, session, self.viewer, on="a")
        # A player on A grabs the lantern and is never heard from again once A dies.
        grabber_token, grabber = self.join(c.a, session, "grabber on A")
        grabber_ws = self.live(c.a, session, grabber_token)
        grabber_ws.send(json.dumps({"type": "grab", "entity": "lantern"}))
        lantern = lambda kind: [m.get("by") for m in listener.grab_events() if m.get("type") == kind and m.get("entity") == "lantern"]
        wait_for(lambda: lantern("grab"), 10)
        ledger = Uploads()
        stop = threading.Event()
        uploaders = [threading.Thread(target=self.upload_loop, args=(ledger, stop, seed)) for seed in range(3)]
        for t in uploaders:
            t.start()
        count = 300
        sender = threading.Thread(target=host.send_all, args=([f"kill.{n}" for n in range(count)], 40))
        sender.start()
        time.sleep(2)
        os.kill(c.pid("a"), signal.SIGKILL)
        killed = time.time()
        grabber_ws.close()
        sender.join(60)
        time.sleep(max(0, killed + 3 - time.time()))
        stop.set()
        for t in uploaders:
            t.join(60)
        wait_for(lambda: len(listener.ops()) >= count, 20)
        # The lease A granted ends (15 s) and B releases the grab at its next round (5 s); the grabber, connected to A
        # only, leaves then too.
        released = wait_for(lambda: lantern("release"), 30) and round(time.time() - killed, 1)
        left = lambda: [m for m in listener.grab_events() if m.get("type") == "presence" and m.get("event") == "left"
                        and (m.get("participant") or {}).get("id") == grabber]
        wait_for(left, 10)
        host.close(), listener.close()
        self.expect(lantern("grab") == [grabber] and lantern("release") == [grabber],
                    f"a grab held through the killed replica is released once, by its holder's lease ending: grabbed "
                    f"{lantern('grab')}, released {lantern('release')} {released} s after the kill")
        self.expect(len(left()) == 1, f"the player who was on the killed replica only leaves once its lease ends ({len(left())} left events)")
        self.expect(host.unanswered() == [],
                    f"every op of the host is answered (event or ack) after reconnecting ({len(host.unanswered())} not)")
        got = listener.ops()
        expected = [f"kill.{n}" for n in range(count)]
        self.expect(got == expected and not listener.gaps,
                    f"the player loses nothing: {len(got)} of {count} ops, {len(set(got))} distinct, in order: "
                    f"{got == expected}; sequence gaps {listener.gaps[:3]}; reconnections host {host.reconnections}, "
                    f"player {listener.reconnections}, onto {sorted(set(host.replicas + listener.replicas))}; "
                    f"what the clients met: {(host.trouble + listener.trouble)[:4]}")
        self.expect(host.reconnections >= 1 and listener.reconnections >= 1,
                    "both clients were on A and reconnected through nginx")
        lost = [d for d in ledger.acked if request(c.b, "GET", f"/v1/blobs/{d}", token=self.member)
                != (200, ledger.content[d])]
        self.expect(ledger.acked and not lost,
                    f"every upload answered 201 is readable through B ({len(ledger.acked)} acknowledged, "
                    f"{len(lost)} not readable, {ledger.refused} refused, {len(ledger.interrupted)} interrupted)")
        half = []
        for d in ledger.interrupted:
            status, body = request(c.b, "GET", f"/v1/blobs/{d}", token=self.member)
            if not (status == 404 or (status == 200 and body == ledger.content[d])):
                half.append(f"{d}: {status}")
        self.expect(not half, f"an interrupted upload is whole or absent ({half[:3]})")

    def upload_loop(self, ledger, stop, seed):
        rng = random.Random(seed)
        while not stop.is_set():
            content = rng.randbytes(rng.choice((1_000, 60_000, 700_000, 2_000_000)))
            digest = sha256(content)
            ledger.content[digest] = content
            try:
                status, _ = request(self.cluster.nginx, "PUT", f"/v1/blobs/{digest}", content, self.member,
                                    "application/octet-stream", timeout=30)
            except Interrupted:
                status = None
            with ledger.lock:
                if status in (200, 201):
                    ledger.acked.append(digest)
                elif status is None or status >= 500:
                    ledger.interrupted.append(digest)
                else:
                    ledger.refused += 1


# ---------------------------------------------------------------------------------------------- live clients


def op(op_id, n):
    return json.dumps({"type": "op", "opId": op_id, "op": {"kind": "move", "token": "h", "x": n % 20, "y": n // 20 % 20}})


class Reader:
    """Keeps every message of one socket, read on a thread."""

    def __init__(self, ws):
        self.ws, self.lock, self.seen, self.ended = ws, threading.Lock(), [], False
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        try:
            while not self.done.is_set():
                message = self.ws.message()
                if message is None:
                    break
                with self.lock:
                    self.seen.append(message)
        except (EOFError, OSError, ValueError):
            pass
        self.ended = True

    def messages(self):
        with self.lock:
            return list(self.seen)

    def ops(self):
        return [m for m in self.messages() if m.get("type") == "op"]

    def errors(self):
        return [m for m in self.messages() if m.get("type") == "error"]

    def gaps(self):
        """Places where a message's seq is not the one after the last (the snapshot's seq starts the count)."""
        gaps, last = [], None
        for m in self.messages():
            seq = m.get("seq")
            if seq is None:
                continue
            if last is not None and m.get("type") != "snapshot" and seq != last + 1:
                gaps.append((last, seq))
            last = seq
        return gaps

    def stop(self):
        self.done.set()
        self.ws.close()


class Client:
    """A live participant through nginx that reconnects as HoardClient does: with since=<last seq>, sending again
    (under their op ids) the ops not answered yet."""

    def __init__(self, harness, session, token, on):
        self.harness, self.session, self.token = harness, session, token
        self.lock = threading.Lock()
        self.last_seq, self.op_ids, self.answered, self.gaps, self.grabs = None, [], set(), [], []
        self.sent, self.reconnections, self.replicas, self.trouble = [], 0, [], []
        self.closed = threading.Event()
        self.connect(want=harness.cluster.env["HOARD_CLUSTER_" + on.upper()].rsplit(":", 1)[1])
        threading.Thread(target=self.read, daemon=True).start()

    def connect(self, want=None):
        """Opens the socket through nginx; with `want`, until nginx picked that replica's port (at most 8 tries)."""
        nginx = self.harness.cluster.port(self.harness.cluster.nginx)
        path = f"/v1/sessions/{self.session['id']}/live" + (f"?since={self.last_seq}" if self.last_seq is not None else "")
        answers = []
        for _ in range(8):
            ws = WS(nginx, path, self.token, timeout=15)
            replica = ws.header("x-hoard-replica") or "?"
            if ws.status == 101 and (want is None or replica.endswith(":" + want)):
                self.ws = ws
                self.replicas.append(replica)
                return
            answers.append(f"{ws.status} from {replica}")
            ws.close()
        raise RuntimeError(f"could not open the live channel through nginx{f' onto :{want}' if want else ''}: {answers}")

    def read(self):
        while not self.closed.is_set():
            try:
                message = self.ws.message()
                if message is None:
                    raise EOFError
            except (EOFError, OSError, ValueError) as error:
                if self.closed.is_set():
                    return
                self.trouble.append(f"read: {type(error).__name__} {error}")
                self.reconnect()
                continue
            with self.lock:
                seq = message.get("seq")
                if seq is not None:
                    if message.get("type") == "snapshot":
                        if self.last_seq is not None and seq != self.last_seq:
                            self.gaps.append(("snapshot", self.last_seq, seq))
                    elif self.last_seq is not None and seq != self.last_seq + 1:
                        self.gaps.append((self.last_seq, seq))
                    self.last_seq = seq
                if message.get("type") == "op":
                    self.op_ids.append(message.get("opId"))
                if message.get("type") in ("grab", "release", "presence"):
                    self.grabs.append(message)
                if message.get("opId") and message.get("type") in ("op", "ack"):
                    self.answered.add(message["opId"])

    def reconnect(self):
        deadline = time.time() + 20
        while time.time() < deadline and not self.closed.is_set():
            try:
                with self.lock:  # the sender waits: what it sends next goes after these, in order
                    self.connect()
                    self.reconnections += 1
                    for op_id in [i for i in self.sent if i not in self.answered]:
                        self.ws.send(op(op_id, int(op_id.rsplit(".", 1)[1])))
                return
            except (OSError, RuntimeError, EOFError) as error:
                self.trouble.append(f"reconnect: {type(error).__name__} {error}")
                time.sleep(0.25)
        self.closed.set()

    def send_all(self, op_ids, rate):
        for n, op_id in enumerate(op_ids):
            time.sleep(1 / rate)
            with self.lock:
                self.sent.append(op_id)
                ws = self.ws
            try:
                ws.send(op(op_id, n))
            except OSError:
                pass  # the reader reconnects and sends it again
        wait_for(lambda: not self.unanswered(), 20)

    def unanswered(self):
        with self.lock:
            return [i for i in self.sent if i not in self.answered]

    def ops(self):
        with self.lock:
            return list(self.op_ids)

    def grab_events(self):
        with self.lock:
            return list(self.grabs)

    def close(self):
        self.closed.set()
        self.ws.close()


class Uploads:
    def __init__(self):
        self.lock, self.acked, self.interrupted, self.refused, self.content = threading.Lock(), [], [], 0, {}


# ---------------------------------------------------------------------------------------------- helpers


def wait_for(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if condition():
                return True
        except (Interrupted, OSError):
            pass
        time.sleep(0.05)
    return False


def wait_for_progress(measure, target, seconds):
    """Waits until measure() reaches target, or has not grown for `seconds`."""
    last, since = measure(), time.time()
    while last < target and time.time() - since < seconds:
        time.sleep(0.05)
        now = measure()
        if now != last:
            last, since = now, time.time()
    return last >= target


def error_of(body):
    try:
        return json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return {}


def process_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def main():
    parser = arguments(__doc__)
    parser.add_argument("checks", nargs="*", metavar="CHECK", help=" ".join(CHECKS) + " (default: all)")
    parser.add_argument("--sqlite", action="store_true", help="one shared SQLite catalog file instead of PostgreSQL")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running (its folder is printed)")
    parser.add_argument("--cluster", metavar="DIR", help="check a cluster scripts/cluster.sh started in DIR (left running)")
    args = parser.parse_intermixed_args()
    checks = args.checks or CHECKS
    unknown = set(checks) - set(CHECKS)
    if unknown:
        parser.error(f"unknown checks {sorted(unknown)}; the checks are {' '.join(CHECKS)}")
    work = tempfile.mkdtemp(prefix="hoard-cluster.")
    os.chmod(work, 0o755)  # PostgreSQL runs as the postgres user when we are root
    cluster = Cluster(os.path.abspath(args.hoard), os.path.abspath(args.cluster or os.path.join(work, "cluster")), args.sqlite)
    harness = Harness(cluster)
    started = time.time()
    try:
        took = cluster.up()
        print(f"cluster harness: the cluster started in {took:.1f} s "
              f"({'a SQLite file' if cluster.sqlite else 'PostgreSQL'}, S3, replicas A and B, nginx)", flush=True)
        harness.setup()
        for name in CHECKS:
            if name not in checks:
                continue
            print(f"{name}:", flush=True)
            check_started = time.time()
            try:
                getattr(harness, name.replace("-", "_"))()
            except Exception as error:  # a check that cannot go on fails with what stopped it; the next one runs
                harness.expect(False, f"{name} stopped: {type(error).__name__}: {error}")
            print(f"  ({time.time() - check_started:.1f} s)", flush=True)
    except Exception as error:
        harness.expect(False, f"the cluster: {error}")
    finally:
        if harness.failures:
            for name in ("a", "b"):
                log = os.path.join(cluster.dir, f"{name}.log")
                if os.path.exists(log):
                    lines = open(log, errors="replace").read().splitlines()
                    crash = next((i for i, line in enumerate(lines) if "Fatal error" in line or "crashed" in line), None)
                    shown = lines[crash:crash + 20] if crash is not None else lines[-12:]
                    print(f"replica {name.upper()}'s log{', where it crashed' if crash is not None else ', its last lines'}:",
                          *shown, sep="\n  ")
        if args.keep and cluster.started_here or args.cluster:
            print("cluster left running:", cluster.dir, "(scripts/cluster.sh down DIR stops it)")
        else:
            cluster.down()
        if not (args.keep and cluster.started_here):
            shutil.rmtree(work, ignore_errors=True)
    print(f"RESULT: {'PASS' if not harness.failures else f'FAIL ({len(harness.failures)})'} in {time.time() - started:.0f} s")
    for failure in harness.failures:
        print("  FAILED:", failure)
    return 0 if not harness.failures else 1


if __name__ == "__main__":
    sys.exit(main())
