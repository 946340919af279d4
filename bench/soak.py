#!/usr/bin/python3
"""make soak: the reliability promises (docs/reliability.md) at full size.

Not part of make check: it takes a few minutes and most of the machine.
One table at the end, a row per load:

    tunnels     SOAK_TUNNELS (10,000) idle CONNECT tunnels through one
                pisbx-proxy: how many opened, its RSS with them open and
                2 s after they closed (malloc_trim), and that it lived
    rate-host   SOAK_RATE (1,000) new connections a second for
                SOAK_SECONDS (60) through pisbx-proxy, each one GET
    rate-run    the same from inside pisbx-run, through its own proxy
    faults      the tests/integration/reliability-*.sh scenarios with
                bigger sizes (RELIAB_ROUNDS=SOAK_ROUNDS, 100 by default):
                resets in every relay path, a full disk, a supervisor
                restarted, slow heads, the open-file limit

SOAK_ONLY=row,row runs only those rows.  Everything binds and dials
127.0.0.1; every process started here is stopped by its PID.  Run as root
to raise the open-file limit past 10,000 tunnels (two descriptors each in
the proxy); where even root cannot (a container without
CAP_SYS_RESOURCE; these machines' hard limit is 20,000), the tunnel
count is capped to what the hard limit allows, and the row says so.
"""

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
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
TUNNELS = int(os.environ.get("SOAK_TUNNELS", "10000"))
RATE = int(os.environ.get("SOAK_RATE", "1000"))
SECONDS = int(os.environ.get("SOAK_SECONDS", "60"))
ROUNDS = int(os.environ.get("SOAK_ROUNDS", "100"))
ONLY = [s for s in os.environ.get("SOAK_ONLY", "").split(",") if s]
NOFILE = 65536
started = []


