#!/usr/bin/python3
"""Loopback test servers for the proxy scenarios, one subcommand each.

    servers.py http      --port-file F [--bind ADDR] [--tls-cert C --tls-key K
                         [--log-sessions]]
                         [--root DIR --root-prefix /git/]
    servers.py echo      --port-file F [--bind ADDR]
    servers.py blackhole --port-file F [--bind ADDR] [--no-read]
    servers.py synhole   --port-file F
    servers.py upload    --port-file F --record FILE [--bind ADDR]
    servers.py certgen   DIR NAME...
    servers.py client    --port P|--unix PATH [--timeout S] [--shut] [--hex] [--trickle MS]
    servers.py socks5    --port P --target H:P [--auth U:P] [--cmd C] [--send X]
                         [--source ADDR]
    servers.py tls       --port P --via connect|socks5 --target H:P [--sni NAME]
                         [--split N] [--stall] [--raw HEX]
    servers.py sha       N

Every server binds 127.0.0.1 (or ::1 with --bind ::1) only, writes its
bound port to the port file once it is listening, and runs until killed.

http: an HTTP/1.1 origin with keep-alive.  Paths:
    /bytes/N        N bytes of pattern(), Content-Length framing
    /chunked/N      N bytes of pattern(), chunked framing (odd chunk sizes)
    /echo-body      the request body sent back (Content-Length)
    /truncate/N     Content-Length N, only N/2 bytes sent, then close
    /status/N       status N with no body and no framing headers (204, 304)
    /eof-body/N     N bytes delimited by the close (no Content-Length)
A request with "Expect: 100-continue" gets a 100 Continue first.
    /close          a short answer with "Connection: close", then close
    --root-prefix   files under --root (404 when missing): dumb-http git
    anything else   JSON {"method","path","version","headers":[[k,v]..],
                    "body_len","body_sha256"}
Request bodies with Content-Length or chunked framing are read (and
checked) on every path.

echo: every byte read is written back; EOF closes.
blackhole: accepts and reads, never writes, never closes; with --no-read
it never reads either.
upload: reads one HTTP request per connection, counting every byte that
arrives; answers 200 {"body_len": N} once a Content-Length body is whole,
and at the connection's end appends a line "BYTES" (all bytes received
on it, head included) to the record file, for scenarios that check how
much of an upload got through.
synhole: a listener whose accept queue is full, so a further SYN is
never answered (a connect to it times out).  It writes "unsupported" to
the port file when the kernel answered anyway.
certgen: a self-signed EC certificate DIR/cert.pem, DIR/key.pem whose
subjectAltName lists the NAMEs (DNS names or IP addresses).
client: send stdin to 127.0.0.1:P, print the answer until EOF (exit 0) or
the timeout (exit 3); --trickle sends one byte every MS milliseconds;
--http stops after one whole HTTP response (or a CONNECT's 2xx head).
socks5: one SOCKS5 greeting and request; prints "method 0xNN" and
"reply 0xNN full|malformed" ("echo ok" after --send on success).
sha: the sha256 of pattern(N), the /bytes/ and /chunked/ bodies.
"""

import argparse
import hashlib
import ipaddress
import json
import os
import selectors
import socket
import struct
import ssl
import subprocess
import sys
import threading
import time


def pattern(n, off=0):
    """n bytes of the deterministic body pattern, starting at offset off."""
    unit = bytes(range(256)) * 64  # 16 KiB, period 256
    out = bytearray()
    pos = off % 256
    while len(out) < n:
        take = min(n - len(out), len(unit) - pos)
        out += unit[pos:pos + take]
        pos = 0
    return bytes(out)


def pattern_sha256(n):
    h = hashlib.sha256()
    step = 1 << 20
    done = 0
    while done < n:
        k = min(step, n - done)
        h.update(pattern(k, done))
        done += k
    return h.hexdigest()


def write_port(path, port):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%s\n" % port)
    os.rename(tmp, path)


def listener(bind, backlog=128):
    fam = socket.AF_INET6 if ":" in bind else socket.AF_INET
    ip = ipaddress.ip_address(bind)
    if not ip.is_loopback:
        sys.exit("servers.py: refusing to bind a non-loopback address")
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((bind, 0))
    s.listen(backlog)
    return s


