#!/bin/sh
# Egress budgets (network.budget) of a standalone pisbx-proxy, per client
# and canonical host:
# - bad budget values are each refused with their own message;
# - a real `curl --data-binary @big` upload past bytesUpPerHost is cut:
#   forwarded HTTP, a CONNECT tunnel and a SOCKS5 tunnel; the server gets
#   at most the budget, the close record says budget-bytes-up, and the
#   next connection to that host is refused (403, budget-bytes-up);
#   a host with a budget of its own (network.budget.hosts) is cut at it;
# - past connectionsPerHost the next curl is refused (budget-connections,
#   a 403 naming the key), while another client (127.0.0.2) still has its
#   own budget;
# - with a reviewer, the connection past the budget is asked about (the
#   request names the budget) and, approved, goes through; an approval
#   for one connection gives one budget more;
# - past 1024 hosts a client's further hosts share one account, never
#   one each, while a host with a budget of its own keeps it.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

command -v curl >/dev/null || skip "no curl"

# ---- bad values ----------------------------------------------------------
bad() {	# bad DESC JSON-OF-BUDGET EXPECTED-MESSAGE
	printf '{"network": {"budget": %s}}\n' "$2" >"$T/bad.json"
	out=$("$PROXY" --config "$T/bad.json" --check 2>&1); rc=$?
	eq "bad budget $1: exit 78" "$rc" 78
	contains "bad budget $1: message" "$out" "$T/bad.json: $3"
}
bad "fraction" '{"bytesUpPerHost": 1.5}' \
    '$.network.budget.bytesUpPerHost: expected an integer from 1 to 1099511627776, got 1.5'
bad "zero" '{"connectionsPerHost": 0}' \
    '$.network.budget.connectionsPerHost: expected an integer from 1 to 1000000, got 0'
bad "too large" '{"bytesUpPerHost": 1099511627777}' \
    '$.network.budget.bytesUpPerHost: expected an integer from 1 to 1099511627776, got 1099511627777'
bad "string" '{"connectionsPerHost": "5"}' \
    '$.network.budget.connectionsPerHost: expected an integer from 1 to 1000000, got "5"'
bad "unknown key" '{"bytesUp": 10}' \
    '$.network.budget.bytesUp: unknown key (known keys here: bytesUpPerHost, connectionsPerHost, hosts)'
bad "not an object" '5' '$.network.budget: expected an object, got 5'
bad "a hosts entry with a wildcard" '{"hosts": [{"host": "*.a.example", "bytesUp": 1}]}' \
    '$.network.budget.hosts[0].host: invalid host "*.a.example"'
bad "a host twice" '{"hosts": [{"host": "a.example"}, {"host": "A.example."}]}' \
    '$.network.budget.hosts[1].host: "a.example" has a budget already (entry 0)'
printf '{"network": {"budget": {"bytesUpPerHost": 1048576, "connectionsPerHost": 3}}}\n' \
    >"$T/good.json"
out=$("$PROXY" --config "$T/good.json" --check 2>&1)
contains "a good budget: configuration OK" "$out" "configuration OK"

# ---- servers and proxy ---------------------------------------------------
BUDGET=1048576			# 1 MiB up per host
srv_start upload up --record "$T/up.rec"
UP=$SRV_PORT
srv_start http web
WEB=$SRV_PORT
dns_start fwd.test=127.0.0.1 tun.test=127.0.0.1 socks.test=127.0.0.1 \
    conn.test=127.0.0.1 small.test=127.0.0.1 tiny.test=127.0.0.1
px_config "$T/conf.json" \
    --allow "fwd.test tun.test socks.test conn.test small.test tiny.test"
"$PY" - "$T/conf.json" "$BUDGET" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["network"]["budget"] = {"bytesUpPerHost": int(sys.argv[2]),
                          "connectionsPerHost": 3,
                          "hosts": [{"host": "Tiny.Test.", "bytesUp": 65536}]}
json.dump(c, open(sys.argv[1], "w"))
EOF
px_start "$T/conf.json"
P=http://127.0.0.1:$PX_PORT
head -c 4194304 /dev/urandom >"$T/big"		# 4 MiB
head -c 1000 /dev/urandom >"$T/small"

# last_rec: the bytes the upload server got on its last connection.
last_rec() {
	_i=0
	while [ $_i -lt 100 ] && [ "$(cat "$T/up.rec" 2>/dev/null | wc -l)" -lt "$1" ]; do
		sleep 0.05; _i=$((_i + 1))
	done
	tail -n 1 "$T/up.rec"
}
nrec=0

# upload DESC CURL-ARGS...: a 4 MiB upload past the budget is cut.
upload() {
	_d=$1; shift
	curl -sS --max-time 20 "$@" --data-binary @"$T/big" \
	    -o "$T/upload.out" 2>"$T/upload.err"
	_rc=$?
	nrec=$((nrec + 1))
	_got=$(last_rec $nrec)
	[ "$_rc" -ne 0 ] && ok "$_d: curl fails (exit $_rc)" ||
	    not_ok "$_d: curl succeeded past the budget"
	if [ -n "$_got" ] && [ "$_got" -le "$BUDGET" ] && [ "$_got" -gt 0 ]; then
		ok "$_d: the server got $_got bytes, at most the budget"
	else
		not_ok "$_d: the server got '$_got' bytes (budget $BUDGET)"
	fi
}

