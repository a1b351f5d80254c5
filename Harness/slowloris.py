#!/usr/bin/env python3
"""Slowloris: holds many half-open connections (each sends half a request head, then waits) against one
`hoard serve` and checks the server closes them once its head timeout has passed and answers /healthz within a
second then. Issue 20: 22,500 such connections kept the server from answering anyone, and none was ever closed.

Usage: python3 Harness/slowloris.py path/to/hoard [--connections 20000] [--head-timeout 10]
The connections are opened by --workers processes (each within its own descriptor limit). Where the server's
descriptor limit is below the count (here the hard `ulimit -n` is 20,000 and cannot be raised), its connection cap
(the limit less a reserve) refuses the excess at once, as it must; the rest are held until the head timeout. About
30 s.
"""
import multiprocessing, os, resource, selectors, socket, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harnesslib import Server, arguments  # noqa: E402

HALF_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def raise_descriptor_limit(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < needed:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (needed, needed))  # root only
            return needed
        except (ValueError, OSError):
            pass
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def healthz_seconds(port, timeout=10.0):
    """Seconds from connect to a whole /healthz answer on a fresh connection (timeout when none)."""
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
            if not answer.startswith(b"HTTP/1.1 200"):
                return None
    except OSError:
        return None
    return time.monotonic() - start


def hold(port, count, head_timeout, results, start_barrier):
    """A worker: opens `count` half-open connections, reports how many the server closed before all were open
    (refused at once by its cap) and how many by the end of the head timeout plus 30 s, and when."""
    raise_descriptor_limit(count + 256)
    selector = selectors.DefaultSelector()
    sockets, failures = [], []
    start_barrier.wait()
    for n in range(count):
        s = socket.socket()
        s.settimeout(10)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(HALF_HEAD)
        except OSError as error:
            s.close()
            failures.append(f"connection {n} could not be opened: {error}")
            break
        s.setblocking(False)
        selector.register(s, selectors.EVENT_READ)
        sockets.append(s)
    opened = time.time()
    results.put(("opened", opened))

    def drain(timeout):
        closed = 0
        for key, _ in selector.select(timeout=timeout):
            try:
                data_read = key.fileobj.recv(4096)
            except OSError:
                data_read = b""
            if not data_read:
                selector.unregister(key.fileobj)
                key.fileobj.close()
                closed += 1
        return closed

    refused = drain(0)
    closed, last = refused, opened
    deadline = time.monotonic() + head_timeout + 30
    while closed < len(sockets) and time.monotonic() < deadline:
        n = drain(1)
        if n:
            closed += n
            last = time.time()
    results.put(("report", {"opened": len(sockets), "opened_at": opened, "refused": refused, "closed": closed, "last_close": last,
                 "failures": failures}))
    for s in sockets:
        s.close()


def main():
    parser = arguments(__doc__)
    parser.add_argument("--connections", type=int, default=20000)
    parser.add_argument("--head-timeout", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    raise_descriptor_limit(args.connections + 4096)  # the server inherits it (as much as the system allows)
    failures = []
    with tempfile.TemporaryDirectory() as data:
        # The per-address cap is raised so that the head timeout is what is tested (the connections all come from
        # 127.0.0.1); the cap on all connections stays the default, under the descriptor limit.
        server = Server(args.hoard, data, extra=[
            "--head-timeout", str(args.head_timeout), "--max-connections-per-address", str(args.connections * 2)])
        server.start()
        try:
            results, barrier = multiprocessing.Queue(), multiprocessing.Barrier(args.workers + 1)
            share = [args.connections // args.workers + (i < args.connections % args.workers) for i in range(args.workers)]
            workers = [multiprocessing.Process(target=hold, args=(server.port, n, args.head_timeout, results, barrier))
                       for n in share]
            for w in workers:
                w.start()
            barrier.wait()
            opening = time.time()
            # /healthz while they are being opened and held (informative: at the cap the server refuses new
            # connections, healthz's too, until the head timeout frees them).
            time.sleep(args.head_timeout / 2)
            held = healthz_seconds(server.port)
            print(f"slowloris: /healthz while they are held: {'refused or no answer' if held is None else f'{held * 1000:.0f} ms'}")
            # Once the head timeout has passed for the last one opened, the server must answer at once.
            opened = max(results.get(timeout=120)[1] for _ in workers)
            time.sleep(max(0.0, opened + args.head_timeout - time.time()))
            answers = [healthz_seconds(server.port) for _ in range(5)]
            worst = None if None in answers else max(answers)
            print(f"slowloris: /healthz once the head timeout has passed, worst of 5: "
                  f"{'no answer' if worst is None else f'{worst * 1000:.0f} ms'}")
            if worst is None or worst >= 1.0:
                failures.append("/healthz did not answer within a second once the head timeout had passed")
            reports = [results.get(timeout=120)[1] for _ in workers]
            for w in workers:
                w.join()
            opened = max(r["opened_at"] for r in reports)
            total = sum(r["opened"] for r in reports)
            refused = sum(r["refused"] for r in reports)
            closed = sum(r["closed"] for r in reports)
            for r in reports:
                failures += r["failures"]
            print(f"slowloris: {total} half-open connections opened by {args.workers} processes in {opened - opening:.1f} s; "
                  f"the server refused {refused} at once (its connection cap) and held {total - refused}")
            print(f"slowloris: {closed} of {total} closed by the server, the last "
                  f"{max(r['last_close'] for r in reports) - opened:.1f} s after the last was opened (head timeout {args.head_timeout} s)")
            if total < args.connections:
                failures.append(f"only {total} of {args.connections} connections could be opened")
            if closed < total:
                failures.append(f"{total - closed} half-open connections were still open 30 s after the head timeout")
            if total - refused < min(args.connections, 10000):
                failures.append(f"the server held only {total - refused} connections")
            if server.process.poll() is not None:
                failures.append("the server exited")
        finally:
            server.stop()
    for failure in failures:
        print("slowloris: FAIL:", failure)
    print(f"slowloris: {0 if failures else 1} passed, {1 if failures else 0} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
