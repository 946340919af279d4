#!/usr/bin/python3
"""Resets through the proxy, seen from both ends (reliability-reset.sh).

    resetpeer.py PROXY_PORT NAME ROUNDS

Starts its own upstream on 127.0.0.1 (port 0), which the proxy reaches as
NAME (the test's DNS maps NAME to 127.0.0.1), and drives tunnels to it
through the proxy by CONNECT and by SOCKS5.  Each tunnel's first line
tells the upstream what to do:

    down N      send N bytes, then reset (SO_LINGER 0)
    upload N    read 64 KiB of the client's upload, send N bytes, reset
    sink        read until EOF or a reset; report what came

Every reset waits until the sender's bytes were acknowledged (SIOCOUTQ
0): a reset discards what the kernel still queues, and the test is about
what the proxy does with bytes it has, not what the sender's kernel drops.
Prints TAP lines ("ok - ...", "not ok - ...") and, last, the connection
count "conns N".
"""

import fcntl
import socket
import struct
import sys
import termios
import threading
import time

PROXY = int(sys.argv[1])
NAME = sys.argv[2]
ROUNDS = int(sys.argv[3])
MIB = 1024 * 1024
sink_results = {}
sink_lock = threading.Lock()


def pattern(n):
    block = bytes(range(256)) * 256
    out = bytearray()
    while len(out) < n:
        out += block
    return bytes(out[:n])


def outq(s):
    return struct.unpack("i", fcntl.ioctl(s.fileno(), termios.TIOCOUTQ,
                                          b"\0\0\0\0"))[0]


def reset(s):
    """Reset s once everything it sent is acknowledged (at most 5 s)."""
    deadline = time.time() + 5
    while outq(s) > 0 and time.time() < deadline:
        time.sleep(0.002)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def read_until_end(s, limit):
    """Read until EOF or an error: (bytes, 'eof'|'reset'|'timeout')."""
    got = bytearray()
    try:
        while len(got) <= limit:
            d = s.recv(1 << 20)
            if not d:
                return bytes(got), "eof"
            got += d
    except ConnectionResetError:
        return bytes(got), "reset"
    except socket.timeout:
        return bytes(got), "timeout"
    return bytes(got), "too-much"


def upstream(c):
    c.settimeout(20)
    try:
        line = b""
        while not line.endswith(b"\n"):
            b = c.recv(1)
            if not b:
                c.close()
                return
            line += b
        words = line.decode().split()
        if words[0] == "down":
            c.sendall(pattern(int(words[1])))
            reset(c)
        elif words[0] == "upload":
            got = 0
            while got < 65536:
                d = c.recv(65536)
                if not d:
                    break
                got += len(d)
            c.sendall(pattern(int(words[1])))
            reset(c)
        elif words[0] == "sink":
            data, how = read_until_end(c, 64 * MIB)
            with sink_lock:
                sink_results[words[1]] = (data, how)
            c.close()
    except OSError:
        c.close()


def serve(s):
    while True:
        c, _ = s.accept()
        threading.Thread(target=upstream, args=(c,), daemon=True).start()


def recv_exact(s, n):
    d = b""
    while len(d) < n:
        x = s.recv(n - len(d))
        if not x:
            raise OSError("EOF in the proxy's reply")
        d += x
    return d


def tunnel(via, port):
    s = socket.create_connection(("127.0.0.1", PROXY), 10)
    s.settimeout(10)
    if via == "connect":
        s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" %
                   (NAME, port, NAME, port)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            b = s.recv(1)
            if not b:
                raise OSError("no answer to CONNECT")
            head += b
        if not head.startswith(b"HTTP/1.1 200"):
            raise OSError("CONNECT: %r" % head[:40])
    else:
        s.sendall(b"\x05\x01\x00")
        if recv_exact(s, 2) != b"\x05\x00":
            raise OSError("SOCKS5 greeting refused")
        n = NAME.encode()
        s.sendall(b"\x05\x01\x00\x03" + bytes([len(n)]) + n +
                  struct.pack("!H", port))
        rep = recv_exact(s, 4)
        if rep[1] != 0:
            raise OSError("SOCKS5 reply 0x%02x" % rep[1])
        recv_exact(s, {1: 4 + 2, 4: 16 + 2}.get(rep[3], 2))
    return s