# Forwarded HTTP: request head and body count.
upload "forwarded HTTP" -x "$P" "http://fwd.test:$UP/up"
check_log "forwarded HTTP: close record end budget-bytes-up" \
    host=fwd.test end=budget-bytes-up 'error~network\.budget\.bytesUpPerHost \(1048576 bytes\)'
px_req "GET http://fwd.test:$UP/again HTTP/1.1\r\nHost: fwd.test:$UP\r\n\r\n"
eq "forwarded HTTP: the next request is refused" "$STATUS" 403
eq "forwarded HTTP: X-Pisbx-Reason" "$REASON_HDR" budget-bytes-up
contains "forwarded HTTP: the 403 names the key to raise" "$RESP" \
    "raise network.budget.bytesUpPerHost in $T/conf.json (or configure a reviewer to ask past it)"
check_log "forwarded HTTP: decision record budget-bytes-up" \
    host=fwd.test decision=deny reason=budget-bytes-up

# A CONNECT tunnel (curl -p): the tunnel's payload counts.
upload "CONNECT tunnel" -p -x "$P" "http://tun.test:$UP/up"
check_log "CONNECT tunnel: close record end budget-bytes-up" \
    host=tun.test proto=connect end=budget-bytes-up
px_connect "tun.test:$UP"
eq "CONNECT tunnel: the next tunnel is refused" "$STATUS" 403
eq "CONNECT tunnel: X-Pisbx-Reason" "$REASON_HDR" budget-bytes-up

# A SOCKS5 tunnel.
upload "SOCKS5 tunnel" --socks5-hostname "127.0.0.1:$PX_PORT" \
    "http://socks.test:$UP/up"
check_log "SOCKS5 tunnel: close record end budget-bytes-up" \
    host=socks.test proto=socks5 end=budget-bytes-up
out=$(socks "$PX_PORT" --target "socks.test:$UP")
contains "SOCKS5: the next tunnel is refused (0x02)" "$out" "reply 0x02"

# A host's own budget (network.budget.hosts, written in another case).
BUDGET_ALL=$BUDGET
BUDGET=65536
upload "a host's own budget" -p -x "$P" "http://tiny.test:$UP/up"
BUDGET=$BUDGET_ALL
px_connect "tiny.test:$UP"
eq "a host's own budget: the next tunnel is refused" "$STATUS" 403
contains "a host's own budget: the 403 names its entry" "$RESP" \
    "network.budget.hosts[0].bytesUp (65536 bytes) used up for tiny.test"
contains "a host's own budget: ... and the key to raise" "$RESP" \
    "raise network.budget.hosts[0].bytesUp in $T/conf.json"

# Within the budget an upload goes through whole.
out=$(curl -sS --max-time 20 -x "$P" --data-binary @"$T/small" \
    "http://small.test:$UP/up" 2>&1)
contains "an upload within the budget goes through" "$out" '"body_len": 1000'

# ---- connections per host, per client -----------------------------------
for i in 1 2 3; do
	out=$(curl -sS --max-time 10 -x "$P" "http://conn.test:$WEB/$i" 2>&1)
	contains "connection $i of 3 to conn.test is allowed" "$out" "\"path\": \"/$i\""
done
out=$(curl -sS --max-time 10 -x "$P" -D - "http://conn.test:$WEB/4" 2>&1 | tr -d '\r')
contains "the 4th connection is refused: 403" "$out" "HTTP/1.1 403"
contains "the 4th connection: X-Pisbx-Reason" "$out" "X-Pisbx-Reason: budget-connections"
contains "the 4th connection: the 403 names the key" "$out" \
    "raise network.budget.connectionsPerHost in $T/conf.json"
check_log "the 4th connection: decision record budget-connections" \
    host=conn.test decision=deny reason=budget-connections \
    'error~network\.budget\.connectionsPerHost \(3\) used up for conn\.test'
if curl -sS --max-time 5 --interface 127.0.0.2 -o /dev/null \
    "http://127.0.0.1:$WEB/" 2>/dev/null; then
	out=$(curl -sS --max-time 10 --interface 127.0.0.2 -x "$P" \
	    "http://conn.test:$WEB/other" 2>&1)
	contains "another client (127.0.0.2) has its own budget" "$out" '"path": "/other"'
	out=$(curl -sS --max-time 10 -x "$P" -o /dev/null -w '%{http_code}' \
	    "http://conn.test:$WEB/5" 2>&1)
	eq "the first client is still over its budget" "$out" 403
else
	not_ok "127.0.0.2 is not usable as a source address here"
fi

# --replay knows the budget reasons: not policy decisions, none unreadable.
out=$("$PROXY" --config "$T/conf.json" --replay "$PX_LOG" 2>&1)
contains "--replay: budget records read" "$out" "unreadable             0"
check "--replay: budget refusals are not policy decisions" sh -c \
    "printf '%s\n' \"\$1\" | grep -Eq '^not policy decisions +[1-9]'" sh "$out"

