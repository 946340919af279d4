#!/bin/sh
# Approvals with a scope: a reply's "scope" of "run" covers that
# host:port over that protocol for the rest of the pisbx-proxy process or
# of the pisbx-run; "once" (or none) one connection; "worker" only from a
# supervisor; anything else is a deny.  The lists come first, always; a
# reload ends every wider approval.  The terminal's question shows the
# command that asked, the target and protocol and a countdown, and offers
# once / for this run / no.
#
# Reviewed destinations must be public to be dialled, so the scenario runs
# in a private network namespace where 11.0.0.1 sits on lo.
. "$(dirname "$0")/../lib/netns.sh"
ip addr add 11.0.0.1/32 dev lo || exit 1

. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/review.sh"
. "$PISBX_TOP/tests/lib/super.sh"

spawn $PY "$FIX/origin.py" 11.0.0.1 "$T/origin.port"
wait_file "$T/origin.port" 200 || { not_ok "origin did not start"; exit 1; }
O=$(cat "$T/origin.port")
dns_start test=11.0.0.1
mkdir "$T/rv"
chmod 777 "$T/rv"
# conf FILE [DENY...]: the by-host reviewer, these deny entries.
conf() {
	_f=$1; shift
	$PY - "$DNS_PORT" "$_f" "$FIX/by-host.sh" "$T/rv" "$@" <<'EOF'
import json, sys
dns, out, rv, d = sys.argv[1:5]
json.dump({"network": {"allowedDomains": [], "deniedDomains": sys.argv[5:]},
           "resolver": {"servers": ["127.0.0.1:" + dns], "timeoutMs": 2000},
           "review": {"command": [rv, d], "timeoutMs": 20000}},
          open(out, "w"))
EOF
	chmod 644 "$_f"
}
# asked HOST: how many requests the reviewer had for HOST.
asked() {
	[ -f "$T/rv/requests" ] || { echo 0; return; }
	grep -c "\"hostname\":\"$1\"" "$T/rv/requests"
}
get() {		# status of one request through the proxy, its own connection
	curl -s -o /dev/null -w '%{http_code}' -m 10 -x "http://127.0.0.1:$PX_PORT" "$@"
}

# hup: SIGHUP the proxy, until it says the config was reloaded.
hup() {
	_n=$(grep -c 'configuration reloaded' "$PX_ERR")
	kill -HUP "$PX_PID"
	_i=0
	while [ "$(grep -c 'configuration reloaded' "$PX_ERR")" -le "$_n" ] &&
	    [ $_i -lt 100 ]; do
		sleep 0.05; _i=$((_i + 1))
	done
}

# 1. pisbx-proxy: scope run covers the rest of the process.
conf "$T/conf.json"
px_start "$T/conf.json" -v
eq "scope run: three connections, all through" \
    "$(get "http://run-a.test:$O/1") $(get "http://run-a.test:$O/2") $(get "http://run-a.test:$O/3")" \
    "200 200 200"
eq "... the reviewer was asked once" "$(asked run-a.test)" 1
check_log "... the later ones say why" event=decision host=run-a.test \
    decision=allow reason=review:allow \
    error="approved earlier in this run (scope run)"
eq "... over another protocol it is a new question" \
    "$(get -p "http://run-a.test:$O/t")" 200
eq "... (asked again, for connect)" "$(asked run-a.test)" 2
eq "scope once (none given): asked for each connection" \
    "$(get "http://allow-a.test:$O/1") $(get "http://allow-a.test:$O/2") $(asked allow-a.test)" \
    "200 200 2"
eq "scope worker from a command reviewer: refused" \
    "$(get "http://worker-a.test:$O/")" 403
check_log "... as a malformed reply" event=decision host=worker-a.test \
    decision=deny reason=review:error
eq "an unknown scope: refused" "$(get "http://wide-a.test:$O/")" 403
check_log "... as a malformed reply" event=decision host=wide-a.test \
    decision=deny reason=review:error
# 2. The lists come first: a reload that denies it wins, and a reload
#    ends every wider approval.
conf "$T/conf.json" run-a.test
hup
eq "after a reload denying it: refused" "$(get "http://run-a.test:$O/4")" 403
check_log "... by the deny list" event=decision host=run-a.test \
    decision=deny reason=deny-list:run-a.test
