#!/bin/sh
# What a reviewer is asked, and what an answer covers.
#
# - An approval covers the target over the protocol it was asked about:
#   on one kept-alive client connection, an approved forwarded request
#   does not open a CONNECT tunnel to the same host:port (a new review,
#   protocol "connect"); further forwarded requests to it need none.
# - The access log never says review:allow for a target and protocol the
#   reviewer was not asked about.
# - A non-public address literal without an exact allow entry is refused
#   before review (non-public-address): the reviewer is never asked.
#
# Reviewed destinations must be public to be dialled, so the scenario runs
# in a private network namespace where 11.0.0.1 sits on lo.
. "$(dirname "$0")/../lib/netns.sh"
ip addr add 11.0.0.1/32 dev lo || exit 1

. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/review.sh"

spawn $PY "$FIX/origin.py" 11.0.0.1 "$T/origin.port"
wait_file "$T/origin.port" 200 || { not_ok "origin did not start"; exit 1; }
O=$(cat "$T/origin.port")
dns_start test=11.0.0.1
mkdir "$T/rv"
$PY - "$DNS_PORT" "$T/conf.json" "$FIX/by-host.sh" "$T/rv" <<'EOF'
import json, sys
dns, out, rv, d = sys.argv[1:]
json.dump({"network": {"allowedDomains": [], "deniedDomains": []},
           "resolver": {"servers": ["127.0.0.1:" + dns], "timeoutMs": 2000},
           "review": {"command": [rv, d], "timeoutMs": 20000}},
          open(out, "w"))
EOF
px_start "$T/conf.json"

# asked HOST: the reviewer requests for HOST, "protocol:port" per line.
asked() {
	[ -f "$T/rv/requests" ] || return 0
	$PY -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["hostname"] == sys.argv[2]:
        print("%s:%d" % (r["protocol"], r["port"]))' "$T/rv/requests" "$1"
}

# keepalive REQ...: send each request on one client connection, reading
# each answer (a head, and a Content-Length body) before the next; print
# each status line.  A CONNECT that succeeds ends the sequence.
keepalive() {
	$PY - "$PX_PORT" "$@" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 10)
f = s.makefile("rb")
for req in sys.argv[2:]:
    s.sendall(req.replace("\\r\\n", "\r\n").encode())
    status = f.readline().decode().strip()
    print(status or "closed")
    if not status:
        break
    n = 0
    while True:
        h = f.readline().decode()
        if h in ("\r\n", ""):
            break
        if h.lower().startswith("content-length:"):
            n = int(h.split(":")[1])
    if req.startswith("CONNECT"):
        break
    f.read(n)
EOF
}

# ---- an approved forwarded request does not cover a tunnel ------------
G="GET http://once-a.test:$O/a HTTP/1.1\r\nHost: once-a.test:$O\r\n\r\n"
C="CONNECT once-a.test:$O HTTP/1.1\r\nHost: once-a.test:$O\r\n\r\n"
out=$(keepalive "$G" "$C")
eq "GET approved, then CONNECT on the same connection: 200 then 403" \
    "$(printf '%s\n' "$out" | cut -d' ' -f2 | tr '\n' ' ')" "200 403 "
eq "the reviewer was asked twice, for http then connect" \
    "$(asked once-a.test | tr '\n' ' ')" "http:$O connect:$O "
check_log "the CONNECT was reviewed (review:deny)" event=decision \
    proto=connect host=once-a.test port="$O" decision=deny reason=review:deny
eq "no CONNECT to once-a.test was logged as review:allow" \
    "$(log_count event=decision proto=connect host=once-a.test decision=allow)" 0

# ... and the other way round on a fresh host: each is its own question.
G="GET http://allow-b.test:$O/b HTTP/1.1\r\nHost: allow-b.test:$O\r\n\r\n"
C="CONNECT allow-b.test:$O HTTP/1.1\r\nHost: allow-b.test:$O\r\n\r\n"
out=$(keepalive "$G" "$G" "$C")
eq "GET, GET, CONNECT to an allowed host: all through" \
    "$(printf '%s\n' "$out" | cut -d' ' -f2 | tr '\n' ' ')" "200 200 200 "
eq "two questions: one for the forwarded requests, one for the tunnel" \
    "$(asked allow-b.test | tr '\n' ' ')" "http:$O connect:$O "
check_log "the second GET is covered by the first approval, and says so" \
    event=decision proto=http host=allow-b.test decision=allow \
    reason=review:allow 'error=approved earlier on this connection'

# Another port on the same connection is another target.
G2="GET http://allow-b.test:$((O + 1))/ HTTP/1.1\r\nHost: x\r\n\r\n"
out=$(keepalive "$G" "$G2")
eq "another port on a kept-alive connection is reviewed again" \
    "$(asked allow-b.test | grep -c "^http:$((O + 1))$")" 1

# ---- non-public literals are refused before review ---------------------
for t in 10.1.2.3:80 127.0.0.5:$O "[::1]:$O" "[fd00::1]:443" \
    169.254.169.254:80 "[::ffff:192.168.1.1]:80" 0.0.0.0:$PX_PORT \
    "127.0.0.1:$PX_PORT"; do
	px_connect "$t"
	eq "CONNECT $t: 403" "$STATUS" 403
	eq "CONNECT $t: X-Pisbx-Reason non-public-address" "$REASON_HDR" \
	    non-public-address
done
px_req "GET http://100.64.0.1/ HTTP/1.1\r\nHost: 100.64.0.1\r\n\r\n"
eq "GET http://100.64.0.1/: 403 non-public-address" "$STATUS/$REASON_HDR" \
    403/non-public-address
out=$(socks "$PX_PORT" --target "192.168.7.7:80")
contains "SOCKS5 192.168.7.7: reply 0x02" "$out" "reply 0x02 full"
check_log "SOCKS5 192.168.7.7: non-public-address record" event=decision \
    proto=socks5 host=192.168.7.7 decision=deny reason=non-public-address \
    'error~192.168.7.7:80 is rfc1918'
for h in 10.1.2.3 127.0.0.5 '[::1]' '[fd00::1]' 169.254.169.254 \
    192.168.1.1 0.0.0.0 127.0.0.1 100.64.0.1 192.168.7.7; do
	eq "the reviewer was never asked about $h" "$(asked "$h" | wc -l)" 0
done
# A public literal no list names is still reviewed (and allowed here).
out=$(keepalive "GET http://11.0.0.1:$O/p HTTP/1.1\r\nHost: 11.0.0.1\r\n\r\n")
eq "a public literal is reviewed (by-host denies it)" "$(asked 11.0.0.1)" "http:$O"

# ---- every review:allow record names something the reviewer allowed ---
if $PY - "$PX_LOG" "$T/rv/requests" <<'EOF'
import json, sys
asked = set()
for l in open(sys.argv[2]):
    r = json.loads(l)
    asked.add((r["hostname"], r["port"], r["protocol"]))
bad = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("reason") == "review:allow" and \
            (r["host"], r["port"], r["proto"]) not in asked:
        print("# review:allow never asked: %s" % l.strip())
        bad += 1
sys.exit(1 if bad else 0)
EOF
then
	ok "every review:allow record was asked about (host, port, protocol)"
else
	not_ok "a review:allow record the reviewer was never asked about"
fi

check "proxy still running" px_alive
px_done
