#!/bin/sh
# Egress budgets under pisbx-run: one run is one client of its proxy.
# - a real `curl --data-binary @big` upload from inside the sandbox past
#   network.budget.bytesUpPerHost is cut (the server gets at most the
#   budget), logged budget-bytes-up, and the end-of-run summary and
#   --report name the budget and what was used;
# - past connectionsPerHost the next curl gets 403 budget-connections,
#   named in the summary;
# - another source address (curl --interface 127.0.0.2: the whole of
#   127/8 is the sandbox's own) is the same client: no fresh budget;
# - the next run starts with a fresh budget;
# - a reviewer's approval with scope "run" lifts the budget of that host
#   for the rest of the run: asked once, every later connection goes.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v curl >/dev/null || skip "no curl"
HOSTS_NAMES="up.test conn.test"
export HOSTS_NAMES
BUDGET=1048576

srv_start upload up --record "$T/up.rec"
UP=$SRV_PORT
srv_start http web
WEB=$SRV_PORT
head -c 4194304 /dev/urandom >"$WS/big"
chmod 644 "$WS/big"

run_config --allow "up.test conn.test" \
    --net "{\"budget\": {\"bytesUpPerHost\": $BUDGET, \"connectionsPerHost\": 2}}"

sbx --report "$T/report.json" -- sh -c "
curl -sS -m 20 --data-binary @big -o /dev/null http://up.test:$UP/up; echo up=\$?
for i in 1 2 3; do
	printf 'conn%s=' \$i
	curl -s -m 10 -o /dev/null -w '%{http_code}\n' http://conn.test:$WEB/\$i
done
for a in 127.0.0.2 127.9.9.9; do
	printf 'from %s=' \$a
	curl -s -m 10 --interface \$a -o /dev/null -w '%{http_code}\n' \
	    http://conn.test:$WEB/\$a
	printf 'up from %s=' \$a
	curl -s -m 10 --interface \$a -o /dev/null -w '%{http_code}\n' \
	    --data-binary @big http://up.test:$UP/\$a
done" >"$T/s.out" 2>"$T/s.err"
out=$(cat "$T/s.out")
case $out in
up=0*) not_ok "the upload past the budget succeeded" ;;
up=*) ok "the upload past the budget fails inside the sandbox" ;;
*) not_ok "the upload did not run: $out $(head -c 500 "$T/s.err")" ;;
esac
got=$(tail -n 1 "$T/up.rec" 2>/dev/null)
if [ -n "$got" ] && [ "$got" -gt 0 ] && [ "$got" -le "$BUDGET" ]; then
	ok "the server got $got bytes, at most the budget"
else
	not_ok "the server got '$got' bytes (budget $BUDGET)"
fi
check_log "close record end budget-bytes-up" event=close host=up.test \
    end=budget-bytes-up
contains "connections 1 and 2 are allowed" "$out" "conn1=200
conn2=200"
contains "connection 3 is refused" "$out" "conn3=403"
# The sandbox picks its source address: each is the same client.
for a in 127.0.0.2 127.9.9.9; do
	contains "from $a: no fresh connection budget" "$out" "from $a=403"
	contains "from $a: no fresh bytes budget" "$out" "up from $a=403"
done
check_log "decision record budget-connections" event=decision \
    host=conn.test decision=deny reason=budget-connections
err=$(cat "$T/s.err")
grep -F "(budget-" "$T/s.err" | sed "s/^/# /"
contains "summary: the bytes budget, what was used" "$err" \
    "http up.test:$UP (budget-bytes-up, 3 times): network.budget.bytesUpPerHost (1048576 bytes) used up for up.test by this client: 1048576 bytes, and it sent more; to allow more, raise network.budget.bytesUpPerHost in $CONF (or configure a reviewer to ask past it)"
contains "summary: the connection budget, what was used" "$err" \
    "http conn.test:$WEB (budget-connections, 3 times): network.budget.connectionsPerHost (2) used up for conn.test by this client: 2 connections; no reviewer to ask; to allow more, raise network.budget.connectionsPerHost in $CONF (or configure a reviewer to ask past it)"
"$PY" - "$T/report.json" <<'EOF' >"$T/report.chk" 2>&1
import json, sys
items = json.load(open(sys.argv[1]))
by = {i["reason"]: i for i in items if i["kind"] == "network"}
b = by["budget-bytes-up"]
assert b["host"] == "up.test", b
assert "bytesUpPerHost (1048576 bytes) used up" in b["detail"], b
assert "raise network.budget.bytesUpPerHost" in b["hint"], b
c = by["budget-connections"]
assert c["host"] == "conn.test" and "2 connections" in c["detail"], c
print("report ok")
EOF
eq "--report: each crossed budget with its detail and hint" \
    "$(cat "$T/report.chk")" "report ok"

# A new run, a new budget.
code=$(sbx -- curl -s -m 10 -o /dev/null -w '%{http_code}' "http://conn.test:$WEB/again")
eq "the next run starts with a fresh budget" "$code" 200

# A reviewer's "run" approval lifts the host's budget for the run.
cat >"$T/rev.py" <<'EOF'
import json, sys
line = sys.stdin.readline()
req = json.loads(line)
with open(sys.argv[1], "a") as f:
    f.write(line)
print(json.dumps({"action": "allow", "id": req["id"], "scope": "run"}))
EOF
chmod 644 "$T/rev.py"
run_config --allow "conn.test" --net '{"budget": {"connectionsPerHost": 1}}' \
    --top "{\"review\": {\"command\": [\"$PY\", \"$T/rev.py\", \"$T/rev.rec\"]}}"
sbx -- sh -c "for i in 1 2 3 4; do
	printf 'r%s=' \$i
	curl -s -m 10 -o /dev/null -w '%{http_code}\n' http://conn.test:$WEB/r\$i
done" >"$T/r.out" 2>"$T/r.err"
eq "reviewer (scope run): every connection goes" "$(tr '\n' ' ' <"$T/r.out")" \
    "r1=200 r2=200 r3=200 r4=200 "
n=$(wc -l <"$T/rev.rec" 2>/dev/null || echo 0)
eq "reviewer (scope run): asked once, past the budget" "$n" 1
got=$("$PY" -c 'import json, sys
print(json.dumps(json.loads(open(sys.argv[1]).readline()).get("budget")))' \
    "$T/rev.rec" 2>&1)
eq "reviewer: the request names the budget" "$got" \
    '{"name": "connectionsPerHost", "limit": 1, "used": 1}'

done_testing