fails = 0


def report(good, what):
    global fails
    if good:
        print("ok - " + what)
    else:
        fails += 1
        print("not ok - " + what)
    sys.stdout.flush()


def case_down(via, port, size, rounds):
    """The upstream sends size bytes and resets: the client gets them all,
    then a reset."""
    tally = {}
    lost = 0
    for _ in range(rounds):
        s = tunnel(via, port)
        s.sendall(b"down %d\n" % size)
        data, how = read_until_end(s, size + 1)
        s.close()
        tally[how] = tally.get(how, 0) + 1
        if data != pattern(size):
            lost += 1
    report(tally.get("reset", 0) == rounds and lost == 0,
           "%s: upstream sends %d bytes and resets: the client got all of "
           "them in %d of %d and a reset in %d of %d (%s)" %
           (via, size, rounds - lost, rounds, tally.get("reset", 0), rounds,
            tally))


def case_upload(via, port, rounds):
    """The client uploads; the upstream answers 4 KiB and resets."""
    tally = {}
    lost = 0
    for _ in range(rounds):
        s = tunnel(via, port)
        s.sendall(b"upload 4096\n")
        stop = threading.Event()
        seen = []

        def push():
            # The reset is reported once: to this send, or to the read.
            chunk = b"u" * 65536
            try:
                for _ in range(512):	# at most 32 MiB
                    if stop.is_set():
                        break
                    s.sendall(chunk)
            except ConnectionResetError:
                seen.append("reset")
            except OSError:
                pass
        t = threading.Thread(target=push, daemon=True)
        t.start()
        data, how = read_until_end(s, 4097)
        stop.set()
        t.join(10)
        s.close()
        if how == "eof" and seen:
            how = "reset"
        tally[how] = tally.get(how, 0) + 1
        if data != pattern(4096):
            lost += 1
    report(tally.get("reset", 0) == rounds and lost == 0,
           "%s: upload refused by a reset after a 4 KiB answer: the answer "
           "arrived in %d of %d, a reset in %d of %d (%s)" %
           (via, rounds - lost, rounds, tally.get("reset", 0), rounds, tally))


def case_client_reset(via, port, size, tag):
    """The client sends size bytes and resets: the upstream gets them all,
    then a reset."""
    s = tunnel(via, port)
    s.sendall(b"sink %s\n" % tag.encode())
    s.sendall(pattern(size))
    reset(s)
    deadline = time.time() + 10
    while time.time() < deadline:
        with sink_lock:
            if tag in sink_results:
                break
        time.sleep(0.01)
    with sink_lock:
        data, how = sink_results.get(tag, (b"", "none"))
    report(data == pattern(size) and how == "reset",
           "%s: client sends %d bytes and resets: the upstream got %d "
           "bytes, then %s" % (via, size, len(data), how))


def main():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    port = srv.getsockname()[1]
    threading.Thread(target=serve, args=(srv,), daemon=True).start()
    n = 0
    for via in ("connect", "socks5"):
        case_down(via, port, 4096, ROUNDS)
        n += ROUNDS
        # Past RELAY_SPLICE_AFTER (1 MiB): the direction is spliced.
        case_down(via, port, 3 * MIB, 2)
        n += 2
        case_upload(via, port, ROUNDS)
        n += ROUNDS
        case_client_reset(via, port, 4096, via + "-small")
        case_client_reset(via, port, 3 * MIB, via + "-big")
        n += 2
    print("conns %d" % n)
    sys.exit(1 if fails else 0)


main()