class BadRequest(Exception):
    pass


def read_line(f, limit=65536):
    line = f.readline(limit + 1)
    if len(line) > limit:
        raise BadRequest("line too long")
    return line


def read_head(f):
    """Request line and header list, or None at a clean EOF."""
    line = read_line(f)
    while line in (b"\r\n", b"\n"):
        line = read_line(f)
    if not line:
        return None
    parts = line.rstrip(b"\r\n").decode("latin-1").split(" ")
    if len(parts) != 3:
        raise BadRequest("bad request line")
    headers = []
    while True:
        h = read_line(f)
        if not h:
            raise BadRequest("EOF in header")
        if h in (b"\r\n", b"\n"):
            break
        k, sep, v = h.decode("latin-1").partition(":")
        if not sep:
            raise BadRequest("bad header")
        headers.append([k.strip(), v.strip()])
    return parts, headers


def hget(headers, name):
    name = name.lower()
    vals = [v for k, v in headers if k.lower() == name]
    return ", ".join(vals) if vals else None


def read_body(f, headers):
    te = hget(headers, "transfer-encoding")
    if te is not None:
        if te.lower() != "chunked":
            raise BadRequest("unsupported transfer-encoding")
        body = bytearray()
        while True:
            size_line = read_line(f).strip()
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                while read_line(f) not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(body)
            body += f.read(size)
            if f.read(2) != b"\r\n":
                raise BadRequest("bad chunk end")
    cl = hget(headers, "content-length")
    if cl is None:
        return b""
    n = int(cl)
    body = f.read(n)
    if len(body) != n:
        raise BadRequest("short body")
    return body


def send_response(sock, status, reason, headers, body=b"", head_only=False):
    lines = ["HTTP/1.1 %d %s" % (status, reason)]
    lines += ["%s: %s" % kv for kv in headers]
    if body is not None and not any(k.lower() in ("content-length",
                                                  "transfer-encoding")
                                    for k, _ in headers):
        lines.append("Content-Length: %d" % len(body))
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    if body and not head_only:
        data += body
    sock.sendall(data)


