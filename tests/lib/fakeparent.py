#!/usr/bin/python3
"""A scripted upstream proxy for the edges a real one rarely shows.

    fakeparent.py --port-file F --heads FILE MODE

Binds 127.0.0.1 (port 0, written to F), reads one request head per
connection, appends it to FILE (one JSON line: the request line and the
headers), then answers as MODE says:

    banner      "200 Connection established" and, in the same write, a
                banner line the target sent first; then echo
    interim     "100 Continue", then "200 OK"; then echo
    garbage     a line that is no HTTP status line, then close
    status:N    status N with a short body, then close
    close       close without a word
    echo        answer every request with the request as it came (TRACE
                with Max-Forwards: 0, or an error page that quotes the
                request); CONNECT gets a 200 and the requests inside the
                tunnel are answered the same way, as an origin that
                echoes TRACE would (heads inside are logged with
                "tunnel": true)
    ssl-only    as echo, but CONNECT to a port other than 443 gets 403,
                as from squid's default "http_access deny CONNECT
                !SSL_ports"
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servers  # noqa: E402


def log_head(heads, got, tunnel):
    with open(heads, "a") as h:
        rec = {"line": got[0], "headers": got[1]}
        if tunnel:
            rec["tunnel"] = True
        h.write(json.dumps(rec) + "\n")


def echo_heads(c, f, heads, got, tunnel):
    """Answer each request head with itself (message/http), until EOF.
    got: the first head, read and logged already, or None."""
    try:
        while True:
            if got is None:
                got = servers.read_head(f)
                if got is None:
                    break
                log_head(heads, got, tunnel)
            text = " ".join(got[0]) + "\r\n" + "".join(
                "%s: %s\r\n" % (k, v) for k, v in got[1]) + "\r\n"
            body = text.encode("latin-1")
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: message/http\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
            got = None
    except (OSError, servers.BadRequest):
        pass
    c.close()


def handle(c, mode, heads):
    f = c.makefile("rb")
    try:
        got = servers.read_head(f)
    except servers.BadRequest:
        got = None
    if got is None:
        c.close()
        return
    log_head(heads, got, False)
    if mode in ("echo", "ssl-only"):
        if got[0][0] != "CONNECT":
            echo_heads(c, f, heads, got, False)
            return
        if mode == "ssl-only" and not got[0][1].endswith(":443"):
            c.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n"
                      b"Connection: close\r\n\r\n")
            c.close()
            return
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        echo_heads(c, f, heads, None, True)
        return
    if mode == "banner":
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n"
                  b"BANNER-FROM-TARGET\n")
    elif mode == "interim":
        c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        c.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
    elif mode == "garbage":
        c.sendall(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
        c.close()
        return
    elif mode.startswith("status:"):
        n = int(mode[7:])
        c.sendall(b"HTTP/1.1 %d Scripted\r\nContent-Length: 5\r\n"
                  b"Connection: close\r\n\r\nhello" % n)
        c.close()
        return
    else:
        c.close()
        return
    servers.echo_until_eof(c)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--port-file", required=True)
    p.add_argument("--heads", required=True)
    p.add_argument("mode")
    a = p.parse_args()
    s = servers.listener("127.0.0.1")
    servers.write_port(a.port_file, s.getsockname()[1])
    servers.serve_threads(s, lambda c: handle(c, a.mode, a.heads))


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
