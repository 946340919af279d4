"""The rows of make bench for TLS termination (network.tlsTerminate):
what a new terminated connection adds, the throughput of one HTTPS
download and one upload through a terminated tunnel, and the proxy's
memory per terminated tunnel; pisbx-proxy beside srt's proxy with
tlsTerminate on the same work.

The upstream is bench/tlsload.py's HTTPS server on 127.0.0.1 with a
certificate of a CA made here (P-256, so that the server's handshake is
cheap); both proxies get one RSA CA made here (srt takes RSA only) and
trust the server's CA (pisbx: tlsTerminate.extraCaCertPaths; srt
verifies its upstream against Node's roots, so NODE_EXTRA_CA_CERTS in
its environment).  The clients trust both CAs (one bundle), so the
direct, tunnelled and terminated runs verify the same way."""

import json
import os
import re
import subprocess
import sys
import time

from benchlib import (GIB, RUNS, Skip, cpu_ns, cpu_ticks, left, median,
                      pss_kib, run, spawn, stop, wait_file)

TLSLOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "tlsload.py")
NCONN = 300         # new TLS connections per latency run
NHOLD = 200         # terminated tunnels held for the memory row (< 256:
                    # both proxies' default maxTunnels)


def openssl(*args):
    run(["openssl"] + list(args))


def make_pki(b):
    """The server's CA and certificate (for 127.0.0.1), the proxies' CA,
    and the bundle the clients trust."""
    d = b.path("pki")
    os.makedirs(d)
    p = {k: os.path.join(d, k) for k in (
        "server-ca.pem", "server-ca.key", "server.pem", "server.key",
        "server.csr", "server.ext", "proxy-ca.pem", "proxy-ca.key",
        "clients.pem")}
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    ca_ext = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext",
              "keyUsage=critical,keyCertSign,cRLSign"]
    openssl("req", "-x509", *ec, "-keyout", p["server-ca.key"], "-out",
            p["server-ca.pem"], "-days", "2", "-subj",
            "/CN=pisbx bench server CA", *ca_ext)
    openssl("req", "-new", *ec, "-keyout", p["server.key"], "-out",
            p["server.csr"], "-subj", "/CN=127.0.0.1")
    with open(p["server.ext"], "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1\n"
                "subjectKeyIdentifier=hash\n"
                "authorityKeyIdentifier=keyid\n")
    openssl("x509", "-req", "-in", p["server.csr"], "-CA",
            p["server-ca.pem"], "-CAkey", p["server-ca.key"],
            "-CAcreateserial", "-out", p["server.pem"], "-days", "2",
            "-extfile", p["server.ext"])
    # RSA: srt refuses any other CA key ("key is not RSA"); PKCS#8 PEM,
    # which both read; the key a private file, as pisbx requires.
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
            p["proxy-ca.key"], "-out", p["proxy-ca.pem"], "-days", "2",
            "-subj", "/CN=pisbx bench proxy CA", *ca_ext)
    os.chmod(p["proxy-ca.key"], 0o600)
    with open(p["clients.pem"], "w") as f:
        for k in ("server-ca.pem", "proxy-ca.pem"):
            f.write(open(p[k]).read())
    return p


def start_server(b, p):
    pf = b.path("tls.port")
    proc = spawn([sys.executable, TLSLOAD, "serve", "--cert", p["server.pem"],
                  "--key", p["server.key"], "--port-file", pf],
                 stderr=open(b.path("tls-server.err"), "w"))
    if not wait_file(pf):
        raise Skip("the HTTPS server did not start: %s" %
                   open(b.path("tls-server.err")).read()[-300:])
    return proc, int(open(pf).read())


def tls_conf(p):
    return {"caCertPath": p["proxy-ca.pem"], "caKeyPath": p["proxy-ca.key"],
            "extraCaCertPaths": [p["server-ca.pem"]]}


def start_pisbx_tls(b, p):
    conf = json.load(open(b.path("pisbx.json")))
    conf["network"]["tlsTerminate"] = tls_conf(p)
    path = b.path("pisbx-tls.json")
    with open(path, "w") as f:
        json.dump(conf, f)
    try:
        return b.start_pisbx("pisbx-tls", config=path)
    except SystemExit as e:
        raise Skip(str(e))


def start_srt_tls(b, p):
    conf = json.load(open(b.path("srt.json")))
    conf["network"]["tlsTerminate"] = tls_conf(p)
    path = b.path("srt-tls.json")
    with open(path, "w") as f:
        json.dump(conf, f)
    env = dict(os.environ, NODE_EXTRA_CA_CERTS=p["server-ca.pem"])
    return b.start_srt("srt-tls", config=path, env=env)