def handle_http(sock, args):
    f = sock.makefile("rb")
    try:
        while True:
            try:
                got = read_head(f)
            except BadRequest as e:
                send_response(sock, 400, "Bad Request",
                              [("Connection", "close")], str(e).encode())
                return
            if got is None:
                return
            (method, path, version), headers = got
            if (hget(headers, "expect") or "").lower() == "100-continue":
                sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = read_body(f, headers)
            conn = (hget(headers, "connection") or "").lower()
            close = version == "HTTP/1.0" or "close" in conn
            head = method == "HEAD"
            extra = [("Connection", "close")] if close else []
            if args.root and path.startswith(args.root_prefix):
                rel = path[len(args.root_prefix):].split("?")[0]
                fp = os.path.realpath(os.path.join(args.root, rel))
                root = os.path.realpath(args.root)
                if fp.startswith(root + os.sep) and os.path.isfile(fp):
                    with open(fp, "rb") as fh:
                        data = fh.read()
                    send_response(sock, 200, "OK", [
                        ("Content-Type", "application/octet-stream")] +
                        extra, data, head)
                else:
                    send_response(sock, 404, "Not Found", extra,
                                  b"not found\n", head)
            elif path.startswith("/bytes/"):
                n = int(path[len("/bytes/"):])
                sock.sendall(("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                              "Content-Type: application/octet-stream\r\n"
                              "%s\r\n" % (n, "Connection: close\r\n"
                                          if close else "")).encode())
                done = 0
                while done < n and not head:
                    k = min(1 << 20, n - done)
                    sock.sendall(pattern(k, done))
                    done += k
            elif path.startswith("/status/"):
                code = int(path[len("/status/"):])
                sock.sendall(("HTTP/1.1 %d Status\r\nX-Origin: servers.py\r\n"
                              "%s\r\n" % (code, "Connection: close\r\n"
                                          if close else "")).encode())
            elif path.startswith("/eof-body/"):
                n = int(path[len("/eof-body/"):])
                sock.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" +
                             pattern(n))
                return
            elif path.startswith("/truncate/"):
                n = int(path[len("/truncate/"):])
                sock.sendall(("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                              % n).encode() + pattern(n // 2))
                return
            elif path.startswith("/chunked/"):
                n = int(path[len("/chunked/"):])
                sock.sendall(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"
                              "\r\nContent-Type: application/octet-stream\r\n"
                              "%s\r\n" % ("Connection: close\r\n"
                                          if close else "")).encode())
                done = 0
                sizes = [1, 7, 100, 4093, 65536, 1000003]
                i = 0
                while done < n and not head:
                    k = min(sizes[i % len(sizes)], n - done)
                    i += 1
                    sock.sendall(b"%x\r\n" % k + pattern(k, done) + b"\r\n")
                    done += k
                if not head:
                    sock.sendall(b"0\r\n\r\n")
            elif path.startswith("/echo-body"):
                send_response(sock, 200, "OK", [
                    ("Content-Type", "application/octet-stream")] + extra,
                    body, head)
            elif path.startswith("/close"):
                send_response(sock, 200, "OK", [("Connection", "close")],
                              b"closing\n", head)
                return
            else:
                doc = {"method": method, "path": path, "version": version,
                       "headers": headers, "body_len": len(body),
                       "body_sha256": hashlib.sha256(body).hexdigest()}
                send_response(sock, 200, "OK", [
                    ("Content-Type", "application/json"),
                    ("X-Origin", "servers.py")] + extra,
                    (json.dumps(doc) + "\n").encode(), head)
            if close:
                return
    except (OSError, ValueError, ssl.SSLError):
        return
    finally:
        try:
            f.close()
            sock.close()
        except OSError:
            pass


def serve_threads(s, handler):
    while True:
        c, _ = s.accept()
        t = threading.Thread(target=handler, args=(c,), daemon=True)
        t.start()


def cmd_http(args):
    s = listener(args.bind)
    ctx = None
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)

    def handler(c):
        if ctx is not None:
            try:
                c.settimeout(30)
                c = ctx.wrap_socket(c, server_side=True)
                c.settimeout(None)
                if args.log_sessions:
                    # One line per handshake: whether the client
                    # resumed a session (pisbx's upstream side does).
                    print("tls-handshake resumed=%d" % c.session_reused,
                          flush=True)
            except (OSError, ssl.SSLError):
                c.close()
                return
        handle_http(c, args)

    write_port(args.port_file, s.getsockname()[1])
    serve_threads(s, handler)


def echo_until_eof(c):
    """Write back every byte read from c; close it at EOF or an error."""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)
    except OSError:
        pass
    c.close()


def cmd_echo(args):
    s = listener(args.bind)
    write_port(args.port_file, s.getsockname()[1])
    serve_threads(s, echo_until_eof)


def upload_conn(c, record):
    """Count what c sends; answer once its Content-Length body is in."""
    data = bytearray()
    answered = False
    try:
        while True:
            d = c.recv(1 << 16)
            if not d:
                break
            data += d
            if answered:
                continue
            end = data.find(b"\r\n\r\n", 0, 65536)
            if end < 0:
                continue
            length = 0
            for line in bytes(data[:end]).split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    length = int(v.strip())
            if len(data) - end - 4 >= length:
                body = json.dumps({"body_len": length}).encode() + b"\n"
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                          b"Connection: close\r\n\r\n" % len(body) + body)
                answered = True
                c.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    with open(record, "a") as f:
        f.write("%d\n" % len(data))
    c.close()


def cmd_upload(args):
    s = listener(args.bind)
    write_port(args.port_file, s.getsockname()[1])
    serve_threads(s, lambda c: upload_conn(c, args.record))


def cmd_blackhole(args):
    s = listener(args.bind, 4096)
    s.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(s, selectors.EVENT_READ)
    held = []
    write_port(args.port_file, s.getsockname()[1])
    while True:
        for key, _ in sel.select():
            if key.fileobj is s:
                try:
                    c, _ = s.accept()
                except OSError:
                    continue
                c.setblocking(False)
                held.append(c)
                sel.register(c, selectors.EVENT_READ)
            elif args.no_read:
                # Never read: a peer that sends fills our receive buffer.
                sel.unregister(key.fileobj)
            else:
                try:
                    d = key.fileobj.recv(65536)
                except OSError:
                    d = b""
                if not d:
                    # Peer gone: stop watching, keep nothing to answer.
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    held.remove(key.fileobj)


