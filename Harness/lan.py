#!/usr/bin/env python3
"""`hoard serve --lan` on a local network of its own: announced by DNS-SD, found, joined by code, withdrawn.

Usage: Harness/lan.py PATH/TO/hoard      (as root: it makes network, mount and UTS namespaces)

Nothing leaves this machine, nor even its own interfaces: the script runs itself again inside new namespaces
(`unshare --net --mount --uts`), where a veth pair (10.37.0.1 and 10.37.0.2, fd37::1 and fd37::2) is the whole
network, a tmpfs over /run holds a D-Bus system bus and an avahi-daemon of its own (told to use veth0 only), and the host is called hoardlan.
Checked there:
  - `hoard serve --lan` prints the URLs players can open (each LAN address, IPv4 then IPv6 (fd37::1 and fd37::2)
    bracketed, and hoardlan.local; never loopback nor link-local), GET /v1/server lists the same, and it answers on IPv6;
  - `avahi-browse -rt _hoard._tcp` finds it: address, port and TXT (api, id = the server's instance, tls, name);
  - `hoard servers --json` finds it; `hoard join CODE` without a URL joins its session;
  - wrong join codes are limited per address: one LAN address refused 429 leaves another unaffected;
  - with --tls-cert and --tls-key, GET /v1/server lists https URLs and the record says tls=1;
  - after SIGTERM the record is gone within 5 s;
  - without a responder the server starts all the same and says once that it is not announced; the start-up time
    (to the first /healthz answer) with and without one is printed.
Needs: scripts/setup.sh --lan (avahi-daemon, avahi-utils, dbus, iproute2).
"""
import http.client
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from harnesslib import Check

ROOT = Path(__file__).resolve().parents[1]
UNVERIFIED = ssl._create_unverified_context()  # the TLS check's self-signed certificate
PORT = 8137
HOST = "hoardlan"
BUS = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
  </policy>
</busconfig>
"""
AVAHI = f"""[server]
host-name={HOST}
use-ipv4=yes
use-ipv6=no
allow-interfaces=veth0
enable-dbus=yes
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
"""



def run(*command, check=True, timeout=60):
    return subprocess.run(command, check=check, capture_output=True, text=True, timeout=timeout)


def until(condition, seconds, step=0.1):
    """Polls condition() until it returns something true or `seconds` pass; its last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)