# ---- a reviewer is asked past a budget ------------------------------------
cat >"$T/rev.py" <<'EOF'
import json, sys
line = sys.stdin.readline()
req = json.loads(line)
with open(sys.argv[1], "a") as f:
    f.write(line)
print(json.dumps({"action": "allow", "id": req["id"], "reason": "more"}))
EOF
"$PY" - "$T/conf.json" "$T/conf2.json" "$PY" "$T/rev.py" "$T/rev.rec" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["network"]["budget"] = {"connectionsPerHost": 1}
c["review"] = {"command": [sys.argv[3], sys.argv[4], sys.argv[5]]}
json.dump(c, open(sys.argv[2], "w"))
EOF
PX_LOG=$T/access2.log
px_start "$T/conf2.json"
P2=http://127.0.0.1:$PX_PORT
out=$(curl -sS --max-time 10 -x "$P2" "http://conn.test:$WEB/r1" 2>&1)
contains "reviewer: the first connection is allowed by the list" "$out" '"path": "/r1"'
[ ! -s "$T/rev.rec" ] && ok "reviewer: not asked within the budget" ||
    not_ok "reviewer: asked within the budget"
out=$(curl -sS --max-time 10 -x "$P2" "http://conn.test:$WEB/r2" 2>&1)
contains "reviewer: the connection past the budget, approved, works" "$out" '"path": "/r2"'
"$PY" - "$T/rev.rec" >"$T/rev.chk" 2>&1 <<'EOF'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
assert len(reqs) == 1, reqs
b = reqs[0].get("budget")
assert b == {"name": "connectionsPerHost", "limit": 1, "used": 1}, b
assert reqs[0]["hostname"] == "conn.test", reqs[0]
print("budget ok")
EOF
contains "reviewer: the request names the budget" "$(cat "$T/rev.chk")" "budget ok"
check_log "reviewer: the record says review:allow" \
    host=conn.test decision=allow reason=review:allow
# An approval for one connection (scope once) adds one budget, here one
# connection, which the approved connection itself used: the next one is
# asked again, the question naming the raised budget (2, used 2).
out=$(curl -sS --max-time 10 -x "$P2" "http://conn.test:$WEB/r3" 2>&1)
contains "reviewer: the 3rd connection is allowed" "$out" '"path": "/r3"'
n=$(wc -l <"$T/rev.rec")
eq "reviewer: past the raised budget, asked again" "$n" 2
"$PY" - "$T/rev.rec" >"$T/rev2.chk" 2>&1 <<'EOF'
import json, sys
b = [json.loads(l) for l in open(sys.argv[1])][1].get("budget")
assert b == {"name": "connectionsPerHost", "limit": 2, "used": 2}, b
print("budget ok")
EOF
contains "reviewer: the second question says the raised budget" "$(cat "$T/rev2.chk")" "budget ok"

# ---- the accounts are bounded ----------------------------------------------
# 1024 hosts are counted apart; the 1025th and later share one account
# under the defaults (here one connection): the 1025th goes, the 1026th is
# refused.  A host with a budget of its own is still counted apart.
srv_start echo echo
ECHO=$SRV_PORT
"$PY" - "$T/conf.json" "$T/conf3.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
# Exact entries: only they let a name reach a loopback address.
c["network"]["allowedDomains"] = ["h%d.w.test" % i for i in range(1, 1027)] \
    + ["own.w.test"]
c["network"]["budget"] = {"connectionsPerHost": 1,
                          "hosts": [{"host": "own.w.test", "connections": 2}]}
json.dump(c, open(sys.argv[2], "w"))
EOF
dns_start w.test=127.0.0.1
"$PY" - "$T/conf3.json" "$DNS_PORT" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["resolver"]["servers"] = ["127.0.0.1:" + sys.argv[2]]
json.dump(c, open(sys.argv[1], "w"))
EOF
PX_LOG=$T/access3.log
px_start "$T/conf3.json"
"$PY" - "$PX_PORT" "$ECHO" >"$T/bound.out" 2>&1 <<'EOF'
import socket, sys
port, echo = int(sys.argv[1]), int(sys.argv[2])
def connect(name):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: x\r\n\r\n" % (name.encode(), echo))
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(4096)
        if not d:
            break
        head += d
    s.close()
    return head.split(b" ", 2)[1].decode() if b" " in head else "none"
codes = [connect("h%d.w.test" % i) for i in range(1, 1025)]
print("apart", "all-200" if set(codes) == {"200"} else sorted(set(codes)))
print("h1025", connect("h1025.w.test"))
print("h1026", connect("h1026.w.test"))
print("own", connect("own.w.test"), connect("own.w.test"), connect("own.w.test"))
EOF
out=$(cat "$T/bound.out")
contains "bound: 1024 hosts counted apart, each allowed once" "$out" "apart all-200"
contains "bound: the 1025th host opens the shared account" "$out" "h1025 200"
contains "bound: the 1026th host shares it: refused" "$out" "h1026 403"
contains "bound: a listed host is still counted apart (2, then 403)" "$out" "own 200 200 403"

px_done
