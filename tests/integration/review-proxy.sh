#!/bin/sh
# Reviews through the real proxy with curl: command, socket and tty
# transports; allow -> through (review:allow), deny -> 403 (review:deny),
# timeout, errors; one-shot approvals; the proxy serving other clients
# while a reviewer hangs, and cancelling the review of a client that left.
#
# A reviewed destination must be public to be dialled, so the scenario
# re-runs itself in a private network namespace where 11.0.0.1 sits on lo
# and the test names resolve there: nothing can leave the namespace.
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

# rv_conf FILE REVIEW-JSON [ALLOWED...]: a config with that review object.
rv_conf() {
	$PY - "$DNS_PORT" "$@" <<'PYEOF'
import json, sys
dns, out, review = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
conf = {"network": {"allowedDomains": sys.argv[4:], "deniedDomains": []},
        "resolver": {"servers": ["127.0.0.1:" + dns], "timeoutMs": 2000},
        "review": review}
with open(out, "w") as f:
    json.dump(conf, f)
PYEOF
}

# get NAME URL [CURL-ARGS...]: curl through the proxy; CODE is the HTTP
# status (of the CONNECT for -p), the body in $T/NAME.body.
get() {
	_n=$1 _u=$2; shift 2
	CODE=$(curl -sS -o "$T/$_n.body" -D "$T/$_n.head" --max-time 30 \
	    -w '%{http_code} %{http_connect}' "$@" "$_u" 2>"$T/$_n.curl")
	case $CODE in
	"000 "*) CODE=${CODE#000 } ;;	# CONNECT refused: its status
	*) CODE=${CODE%% *} ;;
	esac
}
HX="-x http://127.0.0.1:"
requests() { cat "$T/rv/requests" 2>/dev/null | grep -c "\"hostname\":\"$1\""; }
proxy_fds() { ls "/proc/$PX_PID/fd" | wc -l; }
proxy_children() {
	_c=0
	for _s in /proc/[0-9]*/stat; do
		_pp=$(sed 's/.*) . \([0-9]*\).*/\1/' "$_s" 2>/dev/null)
		[ "$_pp" = "$PX_PID" ] && _c=$((_c + 1))
	done
	echo $_c
}
# settle CMD WANT: wait (up to 10 s) until CMD prints WANT; ok if it does.
settle() {
	_i=0
	while [ "$($1)" != "$2" ] && [ $_i -lt 200 ]; do
		sleep 0.05; _i=$((_i + 1))
	done
	[ "$($1)" = "$2" ]
}

# ---- command transport ------------------------------------------------
rv_conf "$T/cmd.json" "{\"command\": [\"$FIX/by-host.sh\", \"$T/rv\"], \"timeoutMs\": 20000}" listed.test
px_start "$T/cmd.json" --label sbx-test
fds0=$(proxy_fds)

get allow "http://allow1.test:$O/x" $HX$PX_PORT
eq "allow (http): 200 from the origin" "$CODE" 200
check "allow (http): the origin's body" has_line "$T/allow.body" '^hello from origin /x$'
check_log "allow (http): review:allow record" event=decision host=allow1.test \
    decision=allow reason=review:allow proto=http
get allowc "http://allow2.test:$O/c" -p $HX$PX_PORT
eq "allow (CONNECT): tunnel and 200" "$CODE" 200
check_log "allow (CONNECT): review:allow record" event=decision host=allow2.test \
    decision=allow reason=review:allow proto=connect
get allows "http://allow3.test:$O/s" --socks5-hostname "127.0.0.1:$PX_PORT"
eq "allow (SOCKS5): 200" "$CODE" 200
check_log "allow (SOCKS5): review:allow record" event=decision host=allow3.test \
    decision=allow reason=review:allow proto=socks5
check "the reviewer saw each protocol and the label" $PY -c '
import json, sys
seen = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    assert r["workerId"] == "sbx-test" and r["type"] == "network", r
    seen[r["hostname"]] = (r["protocol"], r["port"])
p = int(sys.argv[2])
assert seen["allow1.test"] == ("http", p), seen
assert seen["allow2.test"] == ("connect", p), seen
assert seen["allow3.test"] == ("socks5", p), seen
' "$T/rv/requests" "$O"

