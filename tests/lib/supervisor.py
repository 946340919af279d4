#!/usr/bin/python3
"""A scriptable supervisor for the supervisor-mode and host-IPC tests.

  supervisor.py serve --socket PATH --capability CAP --record FILE
        [--register allow|deny|garbage|noreply|wrongid|extra|nonetwork|badpolicy|
                    noallowed|nodenied|notobject|nulllist]
        [--network JSON] [--review allow|deny|hang] [--review-scope S]
        [--hostipc allow|deny] [--policy-file JSON]
  supervisor.py send --socket PATH LINE     (one line out, the reply printed)

serve listens on a Unix stream socket and answers one JSON line per
connection as scripted.  Every request it receives is appended to the
record file as one JSON line with the capability replaced by
"capability_ok": true/false.  A request with a wrong capability is denied.
The socket file appearing means it is ready.  It stops on SIGTERM.
"""
import argparse
import hmac
import json
import os
import signal
import socket
import sys
import threading
import time

lock = threading.Lock()


def record(path, obj):
    with lock:
        with open(path, "a") as f:
            f.write(json.dumps(obj, sort_keys=True) + "\n")


def reply(conn, obj):
    conn.sendall((json.dumps(obj) + "\n").encode())


def handle(conn, a):
    try:
        buf = b""
        while b"\n" not in buf and len(buf) <= 16384:
            d = conn.recv(4096)
            if not d:
                return
            buf += d
        line = buf.split(b"\n", 1)[0]
        try:
            req = json.loads(line)
        except ValueError:
            record(a.record, {"bad": line.decode("utf-8", "replace")})
            reply(conn, {"action": "deny", "reason": "not JSON"})
            return
        cap = req.pop("capability", None)
        ok = isinstance(cap, str) and hmac.compare_digest(
            cap.encode(), a.capability.encode())
        req["capability_ok"] = ok
        record(a.record, req)
        rid = req.get("id")
        if not ok:
            reply(conn, {"id": rid, "action": "deny",
                         "reason": "bad capability"})
            return
        t = req.get("type")
        if t == "register":
            mode = a.register
            net = json.loads(a.network)
            if mode == "allow":
                r = {"id": rid, "action": "allow", "network": net}
                if a.policy_file is not None:
                    r["policyFile"] = json.loads(a.policy_file)
                reply(conn, r)
            elif mode == "deny":
                reply(conn, {"id": rid, "action": "deny",
                             "reason": "no workers today"})
            elif mode == "garbage":
                conn.sendall(b"this is not json\n")
            elif mode == "noreply":
                time.sleep(60)
            elif mode == "wrongid":
                reply(conn, {"id": "00000000-0000-4000-8000-000000000000",
                             "action": "allow", "network": net})
            elif mode == "extra":
                net = dict(net)
                net["allowAllUnixSockets"] = True
                reply(conn, {"id": rid, "action": "allow", "network": net})
            elif mode == "nonetwork":
                reply(conn, {"id": rid, "action": "allow"})
            elif mode == "badpolicy":
                reply(conn, {"id": rid, "action": "allow",
                             "network": {"allowedDomains": ["https://x"]}})
            elif mode in ("noallowed", "nodenied"):
                net = dict(net)
                net.pop("allowedDomains" if mode == "noallowed"
                        else "deniedDomains")
                reply(conn, {"id": rid, "action": "allow", "network": net})
            elif mode == "notobject":
                reply(conn, {"id": rid, "action": "allow",
                             "network": [net]})
            elif mode == "nulllist":
                net = dict(net)
                net["deniedDomains"] = None
                reply(conn, {"id": rid, "action": "allow", "network": net})
        elif t == "unregister":
            reply(conn, {"id": rid, "action": "allow"})
        elif t == "network":
            if a.review == "hang":
                time.sleep(60)
                return
            r = {"id": rid, "action": a.review,
                 "reason": "scripted " + a.review}
            if a.review_scope:
                r["scope"] = a.review_scope
            reply(conn, r)
        elif t == "host-ipc":
            reply(conn, {"id": rid, "action": a.hostipc,
                         "reason": "scripted host-ipc " + a.hostipc})
        else:
            reply(conn, {"id": rid, "action": "deny", "reason": "type?"})
    except OSError:
        pass
    finally:
        conn.close()


def serve(a):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = a.socket + ".tmp"
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    s.bind(tmp)
    os.chmod(tmp, 0o600)
    s.listen(64)
    os.rename(tmp, a.socket)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    while True:
        conn, _ = s.accept()
        threading.Thread(target=handle, args=(conn, a), daemon=True).start()


def send(a):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(a.timeout)
    s.connect(a.socket)
    s.sendall(a.line.encode() + (b"" if a.raw else b"\n"))
    buf = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    except socket.timeout:
        print("TIMEOUT")
    except ConnectionResetError:
        print("RESET")
    sys.stdout.write(buf.decode("utf-8", "replace"))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("serve")
    ps.add_argument("--socket", required=True)
    ps.add_argument("--capability", required=True)
    ps.add_argument("--record", required=True)
    ps.add_argument("--register", default="allow")
    ps.add_argument("--network",
                    default='{"allowedDomains":[],"deniedDomains":[]}')
    ps.add_argument("--review", default="deny")
    # The registration reply's policyFile, as JSON (a string, or not).
    ps.add_argument("--policy-file", default=None)
    ps.add_argument("--review-scope", default=None)
    ps.add_argument("--hostipc", default="deny")
    pc = sub.add_parser("send")
    pc.add_argument("--socket", required=True)
    pc.add_argument("--timeout", type=float, default=10)
    pc.add_argument("--raw", action="store_true")
    pc.add_argument("line")
    a = p.parse_args()
    if a.cmd == "serve":
        serve(a)
    else:
        send(a)


if __name__ == "__main__":
    main()
