#!/usr/bin/python3
"""make bench: pisbx beside the tools a user would pick instead.

One run, one table.  Every figure below comes from this run on this
machine, so the ratios compare like with like:

    floor       direct loopback / `unshare -n` / a bare create (per row)
    pisbx       pisbx-proxy on its own, or pisbx-run (sandbox rows)
    bwrap       bubblewrap, same namespaces, read-only root
    tinyproxy   HTTP forward + CONNECT        (Debian: tinyproxy)
    microsocks  SOCKS5                        (Debian: microsocks)
    dante       SOCKS5                        (Debian: dante-server)
    srt         Anthropic's sandbox-runtime   (npm: @anthropic-ai/sandbox-runtime)

A peer that is not installed is skipped with a note (./bootstrap --bench
installs the Debian ones; srt is installed by npm into $BUILD/bench/srt).
Everything binds and dials 127.0.0.1 only; every process started here is
stopped by its PID (with its descendants); the run keeps to a time budget
(BENCH_BUDGET seconds, default 540) and skips what no longer fits.

Environment: BENCH_RUNS (default 3) repetitions per figure, median kept;
BENCH_NO_SRT=1 skips srt; BENCH_NO_NPM=1 skips the npm ci row;
BENCH_ONLY=row,row runs only those rows (start, throughput, inside,
latency, keepalive, tunnel, idle, extract, guard, sock, tls, npm,
claude, mix, git; sock is bench_sock.py's socket calls in the sandbox,
tls is tlsrows.py's TLS termination beside srt's, the last three are in
agentrows.py);
BENCH_PEERS=name,... measures only those peers (BENCH_PEERS= none);
BENCH_BASELINE=DIR adds a column for the pisbx-proxy and pisbx-run of an
earlier build in DIR (before/after in one run; not a peer in the ratios).
"""


import base64
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import agentrows
import bench_sock
import tlsrows
from benchlib import (
    BUILD, PROXY, RUN, PXTOOL, GUARD_FLOOR, POLICY_BENCH, SRT_DIR, NPM_DIR,
    RUNS, ONLY, PEERS, GIB, NREQ, NIDLE, NFILES, NCREATE, T0, BASELINE,
    OURS, COLS, PROXIES, Skip, left, median, free_port, wait_port,
    wait_file, STARTED, stop, spawn, run, cpu_ticks, cpu_ns, pss_kib, fmt,
    ratio, shellq)


# --- the subjects ----------------------------------------------------------

class Proxy:
    """A running proxy: where to reach it per protocol, with credentials."""

    def __init__(self, name, proc, ports, auth=None, pid=None):
        self.name, self.proc, self.ports, self.auth = name, proc, ports, auth
        self.pid = pid or proc.pid

    def args(self, proto):
        a = ["--proxy", "127.0.0.1:%d" % self.ports[proto], "--via", proto]
        if self.auth:
            a += ["--proxy-auth", self.auth]
        return a