def cmd_synhole(args):
    """
    listen(0) allows one queued connection; once the queue holds it the
    kernel drops further SYNs (the accept-queue overflow check runs before
    SYN cookies), so a connect() to this port stays unanswered.
    """
    s = listener("127.0.0.1", 0)
    port = s.getsockname()[1]
    fillers = []
    for _ in range(3):
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        fillers.append(c)
    time.sleep(0.2)
    probe = socket.socket()
    probe.settimeout(1.0)
    try:
        probe.connect(("127.0.0.1", port))
        answered = True
    except (socket.timeout, OSError):
        answered = False
    probe.close()
    write_port(args.port_file, "unsupported" if answered else port)
    while True:
        time.sleep(3600)


def cmd_certgen(args):
    os.makedirs(args.dir, exist_ok=True)
    san = []
    for n in args.names:
        try:
            ipaddress.ip_address(n)
            san.append("IP:" + n)
        except ValueError:
            san.append("DNS:" + n)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec",
                    "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", os.path.join(args.dir, "key.pem"),
                    "-out", os.path.join(args.dir, "cert.pem"),
                    "-days", "2", "-subj", "/CN=" + args.names[0],
                    "-addext", "subjectAltName=" + ",".join(san)],
                   check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def http_complete(out, req):
    """Whether out holds one whole HTTP response (a CONNECT 200 ends at
    its head; a body needs Content-Length)."""
    end = out.find(b"\r\n\r\n")
    if end < 0:
        return False
    head = out[:end].decode("latin-1").split("\r\n")
    parts = head[0].split(" ")
    if len(parts) < 2:
        return True
    if req.startswith(b"CONNECT") and parts[1].startswith("2"):
        return True
    for h in head[1:]:
        k, _, v = h.partition(":")
        if k.strip().lower() == "content-length":
            try:
                return len(out) - end - 4 >= int(v.strip())
            except ValueError:
                return True
    return False


def cmd_client(args):
    """Send stdin, print the answer; exit 0 at EOF, 3 at the timeout."""
    data = sys.stdin.buffer.read()
    if args.hex:
        data = bytes.fromhex(data.decode().replace(" ", "").strip())
    if args.unix:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(args.timeout)
        s.connect(args.unix)
    else:
        fam = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(args.timeout)
        s.connect((args.host, args.port))
    sent_closed = False
    if args.trickle:
        for i in range(len(data)):
            try:
                s.send(data[i:i + 1])
            except OSError:
                sys.stderr.write("peer closed after %d bytes\n" % i)
                sent_closed = True
                break
            time.sleep(args.trickle / 1000.0)
    else:
        try:
            s.sendall(data)
        except OSError:
            sys.stderr.write("peer closed during the send\n")
            sent_closed = True
    if args.shut and not sent_closed:
        s.shutdown(socket.SHUT_WR)
    out = bytearray()
    rc = 0
    deadline = time.time() + args.timeout
    try:
        while True:
            if args.http and http_complete(out, data):
                break
            s.settimeout(max(0.01, deadline - time.time()))
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        rc = 3
    except OSError:
        pass  # a reset counts as closed
    if sent_closed:
        rc = 0
    s.close()
    if args.hex:
        sys.stdout.write(out.hex() + "\n")
    else:
        sys.stdout.buffer.write(bytes(out))
    sys.exit(rc)


def recv_exact(s, n):
    out = bytearray()
    while len(out) < n:
        d = s.recv(n - len(out))
        if not d:
            break
        out += d
    return bytes(out)


def socks5_request_bytes(target, atyp="auto"):
    """The address and port part of a SOCKS5 request for "host:port"."""
    host, _, port = target.rpartition(":")
    port = int(port)
    if atyp == "auto":
        try:
            ip = ipaddress.ip_address(host.strip("[]"))
            atyp = "ipv4" if ip.version == 4 else "ipv6"
        except ValueError:
            atyp = "domain"
    if atyp == "ipv4":
        addr = b"\x01" + socket.inet_pton(socket.AF_INET, host)
    elif atyp == "ipv6":
        addr = b"\x04" + socket.inet_pton(socket.AF_INET6, host.strip("[]"))
    else:
        hb = host.encode("latin-1")
        addr = b"\x03" + bytes([len(hb)]) + hb
    return addr + port.to_bytes(2, "big")


