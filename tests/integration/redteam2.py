#!/usr/bin/env python3
"""The cases of redteam-secrets2.sh: raw sockets and curl against
credproxy.  Prints one "ok - ..." or "not ok - ..." line per check."""
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

(cport, uport, pport, ca, rawlog, plainlog, ph, val, ph2, val2,
 cpid) = sys.argv[1:12]
cport, uport, pport = int(cport), int(uport), int(pport)
PH, V, PH2, V2 = (x.encode() for x in (ph, val, ph2, val2))


def ok(cond, what):
    print(("ok - " if cond else "not ok - ") + what, flush=True)


def rawsize():
    return os.path.getsize(rawlog)


def rawsince(off):
    time.sleep(0.3)
    with open(rawlog, "rb") as f:
        f.seek(off)
        return f.read()


def connect(host, port=None, socks=False):
    port = port or uport
    s = socket.create_connection(("127.0.0.1", cport), 10)
    s.settimeout(10)
    if socks:
        s.sendall(b"\x05\x01\x00")
        assert s.recv(2) == b"\x05\x00"
        s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() +
                  struct.pack(">H", port))
        rep = s.recv(10)
        if rep[1:2] != b"\x00":
            raise OSError("socks reply %r" % rep)
    else:
        s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" %
                  (host.encode(), port, host.encode(), port))
        r = b""
        while b"\r\n\r\n" not in r:
            d = s.recv(4096)
            if not d:
                raise OSError("closed: %r" % r)
            r += d
        if not r.startswith(b"HTTP/1.1 200"):
            raise OSError("CONNECT: %r" % r[:200])
    ctx = ssl.create_default_context(cafile=ca)
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx.wrap_socket(s, server_hostname=host)


def readall(t, limit=5.0):
    t.settimeout(limit)
    out = b""
    try:
        while True:
            d = t.recv(65536)
            if not d:
                break
            out += d
    except (OSError, ssl.SSLError):
        pass
    return out


def exchange(host, data, socks=False, limit=5.0):
    t = connect(host, socks=socks)
    t.sendall(data)
    return readall(t, limit)


def hp(host):
    return b"%s:%d" % (host.encode(), uport)


def status(resp):
    return resp.split(b"\r\n", 1)[0].decode("latin-1")


# --- Injection only where allowed --------------------------------------
# A reviewer-approved host: allowed by review, not by allowedDomains.
off = rawsize()
r = exchange("rev.test", b"GET /rev HTTP/1.1\r\nHost: %s\r\n"
             b"Connection: close\r\n\r\n" % hp("rev.test"))
ok(status(r).startswith("HTTP/1.1 200"), "review: rev.test approved (%s)"
   % status(r))
for name, p in (("TOKEN", PH), ("DEF", PH2)):
    off = rawsize()
    r = exchange("rev.test", b"GET /rev HTTP/1.1\r\nHost: %s\r\n"
                 b"Authorization: Bearer %s\r\nConnection: close\r\n\r\n"
                 % (hp("rev.test"), p))
    up = rawsince(off)
    ok(status(r).startswith("HTTP/1.1 403") and b"credential-leak" in r,
       "review: %s to a reviewer-approved host refused (%s)"
       % (name, status(r)))
    ok(V not in up and V2 not in up and p not in up,
       "review: %s: nothing of it reached rev.test" % name)

# DEF (allowedDomains by default) is injected at other.test, TOKEN not.
off = rawsize()
r = exchange("other.test", b"GET /o HTTP/1.1\r\nHost: %s\r\n"
             b"Authorization: Bearer %s\r\nConnection: close\r\n\r\n"
             % (hp("other.test"), PH2))
up = rawsince(off)
ok(V2 in up and status(r).startswith("HTTP/1.1 200"),
   "default injectHosts: DEF injected at an allowed host")

# SOCKS5 to the injectHost: terminated as a CONNECT is.
off = rawsize()
r = exchange("api.test", b"GET /s HTTP/1.1\r\nHost: %s\r\n"
             b"Authorization: Bearer %s\r\nConnection: close\r\n\r\n"
             % (hp("api.test"), PH), socks=True)
up = rawsince(off)
ok(V in up and status(r).startswith("HTTP/1.1 200"),
   "socks5: terminated, TOKEN injected at api.test")
off = rawsize()
r = exchange("other.test", b"GET /s HTTP/1.1\r\nHost: %s\r\n"
             b"Authorization: Bearer %s\r\nConnection: close\r\n\r\n"
             % (hp("other.test"), PH), socks=True)
up = rawsince(off)
ok(b"403" in status(r).encode() and V not in up and PH not in up,
   "socks5: TOKEN to other.test refused (%s)" % status(r))