get deny "http://deny1.test:$O/" $HX$PX_PORT
eq "deny: 403" "$CODE" 403
check "deny: X-Pisbx-Reason review:deny" has_line "$T/deny.head" '^[Xx]-[Pp]isbx-[Rr]eason: review:deny'
check_log "deny: review:deny record with the reason" event=decision \
    host=deny1.test decision=deny reason=review:deny 'error~by-host denies deny1.test'
if dns_asked deny1.test; then
	not_ok "deny: the denied name was resolved"
else
	ok "deny: the denied name never reached DNS"
fi

get listed "http://listed.test:$O/" $HX$PX_PORT
eq "an allow-listed host needs no review" "$CODE" 200
eq "... and the reviewer was not asked" "$(requests listed.test)" 0

# One-shot: each connection is its own review.
get once1 "http://once1.test:$O/" $HX$PX_PORT
eq "one-shot: first connection approved" "$CODE" 200
get once2 "http://once1.test:$O/" $HX$PX_PORT
eq "one-shot: the next connection to the same host is reviewed again (denied)" "$CODE" 403
eq "one-shot: two reviews for two connections" "$(requests once1.test)" 2
check_log "one-shot: second record review:deny" event=decision host=once1.test \
    decision=deny reason=review:deny
get again "http://allow1.test:$O/y" $HX$PX_PORT
eq "one-shot: a host allowed before is reviewed again" "$(requests allow1.test)" 2

get garbage "http://garbage1.test:$O/" $HX$PX_PORT
eq "garbage reply: 403" "$CODE" 403
check_log "garbage reply: review:error with the error" event=decision \
    host=garbage1.test decision=deny reason=review:error 'error~not JSON'
get crash "http://crash1.test:$O/" $HX$PX_PORT
eq "non-zero exit: 403" "$CODE" 403
check_log "non-zero exit: review:error" event=decision host=crash1.test \
    decision=deny reason=review:error 'error~exited with status 3'

# A hung reviewer holds only its own client: others are served, reviews
# included; when that client leaves, its reviewer is killed.
spawn curl -sS -o /dev/null --max-time 60 -x "http://127.0.0.1:$PX_PORT" \
    "http://hang1.test:$O/"
hang_curl=$LAST_PID
wait_file "$T/rv/hang.pid" 200
get during1 "http://listed.test:$O/" $HX$PX_PORT
eq "while a reviewer hangs: allow-listed host served" "$CODE" 200
get during2 "http://allow5.test:$O/" $HX$PX_PORT
eq "while a reviewer hangs: another review answered" "$CODE" 200
check "while a reviewer hangs: it is still running" kill -0 "$(cat "$T/rv/hang.pid")"
kill "$hang_curl"
hang_dead() { dead "$(cat "$T/rv/hang.pid")" && echo yes; }
check "client gone: its reviewer is killed" settle hang_dead yes
eq "client gone: no decision was logged for it" \
    "$(log_count event=decision host=hang1.test)" 0
check_log "client gone: its close record" event=close host=hang1.test
check "no reviewer process left behind" settle proxy_children 0
check "proxy fds back to the idle count" settle proxy_fds "$fds0"
check "proxy still alive" px_alive
check "proxy exits cleanly" px_stop

# ---- timeout ---------------------------------------------------------
rm -f "$T/rv/hang.pid"
rv_conf "$T/to.json" "{\"command\": [\"$FIX/by-host.sh\", \"$T/rv\"], \"timeoutMs\": 1000}"
px_start "$T/to.json"
get timeout "http://hang2.test:$O/" $HX$PX_PORT
eq "timeout: 403" "$CODE" 403
check_log "timeout: review:timeout record" event=decision host=hang2.test \
    decision=deny reason=review:timeout
check "timeout: reviewer killed" settle hang_dead yes
check "timeout: no reviewer process left" settle proxy_children 0
check "proxy exits cleanly" px_stop

# The cap through the proxy, and a reload (SIGHUP) while a review runs:
# the old config's reviewer goes away from inside that review's answer.
rm -f "$T/rv/hang.pid"
rv_conf "$T/cap.json" "{\"command\": [\"$FIX/by-host.sh\", \"$T/rv\"], \"timeoutMs\": 3000, \"maxInFlight\": 1}"
px_start "$T/cap.json"
spawn curl -sS -o /dev/null --max-time 60 -x "http://127.0.0.1:$PX_PORT" \
    "http://hang3.test:$O/"