def via(proxy):
    """tlsload's arguments for the proxy (None: direct)."""
    if proxy is None:
        return []
    a = ["--proxy", "127.0.0.1:%d" % proxy.ports["connect"]]
    return a + (["--proxy-auth", proxy.auth] if proxy.auth else [])


def conns_us(target, p, proxy, count=NCONN):
    out = run([sys.executable, TLSLOAD, "conns", "--target", target,
               "--cafile", p["clients.pem"], "--count", str(count)] +
              via(proxy), timeout=120)
    return float(re.search(r"us_per_conn ([0-9.]+)", out).group(1))


def curl_mbps(b, target, p, proxy, up):
    """MB/s of one 1 GiB download (or upload, up) over one HTTPS
    connection, and the CPU seconds of curl."""
    argv = ["curl", "-sS", "--fail", "--http1.1", "--cacert",
            p["clients.pem"], "-o", "/dev/null", "-w",
            "%{size_download} %{speed_download} %{size_upload} "
            "%{speed_upload}"]
    if proxy is not None:
        argv += ["--proxy", "http://127.0.0.1:%d" % proxy.ports["connect"]]
        if proxy.auth:
            argv += ["--proxy-user", proxy.auth]
    if up:
        # No "Expect: 100-continue" wait: the body follows the head.
        argv += ["-H", "Expect:", "-T", b.path("upload.bin"),
                 "https://%s/put" % target]
    else:
        argv += ["https://%s/bytes/%d" % (target, GIB)]
    t = os.times()
    out = run(argv, timeout=180).split()
    c = os.times()
    size, speed = (int(out[2]), float(out[3])) if up else \
        (int(out[0]), float(out[1]))
    if size != GIB:
        raise Skip("short transfer: %d bytes" % size)
    return speed / 1e6, (c.children_user + c.children_system -
                         t.children_user - t.children_system)


def rows_tls(b):
    if "pisbx" not in b.proxies:
        raise Skip("pisbx-proxy is not running")
    p = make_pki(b)
    server, port = start_server(b, p)
    target = "127.0.0.1:%d" % port
    term = {}
    try:
        measure(b, p, server, target, term)
    finally:
        for x in term.values():
            stop(x.proc)
        stop(server)