def cmd_socks5(args):
    """One SOCKS5 exchange; prints what the proxy answered."""
    s = socket.create_connection(("127.0.0.1", args.port), args.timeout,
                                 (args.source, 0) if args.source else None)
    if args.auth:
        s.sendall(b"\x05\x01\x02")
    else:
        s.sendall(b"\x05\x01\x00")
    m = recv_exact(s, 2)
    if len(m) != 2:
        print("method-reply short %s" % m.hex())
        return
    print("method 0x%02x" % m[1])
    if m[0] != 5 or m[1] == 0xFF:
        return
    if m[1] == 2:
        user, _, pw = args.auth.partition(":")
        s.sendall(bytes([1, len(user)]) + user.encode() +
                  bytes([len(pw)]) + pw.encode())
        a = recv_exact(s, 2)
        print("auth 0x%02x" % (a[1] if len(a) == 2 else 0xFF))
        if len(a) != 2 or a[1] != 0:
            return
    cmd = {"connect": 1, "bind": 2, "udp": 3}[args.socks_cmd]
    s.sendall(bytes([5, cmd, 0]) +
              socks5_request_bytes(args.target, args.atyp))
    head = recv_exact(s, 4)
    if len(head) != 4:
        print("reply short %s" % head.hex())
        return
    alen = {1: 4, 4: 16}.get(head[3])
    if alen is None and head[3] == 3:
        alen = recv_exact(s, 1)[0]
    rest = recv_exact(s, (alen or 0) + 2)
    full = alen is not None and len(rest) == alen + 2 and head[0] == 5 \
        and head[2] == 0
    print("reply 0x%02x %s" % (head[1], "full" if full else "malformed"))
    if head[1] == 0 and args.send:
        s.sendall(args.send.encode())
        back = recv_exact(s, len(args.send))
        print("echo %s" % ("ok" if back == args.send.encode() else
                           "bad %r" % back))
    s.close()


def tunnel_open(args):
    """A tunnel to args.target through the proxy (CONNECT or SOCKS5):
    the socket, or None after printing "refused ..."."""
    s = socket.create_connection(("127.0.0.1", args.port), args.timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if args.via == "connect":
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" %
                   (args.target, args.target)).encode())
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            d = s.recv(1)
            if not d:
                break
            head += d
        status = head.split(b" ")[1].decode() if b" " in head else "none"
        if status != "200":
            print("refused %s" % status)
            return None
        return s
    s.sendall(b"\x05\x01\x00")
    if recv_exact(s, 2) != b"\x05\x00":
        print("refused method")
        return None
    s.sendall(b"\x05\x01\x00" + socks5_request_bytes(args.target))
    head = recv_exact(s, 4)
    if len(head) != 4 or head[1] != 0:
        print("refused 0x%02x" % (head[1] if len(head) > 1 else 0xFF))
        return None
    recv_exact(s, {1: 4, 4: 16}.get(head[3], 0) + 2)
    return s