# Plain HTTP to the injectHost, no allowPlaintextInject: a leak.
before = open(plainlog, "rb").read() if os.path.exists(plainlog) else b""
s = socket.create_connection(("127.0.0.1", cport), 10)
s.sendall(b"GET http://api.test:%d/p HTTP/1.1\r\nHost: api.test:%d\r\n"
          b"Authorization: Bearer %s\r\nConnection: close\r\n\r\n"
          % (pport, pport, PH))
r = readall(s)
after = open(plainlog, "rb").read() if os.path.exists(plainlog) else b""
ok(status(r).startswith("HTTP/1.1 403") and after == before,
   "plain http to the injectHost: refused, nothing sent (%s)" % status(r))

# --- Placeholders where they are not swapped ----------------------------
def refused_other(desc, req):
    off = rawsize()
    r = exchange("other.test", req)
    up = rawsince(off)
    ok(PH not in up and V not in up,
       "%s: nothing of TOKEN reached other.test (%s)" % (desc, status(r)))
    return r


r = refused_other("in the method", b"%s /m HTTP/1.1\r\nHost: %s\r\n"
                  b"Connection: close\r\n\r\n" % (PH, hp("other.test")))
ok(b"credential-leak" in r, "in the method: refused as a leak")
r = refused_other("in a header name", b"GET /n HTTP/1.1\r\nHost: %s\r\n"
                  b"%s: x\r\nConnection: close\r\n\r\n"
                  % (hp("other.test"), PH))
ok(b"credential-leak" in r, "in a header name: refused as a leak")
refused_other("in a chunk extension", b"POST /c HTTP/1.1\r\nHost: %s\r\n"
              b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
              b"1;x=%s\r\na\r\n0\r\n\r\n" % (hp("other.test"), PH))
refused_other("in a trailer", b"POST /t HTTP/1.1\r\nHost: %s\r\n"
              b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
              b"1\r\na\r\n0\r\nX-T: %s\r\n\r\n" % (hp("other.test"), PH))
mp = (b"--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n" + PH +
      b"\r\n--b--\r\n")
r = refused_other("in a multipart body", b"POST /mp HTTP/1.1\r\nHost: %s\r\n"
                  b"Content-Type: multipart/form-data; boundary=b\r\n"
                  b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                  % (hp("other.test"), len(mp)) + mp)
ok(b"credential-leak" in r, "in a multipart body: refused as a leak")
# Plain HTTP, a placeholder in a header name.
before = open(plainlog, "rb").read() if os.path.exists(plainlog) else b""
s = socket.create_connection(("127.0.0.1", cport), 10)
s.sendall(b"GET http://other.test:%d/p HTTP/1.1\r\nHost: other.test:%d\r\n"
          b"%s: x\r\nConnection: close\r\n\r\n" % (pport, pport, PH))
r = readall(s)
after = open(plainlog, "rb").read() if os.path.exists(plainlog) else b""
ok(status(r).startswith("HTTP/1.1 403") and PH not in after[len(before):],
   "plain http, in a header name: refused (%s)" % status(r))
# Absolute-form naming another host inside api.test's tunnel.
off = rawsize()
r = exchange("api.test", b"GET https://other.test:%d/x HTTP/1.1\r\n"
             b"Host: other.test:%d\r\nAuthorization: Bearer %s\r\n"
             b"Connection: close\r\n\r\n" % (uport, uport, PH))
up = rawsince(off)
ok(status(r).startswith("HTTP/1.1 421") and up == b"",
   "absolute-form of another host: 421, nothing sent (%s)" % status(r))

# At the injectHost: only a whole placeholder in a header value, the
# target or the body is swapped; anywhere else the value never appears.
def no_value_at_api(desc, req):
    off = rawsize()
    r = exchange("api.test", req)
    up = rawsince(off)
    ok(V not in up, "%s: no value sent (%s)" % (desc, status(r)))
    return r, up


half = len(PH) // 2
no_value_at_api("split across two headers", b"GET /h HTTP/1.1\r\n"
                b"Host: %s\r\nX-A: %s\r\nX-B: %s\r\nConnection: close\r\n"
                b"\r\n" % (hp("api.test"), PH[:half], PH[half:]))
no_value_at_api("split across name and value", b"GET /h HTTP/1.1\r\n"
                b"Host: %s\r\n%s: %s\r\nConnection: close\r\n\r\n"
                % (hp("api.test"), PH[:half], PH[half:]))