def measure(b, p, server, target, term):
    plain = {"pisbx": b.proxies["pisbx"]}
    try:
        term["pisbx"] = start_pisbx_tls(b, p)
    except Skip as e:
        b.note("tls: pisbx-proxy with tlsTerminate: %s" % e)
    if b.srt:
        plain["srt"] = b.proxies["srt"]
        try:
            term["srt"] = start_srt_tls(b, p)
        except Skip as e:
            b.note("tls: srt with tlsTerminate: %s" % e)
    time.sleep(0.3)
    idle = {n: pss_kib(x.pid) for n, x in term.items()}
    # Warm-up: each proxy makes its leaf for 127.0.0.1 (srt an RSA key
    # too) and opens its upstream once before anything is timed.
    for name, x in list(term.items()):
        try:
            conns_us(target, p, x, 3)
        except Skip as e:
            b.note("tls: %s with tlsTerminate: %s" % (name, e))
            del term[name]

    # New connections: the same client direct, through each plain
    # tunnel and through each terminating proxy, round after round.
    direct, added, cpu = [], {}, {}
    for _ in range(max(RUNS, 3)):
        if left() < 60:
            b.note("tls new connection: fewer runs (time budget)")
            break
        d = conns_us(target, p, None)
        direct.append(d)
        for kind, subjects in (("plain", plain), ("term", term)):
            for name, x in subjects.items():
                clock = cpu_ns if name == "pisbx" else cpu_ticks
                c0 = clock(x.pid)
                try:
                    v = conns_us(target, p, x)
                except Skip as e:
                    b.note("tls new connection, %s %s: %s" % (kind, name, e))
                    continue
                added.setdefault((kind, name), []).append(v - d)
                cpu.setdefault((kind, name), []).append(
                    (clock(x.pid) - c0) * 1e6 / NCONN)
    fl = median(direct)
    cmd = ("bench/tlsload.py conns --count %d: CONNECT, a full TLS 1.3 "
           "handshake, GET /, the answer, close, one after the other; "
           "minus the same direct (floor: µs per direct TLS connection)"
           % NCONN)
    b.row("tlsconn", "new TLS connection, CONNECT tunnel", "µs added ↓",
          "lo", fl, {n: median(added.get(("plain", n), [])) for n in plain},
          cmd + "; the proxy without tlsTerminate")
    b.row("tlsconn", "new TLS connection, terminated", "µs added ↓", "lo",
          fl, {n: median(added.get(("term", n), [])) for n in term},
          cmd + "; the proxy with tlsTerminate (its leaf for 127.0.0.1 "
          "made before the timed runs, the upstream verified)")
    over = []
    for n in term:
        t, o = median(added.get(("term", n), [])), \
            median(added.get(("plain", n), []))
        if t is not None and o is not None:
            over.append("%s %.0f" % (n, t - o))
    if over:
        b.diag.append("TLS termination adds, per new connection, over the "
                      "same proxy's plain tunnel (µs, median): " +
                      ", ".join(over))
    b.diag.append("proxy CPU µs per new TLS connection (median; pisbx from "
                  "schedstat, srt from clock ticks): " + ", ".join(
                      "%s %s %.0f" % (n, k, median(v))
                      for (k, n), v in sorted(cpu.items())))

    # Throughput: 1 GiB down and 1 GiB up, one HTTPS connection each.
    with open(b.path("upload.bin"), "wb") as f:
        f.truncate(GIB)     # sparse: reading it costs curl no disk
    # Read once, so that no timed upload pays for the page cache's
    # zeroed pages (3 s of system time in the first run here).
    with open(b.path("upload.bin"), "rb") as f:
        while f.read(1 << 20):
            pass
    fl_mb, mb, cpus = {}, {}, {}
    subjects = [("direct", None)] + [("term", n) for n in term] + \
        [("plain", "pisbx")]
    for _ in range(RUNS):
        if left() < 90:
            b.note("tls throughput: fewer runs (time budget)")
            break
        for up in (False, True):
            for kind, name in subjects:
                x = None if name is None else \
                    (term if kind == "term" else plain)[name]
                pid = x.pid if x else None
                c0 = cpu_ticks(pid) if pid else 0
                s0 = cpu_ticks(server.pid)
                try:
                    v, cc = curl_mbps(b, target, p, x, up)
                except Skip as e:
                    b.note("tls throughput %s %s %s: %s" % (
                        "up" if up else "down", kind, name or "", e))
                    continue
                (fl_mb if x is None else mb).setdefault(
                    (up, kind, name), []).append(v)
                cpus.setdefault((up, "%s %s" % (kind, name) if name else
                                 kind), []).append(
                    (cc, cpu_ticks(server.pid) - s0,
                     (cpu_ticks(pid) - c0) if pid else 0))
    for up, label in ((False, "download"), (True, "upload")):
        b.row("tlsput", "TLS %s, 1 GiB, terminated" % label, "MB/s ↑", "hi",
              median(fl_mb.get((up, "direct", None), [])),
              {n: median(mb.get((up, "term", n), [])) for n in term},
              "curl --http1.1 %s https://127.0.0.1:PORT/%s through the "
              "proxy with tlsTerminate, one HTTPS connection (floor: the "
              "same curl direct to the server)" % (
                  "-T 1GiB-file" if up else "-o /dev/null",
                  "put" if up else "bytes/1073741824"))
        t = median(mb.get((up, "plain", "pisbx"), []))
        if t is not None:
            b.diag.append("TLS %s through pisbx's plain CONNECT tunnel (no "
                          "termination): %.0f MB/s" % (label, t))
    for k, v in sorted(cpus.items(), key=str):
        b.diag.append("CPU s per GiB, TLS %s %s (median of %d): curl "
                      "%.2f, server %.2f, proxy %.2f" % (
                          "upload" if k[0] else "download", k[1],
                          len(v), median([x[0] for x in v]),
                          median([x[1] for x in v]),
                          median([x[2] for x in v])))

    # Memory: NHOLD terminated tunnels, each with one answer, held idle.
    per = {}
    for name, x in term.items():
        if left() < 40:
            b.note("tls memory: skipped %s (time budget)" % name)
            continue
        before = pss_kib(x.pid)
        ready = b.path("tls-hold-%s.ready" % name)
        h = spawn([sys.executable, TLSLOAD, "hold", "--target", target,
                   "--cafile", p["clients.pem"], "--count", str(NHOLD),
                   "--ready-file", ready, "--hold-seconds", "30"] + via(x),
                  stderr=subprocess.DEVNULL)
        try:
            if not wait_file(ready, 60):
                b.note("tls memory: the %d tunnels through %s did not "
                       "open" % (NHOLD, name))
                continue
            time.sleep(0.5)
            per[name] = (pss_kib(x.pid) - before) / NHOLD
        finally:
            stop(h)
    b.row("tlsmem", "memory per terminated tunnel", "KiB ↓", "lo", None,
          per, "PSS of the proxy's processes with %d terminated tunnels "
          "held idle after one answer each (tlsload.py hold), minus "
          "before, / %d" % (NHOLD, NHOLD))
    b.diag.append("idle memory with tlsTerminate, before any connection "
                  "(KiB PSS): " + ", ".join("%s %d" % kv
                                            for kv in idle.items()))
