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
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servers  # noqa: E402


def handle(c, mode, heads):
    f = c.makefile("rb")
    try:
        got = servers.read_head(f)
    except servers.BadRequest:
        got = None
    if got is None:
        c.close()
        return
    with open(heads, "a") as h:
        h.write(json.dumps({"line": got[0], "headers": got[1]}) + "\n")
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
