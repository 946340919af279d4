#!/usr/bin/env python3
"""The client of redteam-term3.sh: a CONNECT through pisbx, TLS that
trusts pisbx's CA, raw HTTP/1.1 inside.

    redteam3_client.py PXPORT CAFILE TARGET SNI CASE

SNI "-": none sent (and no name checked).  CASE: "budget" (keep-alive
POSTs of 4000 bytes until the proxy closes: "closed-after N" or
"all-sent N"), "continue" (Expect: 100-continue, a 60000-byte body), or
"METHOD PATH HOST" (one request with that Host, and TARGET's port).  Prints one line: the
response's status line, or what happened instead ("error-tls",
"closed", the CONNECT's refusal).  Python 3 standard library only."""
import socket, ssl, sys

pxport, cafile, target, sni, case = sys.argv[1:6]
s = socket.create_connection(("127.0.0.1", int(pxport)), timeout=20)
s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
head = b""
while b"\r\n\r\n" not in head:
    d = s.recv(1)
    if not d:
        print("closed-before-200"); sys.exit(0)
    head += d
if not head.startswith(b"HTTP/1.1 200"):
    print(head.split(b"\r\n")[0].decode()); sys.exit(0)
ctx = ssl.create_default_context(cafile=cafile)
try:
    if sni == "-":
        ctx.check_hostname = False
        t = ctx.wrap_socket(s, server_hostname=None)
    else:
        t = ctx.wrap_socket(s, server_hostname=sni)
except (OSError, ssl.SSLError):
    print("error-tls")
    sys.exit(0)
port = target.rsplit(":", 1)[1]
hostname = target.rsplit(":", 1)[0] + ":" + port

def status():
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = t.recv(65536)
        if not d:
            return None, buf
        buf += d
    h, rest = buf.split(b"\r\n\r\n", 1)
    n = 0
    for line in h.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    while len(rest) < n:
        d = t.recv(65536)
        if not d:
            break
        rest += d
    return h.split(b"\r\n")[0].decode(), rest

if case == "budget":
    # keep-alive POSTs of 4000 bytes each, until the proxy closes
    sent = 0
    for i in range(20):
        body = b"B" * 4000
        try:
            t.sendall(b"POST /up%d HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n" % (i, hostname.encode(), len(body)) + body)
            st, _ = status()
        except (OSError, ssl.SSLError):
            st = None
        if st is None:
            print("closed-after %d" % i); sys.exit(0)
        sent += 1
    print("all-sent %d" % sent)
elif case == "continue":
    try:
        t.sendall(b"POST /cont HTTP/1.1\r\nHost: %s\r\nExpect: 100-continue\r\nContent-Length: 60000\r\n\r\n" % hostname.encode())
        t.sendall(b"C" * 60000)
        st, _ = status()
        print(st if st else "closed")
    except (OSError, ssl.SSLError):
        print("closed")
else:
    method, path, host = case.split(" ", 2)
    host += ":" + port
    try:
        t.sendall(b"%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n" % (method.encode(), path.encode(), host.encode()))
        st, _ = status()
        print(st if st else "closed")
    except (OSError, ssl.SSLError) as e:
        print("error %s" % e)