def call(method, path, body=None, token=None, host="127.0.0.1"):
    request = urllib.request.Request(f"http://{host}:{PORT}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def healthy(scheme="http"):
    try:
        urllib.request.urlopen(f"{scheme}://127.0.0.1:{PORT}/healthz", timeout=1, context=UNVERIFIED if scheme == "https" else None).read()
        return True
    except OSError:
        return False


def unescaped(name):
    """A name as avahi-browse -p prints it (\\DDD for a byte in decimal, \\. for a dot) read back."""
    return re.sub(r"\\(\d{3}|.)", lambda m: chr(int(m[1])) if len(m[1]) == 3 else m[1], name)


def announced(instance_name):
    """Whether avahi-browse (without resolving: a record being withdrawn may not resolve) lists the service name."""
    lines = run("avahi-browse", "-tp", "_hoard._tcp", check=False, timeout=20).stdout.splitlines()
    return any(line.startswith("+;") and unescaped(line.split(";")[3]) == instance_name for line in lines)


def browse():
    """avahi-browse's resolved `_hoard._tcp` records: [(interface, address, port, {txt})]."""
    found = []
    for line in run("avahi-browse", "-rtp", "_hoard._tcp", check=False, timeout=20).stdout.splitlines():
        fields = line.split(";")
        if fields[0] != "=" or len(fields) < 10:
            continue
        txt = dict(item.strip('"').split("=", 1) for item in fields[9].split('" "') if "=" in item)
        found.append((fields[1], fields[7], int(fields[8]), txt))
    return found


class Serve:
    """`hoard serve --lan` in the namespace; its standard error kept in a file."""

    def __init__(self, hoard, data, log, *extra, scheme="http"):
        self.log_path = log
        self.log = open(log, "w")
        started = time.monotonic()
        self.process = subprocess.Popen([hoard, "serve", "--lan", "--data-dir", data, "--port", str(PORT), *extra],
                                        stdout=self.log, stderr=self.log)
        if not until(lambda: healthy(scheme), 30, 0.02):
            raise RuntimeError("hoard serve --lan did not answer: " + Path(log).read_text()[-2000:])
        self.startup = time.monotonic() - started

    def text(self):
        self.log.flush()
        return Path(self.log_path).read_text()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.log.close()


def wrong_codes(source, count):
    """`count` joins with a code no session has, from `source`; the statuses."""
    statuses = []
    for _ in range(count):
        connection = http.client.HTTPConnection("10.37.0.1", PORT, timeout=10, source_address=(source, 0))
        connection.request("POST", "/v1/sessions/join", json.dumps({"code": "ZZZZ-ZZZZ", "name": "guess"}),
                           {"Content-Type": "application/json"})
        statuses.append(connection.getresponse().status)
        connection.close()
    return statuses


def inside(hoard):
    check = Check()
    work = Path(tempfile.mkdtemp(prefix="hoard-lan-"))
    daemons = []
    try:
        run("mount", "--make-rprivate", "/")
        run("mount", "-t", "tmpfs", "tmpfs", "/run")
        os.makedirs("/run/dbus")
        os.makedirs("/run/avahi-daemon")
        run("hostname", HOST)
        for command in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "veth0", "type", "veth", "peer", "name", "veth1"],
                        ["ip", "addr", "add", "10.37.0.1/24", "dev", "veth0"], ["ip", "addr", "add", "10.37.0.2/24", "dev", "veth1"],
                        ["ip", "-6", "addr", "add", "fd37::1/64", "dev", "veth0", "nodad"],
                        ["ip", "-6", "addr", "add", "fd37::2/64", "dev", "veth1", "nodad"],
                        ["ip", "link", "set", "veth0", "up"], ["ip", "link", "set", "veth1", "up"]):
            run(*command)
        (work / "bus.conf").write_text(BUS)
        (work / "avahi.conf").write_text(AVAHI)

        data = str(work / "data")
        hoard_run = lambda *a: run(hoard, *a, "--data-dir", data).stdout  # noqa: E731
        hoard_run("group", "create", "default")
        hoard_run("import", "--group", "default", str(ROOT / "Packs/scifi-outpost.zip"))
        token = hoard_run("token", "create", "--group", "default", "--name", "host").strip().splitlines()[-1]

        # Without a responder (no bus, no avahi-daemon): it serves all the same and says so once.
        alone = Serve(hoard, data, work / "alone.log")
        time.sleep(0.5)
        said = alone.text().count("not announced")
        alone.stop()
        check.that(said == 1, f"without a responder the server starts and says once that it is not announced ({said} times)")
        without = alone.startup

        bus = subprocess.Popen(["dbus-daemon", f"--config-file={work / 'bus.conf'}", "--nofork", "--nopidfile"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        daemons.append(bus)
        until(lambda: os.path.exists("/run/dbus/system_bus_socket"), 10)
        avahi_log = open(work / "avahi.log", "w")
        avahi = subprocess.Popen(["avahi-daemon", "-f", str(work / "avahi.conf"), "--no-drop-root", "--no-chroot", "--no-rlimits"],
                                 stdout=avahi_log, stderr=avahi_log)
        daemons.append(avahi)
        ready = until(lambda: "Server startup complete" in (work / "avahi.log").read_text(), 15)
        if not check.that(bool(ready), "avahi-daemon runs in the namespace"):
            print((work / "avahi.log").read_text())
            return 1

        server = Serve(hoard, data, work / "serve.log")
        with_responder = server.startup
        identity = call("GET", "/v1/server")
        expected = [f"http://10.37.0.1:{PORT}", f"http://10.37.0.2:{PORT}", f"http://[fd37::1]:{PORT}", f"http://[fd37::2]:{PORT}",
                    f"http://{HOST}.local:{PORT}"]
        check.that(identity["lan"] and sorted(identity["urls"]) == sorted(expected) and identity["urls"][-1] == expected[-1]
                   and all(":" not in url.split("//")[1].split(":")[0] for url in identity["urls"][:2]),
                   f"GET /v1/server lists the LAN URLs, IPv4 then IPv6 bracketed, never link-local ({identity['urls']})")
        check.that(call("GET", "/healthz", host="[fd37::1]") == {"status": "ok"}, "it answers on its IPv6 LAN address")
        printed = until(lambda: all(url in server.text() for url in expected) and server.text(), 5)
        check.that(bool(printed) and "127.0.0.1:" not in printed.split("players can open:")[-1].split("\n\n")[0],
                   "hoard serve --lan prints each LAN address and the .local name, not loopback")
        check.that(call("GET", "/healthz", host="10.37.0.1") == {"status": "ok"}, "it answers on its LAN address")

        records = until(lambda: [r for r in browse() if r[3].get("id") == identity["instance"]], 10, 0.3)
        check.that(bool(records), f"avahi-browse -rt _hoard._tcp finds it ({records})")
        if records:
            interface, address, port, txt = records[0]
            check.that(address == "10.37.0.1" and port == PORT, f"at its address and port ({address}:{port} on {interface})")
            check.that(txt.get("api") == "1" and txt.get("tls") == "0" and txt.get("name") == identity["name"],
                       f"with its TXT record ({txt})")

        listed = json.loads(run(hoard, "servers", "--json").stdout)
        mine = [s for s in listed if s.get("instance") == identity["instance"]]
        check.that(len(mine) == 1 and mine[0]["port"] == PORT and f"http://10.37.0.1:{PORT}" in mine[0]["urls"],
                   f"hoard servers finds it ({mine})")

        # A session to join by its code alone.
        sys.path.insert(0, str(ROOT / "tools"))
        from sample_map import build_map
        assets = call("GET", "/v1/assets?pack=scifi-outpost&limit=1000", token=token)["assets"]
        created = call("POST", "/v1/sessions", {"name": "LAN night", "map": build_map(assets, name="LAN", width=8, height=6)}, token=token)
        joined = run(hoard, "join", created["code"], "--cache", str(work / "cache"), "--name", "pia", "--json", check=False)
        summary = json.loads(joined.stdout) if joined.returncode == 0 else {}
        check.that(summary.get("session") == created["id"], f"hoard join CODE without a URL joins it ({joined.stderr.strip()[-300:]})")
        unknown = run(hoard, "join", "QQQQ-QQQQ", "--cache", str(work / "cache2"), check=False)
        check.that(unknown.returncode != 0 and "no server on this network took the code" in unknown.stderr,
                   "a code no server knows is refused after asking them")

        name = identity["name"]
        check.that(announced(name), "avahi-browse lists the service by name before the server stops")
        server.stop()
        gone_after = None
        started = time.monotonic()
        while time.monotonic() - started < 10:
            if not announced(name):
                gone_after = time.monotonic() - started
                break
        check.that(gone_after is not None and gone_after < 5, f"after SIGTERM the record is gone within 5 s ({gone_after})")

        # Wrong join codes count per address: a LAN address refused leaves another untouched.
        limited = Serve(hoard, data, work / "limited.log", "--failed-joins-per-minute", "3")
        first = wrong_codes("10.37.0.2", 4)
        other = wrong_codes("10.37.0.1", 1)
        limited.stop()
        check.that(first == [404, 404, 404, 429] and other == [404], f"wrong codes are limited per LAN address ({first}, then {other})")

        # TLS works the same on the LAN: https URLs, and tls=1 in the record.
        run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", f"/CN={HOST}.local",
            "-keyout", str(work / "key.pem"), "-out", str(work / "cert.pem"))
        secure = Serve(hoard, data, work / "tls.log", "--tls-cert", str(work / "cert.pem"), "--tls-key", str(work / "key.pem"), scheme="https")
        with urllib.request.urlopen(f"https://10.37.0.1:{PORT}/v1/server", timeout=10, context=UNVERIFIED) as response:
            answer = json.loads(response.read())
        check.that(answer["tls"] and answer["urls"] and all(url.startswith("https://") for url in answer["urls"]),
                   f"with TLS, GET /v1/server over the LAN lists https URLs ({answer['urls']})")
        records = until(lambda: [r for r in browse() if r[3].get("id") == identity["instance"] and r[3].get("tls") == "1"], 10, 0.3)
        check.that(bool(records), f"and the record says tls=1 ({records[:1]})")
        secure.stop()

        print(f"start-up to the first /healthz answer: {without * 1000:.0f} ms without a responder, "
              f"{with_responder * 1000:.0f} ms with avahi-daemon")
    finally:
        for process in reversed(daemons):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)
    return check.report(what="LAN")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--inside":
        return inside(sys.argv[2])
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("Harness/lan.py makes network namespaces: run it as root", file=sys.stderr)
        return 1
    missing = [tool for tool in ("unshare", "ip", "dbus-daemon", "avahi-daemon", "avahi-browse") if not shutil.which(tool)]
    if missing:
        print(f"missing {', '.join(missing)}: run scripts/setup.sh --lan", file=sys.stderr)
        return 1
    hoard = os.path.abspath(sys.argv[1])
    return subprocess.run(["unshare", "--net", "--mount", "--uts", "--fork", "--kill-child", sys.executable, os.path.abspath(__file__),
                           "--inside", hoard]).returncode


if __name__ == "__main__":
    sys.exit(main())
