#!/usr/bin/python3
"""The HTTPS end of make bench's TLS rows: a server on 127.0.0.1 and the
clients that time new connections and hold tunnels open.

    tlsload.py serve --cert C --key K --port-file F
        HTTP/1.1 over TLS, a thread per connection, keep-alive:
        GET /bytes/N answers N bytes (from one buffer: the server copies
        nothing per byte but what TLS costs), PUT or POST reads the body
        and answers its length, anything else answers "ok".
    tlsload.py conns --target H:P --cafile CA --count N [--proxy H:P]
                     [--proxy-auth U:P]
        N new connections one after the other: CONNECT (through the
        proxy), a full TLS handshake (no session resumed), GET /, the
        answer read by its length, close.  Prints "conns N us_per_conn X".
    tlsload.py hold --target H:P --cafile CA --count N --ready-file F
                    --hold-seconds S [--proxy H:P] [--proxy-auth U:P]
        N tunnels each with one request answered, kept open (idle) for S
        seconds; F is written once all are open.

Only the standard library: the server must not be what bounds the
throughput through a proxy, and Python's ssl does its bulk work in
OpenSSL with the interpreter's lock released."""

import argparse
import base64
import os
import socket
import ssl
import sys
import threading
import time

CHUNK = 1 << 20
ZEROS = bytes(CHUNK)


def read_head(conn, buf):
    """The request or answer head and whatever followed it."""
    while b"\r\n\r\n" not in buf:
        got = conn.recv(65536)
        if not got:
            return None, b""
        buf += got
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def header(head, name):
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == name:
            return v.strip()
    return None


def serve_one(conn):
    buf = b""
    sink = bytearray(CHUNK)
    try:
        conn.do_handshake()
        while True:
            head, buf = read_head(conn, buf)
            if head is None:
                return
            method, path = head.split(" ", 2)[:2]
            close = (header(head, "connection") or "").lower() == "close"
            if method in ("PUT", "POST"):
                n = int(header(head, "content-length") or "0")
                got = min(len(buf), n)
                buf = buf[got:]
                view = memoryview(sink)
                while got < n:
                    k = conn.recv_into(view, min(CHUNK, n - got))
                    if k == 0:
                        return
                    got += k
                body = b"got %d\n" % got
            elif path.startswith("/bytes/"):
                n = int(path[len("/bytes/"):])
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                             b"Content-Type: application/octet-stream\r\n"
                             b"\r\n" % n)
                while n > 0:
                    k = min(n, CHUNK)
                    conn.sendall(ZEROS if k == CHUNK else ZEROS[:k])
                    n -= k
                if close:
                    return
                continue
            else:
                body = b"ok\n"
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                         b"Content-Type: text/plain\r\n%s\r\n%s" % (
                             len(body),
                             b"Connection: close\r\n" if close else b"",
                             body))
            if close:
                return
    except (OSError, ValueError, IndexError):
        return
    finally:
        try:
            conn.close()
        except OSError:
            pass


def serve(a):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1024)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(tmp, a.port_file)
    while True:
        c, _ = ls.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t = ctx.wrap_socket(c, server_side=True, do_handshake_on_connect=False)
        threading.Thread(target=serve_one, args=(t,), daemon=True).start()


def hostport(s):
    h, _, p = s.rpartition(":")
    return h, int(p)


def open_tls(a, ctx):
    """A TLS connection to the target, through the proxy's CONNECT when
    there is one."""
    th, tp = hostport(a.target)
    s = socket.create_connection(hostport(a.proxy) if a.proxy else (th, tp))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if a.proxy:
        req = "CONNECT %s HTTP/1.1\r\nHost: %s\r\n" % (a.target, a.target)
        if a.proxy_auth:
            req += "Proxy-Authorization: Basic %s\r\n" % base64.b64encode(
                a.proxy_auth.encode()).decode()
        s.sendall((req + "\r\n").encode())
        head, rest = read_head(s, b"")
        if head is None or head.split(" ", 2)[1] != "200" or rest:
            raise SystemExit("tlsload: CONNECT refused: %r" % (head,))
    # server_hostname an IP literal: verified against the IP SAN, no SNI.
    return ctx.wrap_socket(s, server_hostname=th)


def get(t, a, close):
    t.sendall(("GET / HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (
        a.target, "Connection: close\r\n" if close else "")).encode())
    head, body = read_head(t, b"")
    if head is None or head.split(" ", 2)[1] != "200":
        raise SystemExit("tlsload: GET answered %r" % (head,))
    n = int(header(head, "content-length") or "0")
    while len(body) < n:
        got = t.recv(65536)
        if not got:
            raise SystemExit("tlsload: short answer")
        body += got


def client_ctx(a):
    ctx = ssl.create_default_context(cafile=a.cafile)
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def conns(a):
    ctx = client_ctx(a)
    t0 = time.monotonic()
    for _ in range(a.count):
        t = open_tls(a, ctx)
        get(t, a, True)
        t.close()
    us = (time.monotonic() - t0) * 1e6
    print("conns %d us_total %.0f us_per_conn %.1f" % (a.count, us,
                                                         us / a.count))


def hold(a):
    ctx = client_ctx(a)
    held = []
    for _ in range(a.count):
        t = open_tls(a, ctx)
        get(t, a, False)
        held.append(t)
    with open(a.ready_file, "w") as f:
        f.write("%d\n" % len(held))
    time.sleep(a.hold_seconds)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("serve", "conns", "hold"))
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--port-file")
    p.add_argument("--target")
    p.add_argument("--cafile")
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--proxy")
    p.add_argument("--proxy-auth")
    p.add_argument("--ready-file")
    p.add_argument("--hold-seconds", type=float, default=30)
    a = p.parse_args()
    try:
        {"serve": serve, "conns": conns, "hold": hold}[a.mode](a)
    except (OSError, ssl.SSLError) as e:
        sys.exit("tlsload %s: %s" % (a.mode, e))


if __name__ == "__main__":
    main()
