#!/bin/sh
# Connection limits answer instead of vanishing, and one client cannot
# take every slot:
# - over proxy.maxClientConnections, a client address's next connection
#   is answered 503 (SOCKS5 0x01) with a max-client-connections record;
#   other client addresses are still served;
# - over proxy.maxConnections held by tunnels, 503 / 0x01 and a
#   max-connections record (incomplete request heads give their slots up
#   instead: reliability-slowheaders.sh);
# - a client over a limit that never finishes its request is still
#   logged (and let go within 5 s);
# - served again once below the limits.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start http web
WEB=$SRV_PORT
srv_start echo echo
ECHO=$SRV_PORT
dns_start web.test=127.0.0.1
px_config "$T/conf.json" --allow "web.test 127.0.0.1" \
    --proxy '{"maxConnections": 6, "maxClientConnections": 3, "headerTimeoutMs": 60000}'
px_start "$T/conf.json"

# dribble NAME SRC N: N connections from SRC that send half a request
# line and then nothing; "ready" in $T/NAME.ready once all are connected
# and the proxy has not closed them.
cat >"$T/dribble.py" <<'EOF'
import socket, sys, time
port, src, n, ready = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
held = []
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET http://web.test/ HT")
    held.append(s)
time.sleep(0.3)
for s in held:
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            sys.exit("a dribbling connection was closed")
    except BlockingIOError:
        pass
open(ready, "w").write("ready\n")
time.sleep(120)
EOF
dribble() {
	spawn "$PY" "$T/dribble.py" "$PX_PORT" "$2" "$3" "$T/$1.ready"
	DRIBBLE_PID=$LAST_PID
}

# tunnels NAME SRC N: N open CONNECT tunnels to the echo server from SRC;
# "ready" in $T/NAME.ready once all are established.
cat >"$T/tunnels.py" <<'EOF'
import socket, sys, time
port, src, n, echo, ready = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                             sys.argv[4], sys.argv[5])
held = []
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(("CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\n" % echo).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            sys.exit("a tunnel was refused: %r" % head)
        head += d
    if not head.startswith(b"HTTP/1.1 200"):
        sys.exit("a tunnel was refused: %r" % head)
    held.append(s)
open(ready, "w").write("ready\n")
time.sleep(120)
EOF
tunnels() {
	spawn "$PY" "$T/tunnels.py" "$PX_PORT" "$2" "$3" "$ECHO" "$T/$1.ready"
	TUNNELS_PID=$LAST_PID
}

# get SRC [CONNECT]: one forwarded request (or CONNECT) from SRC to
# web.test; STATUS, REASON_HDR, RESP.
get() {
	RESP=$("$PY" - "$PX_PORT" "$1" "web.test:$WEB" "${2:-}" <<'EOF'
import socket, sys
port, src, target, connect = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
s = socket.socket()
s.settimeout(10)
s.bind((src, 0))
s.connect(("127.0.0.1", port))
if connect:
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
               % (target, target)).encode())
else:
    s.sendall(("GET http://%s/x HTTP/1.1\r\nHost: %s\r\n"
               "Connection: close\r\n\r\n" % (target, target)).encode())
out = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
except OSError:
    pass
sys.stdout.write(out.decode("latin-1"))
EOF
)
	RESP=$(printf '%s' "$RESP" | tr -d '\r')
	STATUS=$(printf '%s\n' "$RESP" | sed -n '1s/^HTTP\/1\.[01] \([0-9]*\).*/\1/p')
	[ -n "$STATUS" ] || STATUS=none
	REASON_HDR=$(printf '%s\n' "$RESP" | sed -n 's/^X-Pisbx-Reason: *//p')
}

# ---- one client address holds at most maxClientConnections ------------
dribble d1 127.0.0.1 6
D1=$DRIBBLE_PID
wait_file "$T/d1.ready" 200 || not_ok "six dribbling connections from 127.0.0.1"
get 127.0.0.1
eq "127.0.0.1 over maxClientConnections: 503" "$STATUS" 503
eq "... X-Pisbx-Reason max-client-connections" "$REASON_HDR" max-client-connections
contains "... the answer names the key and the client" "$RESP" \
    "proxy.maxClientConnections (3) reached for 127.0.0.1"
check_log "... a max-client-connections record" event=decision proto=http \
    host=web.test decision=deny reason=max-client-connections \
    'error~proxy.maxClientConnections \(3\) reached for 127.0.0.1'
get 127.0.0.2
eq "another client address is served while 127.0.0.1 dribbles" "$STATUS" 200

# ---- maxConnections: 503 / 0x01 and a record ----------------------------
# Six tunnels hold every slot (dribbling heads would give theirs up).
kill "$D1"
wait "$D1" 2>/dev/null
i=0
while [ "$(log_count event=close end=client-eof)" -lt 3 ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
tunnels t1 127.0.0.1 3
D1=$TUNNELS_PID
tunnels t2 127.0.0.2 3
D2=$TUNNELS_PID
wait_file "$T/t1.ready" 200 || not_ok "three tunnels from 127.0.0.1"
wait_file "$T/t2.ready" 200 || not_ok "three tunnels from 127.0.0.2"
: >"$PX_LOG"
get 127.0.0.3
eq "over maxConnections: 503" "$STATUS" 503
eq "... X-Pisbx-Reason max-connections" "$REASON_HDR" max-connections
contains "... the answer names the key" "$RESP" "proxy.maxConnections (6) reached"
check_log "... a max-connections record" event=decision proto=http \
    host=web.test decision=deny reason=max-connections
out=$(socks "$PX_PORT" --source 127.0.0.3 --target "127.0.0.1:$ECHO" --send hi)
contains "SOCKS5 over maxConnections: reply 0x01" "$out" "reply 0x01 full"
check_log "... a max-connections record" event=decision proto=socks5 \
    host=127.0.0.1 port="$ECHO" decision=deny reason=max-connections
get 127.0.0.3 connect
eq "CONNECT over maxConnections: 503" "$STATUS/$REASON_HDR" 503/max-connections

# A client over the limit that sends nothing is let go, and logged.
: >"$PX_LOG"
$PY -c "import socket
s = socket.create_connection(('127.0.0.1', $PX_PORT))
s.settimeout(15)
try:
    s.recv(1)
except OSError:
    pass"
check_log "a silent client over the limit is let go with a record" \
    event=decision decision=deny reason=max-connections proto=none
check_log "... and a close record" event=close reason=max-connections

# ---- served again once below the limits ---------------------------------
kill "$D1" "$D2"
wait "$D1" "$D2" 2>/dev/null
i=0
while [ "$(log_count event=close host=127.0.0.1)" -lt 6 ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
get 127.0.0.1
eq "127.0.0.1 served again once its connections are gone" "$STATUS" 200
get 127.0.0.3
eq "127.0.0.3 served again" "$STATUS" 200

check "proxy still running" px_alive
px_done
