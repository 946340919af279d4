#!/usr/bin/env python3
"""A TLS upstream that records what it receives, byte for byte.

    rawupstream.py PORTFILE CERT KEY LOG

Every byte a connection sends is appended to LOG as it arrives, so a
scenario sees the upstream's view of a request exactly (what pisbx
decided to send, not what the client wrote).  Requests are read loosely
(head to the blank line, a Content-Length or chunked body) and answered
by path:
  /r204   204 with a bogus Content-Length: 40 and no body
  /r304   304 with a bogus Content-Length: 40 and no body
  HEAD    200, Content-Length: 7, no body (/hbody: with a body)
  /clte   200 with both Content-Length: 50 and chunked, body "abc"
  other   200, Content-Length, body "seen N" (N counts requests)
Python 3 standard library only.
"""
import os
import socket
import ssl
import sys
import threading

portfile, cert, key, logpath = sys.argv[1:5]
lock = threading.Lock()
count = [0]


class Rec:
    def __init__(self, sock):
        self.s = sock
        self.buf = b""

    def more(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError
        with lock:
            with open(logpath, "ab") as f:
                f.write(d)
        self.buf += d

    def line(self):
        while b"\n" not in self.buf:
            self.more()
        i = self.buf.index(b"\n") + 1
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def take(self, n):
        while len(self.buf) < n:
            self.more()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


def serve(c):
    try:
        c.settimeout(30)
        c = ctx.wrap_socket(c, server_side=True)
    except (OSError, ssl.SSLError):
        c.close()
        return
    r = Rec(c)
    try:
        while True:
            first = r.line()
            heads = []
            while True:
                ln = r.line()
                if ln in (b"\r\n", b"\n"):
                    break
                heads.append(ln)
            cl, chunked = 0, False
            for h in heads:
                n, _, v = h.partition(b":")
                if n.strip().lower() == b"content-length":
                    cl = int(v.strip())
                if n.strip().lower() == b"transfer-encoding":
                    chunked = b"chunked" in v.lower()
            if chunked:
                while True:
                    size = int(r.line().split(b";")[0].strip(), 16)
                    if size == 0:
                        while r.line() not in (b"\r\n", b"\n"):
                            pass
                        break
                    r.take(size + 2)
            elif cl:
                r.take(cl)
            path = first.split(b" ")[1] if b" " in first else b"/"
            with lock:
                count[0] += 1
                n = count[0]
            if path.startswith(b"/r204"):
                c.sendall(b"HTTP/1.1 204 No Content\r\n"
                          b"Content-Length: 40\r\n\r\n")
            elif path.startswith(b"/r304"):
                c.sendall(b"HTTP/1.1 304 Not Modified\r\n"
                          b"Content-Length: 40\r\n\r\n")
            elif first.startswith(b"HEAD ") and \
                    not path.startswith(b"/hbody"):
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n")
            elif path.startswith(b"/clte"):
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n"
                          b"Transfer-Encoding: chunked\r\n\r\n"
                          b"3\r\nabc\r\n0\r\n\r\n")
            else:
                body = b"seen %d\n" % n
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                          % len(body) + body)
    except (OSError, ValueError, EOFError, ssl.SSLError):
        pass
    finally:
        c.close()


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(portfile + ".tmp", "w") as pf:
    pf.write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
