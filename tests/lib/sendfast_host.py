"""The outside of run-sendfast.sh: listeners on the host that log
whatever reaches them, and a Unix socket that hands its client the
host's own sockets over SCM_RIGHTS.

    sendfast_host.py DIR
        DIR/host.dgram   AF_UNIX datagram socket: "dgram DATA" per datagram
        DIR/host.sock    AF_UNIX stream listener: "unix-conn" per connection
        DIR/rights.sock  AF_UNIX stream listener: sends each client an
                         unconnected UDP and an unconnected TCP socket of
                         the host (SCM_RIGHTS), then closes
        127.0.0.1:PORT   UDP ("udp DATA") and TCP ("tcp-conn"), one port
Writes DIR/port (the port) once everything listens; logs to DIR/log;
stops when its parent (the scenario) is gone or after 240 s.
"""
import os
import select
import socket
import sys
import time

d = sys.argv[1]
log = open(os.path.join(d, "log"), "a", buffering=1)
dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
dg.bind(os.path.join(d, "host.dgram"))
us = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
us.bind(os.path.join(d, "host.sock"))
us.listen(64)
rs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
rs.bind(os.path.join(d, "rights.sock"))
rs.listen(8)
# TCP and UDP on one port number, drawn again while another scenario
# has that number for UDP.
for _ in range(50):
    ts = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ts.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ts.bind(("127.0.0.1", 0))
    port = ts.getsockname()[1]
    ud = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ud.bind(("127.0.0.1", port))
        break
    except OSError:
        ts.close()
        ud.close()
ts.listen(64)
for p in ("host.dgram", "host.sock", "rights.sock"):
    os.chmod(os.path.join(d, p), 0o777)
with open(os.path.join(d, "port.tmp"), "w") as f:
    f.write("%d\n" % port)
os.rename(os.path.join(d, "port.tmp"), os.path.join(d, "port"))
parent, end = os.getppid(), time.monotonic() + 240
while os.getppid() == parent and time.monotonic() < end:
    r, _, _ = select.select([dg, us, rs, ts, ud], [], [], 0.5)
    for s in r:
        if s is dg:
            log.write("dgram %r\n" % dg.recv(65536))
        elif s is ud:
            log.write("udp %r\n" % ud.recv(65536))
        elif s is us:
            c, _ = us.accept()
            log.write("unix-conn\n")
            c.close()
        elif s is ts:
            c, _ = ts.accept()
            log.write("tcp-conn\n")
            c.close()
        elif s is rs:
            c, _ = rs.accept()
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socket.send_fds(c, [b"fds"], [u.fileno(), t.fileno()])
            u.close()
            t.close()
            c.close()