class Bench:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="run.", dir=os.path.join(
            BUILD, "bench"))
        self.rows = []
        self.notes = []
        self.missing = {}
        self.proxies = {}
        self.diag = []

    def note(self, s):
        self.notes.append(s)

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    # servers and proxies

    def start_servers(self):
        def serve(mode):
            pf = self.path(mode + ".port")
            p = spawn([PXTOOL, "serve", "--mode", mode, "--port-file", pf])
            if not wait_file(pf):
                raise SystemExit("bench: pxtool serve did not start")
            return p, int(open(pf).read())

        self.http_proc, self.http = serve("http")
        self.echo_proc, self.echo = serve("echo")
        self.target = "127.0.0.1:%d" % self.http

    def write_configs(self):
        net = {"allowedDomains": ["127.0.0.1"], "deniedDomains": []}
        with open(self.path("pisbx.json"), "w") as f:
            # pxtool idle holds NIDLE tunnels from one client.
            json.dump({"network": net, "proxy": {
                "maxConnections": 4096, "maxClientConnections": 4096}}, f)
        with open(self.path("srt.json"), "w") as f:
            json.dump({"network": net, "filesystem": {
                "denyRead": ["~"], "allowWrite": ["."], "denyWrite": []}}, f)

    def start_pisbx(self, name="pisbx", exe=PROXY, config=None):
        err = open(self.path(name + ".err"), "w+")
        p = spawn([exe, "--config", config or self.path("pisbx.json"),
                   "--listen",
                   "127.0.0.1:0", "--access-log",
                   self.path(name + "-access.log")], stderr=err)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            err.seek(0)
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", err.read())
            if m:
                port = int(m.group(1))
                return Proxy(name, p, {"http": port, "connect": port,
                                       "socks5": port})
            if p.poll() is not None:
                break
            time.sleep(0.05)
        err.seek(0)
        raise SystemExit("bench: pisbx-proxy did not start: %s" %
                         err.read().strip()[-300:])

    def start_tinyproxy(self):
        exe = shutil.which("tinyproxy")
        if exe is None:
            raise Skip("tinyproxy not installed (./bootstrap --bench)")
        port = free_port()
        conf = self.path("tinyproxy.conf")
        with open(conf, "w") as f:
            f.write("Port %d\nListen 127.0.0.1\nTimeout 600\n"
                    "MaxClients 4096\nAllow 127.0.0.1\nLogLevel Critical\n"
                    "LogFile \"%s\"\nDisableViaHeader Yes\n"
                    % (port, self.path("tinyproxy.log")))
        p = spawn([exe, "-d", "-c", conf], stderr=subprocess.DEVNULL)
        if not wait_port(port):
            raise Skip("tinyproxy did not start")
        return Proxy("tinyproxy", p, {"http": port, "connect": port})

    def start_microsocks(self):
        exe = shutil.which("microsocks")
        if exe is None:
            raise Skip("microsocks not installed (./bootstrap --bench)")
        port = free_port()
        p = spawn([exe, "-i", "127.0.0.1", "-p", str(port)],
                  stderr=subprocess.DEVNULL)
        if not wait_port(port):
            raise Skip("microsocks did not start")
        return Proxy("microsocks", p, {"socks5": port})

    def start_dante(self):
        exe = shutil.which("danted") or (
            "/usr/sbin/danted" if os.access("/usr/sbin/danted", os.X_OK)
            else None)
        if exe is None:
            raise Skip("danted not installed (./bootstrap --bench: "
                       "dante-server)")
        port = free_port()
        conf = self.path("danted.conf")
        users = ("user.privileged: root\nuser.unprivileged: nobody\n"
                 if os.getuid() == 0 else "")
        with open(conf, "w") as f:
            f.write("logoutput: %s\ninternal: 127.0.0.1 port = %d\n"
                    "external: 127.0.0.1\nclientmethod: none\n"
                    "socksmethod: none\n%s"
                    "client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }\n"
                    "socks pass { from: 127.0.0.0/8 to: 127.0.0.0/8 "
                    "command: connect }\n"
                    % (self.path("danted.log"), port, users))
        p = spawn([exe, "-f", conf, "-p", self.path("danted.pid")],
                  stderr=subprocess.DEVNULL)
        if not wait_port(port):
            raise Skip("danted did not start: %s" % open(
                self.path("danted.log")).read()[-200:])
        return Proxy("dante", p, {"socks5": port})

    def srt_exe(self):
        """srt from the npm cache under the build folder, installed once."""
        if os.environ.get("BENCH_NO_SRT") == "1":
            raise Skip("srt skipped (BENCH_NO_SRT=1)")
        exe = os.path.join(SRT_DIR, "node_modules", ".bin", "srt")
        if os.access(exe, os.X_OK):
            return exe
        if shutil.which("npm") is None:
            raise Skip("srt: npm not installed")
        os.makedirs(SRT_DIR, exist_ok=True)
        try:
            run(["npm", "install", "--no-audit", "--no-fund", "--silent",
                 "--prefix", SRT_DIR, "@anthropic-ai/sandbox-runtime"],
                timeout=180)
        except Skip as e:
            raise Skip("srt: npm install failed: %s" % e)
        if not os.access(exe, os.X_OK):
            raise Skip("srt: npm installed no srt binary")
        return exe

    def start_srt(self, name="srt", config=None, env=None):
        """srt running `sleep` in its sandbox, its host-side proxy used
        (env: srt's own environment, None for ours)."""
        exe = self.srt_exe()
        # The workspace is the one place srt may write.
        envf = self.path("ws", name + ".env")
        p = spawn([exe, "-s", config or self.path("srt.json"), "-c",
                   "env > %s; exec sleep 900" % envf],
                  cwd=self.path("ws"), env=env, stderr=subprocess.DEVNULL)
        if not wait_file(envf) or p.poll() is not None:
            raise Skip("srt cannot run here (it needs bubblewrap, socat, "
                       "ripgrep)")
        time.sleep(0.2)
        env = dict(l.split("=", 1) for l in open(envf).read().splitlines()
                   if "=" in l)
        try:
            hp = int(env["CLAUDE_CODE_HOST_HTTP_PROXY_PORT"])
            sp = int(env["CLAUDE_CODE_HOST_SOCKS_PROXY_PORT"])
        except (KeyError, ValueError):
            raise Skip("srt: its host proxy ports are not in the "
                       "sandbox's environment (version change?)")
        m = re.match(r"http://([^@]*)@", env.get("http_proxy", ""))
        return Proxy(name, p, {"http": hp, "connect": hp, "socks5": sp},
                     auth=m.group(1) if m else None)

    def start_proxies(self):
        self.proxies["pisbx"] = self.start_pisbx()
        if BASELINE:
            self.proxies["baseline"] = self.start_pisbx(
                "baseline", os.path.join(BASELINE, "pisbx-proxy"))
        self.idle_pss = {}
        for name, start in (("tinyproxy", self.start_tinyproxy),
                            ("microsocks", self.start_microsocks),
                            ("dante", self.start_dante),
                            ("srt", self.start_srt)):
            if PEERS is not None and name not in PEERS:
                self.missing[name] = "not asked for (BENCH_PEERS)"
                continue
            try:
                self.proxies[name] = start()
            except Skip as e:
                self.missing[name] = str(e)
                self.note("%s: %s" % (name, e))
        # Idle memory: each proxy as started, before any connection.
        time.sleep(0.3)
        for name, p in self.proxies.items():
            self.idle_pss[name] = pss_kib(p.pid)

    # tools

    def pxtool(self, args, timeout=120):
        return run([PXTOOL] + args, timeout=timeout)

    def send_mbps(self, pre, args, proxy=None):
        """MB/s of one 1 GiB POST (through proxy/args), sender CPU s."""
        t = os.times()
        out = run(pre + [PXTOOL, "send", "--http", "--target", self.target,
                         "--bytes", str(GIB), "--no-hash"] + args,
                  timeout=120)
        cpu = os.times()
        if "sink bytes %d" % GIB not in out:
            raise Skip("short transfer: %s" % out.strip())
        m = re.search(r"MBps ([0-9.]+)", out)
        return float(m.group(1)), (cpu.children_user + cpu.children_system
                                   - t.children_user - t.children_system)

    def reqs_us(self, pre, args):
        out = run(pre + [PXTOOL, "reqs", "--http", "--target", self.target,
                         "--count", str(NREQ)] + args, timeout=120)
        return float(re.search(r"us_per_conn ([0-9.]+)", out).group(1))

    def hyperfine(self, name, argv, runs, prepare=None, cwd=None, warmup=2,
                  timeout=120):
        """Median wall time of argv in ms, by hyperfine."""
        if shutil.which("hyperfine") is None:
            raise Skip("hyperfine not installed (./bootstrap --bench)")
        js = self.path("hf-%s.json" % name)
        cmd = ["hyperfine", "-N", "--style", "none", "--warmup", str(warmup),
               "--runs", str(runs), "--export-json", js]
        if prepare:
            cmd += ["--prepare", prepare]
        run(cmd + ["--", " ".join(shellq(a) for a in argv)],
            timeout=timeout, cwd=cwd)
        r = json.load(open(js))["results"][0]
        return r["median"] * 1000

    def sandbox(self, who, argv, cwd=None):
        """argv as run inside the sandbox who (None: on the host)."""
        cwd = cwd or self.path("ws")
        if who is None:
            return list(argv)
        if who in OURS:
            exe = RUN if who == "pisbx" else os.path.join(BASELINE,
                                                          "pisbx-run")
            return [exe, "--config", self.path("pisbx.json"), "--"] + argv
        if who == "bwrap":
            # pisbx-run's namespaces (network, mount, PID, IPC, and a
            # user namespace when not root), a read-only root, a fresh
            # /proc and a minimal /dev, the workspace writable.
            return (["bwrap", "--unshare-net", "--unshare-pid",
                     "--unshare-ipc"] +
                    (["--unshare-user"] if os.getuid() != 0 else []) +
                    ["--ro-bind", "/", "/", "--proc", "/proc", "--dev",
                     "/dev", "--bind", cwd, cwd, "--chdir", cwd, "--"] +
                    argv)
        if who == "srt":
            return [self.srt, "-s", self.path("srt.json"), "-c",
                    " ".join(shellq(a) for a in argv)]
        if who == "unshare":
            return ["unshare", "-n"] + argv if os.getuid() == 0 else \
                ["unshare", "-r", "-n"] + argv
        raise ValueError(who)

    def sandboxes(self):
        out = list(OURS)
        if PEERS is not None and "bwrap" not in PEERS:
            pass
        elif shutil.which("bwrap"):
            out.append("bwrap")
        else:
            self.missing["bwrap"] = "bubblewrap not installed"
        if self.srt:
            out.append("srt")
        return out

    # rows

    def row(self, key, name, unit, better, floor, vals, cmds):
        self.rows.append({"key": key, "name": name, "unit": unit,
                          "better": better, "floor": floor, "vals": vals,
                          "cmds": cmds})

    def skip_row(self, key, name, why):
        self.rows.append({"key": key, "name": name, "skipped": why})

    def rows_throughput(self):
        """1 GiB POSTs: direct, and through each proxy and protocol."""
        direct, mb, cpu = [], {}, {}
        for _ in range(RUNS):
            if left() < 60:
                self.note("throughput: fewer runs (time budget)")
                break
            r0 = cpu_ticks(self.http_proc.pid)
            v, c = self.send_mbps([], [])
            direct.append(v)
            cpu.setdefault("direct", []).append(
                (c, cpu_ticks(self.http_proc.pid) - r0, 0))
            for proto, peers in PROXIES.items():
                for name in peers:
                    if name not in self.proxies:
                        continue
                    p = self.proxies[name]
                    c0, r0 = cpu_ticks(p.pid), cpu_ticks(self.http_proc.pid)
                    try:
                        v, c = self.send_mbps([], p.args(proto))
                    except Skip as e:
                        self.note("throughput %s via %s: %s" % (
                            proto, name, e))
                        continue
                    mb.setdefault((proto, name), []).append(v)
                    if name in OURS:
                        cpu.setdefault((name, proto), []).append(
                            (c, cpu_ticks(self.http_proc.pid) - r0,
                             cpu_ticks(p.pid) - c0))
        # CPU seconds per GiB of each process (sender, receiver, proxy):
        # what bounds the throughput on a machine with few cores.
        for k, v in sorted(cpu.items(), key=str):
            self.diag.append(
                "CPU s per GiB, %s (median of %d): sender %.2f, receiver "
                "%.2f, proxy %.2f" % (
                    k if k == "direct" else "%s %s" % k, len(v),
                    median([x[0] for x in v]), median([x[1] for x in v]),
                    median([x[2] for x in v])))
        for proto, label in (("http", "HTTP forward"),
                             ("connect", "CONNECT"), ("socks5", "SOCKS5")):
            self.row("throughput", "throughput, %s (host)" % label,
                     "MB/s ↑", "hi", median(direct),
                     {n: median(mb.get((proto, n), [])) for n in
                      PROXIES[proto]},
                     "pxtool send --http --bytes 1GiB --proxy P --via %s "
                     "(floor: the same POST direct)" % proto)

    def rows_inside(self):
        """The same transfers from inside the sandbox, through its proxy."""
        if not self.sandboxes():
            return
        vals = {}
        inner = {"http": "127.0.0.1:3128", "connect": "127.0.0.1:3128",
                 "socks5": "127.0.0.1:1080"}
        for _ in range(RUNS):
            if left() < 60:
                self.note("inside: fewer runs (time budget)")
                break
            for proto in PROXIES:
                for who in OURS + ["srt"]:
                    if who == "srt" and not self.srt:
                        continue
                    args = ["--proxy", inner[proto], "--via", proto]
                    try:
                        if who == "srt":
                            # srt's proxies want the credentials it put
                            # in the sandbox's environment.
                            cmd = ("a=${http_proxy#http://}; exec %s send "
                                   "--http --target %s --bytes %d --no-hash "
                                   "%s --proxy-auth \"${a%%@*}\"" % (
                                       PXTOOL, self.target, GIB,
                                       " ".join(args)))
                            try:
                                out = run([self.srt, "-s",
                                           self.path("srt.json"), "-c", cmd])
                            except Skip:
                                # Its bridge into the sandbox may not
                                # listen yet: once more.
                                time.sleep(0.5)
                                out = run([self.srt, "-s",
                                           self.path("srt.json"), "-c", cmd])
                            if "sink bytes %d" % GIB not in out:
                                raise Skip("short transfer")
                            v = float(re.search(r"MBps ([0-9.]+)",
                                                out).group(1))
                        else:
                            v, _ = self.send_mbps(
                                self.sandbox(who, []), args)
                    except Skip as e:
                        self.note("inside %s, %s: %s" % (who, proto, e))
                        continue
                    vals.setdefault((proto, who), []).append(v)
        direct = [r for r in self.rows if r["key"] == "throughput"]
        for i, (proto, label) in enumerate((
                ("http", "HTTP forward"), ("connect", "CONNECT"),
                ("socks5", "SOCKS5"))):
            self.row("inside", "throughput, %s (in sandbox)" % label,
                     "MB/s ↑", "hi",
                     direct[i]["floor"] if i < len(direct) else None,
                     {w: median(vals.get((proto, w), []))
                      for w in OURS + ["srt"]},
                     "SANDBOX pxtool send --http --bytes 1GiB --proxy "
                     "%s --via %s (floor: direct on the host)" % (
                         inner[proto], proto))

    def rows_latency(self):
        """New connections: NREQ sequential GETs, a connection each."""
        direct, added, cpu = [], {}, {}
        for _ in range(max(RUNS, 5)):
            if left() < 40:
                self.note("latency: fewer runs (time budget)")
                break
            d = self.reqs_us([], [])
            direct.append(d)
            for proto, peers in PROXIES.items():
                for name in peers:
                    if name in self.proxies:
                        p = self.proxies[name]
                        clock = cpu_ns if name in OURS else cpu_ticks
                        c0 = clock(p.pid)
                        try:
                            v = self.reqs_us([], p.args(proto))
                        except Skip as e:
                            self.note("latency %s via %s: %s" % (
                                proto, name, e))
                            continue
                        added.setdefault((proto, name), []).append(v - d)
                        cpu.setdefault((name, proto), []).append(
                            (clock(p.pid) - c0) * 1e6 / NREQ)
        self.diag.append("proxy CPU µs per new connection (median; ours "
                         "from schedstat, peers from clock ticks): " +
                         ", ".join("%s %s %.0f" % (k[0], k[1], median(v))
                                   for k, v in sorted(cpu.items())))
        for proto, label in (("http", "HTTP forward"),
                             ("connect", "CONNECT"), ("socks5", "SOCKS5")):
            self.row("latency", "new connection, %s" % label,
                     "µs added ↓", "lo", median(direct),
                     {n: median(added.get((proto, n), [])) for n in
                      PROXIES[proto]},
                     "pxtool reqs --http --count %d --proxy P --via %s: "
                     "connect, GET, answer, close; minus the same direct "
                     "(floor: µs per direct connection)" % (NREQ, proto))

    def rows_keepalive(self):
        """Requests per second on kept-alive connections (wrk, 8 conns)."""
        if shutil.which("wrk") is None:
            raise Skip("wrk not installed (./bootstrap --bench)")
        vals, direct = {}, []
        self.closes = set()

        def wrk(name, port, auth):
            lua = self.path("wrk.lua")
            with open(lua, "w") as f:
                f.write('wrk.path = "http://%s/"\nwrk.headers["Host"] = '
                        '"%s"\n' % (self.target, self.target))
                if auth:
                    f.write('wrk.headers["Proxy-Authorization"] = '
                            '"Basic %s"\n' % base64.b64encode(
                                auth.encode()).decode())
            out = run(["wrk", "-t1", "-c8", "-d2s", "-s", lua,
                       "http://127.0.0.1:%d/" % port], timeout=30)
            m = re.search(r"Requests/sec:\s*([0-9.]+)", out)
            if m is None or "Non-2xx" in out:
                raise Skip("wrk: %s" % out.strip()[-200:])
            # A proxy that closes the client connection after each answer
            # shows as read errors: wrk reconnects, and counts the answers.
            if re.search(r"Socket errors: connect \d+, read [1-9]", out):
                self.closes.add(name)
            return float(m.group(1))

        for _ in range(RUNS):
            if left() < 40:
                break
            out = run(["wrk", "-t1", "-c8", "-d2s",
                       "http://%s/" % self.target], timeout=30)
            direct.append(float(re.search(r"Requests/sec:\s*([0-9.]+)",
                                          out).group(1)))
            for name in PROXIES["http"]:
                if name in self.proxies:
                    p = self.proxies[name]
                    try:
                        vals.setdefault(name, []).append(
                            wrk(name, p.ports["http"], p.auth))
                    except Skip as e:
                        self.note("keep-alive via %s: %s" % (name, e))
        for name in sorted(self.closes):
            self.note("keep-alive: %s closes the client connection after "
                      "each answer (wrk reconnects)" % name)
        self.row("keepalive", "keep-alive requests, HTTP forward",
                 "req/s ↑", "hi", median(direct),
                 {n: median(v) for n, v in vals.items()},
                 "wrk -t1 -c8 -d2s with GET http://127.0.0.1:PORT/ sent "
                 "to the proxy (floor: wrk straight at the server)")

    def rows_idle(self):
        """Memory: the proxy idle, per idle tunnel (NIDLE of them), and
        what it keeps once they are closed."""
        per, idle, kept = {}, {}, {}
        for name, p in self.proxies.items():
            if left() < 30:
                self.note("idle tunnels: skipped %s (time budget)" % name)
                continue
            proto = "socks5" if name in ("microsocks", "dante") else \
                "connect"
            before = pss_kib(p.pid)
            if name != "srt":
                idle[name] = self.idle_pss.get(name)
            ready = self.path("idle-%s.ready" % name)
            h = spawn([PXTOOL, "idle", "--target", "127.0.0.1:%d" % self.echo,
                       "--count", str(NIDLE), "--ready-file", ready,
                       "--hold-seconds", "60"] + p.args(proto),
                      stderr=subprocess.DEVNULL)
            if not wait_file(ready, 60):
                self.note("idle tunnels via %s did not open" % name)
                stop(h)
                continue
            time.sleep(0.5)
            per[name] = (pss_kib(p.pid) - before) / NIDLE
            stop(h)
            # Given back once the load is gone (malloc_trim in pisbx).
            time.sleep(1.0)
            kept[name] = max(pss_kib(p.pid) - before, 0)
        self.row("tunnel", "memory per idle tunnel", "KiB ↓", "lo", None,
                 per, "PSS of the proxy's processes with %d idle tunnels "
                 "(pxtool idle) minus before, / %d" % (NIDLE, NIDLE))
        self.row("tunnel", "memory kept after the tunnels closed", "KiB ↓",
                 "lo", None, kept, "PSS of the proxy's processes 1 s "
                 "after the %d idle tunnels closed, minus before them"
                 % NIDLE)
        self.row("idle", "idle memory, proxy alone", "KiB ↓", "lo", None,
                 idle, "PSS of the proxy's processes as started, before "
                 "any connection (srt: see the sandbox row)")

    def rows_idle_sandbox(self):
        vals = {}
        floor = None
        for who in [None, "unshare"] + self.sandboxes():
            argv = self.sandbox(who, ["sleep", "30"])
            p = spawn(argv, cwd=self.path("ws"), stderr=subprocess.DEVNULL)
            time.sleep(1.5)
            if p.poll() is not None:
                self.note("idle sandbox %s: exited early" % who)
                continue
            v = pss_kib(p.pid)
            stop(p)
            if who is None:
                continue
            if who == "unshare":
                floor = v
            else:
                vals[who] = v
        self.row("idle", "idle memory, sandbox running sleep", "KiB ↓", "lo",
                 floor, vals, "PSS of every process of `SANDBOX sleep 30` "
                 "after 1.5 s (floor: unshare -n sleep 30)")

    def per_sandbox(self, label, runs, argv_of, skip=()):
        """Median ms of argv_of(who) in each sandbox (srt: fewer runs)."""
        vals = {}
        for who in self.sandboxes():
            if who in skip:
                continue
            try:
                vals[who] = self.hyperfine(
                    "%s-%s" % (label, who), self.sandbox(who, argv_of(who)),
                    runs if who != "srt" else max(5, runs // 10),
                    cwd=self.path("ws"))
            except Skip as e:
                self.note("%s %s: %s" % (label, who, e))
        return vals

    def rows_start(self):
        runs = max(20, RUNS * 30)
        floor = self.hyperfine("unshare", self.sandbox("unshare", ["true"]),
                               runs)
        vals = self.per_sandbox("start", runs, lambda who: ["true"])
        self.row("start", "start: SANDBOX true", "ms ↓", "lo", floor, vals,
                 "hyperfine -N 'SANDBOX true' (pisbx: pisbx-run -- true; "
                 "bwrap --unshare-net --unshare-pid --unshare-ipc "
                 "--ro-bind / / --proc /proc --dev /dev true; srt true; "
                 "floor: unshare -n true)")
        agentrows.rows_start_cpu(self)
        curl = ["curl", "-sSf", "--noproxy", "", "-o", "/dev/null",
                "http://%s/" % self.target]
        cfloor = self.hyperfine("curl", curl, runs)
        cvals = self.per_sandbox("start+curl", runs, lambda who: curl,
                                 skip=("bwrap",))
        self.row("start", "start + one curl", "ms ↓", "lo", cfloor, cvals,
                 "hyperfine -N 'SANDBOX curl -sSf --noproxy \"\" "
                 "http://127.0.0.1:PORT/' through the sandbox's proxy "
                 "(floor: the same curl on the host; bwrap has no proxy)")

    def rows_extract(self):
        """10,000 small files out of a tar archive into the workspace."""
        src = self.path("files")
        for d in range(100):
            os.makedirs(os.path.join(src, "d%02d" % d))
            for i in range(NFILES // 100):
                with open(os.path.join(src, "d%02d" % d, "f%03d.js" % i),
                          "w") as f:
                    f.write("module.exports = %d;\n" % i * (1 + i % 40))
        tar = self.path("files.tar")
        run(["tar", "-cf", tar, "-C", src, "."])
        shutil.rmtree(src)
        ws = self.path("ws")
        out = os.path.join(ws, "x")
        old = self.path("extracted")
        os.makedirs(old, exist_ok=True)
        argv = ["tar", "-xf", tar, "-C", out]
        # Each run's tree is moved aside, not removed: ext4 without a
        # journal passes over recently deleted inodes when it allocates
        # one, which made the run after a removal up to 10x slower.
        prep = ("sh -c 'mv %s %s/$$ 2>/dev/null; mkdir %s'" %
                (out, old, out))
        floor = self.hyperfine("extract", argv, RUNS + 2, prepare=prep,
                               cwd=ws)
        vals = {}
        for who in self.sandboxes():
            if left() < 30:
                self.note("extract: skipped %s (time budget)" % who)
                continue
            try:
                vals[who] = self.hyperfine("extract-" + who,
                                           self.sandbox(who, argv),
                                           RUNS + 2, prepare=prep, cwd=ws)
            except Skip as e:
                self.note("extract %s: %s" % (who, e))
        self.row("extract", "extract 10,000 small files", "ms ↓", "lo",
                 floor, vals, "hyperfine -N 'SANDBOX tar -xf files.tar -C "
                 "ws/x' (%d files in 100 dirs; includes the sandbox's "
                 "start; floor: the same tar on the host)" % NFILES)
        # The trees (10,000 files a run, some 40 runs) go with the run's
        # folder after the table is printed: removing them here took
        # minutes of the budget on a busy ext4, and would slow the
        # creates of the rows after it.

    def rows_guard(self):
        """us per create: the seccomp-notify floor vs each sandbox."""
        if not os.access(GUARD_FLOOR, os.X_OK):
            raise Skip("%s not built" % GUARD_FLOOR)
        ws = self.path("ws")
        n = [0]

        # Each run creates in a directory of its own, all removed when the
        # row is done: a removal just before a run would slow its creates
        # (ext4 without a journal passes over recently deleted inodes).
        def one(who, mode, *extra):
            n[0] += 1
            d = os.path.join(ws, "gf%d" % n[0])
            os.mkdir(d)
            out = run(self.sandbox(who, [GUARD_FLOOR, mode, "--count",
                                         str(NCREATE), "--dir", d] +
                                   list(extra)))
            return float(re.search(r"us_per_create ([0-9.]+)", out).group(1))

        bare, floor, same, sync, vals = [], [], [], [], {}
        for _ in range(max(RUNS, 5)):
            if left() < 30:
                break
            bare.append(one(None, "bare"))
            for who in self.sandboxes():
                try:
                    vals.setdefault(who, []).append(one(who, "bare"))
                except Skip as e:
                    self.note("guard %s: %s" % (who, e))
            floor.append(one(None, "notify"))
            same.append(one(None, "notify", "--same-cpu"))
            sync.append(one(None, "notify", "--sync"))
        self.diag.append(
            "one create, µs (median of %d runs of %d): bare %.1f; seccomp "
            "notify floor %.1f, %.1f with guard and caller on one CPU, "
            "%.1f with the same-CPU wake-up flag" % (
                len(bare), NCREATE, median(bare), median(floor),
                median(same), median(sync)))
        for i in range(1, n[0] + 1):
            shutil.rmtree(os.path.join(ws, "gf%d" % i), ignore_errors=True)
        self.row("guard", "one create (guard floor)", "µs ↓", "lo",
                 min(median(floor), median(same), median(sync)),
                 {w: median(v) for w, v in vals.items()},
                 "guard_floor bare --count %d inside the sandbox (floor: "
                 "guard_floor notify [--same-cpu | --sync], the fastest: "
                 "a seccomp user-notification round trip whose supervisor "
                 "creates the file and installs the fd with "
                 "SECCOMP_IOCTL_NOTIF_ADDFD)" % NCREATE)

    def rows_npm(self):
        """npm ci of a real dependency tree from a loopback registry."""
        if os.environ.get("BENCH_NO_NPM") == "1":
            raise Skip("skipped (BENCH_NO_NPM=1)")
        reg = npm_registry()
        srv = spawn(["/usr/bin/python3", "-m", "http.server", "--bind",
                     "127.0.0.1", "--directory", reg["dir"], "0"],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    text=True)
        m = re.search(r"port (\d+)", srv.stdout.readline())
        if m is None:
            raise Skip("the loopback registry did not start")
        port = int(m.group(1))
        proj = self.path("npmproj")
        os.makedirs(proj)
        for f in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(reg["dir"], f), proj)
        url = "http://127.0.0.1:%d/" % port
        # Through the proxy in the sandboxes; NO_PROXY and npm's own
        # noproxy (pisbx-run sets both) are dropped so that npm does not
        # dial 127.0.0.1 directly (in a sandbox that is its own loopback).
        argv = ["env", "-u", "NO_PROXY", "-u", "no_proxy", "-u",
                "npm_config_noproxy", "npm", "ci",
                "--no-audit", "--no-fund", "--ignore-scripts",
                "--fetch-retries", "0", "--registry", url, "--cache",
                os.path.join(proj, ".cache")]
        prep = "sh -c 'rm -rf %s/node_modules %s/.cache'" % (proj, proj)
        floor = self.hyperfine("npm", argv, 2, prepare=prep, cwd=proj,
                               warmup=0, timeout=180)
        vals = {}
        for who in self.sandboxes():
            if left() < 60:
                self.note("npm ci: skipped %s (time budget)" % who)
                continue
            if who == "bwrap":
                continue
            a = argv + (["--proxy", "http://127.0.0.1:3128"]
                        if who in OURS else [])
            try:
                vals[who] = self.hyperfine("npm-" + who,
                                           self.sandbox(who, a, cwd=proj), 2,
                                           prepare=prep, cwd=proj, warmup=0,
                                           timeout=180)
            except Skip as e:
                self.note("npm ci %s: %s" % (who, e))
        self.row("npm", "npm ci, %d packages, %d files" % (
            reg["packages"], reg["files"]), "ms ↓", "lo", floor, vals,
            "hyperfine -N 'SANDBOX npm ci --registry http://127.0.0.1:PORT/' "
            "with an empty cache, from a loopback static registry (%s; "
            "floor: on the host)" % reg["what"])

    # the table

    def table(self):
        hdr = ["row", "unit", "floor"] + COLS + ["pisbx ÷ best peer",
                                                 "pisbx ÷ floor"]
        lines = [hdr]
        for r in self.rows:
            if "skipped" in r:
                lines.append([r["name"], "", "skipped"] +
                             [""] * (len(hdr) - 3))
                continue
            vals = r["vals"]
            cells = [r["name"], r["unit"], fmt(r["floor"])]
            for c in COLS:
                if c not in vals:
                    cells.append("–")
                else:
                    cells.append(fmt(vals[c]))
            peers = [v for c, v in vals.items() if c not in OURS and
                     v is not None]
            p = vals.get("pisbx")
            best = None
            if peers:
                best = max(peers) if r["better"] == "hi" else min(peers)
            cells.append(ratio(p, best))
            fl = r["floor"]
            if r["unit"].startswith("µs added") and p is not None and fl:
                cells.append(ratio(p + fl, fl))
            else:
                cells.append(ratio(p, fl))
            lines.append(cells)
        w = [max(len(l[i]) for l in lines) for i in range(len(hdr))]
        out = []
        for k, l in enumerate(lines):
            out.append("| " + " | ".join(
                l[i].ljust(w[i]) if i < 2 else l[i].rjust(w[i])
                for i in range(len(l))) + " |")
            if k == 0:
                out.append("|" + "|".join(
                    "-" * (w[i] + 1) + (":" if i >= 2 else "-")
                    for i in range(len(l))) + "|")
        return "\n".join(out)


# --- npm registry ------------------------------------------------------------

NPM_TREE = {"name": "pisbx-bench", "version": "1.0.0", "private": True,
            "dependencies": {"eslint": "8.57.0", "jest": "29.7.0",
                             "typescript": "5.4.5"}}


def npm_registry():
    """A static registry of a real dependency tree, built once.

    The tree is resolved and its tarballs fetched with npm itself (cached
    under $BUILD/bench/npm); the registry is a folder laid out like the
    public one (NAME/-/FILE.tgz), so `npm ci` with the lock file fetches
    every tarball from it (npm rewrites the lock's registry host to the
    configured registry)."""
    d = os.path.join(NPM_DIR, "registry")
    stamp = os.path.join(d, "ready.json")
    if os.path.exists(stamp):
        info = json.load(open(stamp))
        if info.get("tree") == NPM_TREE:
            return info
    if shutil.which("npm") is None:
        raise Skip("npm not installed")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "package.json"), "w") as f:
        json.dump(NPM_TREE, f, indent=1)
    run(["npm", "install", "--package-lock-only", "--no-audit", "--no-fund",
         "--ignore-scripts", "--cache", os.path.join(NPM_DIR, "cache")],
        cwd=d, timeout=180)
    lock = json.load(open(os.path.join(d, "package-lock.json")))
    specs = []
    for path, meta in lock["packages"].items():
        if not path:
            continue
        name = path.rsplit("node_modules/", 1)[1]
        specs.append("%s@%s" % (name, meta["version"]))
        # With a tarball address per entry npm ci asks the registry for
        # nothing else; it puts the configured registry in place of the
        # public one (replace-registry-host).
        meta.setdefault("resolved", "https://registry.npmjs.org/%s/-/%s-%s.tgz"
                        % (name, name.rsplit("/", 1)[-1], meta["version"]))
    with open(os.path.join(d, "package-lock.json"), "w") as f:
        json.dump(lock, f, indent=1)
    pk = os.path.join(NPM_DIR, "packed")
    os.makedirs(pk, exist_ok=True)
    out = run(["npm", "pack", "--json", "--pack-destination", pk, "--cache",
               os.path.join(NPM_DIR, "cache")] + sorted(set(specs)),
              cwd=d, timeout=300)
    files = 0
    for e in json.loads(out):
        name = e["name"]
        tgz = os.path.join(pk, e["filename"])
        base = "%s-%s.tgz" % (name.rsplit("/", 1)[-1], e["version"])
        dst = os.path.join(d, name, "-")
        os.makedirs(dst, exist_ok=True)
        shutil.copy(tgz, os.path.join(dst, base))
        files += e["entryCount"]
    info = {"tree": NPM_TREE, "dir": d, "packages": len(set(specs)),
            "files": files,
            "what": ", ".join("%s@%s" % kv for kv in
                              NPM_TREE["dependencies"].items())}
    json.dump(info, open(stamp, "w"))
    return info


