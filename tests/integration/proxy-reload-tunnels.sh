#!/bin/sh
# A reload (SIGHUP) decides every open tunnel again: one the new config
# still allows stays open and keeps relaying; one a new deny entry
# matches is closed (end "policy-changed", the deny-list reason in its
# error); one that reached a loopback address under an exact allow entry
# is closed when only a wildcard allows it now (non-public-address).  A
# config that does not load closes nothing.  Tunnels are CONNECT and
# SOCKS5, to an echo server on 127.0.0.1.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start echo echo
ECHO=$SRV_PORT
hosts_file "$T/hosts" "127.0.0.1 keep.test drop.test a.wild.test"
px_config "$T/conf.json" --allow "keep.test drop.test a.wild.test" \
    --hosts "$T/hosts"
px_start "$T/conf.json"

# Three tunnels held open: CONNECT keep.test, SOCKS5 drop.test, CONNECT
# a.wild.test.  Each is pinged, then again after each go file.
cat >"$T/tunnels.py" <<EOF
import os, socket, struct, sys, time

def connect(host):
    s = socket.create_connection(("127.0.0.1", $PX_PORT))
    s.sendall(("CONNECT %s:$ECHO HTTP/1.1\r\nHost: %s:$ECHO\r\n\r\n"
               % (host, host)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert head.split(b" ")[1] == b"200", head
    return s

def socks(host):
    s = socket.create_connection(("127.0.0.1", $PX_PORT))
    s.sendall(b"\x05\x01\x00")
    assert s.recv(2) == b"\x05\x00"
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(host)]) + host.encode() +
              struct.pack("!H", $ECHO))
    rep = s.recv(10)
    assert rep[1] == 0, rep
    return s

def ping(s, data):
    try:
        s.sendall(data)
        got = s.recv(100)
        return got.decode() if got else "eof"
    except OSError:
        return "error"

ts = [connect("keep.test"), socks("drop.test"), connect("a.wild.test")]
for t in ts:
    t.settimeout(10)
for n in ("1", "2", "3"):
    res = " ".join(ping(t, b"p" + n.encode()) for t in ts)
    with open("$T/r%s.tmp" % n, "w") as f:
        f.write(res)
    os.rename("$T/r%s.tmp" % n, "$T/r%s" % n)
    for _ in range(400):
        if os.path.exists("$T/go%s" % n):
            break
        time.sleep(0.05)
EOF
spawn "$PY" "$T/tunnels.py"
wait_file "$T/r1" 200
eq "three tunnels relay" "$(cat "$T/r1" 2>/dev/null)" "p1 p1 p1"

# A config that does not load: the old one stays, nothing is closed.
echo '{"network": {"allowedDomains": ["keep.test"], "bogus": 1}}' >"$T/conf.json"
kill -HUP "$PX_PID"
_i=0
while ! grep -q "is not valid; keeping the old" "$PX_ERR" && [ $_i -lt 100 ]; do
	sleep 0.05; _i=$((_i + 1))
done
touch "$T/go1"
wait_file "$T/r2" 200
eq "a config that does not load closes nothing" "$(cat "$T/r2" 2>/dev/null)" "p2 p2 p2"
eq "no close record yet" "$(log_count event=close port="$ECHO")" 0

# keep.test stays allowed, drop.test is denied, a.wild.test only by a
# wildcard (it reached 127.0.0.1: an exact entry is needed).
px_config "$T/conf.json" --allow "keep.test *.wild.test" --deny "drop.test" \
    --hosts "$T/hosts"
kill -HUP "$PX_PID"
check_log "the SOCKS5 tunnel to drop.test is closed" event=close \
    proto=socks5 host=drop.test end=policy-changed \
    "error~^refused by the new policy: deny-list:drop.test$"
check_log "the CONNECT tunnel to a.wild.test is closed" event=close \
    proto=connect host=a.wild.test end=policy-changed \
    "error~non-public-address" reason=allow-list:a.wild.test
touch "$T/go2"
wait_file "$T/r3" 200
eq "keep.test relays on; the other two are closed" \
    "$(cat "$T/r3" 2>/dev/null)" "p3 eof eof"
eq "keep.test was not closed" \
    "$(log_count event=close host=keep.test)" 0
touch "$T/go3"
# New connections are decided by the new config too.
px_connect "drop.test:$ECHO"
eq "a new tunnel to drop.test is refused" "$STATUS" 403
px_done
