#!/bin/sh
# pisbx-supervisor --push FILE: a new network policy for the workers the
# real supervisor registered, while their commands run.  A worker's
# command is refused b.test, the person pushes a policy that allows
# b.test and denies a.test, and the same command is then allowed b.test
# and refused a.test; later registrations get the new policy too.  A push
# whose file is invalid, or with a wrong capability, changes nothing;
# the run's socket refuses a policy without the supervisor's capability.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$SUPERVISOR" ] || skip "no $SUPERVISOR"
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY
WS=$T/ws
mkdir -p "$WS" "$T/home"
export HOME=$T/home

srv_start http web
WEB=$SRV_PORT
hosts_file "$T/hosts" "127.0.0.1 a.test" "127.0.0.1 b.test"
cat >"$T/run.json" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": []},
 "resolver": {"hostsFile": "$T/hosts", "timeoutMs": 2000}}
EOF
cat >"$T/sup.json" <<'EOF'
{"network": {"allowedDomains": ["a.test"], "deniedDomains": []}}
EOF
cat >"$T/push.json" <<'EOF'
{"network": {"allowedDomains": ["b.test"], "deniedDomains": ["a.test"]}}
EOF
cat >"$T/bad.json" <<'EOF'
{"network": {"allowedDomains": ["https://b.test"], "deniedDomains": []}}
EOF
chmod 644 "$T"/*.json "$T/hosts"

SOCK=$T/s.sock
PISBX_SUPERVISOR_CAPABILITY=$CAP spawn "$SUPERVISOR" --config "$T/sup.json" \
    --socket "$SOCK" >"$T/sup.out" 2>"$T/sup.err"
SUP_PID=$LAST_PID
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
check "the supervisor listens" test -S "$SOCK"

# srun ARGS: pisbx-run in $WS, registered with the supervisor.
srun() {
	(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$SOCK PISBX_SUPERVISOR_CAPABILITY=$CAP \
	    exec "$RUN" --config "$T/run.json" --access-log "$PX_LOG" "$@")
}
# push FILE [CAPABILITY]: pisbx-supervisor --push, its stdout+stderr in
# $T/push.out; returns its status.
push() {
	PISBX_SUPERVISOR_CAPABILITY=${2:-$CAP} "$SUPERVISOR" --socket "$SOCK" \
	    --push "$1" >"$T/push.out" 2>&1
}

cat >"$WS/phases.sh" <<EOF
c() { curl -s -o /dev/null -w '%{http_code}' -m 10 "http://\$1:$WEB/"; }
echo "\$(c b.test) \$(c a.test)" >r1.tmp && mv r1.tmp r1
i=0; while [ ! -e go ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done
echo "\$(c b.test) \$(c a.test)" >r2.tmp && mv r2.tmp r2
EOF
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$SOCK PISBX_SUPERVISOR_CAPABILITY=$CAP \
    exec "$RUN" --config "$T/run.json" --access-log "$PX_LOG" -- \
    /bin/sh phases.sh) >"$T/run.out" 2>"$T/run.err" &
RUN_PID=$!
_pids="$_pids $RUN_PID"
wait_file "$WS/r1" 400
eq "before the push: b.test refused, a.test allowed" \
    "$(cat "$WS/r1" 2>/dev/null)" "403 200"

# Pushes that change nothing.
push "$T/bad.json"
eq "an invalid file: not sent (exit 1)" "$?" 1
contains "... the error names the entry" "$(cat "$T/push.out")" \
    'allowedDomains[0]'
push "$T/push.json" wrong-capability
eq "a wrong capability: refused (exit 1)" "$?" 1
contains "... by the supervisor" "$(cat "$T/push.out")" "bad capability"

# The run's own socket takes a policy only with the supervisor's
# capability.
RSOCK=$(ls -d "${TMPDIR:-/tmp}/pisbx-$(id -u)/pisbx-run.$RUN_PID."*.sock 2>/dev/null | head -n 1)
out=$("$PY" - "$RSOCK" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall((json.dumps({"type": "policy", "capability": "guess",
                       "network": {"allowedDomains": ["b.test"],
                                   "deniedDomains": []}}) + "\n").encode())
print(s.makefile().readline().strip())
EOF
)
eq "the run's socket refuses a policy without the capability" "$out" \
    '{"action":"deny","reason":"bad capability"}'

push "$T/push.json"
eq "the push: exit 0" "$?" 0
contains "... applied by the running worker" "$(cat "$T/push.out")" \
    "applied by 1 running worker"
touch "$WS/go"
wait_file "$WS/r2" 400
eq "after the push: b.test allowed, a.test refused" \
    "$(cat "$WS/r2" 2>/dev/null)" "200 403"
check_log "a.test refused by the pushed deny entry" event=decision \
    host=a.test decision=deny reason=deny-list:a.test
wait "$RUN_PID"
eq "the worker's run ends with its command's status" "$?" 0
contains "the refused push was said on the worker's stderr" \
    "$(cat "$T/run.err")" "a pushed policy refused: bad capability"

code=$(srun -- curl -s -o /dev/null -w '%{http_code}' -m 10 "http://b.test:$WEB/")
eq "a later registration gets the pushed policy" "$code" 200
kill "$SUP_PID"
done_testing
