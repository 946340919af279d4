#!/bin/sh
# Slow request heads from many addresses do not lock a shared proxy out
# (docs/reliability.md): 200 clients from 127.0.0.2-127.0.0.9 that send
# half a request head and then a byte every half second fill
# maxConnections (100) in a moment; a client with a complete request is
# still served at once, because when the proxy is full the oldest
# incomplete head gives its slot up ("header-shed"), and a head accepted
# while the slots are more than half used gets a shorter deadline than
# proxy.headerTimeoutMs (30 s here), down to 2 s when full.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start http web
WEB=$SRV_PORT
dns_start web.test=127.0.0.1
px_config "$T/conf.json" --allow "web.test" \
    --proxy '{"maxConnections": 100, "headerTimeoutMs": 30000}'
px_start "$T/conf.json"

# slow.py: 200 dribbling clients for 8 s; then how each one ended.
cat >"$T/slow.py" <<'EOF'
import select, socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
conns = []
for i in range(n):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (2 + i % 8), 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET http://web.test/slow HTTP/1.1\r\nX-Slow: ")
    s.setblocking(False)
    conns.append([s, time.time(), None])
open(sys.argv[4], "w").write("ready\n")
end = time.time() + secs
next_drip = time.time() + 0.5
while time.time() < end:
    live = [c for c in conns if c[2] is None]
    if not live:
        break
    r = select.select([c[0] for c in live], [], [], 0.05)[0]
    for c in live:
        if c[0] in r:
            try:
                d = c[0].recv(4096)
            except OSError:
                d = b""
            c[2] = time.time() - c[1]
    if time.time() >= next_drip:
        for c in conns:
            if c[2] is None:
                try:
                    c[0].send(b"x")
                except OSError:
                    c[2] = time.time() - c[1]
        next_drip += 0.5
ended = [c[2] for c in conns if c[2] is not None]
print("ended", len(ended))
print("longest", "%.1f" % max(ended) if ended else "none")
EOF
"$PY" "$T/slow.py" "$PX_PORT" 200 8 "$T/slow.ready" >"$T/slow.out" 2>&1 &
SLOW=$!
_pids="$_pids $SLOW"
wait_file "$T/slow.ready" 200 || not_ok "the slow clients did not connect"
sleep 0.5
good=0
for i in 1 2 3 4 5; do
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
	    -x "http://127.0.0.1:$PX_PORT" "http://web.test:$WEB/good$i")
	[ "$code" = 200 ] && good=$((good + 1))
done
eq "200 slow heads from 8 addresses: 5 complete requests all served" "$good" 5
check_log "a shed head has its close record (end header-shed)" \
    event=close end=header-shed proto=http \
    error~'oldest incomplete one gave its slot up'
eq "the oldest head was shed first (conn 1)" \
    "$("$PY" -c 'import json, sys
shed = [json.loads(l)["conn"] for l in open(sys.argv[1])
        if "\"end\":\"header-shed\"" in l]
print(shed[0] if shed else "none")' "$PX_LOG")" 1
wait "$SLOW"
ended=$(sed -n 's/^ended //p' "$T/slow.out")
eq "every slow head was let go within 8 s (shed or its shorter deadline)" \
    "$ended" 200
# Served heads, not ones over the limit (those carry max-connections).
n408=$("$PY" -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)]
          if r["event"] == "close" and r.get("end") == "header-timeout"
          and "reason" not in r))' "$PX_LOG")
if [ "$n408" -gt 0 ]; then
	ok "$n408 heads accepted while full timed out before 8 s, not after 30 s"
else
	not_ok "no head timed out within 8 s ($(cat "$T/slow.out"))"
fi
check "proxy still running" px_alive
px_done