n=$(asked run-a.test)
conf "$T/conf.json"
hup
eq "after a reload allowing review again: asked again" \
    "$(get "http://run-a.test:$O/5") $(( $(asked run-a.test) - n ))" "200 1"
px_stop

# 3. pisbx-run: the rest of this run, not the next one.
[ -x "$RUN" ] || { done_testing; }
mkdir -p "$T/ws" "$T/home"
export HOME=$T/home
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY
n=$(asked run-b.test)
out=$(cd "$T/ws" && "$RUN" --config "$T/conf.json" -- sh -c \
    "for i in 1 2 3; do curl -s -o /dev/null -w '%{http_code} ' http://run-b.test:$O/; done" 2>&1)
eq "pisbx-run: three connections under one approval" "$out" "200 200 200 "
eq "... asked once" "$(( $(asked run-b.test) - n ))" 1
(cd "$T/ws" && "$RUN" --config "$T/conf.json" -- curl -s -o /dev/null \
    "http://run-b.test:$O/") >/dev/null 2>&1
eq "... and the next pisbx-run asks again" "$(( $(asked run-b.test) - n ))" 2

# 4. A supervisor's "worker": the rest of the worker's run.
tsup --network '{"allowedDomains":[],"deniedDomains":[]}' --review allow \
    --review-scope worker
cat >"$T/sconf.json" <<EOF
{"resolver": {"servers": ["127.0.0.1:$DNS_PORT"], "timeoutMs": 2000}}
EOF
chmod 644 "$T/sconf.json"
out=$(cd "$T/ws" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock \
    PISBX_SUPERVISOR_CAPABILITY=$CAP "$RUN" --config "$T/sconf.json" -- \
    sh -c "for i in 1 2; do curl -s -o /dev/null -w '%{http_code} ' http://sup-a.test:$O/; done" 2>&1)
eq "supervisor scope worker: two connections" "$out" "200 200 "
eq "... one review sent to the supervisor" "$(rec_count network)" 1
stop_tsup

# 5. The terminal: the command, the target, a countdown; r = this run.
cat >"$T/tty.json" <<EOF
{"resolver": {"servers": ["127.0.0.1:$DNS_PORT"], "timeoutMs": 2000},
 "review": {"mode": "tty", "timeoutMs": 20000}}
EOF
chmod 644 "$T/tty.json"
(cd "$T/ws" && $PY "$FIX/pty-answer.py" r -- "$RUN" --config "$T/tty.json" \
    -- sh -c "curl -s -o /dev/null -w '%{http_code} ' http://tty-a.test:$O/; curl -s -o /dev/null -w '%{http_code}' http://tty-a.test:$O/") \
    >"$T/tty.out" 2>&1
contains "tty: the question names the command that asked" \
    "$(cat "$T/tty.out")" "command:  sh -c 'curl -s -o /dev/null"
contains "... the target and protocol" "$(cat "$T/tty.out")" \
    "host:     tty-a.test"
contains "... the time left" "$(cat "$T/tty.out")" "time:     20 s to answer"
contains "... and offers once, this run, no" "$(cat "$T/tty.out")" \
    "y = once, r = for the rest of this run, N = no [y/r/N] "
eq "... r: one question for two connections" \
    "$(grep -c 'y/r/N' "$T/tty.out")" 1
contains "... both went through" "$(cat "$T/tty.out")" "200 200"
(cd "$T/ws" && $PY "$FIX/pty-answer.py" "" -- "$RUN" --config "$T/tty.json" \
    -- curl -s -o /dev/null -w '%{http_code}' "http://tty-b.test:$O/") \
    >"$T/tty2.out" 2>&1
contains "tty: the default (Enter) is no" "$(cat "$T/tty2.out")" "403"
cat >"$T/tty3.json" <<EOF
{"resolver": {"servers": ["127.0.0.1:$DNS_PORT"], "timeoutMs": 2000},
 "review": {"mode": "tty", "timeoutMs": 2500}}
EOF
chmod 644 "$T/tty3.json"
(cd "$T/ws" && $PY "$FIX/pty-answer.py" NONE -- "$RUN" --config "$T/tty3.json" \
    -- curl -s -o /dev/null -w '%{http_code}' "http://tty-c.test:$O/") \
    >"$T/tty3.out" 2>&1
contains "tty: the countdown goes down" "$(cat "$T/tty3.out")" \
    "time:     1 s to answer"
contains "... and no answer is no" "$(cat "$T/tty3.out")" "403"
done_testing
