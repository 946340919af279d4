"""make bench's socket-call rows: what the guard costs a command's own
socket calls, measured inside each sandbox by bench/sock_calls.c.

    connect()           blocking TCP connect to the sandbox's loopback
    sendmsg() 256 B     no address, connected AF_UNIX stream socketpair
    bulk sendmsg()      64 KiB at a time, AF_UNIX stream socketpair
    UDP sendto()        256 B with an address, to the sandbox's loopback

Each figure is measured on the host (the floor), inside pisbx-run (by
default its sends go straight to the kernel, Unix datagram sockets
refused), inside pisbx-run with every send checked by the guard
(allowUnixDatagramSockets), inside pisbx-run with the guard off for
socket calls (allowAllUnixSockets: the same sandbox, the same filter but
for these calls) and inside bubblewrap; srt runs no seccomp guard on
these calls and is left out.  The checked and guard-off figures and
send() (sendto without an address, which every filter lets through) are
notes under the table.
Kept apart from bench.py so that its rows can change independently.
"""

import json
import os
import re

SOCK_CALLS = None   # set by rows_sock from bench.py's BUILD
ROWS = [
    # key, mode, label, unit, better, args
    ("connect", "connect() TCP to the sandbox's loopback (in sandbox)",
     "µs ↓", "lo", ["--count", "2000"]),
    ("sendmsg", "sendmsg() 256 B, no address, Unix pair (in sandbox)",
     "µs ↓", "lo", ["--count", "2000"]),
    ("bulk", "bulk sendmsg() 64 KiB, Unix pair (in sandbox)",
     "MB/s ↑", "hi", ["--mib", "512"]),
    ("udp", "UDP sendto() with an address (in sandbox)",
     "µs ↓", "lo", ["--count", "2000"]),
]


def figure(out):
    """The number sock_calls printed last on its line."""
    m = re.search(r"(?:us_per_call|MBps) ([0-9.]+)", out)
    if m is None:
        raise ValueError("sock_calls said: %r" % out[-200:])
    return float(m.group(1))


def rows_sock(b, build, run_exe, runs, run, median, skip_cls, left):
    """Add the four rows to bench b (a bench.Bench)."""
    exe = os.path.join(build, "bench", "sock_calls")
    if not os.access(exe, os.X_OK):
        raise skip_cls("%s not built" % exe)
    noguard = b.path("pisbx-noguard.json")
    with open(b.path("pisbx.json")) as f:
        conf = json.load(f)
    checked = b.path("pisbx-checked.json")
    with open(checked, "w") as f:
        json.dump(dict(conf, network=dict(conf.get("network", {}),
                  allowUnixDatagramSockets=True)), f)
    conf.setdefault("network", {})["allowAllUnixSockets"] = True
    with open(noguard, "w") as f:
        json.dump(conf, f)
    whos = [w for w in b.sandboxes() if w != "srt"]

    def one(pre, mode, args):
        return figure(run(pre + [exe, mode] + args))

    for mode, label, unit, better, args in ROWS:
        floor, vals, off, chk, plain = [], {}, [], [], {}
        for _ in range(max(runs, 5)):
            if left() < 20:
                b.note("sock %s: fewer runs (time budget)" % mode)
                break
            floor.append(one([], mode, args))
            for who in whos:
                try:
                    vals.setdefault(who, []).append(
                        one(b.sandbox(who, []), mode, args))
                except skip_cls as e:
                    b.note("sock %s %s: %s" % (mode, who, e))
            off.append(one([run_exe, "--config", noguard, "--"], mode,
                           args))
            chk.append(one([run_exe, "--config", checked, "--"], mode,
                           args))
            if mode == "sendmsg":
                for who, pre in (("host", []),
                                 ("pisbx", b.sandbox("pisbx", []))):
                    plain.setdefault(who, []).append(
                        one(pre, "send", args))
        if not floor:
            continue
        b.row("sock", label, unit, better, median(floor),
              {w: median(v) for w, v in vals.items()},
              "SANDBOX sock_calls %s %s (floor: on the host)" % (
                  mode, " ".join(args)))
        b.diag.append("%s, every send checked by the guard (pisbx-run "
                      "with allowUnixDatagramSockets): %.1f %s" % (
                          label, median(chk), unit.split()[0]))
        b.diag.append("%s, guard off for socket calls (pisbx-run with "
                      "allowAllUnixSockets): %.1f %s" % (
                          label, median(off), unit.split()[0]))
        if plain:
            b.diag.append("send() 256 B, no address (every filter lets "
                          "it through): host %.1f µs, pisbx %.1f µs" % (
                              median(plain["host"]),
                              median(plain["pisbx"])))
