#!/bin/sh
# A supervisor restarted under a running sandbox (docs/reliability.md):
# pisbx-supervisor answers a worker it does not know with
# "error":"unknown-worker"; pisbx-run then registers again with the same
# workerId (its capability is still good), the review in flight fails as
# review:error (not a deny the policy made), later reviews go to the new
# supervisor, and the summary says what happened.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"
[ -x "$SUPERVISOR" ] || skip "no $SUPERVISOR"
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY
WS=$T/ws
mkdir -p "$WS" "$T/home"
export HOME=$T/home

srv_start http web
WEB=$SRV_PORT
hosts_file "$T/hosts" "127.0.0.1 first.test" "127.0.0.1 second.test" \
    "127.0.0.1 third.test"
cat >"$T/conf.json" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": []},
 "resolver": {"hostsFile": "$T/hosts", "timeoutMs": 2000}}
EOF
cat >"$T/sup.json" <<'EOF'
{"network": {"allowedDomains": [], "deniedDomains": []}}
EOF
cat >"$T/rev.sh" <<'EOF'
#!/bin/sh
# Allows every network review (command transport: no id needed).
read -r line
echo "$line" >>"$1"
echo '{"action":"allow","reason":"test reviewer"}'
EOF
chmod 755 "$T/rev.sh"
chmod 644 "$T/conf.json" "$T/hosts"
SOCK=$T/s.sock
SCAP=cap-$$-restart

# sup_start N: pisbx-supervisor on $SOCK with the capability $SCAP.
sup_start() {
	: >"$T/sup.out"
	PISBX_SUPERVISOR_CAPABILITY=$SCAP spawn "$SUPERVISOR" \
	    --config "$T/sup.json" --socket "$SOCK" \
	    --access-log "$T/sup-$1.log" --review-command "$T/rev.sh" \
	    "$T/rev.rec" >"$T/sup.out" 2>"$T/sup-$1.err"
	SPID=$LAST_PID
	wait_file "$T/sup.out" 200 || { not_ok "supervisor $1 did not start"; exit 1; }
}
sup_start 1

# The sandboxed command: a reviewed request, then (once the supervisor
# was restarted) two more.  It waits at most 10 s.
cat >"$WS/job.sh" <<EOF
c() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://\$1.test:$WEB/\$1"; echo " \$1"; }
c first
echo up >ready
i=0
while [ ! -e go ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
c second
c third
EOF
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$SOCK PISBX_SUPERVISOR_CAPABILITY=$SCAP \
    exec "$RUN" --config "$T/conf.json" --access-log "$PX_LOG" -- \
    sh job.sh >"$T/job.out" 2>"$T/job.err") &
RPID=$!
_pids="$_pids $RPID"
if wait_file "$WS/ready" 300; then
	ok "the first reviewed request went through the first supervisor"
else
	not_ok "the sandbox did not get past its first request: $(cat "$T/job.err")"
fi
# The supervisor dies without a word (SIGKILL leaves its socket file) and
# comes back on the same socket with the same capability.
kill -9 "$SPID"
wait "$SPID" 2>/dev/null
sup_start 2
: >"$WS/go"
i=0
while kill -0 "$RPID" 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.05; i=$((i + 1))
done
wait "$RPID"
rc=$?
eq "pisbx-run exits 0" "$rc" 0
# A reviewed name on loopback is refused after its review allowed it
# (non-public-address): that reason says the review went through.
eq "first: reviewed and allowed (then refused as loopback)" \
    "$(log_field reason event=decision host=first.test)" non-public-address
check_log "second: the review in flight is review:error, not a deny" \
    event=decision host=second.test reason=review:error \
    error~'no longer knew this worker.*registered again'
eq "no review was logged review:deny" "$(log_count reason=review:deny)" 0
eq "third: reviewed and allowed by the new supervisor" \
    "$(log_field reason event=decision host=third.test)" non-public-address
# supdec N TYPE HOST: the decision of supervisor N's record of a request.
supdec() {
	"$PY" -c 'import json, sys
out = "none"
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == sys.argv[2] and r.get("hostname", "") == sys.argv[3]:
        out = r.get("decision", "?") + "/" + r.get("reason", "?")
print(out)' "$T/sup-$1.log" "$2" "$3"
}
eq "supervisor 1: first.test reviewed, allowed" \
    "$(supdec 1 network first.test)" allow/review:allow
eq "supervisor 2: second.test from an unknown worker" \
    "$(supdec 2 network second.test)" "deny/unknown worker"
eq "supervisor 2: the worker registered again" \
    "$(supdec 2 register "")" allow/registered
eq "supervisor 2: third.test reviewed, allowed" \
    "$(supdec 2 network third.test)" allow/review:allow
check "pisbx-run said it registered again" grep -q \
    'no longer knew worker .*registered again' "$T/job.err"
check "the summary says the supervisor was restarted" grep -q \
    'supervisor was restarted during this run and no longer knew it: 1 review(s) failed (review:error, not a policy decision' \
    "$T/job.err"
# The lost review's line: no policy change suggested for it (first and
# third are refused as loopback addresses, whose hint names the file).
if grep 'second.test' "$T/job.err" | grep -q 'allowedDomains'; then
	not_ok "the summary suggests a policy change: $(grep second.test "$T/job.err")"
else
	ok "the summary does not blame the policy for the lost review"
fi
check "... and its line says review:error, no more" grep -qx \
    '  http second.test:[0-9]* (review:error)' "$T/job.err"
eq "supervisor 2 acknowledged the unregister" \
    "$(supdec 2 unregister "")" allow/unregistered
if grep -q 'unregister' "$T/job.err"; then
	not_ok "unregister warned: $(grep unregister "$T/job.err")"
else
	ok "unregister at exit without a warning"
fi
sed 's/^/# job.err: /' "$T/job.err"

# On the wire: a request from a worker the supervisor does not know.
reply=$(send "$SOCK" "{\"version\":1,\"capability\":\"$SCAP\",\"id\":\"r-$(cat /proc/sys/kernel/random/uuid)\",\"type\":\"network\",\"workerId\":\"nobody-1\",\"cwd\":\"/w\",\"hostname\":\"x.test\",\"port\":443,\"protocol\":\"connect\"}")
eq "unknown worker: deny with \"error\":\"unknown-worker\"" \
    "$(printf '%s' "$reply" | "$PY" -c 'import json, sys
r = json.loads(sys.stdin.read())
print(r.get("action"), r.get("reason"), r.get("error"))')" \
    "deny unknown worker unknown-worker"
done_testing