def raise_nofile():
    """In the child: as many descriptors as allowed (root: NOFILE)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if os.getuid() == 0 and hard < NOFILE:
        hard = NOFILE
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def spawn(argv, **kw):
    p = subprocess.Popen(argv, preexec_fn=raise_nofile, **kw)
    started.append(p)
    return p


def stop(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def wait_file(path, secs=30):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.05)
    return False


def rss_mib(pid):
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


class Soak:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="pisbx-soak.")
        self.rows = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def row(self, name, load, result, verdict):
        self.rows.append((name, load, result, verdict))
        print("  %-10s %s" % (name, verdict), file=sys.stderr, flush=True)

    def serve(self, mode):
        pf = self.path(mode + ".port")
        p = spawn([PXTOOL, "serve", "--mode", mode, "--port-file", pf])
        if not wait_file(pf):
            raise SystemExit("soak: pxtool serve did not start")
        return int(open(pf).read())

    def proxy(self, maxconn):
        conf = self.path("proxy-%d.json" % maxconn)
        with open(conf, "w") as f:
            json.dump({"network": {"allowedDomains": ["127.0.0.1"],
                                   "deniedDomains": []},
                       "proxy": {"maxConnections": maxconn,
                                 "maxClientConnections": maxconn}}, f)
        err = open(self.path("proxy-%d.err" % maxconn), "w+")
        p = spawn([PROXY, "--config", conf, "--listen", "127.0.0.1:0",
                   "--access-log", self.path("access-%d.log" % maxconn)],
                  stderr=err)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            err.seek(0)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", err.read())
            if m:
                return p, int(m.group(1))
            time.sleep(0.05)
        raise SystemExit("soak: pisbx-proxy did not start")

    def row_tunnels(self):
        raise_nofile()		# here too: what a child can get
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        n = min(TUNNELS, (limit - 200) // 2)
        p, port = self.proxy(n + 100)
        echo = self.serve("echo")
        idle = rss_mib(p.pid)
        ready = self.path("idle.ready")
        t0 = time.monotonic()
        h = spawn([PXTOOL, "idle", "--proxy", "127.0.0.1:%d" % port,
                   "--target", "127.0.0.1:%d" % echo, "--count", str(n),
                   "--ready-file", ready, "--hold-seconds", "300"],
                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        opened = wait_file(ready, 120)
        if not opened and h.poll() is None:
            stop(h)
        secs = time.monotonic() - t0
        time.sleep(0.5)
        peak = rss_mib(p.pid)
        stop(h)
        time.sleep(2)
        after = rss_mib(p.pid)
        alive = p.poll() is None
        stop(p)
        capped = "" if n == TUNNELS else " (capped from %d: open-file " \
            "limit %d)" % (TUNNELS, limit)
        self.row("tunnels", "%d idle CONNECT tunnels%s" % (n, capped),
                 "%s in %.1f s; RSS %.1f MiB idle, %.1f open, %.1f 2 s "
                 "after they closed" % ("all opened" if opened else
                                        "NOT all opened", secs, idle,
                                        peak, after),
                 "ok" if opened and alive and after < peak / 2 else
                 "FAIL")

    def rate(self, inside):
        """RATE new connections a second for SECONDS: done, failed."""
        script = self.path("rate.py")
        with open(script, "w") as f:
            f.write(RATE_SCRIPT)
        http = self.serve("http")
        if inside:
            argv = [RUN, "--config", self.path("run.json"), "--",
                    "/usr/bin/python3", script, PXTOOL, "127.0.0.1:3128",
                    "127.0.0.1:%d" % http, str(RATE), str(SECONDS)]
            with open(self.path("run.json"), "w") as f:
                json.dump({"network": {"allowedDomains": ["127.0.0.1"],
                                       "deniedDomains": []}}, f)
            p = None
        else:
            p, port = self.proxy(4096)
            argv = ["/usr/bin/python3", script, PXTOOL,
                    "127.0.0.1:%d" % port, "127.0.0.1:%d" % http,
                    str(RATE), str(SECONDS)]
        os.makedirs(self.path("ws"), exist_ok=True)
        r = subprocess.run(argv, cwd=self.path("ws"), capture_output=True,
                           text=True, timeout=SECONDS * 3 + 60)
        alive = p is None or p.poll() is None
        rss = rss_mib(p.pid) if p is not None else None
        if p is not None:
            stop(p)
        m = re.search(r"done (\d+) failed (\d+) secs ([0-9.]+) "
                      r"us_per_conn ([0-9.]+)", r.stdout)
        if not m:
            return None, r.stdout[-300:] + r.stderr[-300:], False
        done, failed, secs, us = (int(m.group(1)), int(m.group(2)),
                                  float(m.group(3)), float(m.group(4)))
        text = "%d connections in %.1f s (%.0f/s), %d failed, %.0f us " \
            "each%s" % (done, secs, done / secs if secs else 0, failed, us,
                        "; proxy RSS %.1f MiB after" % rss
                        if rss is not None else "")
        good = failed == 0 and alive and r.returncode == 0 and \
            done >= RATE * SECONDS * 0.95
        return text, None, good

    def row_rate(self, inside):
        name = "rate-run" if inside else "rate-host"
        load = "%d conn/s for %d s %s" % (
            RATE, SECONDS, "inside pisbx-run" if inside else
            "through pisbx-proxy")
        text, err, good = self.rate(inside)
        self.row(name, load, text if text else "no result: %s" % err,
                 "ok" if good else "FAIL")

    def row_faults(self):
        env = dict(os.environ, RELIAB_ROUNDS=str(ROUNDS), PISBX_TOP=TOP,
                   PISBX_BINDIR=BINDIR, PISBX_BUILD=BUILD)
        names = sorted(f[:-3] for f in os.listdir(
            os.path.join(TOP, "tests", "integration"))
            if f.startswith("reliability-") and f.endswith(".sh"))
        for name in names:
            t0 = time.monotonic()
            r = subprocess.run(["sh", os.path.join(
                TOP, "tests", "integration", name + ".sh")], env=env,
                capture_output=True, text=True, timeout=600)
            oks = len(re.findall(r"^ok ", r.stdout, re.M))
            bad = len(re.findall(r"^not ok ", r.stdout, re.M))
            verdict = "skip" if r.returncode == 77 else \
                "ok" if r.returncode == 0 and bad == 0 else "FAIL"
            self.row("faults", name, "%d ok, %d not ok, %.0f s%s" % (
                oks, bad, time.monotonic() - t0, "" if verdict != "skip"
                else ": " + r.stdout.strip().splitlines()[-1]), verdict)

    def table(self):
        w = [max(len(r[i]) for r in self.rows + [("row", "load", "result",
                                                    "verdict")])
             for i in range(4)]
        fmt = "| %%-%ds | %%-%ds | %%-%ds | %%-%ds |" % tuple(w)
        print(fmt % ("row", "load", "result", "verdict"))
        print("|" + "|".join("-" * (x + 2) for x in w) + "|")
        for r in self.rows:
            print(fmt % r)


RATE_SCRIPT = r'''
import re, subprocess, sys, time
pxtool, proxy, target, rate, secs = sys.argv[1:6]
rate, secs = int(rate), int(secs)
done = failed = 0
us = 0.0
t0 = time.monotonic()
for i in range(secs):
    tick = t0 + i
    r = subprocess.run([pxtool, "reqs", "--http", "--via", "http",
                        "--proxy", proxy, "--target", target,
                        "--count", str(rate)], capture_output=True,
                       text=True)
    m = re.search(r"us_per_conn ([0-9.]+)", r.stdout)
    if r.returncode == 0 and m:
        done += rate
        us += float(m.group(1)) * rate
    else:
        failed += 1
    left = tick + 1 - time.monotonic()
    if left > 0:
        time.sleep(left)
el = time.monotonic() - t0
print("done %d failed %d secs %.1f us_per_conn %.1f" % (
    done, failed, el, us / done if done else 0))
sys.exit(1 if failed else 0)
'''


def main():
    s = Soak()
    steps = [("tunnels", s.row_tunnels),
             ("rate-host", lambda: s.row_rate(False)),
             ("rate-run", lambda: s.row_rate(True)),
             ("faults", s.row_faults)]
    try:
        for key, fn in steps:
            if ONLY and key not in ONLY:
                continue
            fn()
    finally:
        for p in started:
            stop(p)
        shutil.rmtree(s.dir, ignore_errors=True)
    print("pisbx soak: %d tunnels, %d conn/s for %d s, fault rounds %d" % (
        TUNNELS, RATE, SECONDS, ROUNDS))
    s.table()
    sys.exit(0 if all(r[3] != "FAIL" for r in s.rows) else 1)


main()