no_value_at_api("percent-encoded in the target", b"GET /q?k=%%70%s "
                b"HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                % (PH[1:], hp("api.test")))
no_value_at_api("in a header name at the injectHost", b"GET /h HTTP/1.1\r\n"
                b"Host: %s\r\n%s: x\r\nConnection: close\r\n\r\n"
                % (hp("api.test"), PH))
no_value_at_api("in the method at the injectHost", b"%s /h HTTP/1.1\r\n"
                b"Host: %s\r\nConnection: close\r\n\r\n"
                % (PH, hp("api.test")))

# --- Smuggling: the upstream sees only what pisbx decided ---------------
def smuggle(desc, req, want_status, forbidden=(b"receive-pack",)):
    off = rawsize()
    r = exchange("api.test", req)
    up = rawsince(off)
    if want_status is None:
        ok(r == b"" or status(r).startswith("HTTP/1.1 400"),
           "%s: closed or 400 (%r)" % (desc, status(r)))
    else:
        ok(status(r).startswith("HTTP/1.1 " + want_status),
           "%s: answered %s (%s)" % (desc, want_status, status(r)))
    bad = [f for f in forbidden if f in up]
    ok(not bad, "%s: the upstream saw no %r" % (desc, bad))
    return r, up


H = hp("api.test")
hidden = (b"POST /o/r.git/git-receive-pack HTTP/1.1\r\nHost: " + H +
          b"\r\nContent-Length: 1\r\n\r\nx")
smuggle("CL+TE", b"POST /a HTTP/1.1\r\nHost: %s\r\nContent-Length: 4\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" % H + hidden, "400")
smuggle("two Content-Length", b"POST /a HTTP/1.1\r\nHost: %s\r\n"
        b"Content-Length: 0\r\nContent-Length: %d\r\n\r\n"
        % (H, len(hidden)) + hidden, "400")
smuggle("obs-fold", b"POST /a HTTP/1.1\r\nHost: %s\r\nX-F: a\r\n"
        b" Content-Length: %d\r\n\r\n" % (H, len(hidden)) + hidden, "400")
smuggle("TE chunked, identity", b"POST /a HTTP/1.1\r\nHost: %s\r\n"
        b"Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" % H +
        hidden, "501")
r, up = smuggle("chunk-size overflow", b"POST /a HTTP/1.1\r\nHost: %s\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
                b"10000000000000001\r\nx\r\n0\r\n\r\n" % H + hidden, None,
                (b"receive-pack", b"10000000000000001"))
r, up = smuggle("bare LF", b"POST /a HTTP/1.1\nHost: %s\nContent-Length: 0"
                b"\n\n" % H + hidden, "200")
ok(b"\r\nContent-Length: 0\r\n" in up and b"POST /a HTTP/1.1\r\n" in up,
   "bare LF: the upstream got CR LF lines")
ok(b"request-rule" in r, "bare LF: the pipelined push refused")
r, up = smuggle("HTTP/1.0 keep-alive", b"GET /a HTTP/1.0\r\nHost: %s\r\n"
                b"Connection: keep-alive\r\n\r\n" % H + hidden, "200")
ok(b"request-rule" in r, "HTTP/1.0 keep-alive: the next request checked")
# A request hidden in the body is body: one request upstream.
r, up = smuggle("request in a body", b"POST /b HTTP/1.1\r\nHost: %s\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                % (H, len(hidden)) + hidden, "200", ())
ok(up.count(b" HTTP/1.1\r\n") == 1 + hidden.count(b" HTTP/1.1\r\n") and
   up.startswith(b"POST /b HTTP/1.1\r\n"),
   "request in a body: the upstream got it as the body")
# Expect: 100-continue on a denied path: nothing goes up.
off = rawsize()
t = connect("api.test")
t.sendall(b"PUT /x HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\n"
          b"Expect: 100-continue\r\n\r\n" % H)
r = readall(t, 3)
up = rawsince(off)
ok(status(r).startswith("HTTP/1.1 403") and up == b"",
   "Expect on a denied path: 403, nothing sent (%s)" % status(r))

# --- Responses: the client side stays framed ----------------------------
for path in (b"/r204", b"/r304"):
    t = connect("api.test")
    t.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n"
              b"GET /next HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
              % (path, H, H))
    r = readall(t)
    first, _, rest = r.partition(b"\r\n\r\n")
    ok(rest.startswith(b"HTTP/1.1 200") and b"seen" in rest,
       "%s then another: the second response follows the first head"
       % path.decode())
    if path == b"/r204":
        ok(b"content-length" not in first.lower(),
           "/r204: no Content-Length to the client")
t = connect("api.test")
t.sendall(b"HEAD /h HTTP/1.1\r\nHost: %s\r\n\r\n"
          b"GET /next HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
          % (H, H))
r = readall(t)
ok(r.count(b"HTTP/1.1 200") == 2 and r.endswith(b"\n"),
   "HEAD then GET: two responses")
# A server that sends a body after HEAD: its stray bytes are not a
# response the client reads.
t = connect("api.test")
t.sendall(b"HEAD /hbody HTTP/1.1\r\nHost: %s\r\n\r\n"
          b"GET /next HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
          % (H, H))
r = readall(t)
first, _, rest = r.partition(b"\r\n\r\n")
ok(first.startswith(b"HTTP/1.1 200") and not rest.startswith(b"seen"),
   "HEAD with a body, then GET: the stray body is no response (%s)"
   % status(rest))
r = exchange("api.test", b"GET /clte HTTP/1.1\r\nHost: %s\r\n\r\n" % H)
head, _, body = r.partition(b"\r\n\r\n")
ok(b"content-length: 50" not in head.lower() and body.endswith(b"abc") or
   b"abc" in body, "response with CL and TE: the chunked body wins")
ok(b"content-length" not in head.lower(),
   "response with CL and TE: no Content-Length to the client")

# --- h2 preface after ALPN http/1.1 --------------------------------------
t = connect("api.test")
ok(t.selected_alpn_protocol() == "http/1.1", "ALPN: http/1.1")
t.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
r = readall(t)
ok(status(r).startswith("HTTP/1.1 505") or status(r).startswith("HTTP/1.1 400"),
   "h2 preface: refused (%s)" % status(r))

# --- DoS -----------------------------------------------------------------
def rss():
    with open("/proc/%s/status" % cpid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    return 0


def curl_ok():
    p = subprocess.run(["curl", "-sS", "--max-time", "5", "-o", "/dev/null",
                        "-w", "%{http_code}", "--proxy",
                        "http://127.0.0.1:%d" % cport, "--cacert", ca,
                        "https://api.test:%d/alive" % uport],
                       capture_output=True, text=True)
    return p.stdout == "200"


rss0 = rss()
r = exchange("api.test", b"GET / HTTP/1.1\r\nHost: %s\r\nX: %s\r\n\r\n"
             % (H, b"a" * 70000))
ok(status(r).startswith("HTTP/1.1 431"), "64 KiB+ header: 431 (%s)"
   % status(r))
r = exchange("api.test", b"GET / HTTP/1.1\r\nHost: %s\r\n" % H +
             b"X: y\r\n" * 10000 + b"\r\n")
ok(status(r).startswith("HTTP/1.1 431"), "10000 headers: 431 (%s)"
   % status(r))
# An endless chunked body, a byte at a time; others keep working.
t = connect("api.test")
t.sendall(b"POST /slow HTTP/1.1\r\nHost: %s\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n" % H)
for i in range(3):
    t.sendall(b"1\r\nx\r\n")
    time.sleep(0.3)
ok(curl_ok(), "a trickled chunked body: another request goes through")
t.close()
# A handshake that never ends: closed after handshakeTimeoutMs.
s = socket.create_connection(("127.0.0.1", cport), 10)
s.sendall(b"CONNECT api.test:%d HTTP/1.1\r\nHost: api.test\r\n\r\n" % uport)
s.recv(4096)
ctx = ssl.create_default_context(cafile=ca)
obj = ssl.MemoryBIO(), ssl.MemoryBIO()
so = ctx.wrap_bio(obj[0], obj[1], server_hostname="api.test")
try:
    so.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = obj[1].read()
s.sendall(hello[:len(hello) - 1])       # all but its last byte
t0 = time.time()
s.settimeout(10)
try:
    while s.recv(4096):
        pass
except OSError:
    pass
dt = time.time() - t0
ok(dt < 5, "slow handshake: closed in %.1f s (handshakeTimeoutMs 1000)" % dt)
# Tunnels held open, more than maxTunnels (8): each one CONNECTed and
# silent.  Others keep working, or are refused and then recover.
held = []
for i in range(300):
    try:
        s = socket.create_connection(("127.0.0.1", cport), 10)
        s.sendall(b"CONNECT api.test:%d HTTP/1.1\r\nHost: api.test\r\n\r\n"
                  % uport)
        held.append(s)
    except OSError:
        break
time.sleep(1)
ok(len(held) == 300, "300 tunnels opened (%d)" % len(held))
t0 = time.time()
good = False
while time.time() - t0 < 4:
    if curl_ok():
        good = True
        break
    time.sleep(0.2)
ok(good, "300 silent tunnels: a real client is served within 4 s (%.1f s)"
   % (time.time() - t0))
for s in held:
    s.close()
time.sleep(0.5)
ok(curl_ok(), "after the tunnels: served")
rss1 = rss()
ok(rss1 - rss0 < 32 * 1024, "RSS %d KiB -> %d KiB" % (rss0, rss1))
os.kill(int(cpid), 0)
ok(True, "the proxy is alive")
