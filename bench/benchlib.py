"""What bench.py and its row modules share: where the programs are, the
knobs read from the environment, the time budget, and starting, timing
and stopping processes (each by its PID, with its descendants)."""

import os
import re
import signal
import socket
import statistics
import subprocess
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def path_from_env(name, default):
    p = os.environ.get(name, default)
    return p if os.path.isabs(p) else os.path.join(TOP, p)


BUILD = path_from_env("BUILD", "build")
BINDIR = path_from_env("BINDIR", "bin")
PROXY = os.path.join(BINDIR, "pisbx-proxy")
RUN = os.path.join(BINDIR, "pisbx-run")
PXTOOL = os.path.join(BUILD, "tests", "helpers", "pxtool")
GUARD_FLOOR = os.path.join(BUILD, "bench", "guard_floor")
POLICY_BENCH = os.path.join(BUILD, "bench", "bench_policy")
SRT_DIR = path_from_env("SRT_DIR", os.path.join(BUILD, "bench", "srt"))
NPM_DIR = os.path.join(BUILD, "bench", "npm")

RUNS = int(os.environ.get("BENCH_RUNS", "3"))
BUDGET = float(os.environ.get("BENCH_BUDGET", "540"))
ONLY = [s for s in os.environ.get("BENCH_ONLY", "").split(",") if s]
PEERS = (None if "BENCH_PEERS" not in os.environ else
         [s for s in os.environ["BENCH_PEERS"].split(",") if s])
GIB = 1 << 30
NREQ = 1000         # new connections per latency run
NIDLE = 1000        # idle tunnels
NFILES = 10000      # files in the create-heavy extract
NCREATE = 2000      # creates per guard_floor run
HZ = os.sysconf("SC_CLK_TCK")
T0 = time.monotonic()

# An earlier build to compare with, as a column of its own ("baseline"):
# BENCH_BASELINE=DIR holds its pisbx-proxy and pisbx-run.
BASELINE = os.environ.get("BENCH_BASELINE")
OURS = ["pisbx"] + (["baseline"] if BASELINE else [])
COLS = OURS + ["bwrap", "tinyproxy", "microsocks", "dante", "srt"]
PROXIES = {          # which peer speaks which protocol
    "http": OURS + ["tinyproxy", "srt"],
    "connect": OURS + ["tinyproxy", "srt"],
    "socks5": OURS + ["microsocks", "dante", "srt"],
}


class Skip(Exception):
    """A figure that cannot be had in this run, with the reason."""


def left():
    return BUDGET - (time.monotonic() - T0)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def free_port():
    """A loopback port free right now, for the peers that cannot bind 0."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, secs=10):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def wait_file(path, secs=10):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.05)
    return False


# --- processes -----------------------------------------------------------

STARTED = []


def children(pid):
    """The PIDs of pid's descendants (from /proc), deepest last."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def stop(proc):
    """Stop proc and everything it started, each by its PID."""
    if proc.poll() is not None:
        return
    pids = [proc.pid] + children(proc.pid)
    # Politely, then for good: a child of a sandbox may outlive proc.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        try:
            proc.wait(3)
        except subprocess.TimeoutExpired:
            pass


def spawn(argv, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    kw.setdefault("stdout", subprocess.DEVNULL)
    p = subprocess.Popen(argv, start_new_session=True, **kw)
    STARTED.append(p)
    return p


def run(argv, timeout=120, **kw):
    """Run to the end; stdout, or Skip with what went wrong."""
    kw.setdefault("stdin", subprocess.DEVNULL)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, text=True, **kw)
    STARTED.append(p)
    try:
        out, err = p.communicate(timeout=min(timeout, max(left(), 5)))
    except subprocess.TimeoutExpired:
        stop(p)
        raise Skip("%s: timed out" % os.path.basename(argv[0]))
    if p.returncode != 0:
        raise Skip("%s failed: %s" % (os.path.basename(argv[0]),
                                       (err or out).strip()[-300:]))
    return out


def cpu_ticks(pid):
    """utime+stime of pid and its descendants, in seconds."""
    t = 0
    for p in [pid] + children(pid):
        try:
            with open("/proc/%d/stat" % p) as f:
                v = f.read().rsplit(")", 1)[1].split()
            t += int(v[11]) + int(v[12])
        except (OSError, IndexError, ValueError):
            pass
    return t / HZ


def cpu_ns(pid):
    """CPU time of pid's main thread in seconds, to the nanosecond
    (/proc/PID/schedstat): for our single-threaded proxy."""
    try:
        with open("/proc/%d/schedstat" % pid) as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, IndexError, ValueError):
        return cpu_ticks(pid)


def pss_kib(pid):
    """Proportional set size of pid and its descendants, in KiB."""
    total = 0
    for p in [pid] + children(pid):
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total



def fmt(v):
    if v is None:
        return "n/a"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.2f" % v


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "n/a"
    return "%.2f×" % (a / b)


def shellq(a):
    if a and re.fullmatch(r"[A-Za-z0-9_./:=@%+,-]+", a):
        return a
    return "'" + a.replace("'", "'\\''") + "'"