def cmd_tls(args):
    """A TLS client through a tunnel, with the SNI it is told (none with
    --sni ""), its ClientHello sent in --split pieces 0.1 s apart.  Prints
    "handshake ok" and the answer's status line, or "closed" when the
    proxy ended the tunnel; --stall sends half the ClientHello and waits
    for the proxy to close; --raw sends those bytes instead of TLS."""
    s = tunnel_open(args)
    if s is None:
        return
    s.settimeout(args.timeout)
    if args.raw:
        s.sendall(bytes.fromhex(args.raw))
        try:
            d = s.recv(65536)
        except OSError:
            d = b""
        print("closed" if not d else "answered %d bytes" % len(d))
        return
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_hostname=args.sni or None)
    first = True
    try:
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                pass
            data = out.read()
            if first:
                first = False
                if args.stall:
                    s.sendall(data[:len(data) // 2])
                    d = s.recv(65536)
                    print("closed" if not d else "answered")
                    return
                n = max(1, args.split)
                step = -(-len(data) // n)
                for i in range(0, len(data), step):
                    s.sendall(data[i:i + step])
                    if i + step < len(data):
                        time.sleep(0.1)
            elif data:
                s.sendall(data)
            d = s.recv(65536)
            if not d:
                print("closed")
                return
            inc.write(d)
    except (OSError, ssl.SSLError) as e:
        print("closed (%s)" % e.__class__.__name__)
        return
    print("handshake ok")
    tls.write(b"GET /tls HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    s.sendall(out.read())
    got = b""
    while b"\r\n" not in got:
        try:
            got += tls.read(4096)
        except ssl.SSLWantReadError:
            d = s.recv(65536)
            if not d:
                break
            inc.write(d)
    print("response %s" % got.split(b"\r\n", 1)[0].decode("latin-1"))


def tls_hello(sni, group, share, cookie=None):
    """A TLS 1.3 ClientHello record: SNI sni (none if empty), groups
    x25519 and secp384r1, one key share (group, share)."""
    def ext(t, body):
        return struct.pack(">HH", t, len(body)) + body
    exts = b""
    if sni:
        n = sni.encode()
        exts += ext(0, struct.pack(">HBH", len(n) + 3, 0, len(n)) + n)
    exts += ext(10, struct.pack(">HHH", 4, 0x001d, 0x0018))
    exts += ext(13, struct.pack(">HHHHH", 8, 0x0403, 0x0503, 0x0804,
                                0x0805))
    exts += ext(43, b"\x02\x03\x04")
    exts += ext(45, b"\x01\x01")
    ks = struct.pack(">HH", group, len(share)) + share
    exts += ext(51, struct.pack(">H", len(ks)) + ks)
    if cookie is not None:
        exts += ext(44, cookie)
    body = (b"\x03\x03" + bytes(range(32)) + b"\x20" + bytes(range(32, 64)) +
            b"\x00\x02\x13\x01\x01\x00" + struct.pack(">H", len(exts)) +
            exts)
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + struct.pack(">H", len(hs)) + hs


HRR_RANDOM = bytes.fromhex("cf21ad74e59a6111be1d8c021e65b891"
                           "c2a211167abb8c5e079e09e2c8a8339c")


def tls_records(s):
    """Read records until one that is not change_cipher_spec is complete:
    its (type, body), or (None, b"") at EOF."""
    buf = b""
    while True:
        while len(buf) >= 5:
            n = struct.unpack(">H", buf[3:5])[0]
            if len(buf) < 5 + n:
                break
            t, body, buf = buf[0], buf[5:5 + n], buf[5 + n:]
            if t != 20:
                return t, body
        try:
            d = s.recv(65536)
        except OSError:
            d = b""
        if not d:
            return None, b""
        buf += d


def cmd_hrr(args):
    """A crafted TLS 1.3 client through a tunnel: a first ClientHello
    for --sni with only an X25519 key share (a server with P-384 alone
    answers a HelloRetryRequest), then a second one for --sni2 with the
    P-384 share read from --p384 (a DER public key) -- or half of it
    (--stall2), or the bytes --raw2 instead.  Prints "first hrr"
    (or what came instead), then "second serverhello", "second alert"
    or "second closed"."""
    s = tunnel_open(args)
    if s is None:
        return
    s.settimeout(args.timeout)
    s.sendall(tls_hello(args.sni, 0x001d, os.urandom(32)))
    t, body = tls_records(s)
    if t != 22 or len(body) < 38 or body[0] != 2:
        print("first %s" % ("closed" if t is None else "type %d" % t))
        return
    if body[6:38] != HRR_RANDOM:
        print("first serverhello")
        return
    print("first hrr")
    cookie = None
    sid = body[38]
    ex = body[38 + 1 + sid + 3:]
    ex = ex[2:]
    while len(ex) >= 4:
        et, el = struct.unpack(">HH", ex[:4])
        if et == 44:
            cookie = ex[4:4 + el]
        ex = ex[4 + el:]
    with open(args.p384, "rb") as f:
        share = f.read()[-97:]
    second = b"\x14\x03\x03\x00\x01\x01"
    if args.raw2:
        second += bytes.fromhex(args.raw2)
    elif args.stall2:
        h = tls_hello(args.sni2, 0x0018, share, cookie)
        second += h[:len(h) // 2]
    else:
        second += tls_hello(args.sni2, 0x0018, share, cookie)
    s.sendall(second)
    t, body = tls_records(s)
    if t == 22 and len(body) >= 38 and body[0] == 2:
        print("second serverhello")
    elif t == 21:
        print("second alert %d" % body[1])
    else:
        print("second closed" if t is None else "second type %d" % t)


def cmd_sha(args):
    print(pattern_sha256(args.n))


def cmd_dnsport(args):
    """A port free on 127.0.0.1 for both UDP and TCP (for a dnsmasq)."""
    while True:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 0))
        port = u.getsockname()[1]
        t = socket.socket()
        try:
            t.bind(("127.0.0.1", port))
        except OSError:
            u.close()
            t.close()
            continue
        u.close()
        t.close()
        print(port)
        return


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("http", "echo", "blackhole", "synhole"):
        sp = sub.add_parser(name)
        sp.add_argument("--port-file", required=True)
        sp.add_argument("--bind", default="127.0.0.1")
        if name == "blackhole":
            sp.add_argument("--no-read", action="store_true")
        if name == "http":
            sp.add_argument("--tls-cert")
            sp.add_argument("--tls-key")
            sp.add_argument("--log-sessions", action="store_true")
            sp.add_argument("--root")
            sp.add_argument("--root-prefix", default="/git/")
    sp = sub.add_parser("upload")
    sp.add_argument("--port-file", required=True)
    sp.add_argument("--record", required=True)
    sp.add_argument("--bind", default="127.0.0.1")
    sp = sub.add_parser("certgen")
    sp.add_argument("dir")
    sp.add_argument("names", nargs="+")
    sp = sub.add_parser("client")
    sp.add_argument("--port", type=int, default=0)
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--unix")
    sp.add_argument("--timeout", type=float, default=3.0)
    sp.add_argument("--shut", action="store_true")
    sp.add_argument("--hex", action="store_true")
    sp.add_argument("--trickle", type=int, default=0)
    sp.add_argument("--http", action="store_true")
    sp = sub.add_parser("socks5")
    sp.add_argument("--port", type=int, required=True)
    sp.add_argument("--target", required=True)
    sp.add_argument("--atyp", default="auto",
                    choices=["auto", "domain", "ipv4", "ipv6"])
    sp.add_argument("--auth")
    sp.add_argument("--cmd", dest="socks_cmd", default="connect",
                    choices=["connect", "bind", "udp"])
    sp.add_argument("--send")
    sp.add_argument("--source")
    sp.add_argument("--timeout", type=float, default=5.0)
    sp = sub.add_parser("tls")
    sp.add_argument("--port", type=int, required=True)
    sp.add_argument("--via", choices=["connect", "socks5"], required=True)
    sp.add_argument("--target", required=True)
    sp.add_argument("--sni", default="")
    sp.add_argument("--split", type=int, default=1)
    sp.add_argument("--stall", action="store_true")
    sp.add_argument("--raw")
    sp.add_argument("--timeout", type=float, default=10.0)
    sp = sub.add_parser("hrr")
    sp.add_argument("--port", type=int, required=True)
    sp.add_argument("--via", choices=["connect", "socks5"], required=True)
    sp.add_argument("--target", required=True)
    sp.add_argument("--sni", required=True)
    sp.add_argument("--sni2", required=True)
    sp.add_argument("--p384", required=True)
    sp.add_argument("--stall2", action="store_true")
    sp.add_argument("--raw2")
    sp.add_argument("--timeout", type=float, default=10.0)
    sp = sub.add_parser("sha")
    sp.add_argument("n", type=int)
    sub.add_parser("dnsport")
    args = p.parse_args()
    {"http": cmd_http, "echo": cmd_echo, "blackhole": cmd_blackhole,
     "synhole": cmd_synhole, "upload": cmd_upload, "certgen": cmd_certgen,
     "client": cmd_client, "socks5": cmd_socks5, "tls": cmd_tls,
     "hrr": cmd_hrr,
     "sha": cmd_sha, "dnsport": cmd_dnsport}[args.cmd](args)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
