"""Small helpers the Python benchmarks share: free loopback ports, JSON calls, waiting for a server, peak memory and
CPU time."""
import json, os, shutil, socket, time, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    request = urllib.request.Request(base + path, method=method, headers=headers,
                                     data=json.dumps(body).encode() if body is not None else None)
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def wait_healthy(base, tries=100):
    for _ in range(tries):
        try:
            urllib.request.urlopen(base + "/healthz")
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{base} did not answer /healthz")


def status_mb(pid, field):
    """A memory figure of /proc/PID/status in MiB: VmHWM (peak resident), VmRSS (resident now)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid):
    """The CPU time (user + system) process PID has used so far, in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid):
    return status_mb(pid, "VmHWM")


def stop(server, work):
    """Ends a benchmark's server (when it started) and removes its work folder."""
    if server:
        server.terminate()
        server.wait(10)
    shutil.rmtree(work, ignore_errors=True)