wait_file "$T/rv/hang.pid" 200
get busy "http://allow6.test:$O/" $HX$PX_PORT
eq "cap: a second review at once is refused" "$CODE" 403
check_log "cap: review:busy record" event=decision host=allow6.test \
    decision=deny reason=review:busy
kill -HUP "$PX_PID"
check_log "reload during a review: the review still ends (timeout)" \
    event=decision host=hang3.test decision=deny reason=review:timeout
check "reload during a review: reviewer killed" settle hang_dead yes
get afterhup "http://allow7.test:$O/" $HX$PX_PORT
eq "reload during a review: the new reviewer answers" "$CODE" 200
check "reload during a review: no reviewer process left" settle proxy_children 0
check "proxy exits cleanly" px_stop

# ---- socket transport ------------------------------------------------
supervisor allow "$T/sup.record"
rv_conf "$T/sock.json" "{\"socket\": \"$T/sup.sock\", \"timeoutMs\": 20000}"
PISBX_CAPABILITY=$CAP px_start "$T/sock.json" --label sbx-sock
get sallow "http://s1.test:$O/" $HX$PX_PORT
eq "socket: allowed through" "$CODE" 200
check_log "socket: review:allow record" event=decision host=s1.test \
    decision=allow reason=review:allow
check "socket: the supervisor got the capability and the request" $PY -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["capability"] == sys.argv[2] and r["hostname"] == "s1.test", r
assert r["workerId"] == "sbx-sock" and r["protocol"] == "http", r
' "$T/sup.record" "$CAP"
check "proxy exits cleanly" px_stop
PISBX_CAPABILITY=wrong px_start "$T/sock.json"
get swrong "http://s2.test:$O/" $HX$PX_PORT
eq "socket, wrong capability: 403" "$CODE" 403
check_log "socket, wrong capability: review:deny" event=decision host=s2.test \
    decision=deny reason=review:deny 'error~bad capability'
check "proxy exits cleanly" px_stop
unset PISBX_CAPABILITY
px_start "$T/sock.json"
get snocap "http://s3.test:$O/" $HX$PX_PORT
eq "socket, no capability: 403" "$CODE" 403
check_log "socket, no capability: review:error" event=decision host=s3.test \
    decision=deny reason=review:error 'error~no capability'
check "proxy exits cleanly" px_stop
supervisor deny
PISBX_CAPABILITY=$CAP px_start "$T/sock.json"
get sdeny "http://s4.test:$O/" $HX$PX_PORT
eq "socket, deny: 403" "$CODE" 403
check_log "socket, deny: review:deny" event=decision host=s4.test \
    decision=deny reason=review:deny
check "proxy exits cleanly" px_stop
stop_supervisor

# ---- tty transport ---------------------------------------------------
rv_conf "$T/tty.json" '{"mode": "tty", "timeoutMs": 20000}'
TP=$(free_port)
spawn $PY "$FIX/pty-answer.py" --pid-file "$T/tty.pid" --run "$PROXY" y n -- \
    --config "$T/tty.json" --listen "127.0.0.1:$TP" --access-log "$T/tty.log" \
    --label sbx-tty >"$T/tty.out" 2>&1
tty_runner=$LAST_PID
wait_port 127.0.0.1 "$TP" 200
get tyes "http://t1.test:$O/" -x "http://127.0.0.1:$TP"
eq "tty: y lets the connection through" "$CODE" 200
get tno "http://t2.test:$O/" -x "http://127.0.0.1:$TP"
eq "tty: n denies" "$CODE" 403
kill "$(cat "$T/tty.pid")"
wait "$tty_runner"
eq "tty: proxy exits cleanly" "$?" 0
PX_LOG=$T/tty.log
check_log "tty: review:allow record" event=decision host=t1.test decision=allow reason=review:allow
check_log "tty: review:deny record" event=decision host=t2.test decision=deny reason=review:deny
check "tty: the person saw the host" has_line "$T/tty.out" '^  host:     t1\.test$'
check "tty: ... and the port" has_line "$T/tty.out" "^  port:     $O\$"

done_testing