# --- main --------------------------------------------------------------------

def machine():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 30
    fs, best = "?", ""
    for line in open("/proc/mounts"):
        f = line.split()
        if BUILD.startswith(f[1]) and len(f[1]) > len(best):
            fs, best = f[2], f[1]
    return ("%d CPUs (%s), %d GiB, kernel %s, workspace on %s, load %s" % (
        os.cpu_count(), cpu, mem, os.uname().release, fs,
        " ".join(open("/proc/loadavg").read().split()[:3])))


def main():
    for f in (PROXY, RUN, PXTOOL):
        if not os.access(f, os.X_OK):
            sys.exit("bench: %s not built (run make first)" % f)
    os.makedirs(os.path.join(BUILD, "bench"), exist_ok=True)
    b = Bench()
    tmp_before = srt_sockets()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    try:
        os.makedirs(b.path("ws"))
        # Every command runs in the workspace: the sandboxes make their
        # working directory writable.
        os.chdir(b.path("ws"))
        b.write_configs()
        b.start_servers()
        try:
            b.srt = b.srt_exe()
        except Skip as e:
            b.srt = None
            b.missing["srt"] = str(e)
        b.start_proxies()
        if "srt" not in b.proxies:
            b.srt = None
        print("pisbx bench: %s" % machine())
        print("runs: %d per figure (median kept); peers: %s" % (
            RUNS, ", ".join(n for n in COLS if n not in b.missing)),
            flush=True)
        steps = [
            ("start", "start", b.rows_start),
            ("throughput", "throughput (host)", b.rows_throughput),
            ("inside", "throughput (in sandbox)", b.rows_inside),
            ("latency", "new connection", b.rows_latency),
            ("keepalive", "keep-alive requests", b.rows_keepalive),
            ("tunnel", "memory", b.rows_idle),
            ("idle", "idle memory, sandbox", b.rows_idle_sandbox),
            ("extract", "extract", b.rows_extract),
            ("guard", "one create", b.rows_guard),
            ("sock", "socket calls", lambda: bench_sock.rows_sock(
                b, BUILD, RUN, RUNS, run, median, Skip, left)),
            ("tls", "TLS termination", lambda: tlsrows.rows_tls(b)),
            ("npm", "npm ci", b.rows_npm),
            ("claude", "Claude Code's line", lambda: agentrows.rows_claude(b)),
            ("mix", "50 agent commands", lambda: agentrows.rows_mix(b)),
            ("git", "git status", lambda: agentrows.rows_git(b)),
        ]
        for key, name, fn in steps:
            if ONLY and key not in ONLY:
                continue
            if left() < 20:
                b.skip_row(key, name, "time budget spent")
                continue
            t = time.monotonic()
            try:
                fn()
            except Skip as e:
                b.skip_row(key, name, str(e))
            except Exception as e:  # a row that breaks loses itself only
                b.skip_row(key, name, "failed: %s: %s" % (
                    type(e).__name__, e))
            print("  %-26s %5.1f s" % (name, time.monotonic() - t),
                  file=sys.stderr, flush=True)
        print()
        print(b.table())
        print()
        for d in b.diag:
            print("- " + d)
        if os.access(POLICY_BENCH, os.X_OK):
            # Its own Skip (out of time, or failed) is one line, like a
            # row's: the notes below are printed all the same.
            try:
                for line in run([POLICY_BENCH]).splitlines():
                    print("- " + line)
            except Skip as e:
                print("- policy evaluation: skipped: %s" % e)
        for r in b.rows:
            if "skipped" in r:
                print("- %s: skipped: %s" % (r["name"], r["skipped"]))
        for n in b.notes:
            print("- note: " + n)
        print()
        print("Commands behind each row (SANDBOX: pisbx-run --config C --, "
              "bwrap --unshare-net --unshare-pid --unshare-ipc --ro-bind / / "
              "--proc /proc --dev /dev --bind WS WS, srt -s S -c):")
        seen = set()
        for r in b.rows:
            if "cmds" in r and r["name"] not in seen:
                seen.add(r["name"])
                print("- %s: %s" % (r["name"], r["cmds"]))
        print("Ratios: pisbx ÷ the best peer in the row and ÷ the floor; "
              "↑ higher is better, ↓ lower is better.  new connection: "
              "pisbx ÷ floor compares the whole per-connection time.")
        print("total %.0f s" % (time.monotonic() - T0))
    finally:
        for p in reversed(STARTED):
            stop(p)
        shutil.rmtree(b.tmp, ignore_errors=True)
        # srt leaves its proxies' sockets in the temporary directory; a
        # /tmp that grows by hundreds of entries each bench makes every
        # later start's look through /tmp slower.
        for name in srt_sockets() - tmp_before:
            try:
                os.unlink(os.path.join(tempfile.gettempdir(), name))
            except OSError:
                pass


def srt_sockets():
    """The names of srt's sockets in the temporary directory."""
    d = tempfile.gettempdir()
    got = set()
    for n in os.listdir(d):
        try:
            if n.startswith(("srt-mux-", "srt-tt-")) and \
                    stat.S_ISSOCK(os.lstat(os.path.join(d, n)).st_mode):
                got.add(n)
        except OSError:
            pass
    return got


if __name__ == "__main__":
    main()
