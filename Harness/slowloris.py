#!/usr/bin/env python3
"""Slowloris: holds many half-open connections (each sends half a request head, then waits) against one
`hoard serve` and checks the server closes them once its head timeout has passed and answers /healthz within a
second then. Issue 20: 22,500 such connections kept the server from answering anyone, and none was ever closed.

Usage: python3 Harness/slowloris.py path/to/hoard [--connections 20000] [--head-timeout 5]
Raises its own descriptor limit (and, as root, the hard one) so both ends can hold the connections. About 30 s.
"""
import os, resource, selectors, socket, sys, tempfile, time

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


def main():
    parser = arguments(__doc__)
    parser.add_argument("--connections", type=int, default=20000)
    parser.add_argument("--head-timeout", type=float, default=5.0)
    args = parser.parse_args()
    limit = raise_descriptor_limit(args.connections * 2 + 4096)
    if limit < args.connections + 1024:
        sys.exit(f"slowloris: the descriptor limit is {limit}; {args.connections} connections need more (run as root or raise ulimit -n)")
    failures = []
    with tempfile.TemporaryDirectory() as data:
        # The per-address cap is raised so that the head timeout is what is tested (the connections all come from
        # 127.0.0.1); the cap on all connections stays the default, under the descriptor limit.
        server = Server(args.hoard, data, extra=[
            "--head-timeout", str(args.head_timeout), "--max-connections-per-address", str(args.connections * 2)])
        server.start()
        try:
            selector = selectors.DefaultSelector()
            sockets = []
            opening = time.monotonic()
            for n in range(args.connections):
                s = socket.socket()
                s.settimeout(10)
                try:
                    s.connect(("127.0.0.1", server.port))
                    s.sendall(HALF_HEAD)
                except OSError as error:
                    s.close()
                    failures.append(f"connection {n} could not be opened: {error}")
                    break
                s.setblocking(False)
                selector.register(s, selectors.EVENT_READ)
                sockets.append(s)
            opened = time.monotonic()
            early = len(selector.select(timeout=0))
            print(f"slowloris: {len(sockets)} half-open connections opened in {opened - opening:.1f} s; "
                  f"{len(sockets) - early} held at once")
            if len(sockets) - early < args.connections:
                failures.append(f"only {len(sockets) - early} of {args.connections} were held at once "
                                f"(opening took longer than the head timeout: raise --head-timeout)")
            held = healthz_seconds(server.port)
            print(f"slowloris: /healthz while they are held: {'no answer' if held is None else f'{held * 1000:.0f} ms'}")

            # Once the head timeout has passed for the last one opened, the server must answer at once.
            time.sleep(max(0.0, opened + args.head_timeout - time.monotonic()))
            answers = [healthz_seconds(server.port) for _ in range(5)]
            worst = None if None in answers else max(answers)
            print(f"slowloris: /healthz after the head timeout, worst of 5: {'no answer' if worst is None else f'{worst * 1000:.0f} ms'}")
            if worst is None or worst >= 1.0:
                failures.append("/healthz did not answer within a second once the head timeout had passed")

            # And every half-open connection is closed by the server (read returns end of file, or a reset).
            closed = 0
            deadline = opened + args.head_timeout + 30
            while closed < len(sockets) and time.monotonic() < deadline:
                for key, _ in selector.select(timeout=1):
                    try:
                        data_read = key.fileobj.recv(4096)
                    except OSError:
                        data_read = b""
                    if not data_read:
                        selector.unregister(key.fileobj)
                        key.fileobj.close()
                        closed += 1
            print(f"slowloris: {closed} of {len(sockets)} closed by the server, the last "
                  f"{time.monotonic() - opened:.1f} s after the last was opened (head timeout {args.head_timeout} s)")
            if closed < len(sockets):
                failures.append(f"{len(sockets) - closed} half-open connections were still open 30 s after the head timeout")
            for s in sockets:
                s.close()
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
