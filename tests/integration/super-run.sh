#!/bin/sh
# pisbx-run in supervisor mode against the scriptable test supervisor:
# registration allowed, refused, garbage, silent, wrong id and with a
# missing or bad policy; the registration's policy applied to curl inside
# the sandbox (and the config's ignored); reviews routed to the supervisor
# with the worker's id; unregister on exit, SIGTERM and --timeout; the
# capability kept out of the sandbox and the socket out of its reach; a
# nested run refused.
. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY
WS=$T/ws
mkdir -p "$WS" "$T/home"
export HOME=$T/home

srv_start http web
WEB=$SRV_PORT
hosts_file "$T/hosts" "127.0.0.1 allowed.test" "127.0.0.1 denied.test" \
    "127.0.0.1 other.test"
# The config's own policy would allow denied.test: supervisor mode must
# ignore it.
cat >"$T/conf.json" <<EOF
{"network": {"allowedDomains": ["denied.test", "other.test"],
             "deniedDomains": []},
 "resolver": {"hostsFile": "$T/hosts", "timeoutMs": 2000}}
EOF
cat >"$T/unix.json" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": [],
             "allowAllUnixSockets": true},
 "resolver": {"hostsFile": "$T/hosts", "timeoutMs": 2000}}
EOF
chmod 644 "$T/conf.json" "$T/unix.json" "$T/hosts"
NET='{"allowedDomains":["allowed.test"],"deniedDomains":["denied.test"]}'

# srun [pisbx-run args]: pisbx-run in $WS in supervisor mode.
srun() {
	(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock \
	    PISBX_SUPERVISOR_CAPABILITY=$CAP PISBX_SUPERVISOR_TIMEOUT_MS=3000 \
	    exec "$RUN" --config "$T/conf.json" --access-log "$PX_LOG" "$@")
}
code() {	# the HTTP status curl got for URL inside the sandbox
	srun -- curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$1"
}
# registered_id: the workerId of the last registration recorded.
registered_id() {
	$PY -c 'import json,sys
ids = [json.loads(l)["workerId"] for l in open(sys.argv[1])
       if json.loads(l).get("type") == "register"]
print(ids[-1] if ids else "")' "$T/sup.rec"
}

# Registration allowed: the supervisor's policy is the whole policy.
tsup --network "$NET" --review deny
out=$(srun -- curl -sS --max-time 10 "http://allowed.test:$WEB/from-supervisor" 2>&1)
contains "registration policy: allowed.test reachable through the proxy" \
    "$out" "/from-supervisor"
eq "registration policy: denied.test refused (the config's allow ignored)" \
    "$(code "http://denied.test:$WEB/")" 403
check "access log: denied.test by the supervisor's deny list" has_line \
    "$PX_LOG" '"host":"denied.test".*"reason":"deny-list:denied.test"'
check "register request: version, type, uuid workerId, absolute cwd" $PY -c '
import json, re, sys
r = [json.loads(l) for l in open(sys.argv[1])][0]
u = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
assert r["type"] == "register" and r["version"] == 1, r
assert r["capability_ok"] is True
assert re.fullmatch(u, r["workerId"]) and re.fullmatch(u, r["id"]), r
assert r["cwd"] == sys.argv[2], r
assert sorted(r) == sorted(["type", "version", "capability_ok", "id",
    "workerId", "cwd"]), r
' "$T/sup.rec" "$(cd "$WS" && pwd -P)"

# Reviews go to the supervisor, with the registered worker's id.
stop_tsup
tsup --network "$NET" --review deny
eq "an unmatched host is reviewed and denied by the supervisor" \
    "$(code "http://other.test:$WEB/")" 403
check "the review reached the supervisor as type network" $PY -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
reg = [r for r in rs if r["type"] == "register"][-1]
net = [r for r in rs if r["type"] == "network"]
assert len(net) == 1, rs
n = net[0]
assert n["hostname"] == "other.test" and n["port"] == int(sys.argv[2]), n
assert n["protocol"] == "http" and n["capability_ok"] is True, n
assert n["workerId"] == reg["workerId"] and n["cwd"] == reg["cwd"], (n, reg)
' "$T/sup.rec" "$WEB"
check "access log: review:deny for other.test" has_line "$PX_LOG" \
    '"host":"other.test".*"reason":"review:deny"'

# Unregister on normal exit, with the same worker id.
stop_tsup
tsup --network "$NET"
srun -- /bin/true
eq "normal exit: status 0" $? 0
check "normal exit: unregistered" [ "$(rec_count unregister)" -eq 1 ]
check "normal exit: unregister names the registered worker" $PY -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["type"] for r in rs] == ["register", "unregister"], rs
assert rs[0]["workerId"] == rs[1]["workerId"] and rs[1]["capability_ok"]
' "$T/sup.rec"

# ... on SIGTERM
stop_tsup
tsup --network "$NET"
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock \
    PISBX_SUPERVISOR_CAPABILITY=$CAP exec "$RUN" --config "$T/conf.json" \
    -- /bin/sleep 30) &
RP=$!
_pids="$_pids $RP"
wait_rec register
i=0	# until the command runs (the proxy's listeners are up)
while ! pgrep -P "$RP" >/dev/null 2>&1 && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
sleep 0.2
kill -TERM "$RP"
wait "$RP"
rc=$?
eq "SIGTERM: the command's status (128+15)" "$rc" 143
check "SIGTERM: unregistered" [ "$(rec_count unregister)" -eq 1 ]

# ... and on --timeout
stop_tsup
tsup --network "$NET"
srun --timeout 1 -- /bin/sleep 30 2>"$T/to.err"
eq "--timeout: exit 124" $? 124
check "--timeout: unregistered" [ "$(rec_count unregister)" -eq 1 ]

# The capability never enters the sandbox; the socket is out of reach,
# even with allowAllUnixSockets in the config.
stop_tsup
tsup --network "$NET"
srun -- /bin/sh -c 'env; cat /proc/self/environ' >"$T/env.out" 2>&1
check "the command's environment has no capability" \
    sh -c "! grep -aq -- '$CAP' '$T/env.out'"
check "the command's environment has no supervisor variable" \
    sh -c "! grep -aq 'PISBX_SUPERVISOR' '$T/env.out'"
check "the command's environment has no socket path" \
    sh -c "! grep -aq -- '$T/sup.sock' '$T/env.out'"
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock \
    PISBX_SUPERVISOR_CAPABILITY=$CAP "$RUN" --config "$T/unix.json" -- \
    /usr/bin/python3 -c 'import socket,sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected")' "$T/sup.sock") >"$T/unix.out" 2>&1
rc=$?
check "the supervisor socket is unreachable inside (allowAllUnixSockets ignored)" \
    sh -c "[ $rc -ne 0 ] && ! grep -q connected '$T/unix.out' && grep -q 'Operation not permitted' '$T/unix.out'"
check "only register and unregister reached the supervisor" \
    [ "$(rec_types | sort -u | tr '\n' ' ')" = "register unregister " ]

# A nested run with the supervisor's variables refuses.
stop_tsup
tsup --network "$NET"
srun -- /bin/sh -c "PISBX_SUPERVISOR_SOCKET=$T/sup.sock PISBX_SUPERVISOR_CAPABILITY=x '$RUN' -- /bin/sh -c 'echo nested-ran'; echo \"nested-exit \$?\"" >"$T/nest.out" 2>&1
check "nested: refused with exit 1" grep -q '^nested-exit 1$' "$T/nest.out"
check "nested: the message says why" grep -q \
    'supervisor mode is not available inside a pisbx sandbox (PISBX_DEPTH=1)' \
    "$T/nest.out"
check "nested: the command did not run" sh -c "! grep -q '^nested-ran' '$T/nest.out'"
check "nested: nothing registered from inside" [ "$(rec_count register)" -eq 1 ]

# Refused or failed registrations: the command never starts.
refused() {	# NAME MESSAGE-ERE [pisbx-run args...]
	_n=$1 _m=$2; shift 2
	rm -f "$WS/ran"
	srun "$@" -- /bin/sh -c 'touch ran' >"$T/$_n.out" 2>&1
	_rc=$?
	eq "$_n: exit 1" "$_rc" 1
	check "$_n: the command never started" [ ! -e "$WS/ran" ]
	check "$_n: a clear message" grep -Eq "$_m" "$T/$_n.out"
}
stop_tsup
tsup --register deny
refused deny 'registration refused: no workers today; nothing was run'
check "deny: no unregister for a refused registration" \
    [ "$(rec_count unregister)" -eq 0 ]
stop_tsup
tsup --register garbage
refused garbage 'supervisor .*: reply is not JSON.*nothing was run'
stop_tsup
tsup --register wrongid
refused wrongid 'reply id does not match the request'
stop_tsup
tsup --register noreply
refused noreply 'no reply in time; nothing was run'
stop_tsup
tsup
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock \
    PISBX_SUPERVISOR_CAPABILITY=wrong-capability "$RUN" \
    --config "$T/conf.json" -- /bin/sh -c 'touch ran') >"$T/wcap.out" 2>&1
eq "wrong capability: exit 1" $? 1
check "wrong capability: refused by the supervisor" grep -q \
    'registration refused: bad capability' "$T/wcap.out"
check "wrong capability: the command never started" [ ! -e "$WS/ran" ]
stop_tsup
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/none.sock \
    PISBX_SUPERVISOR_CAPABILITY=$CAP "$RUN" --config "$T/conf.json" -- \
    /bin/sh -c 'touch ran') >"$T/nosock.out" 2>&1
eq "no supervisor listening: exit 1" $? 1
check "no supervisor listening: says so" grep -q 'No such file or directory' \
    "$T/nosock.out"
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock "$RUN" \
    --config "$T/conf.json" -- /bin/sh -c 'touch ran') >"$T/half.out" 2>&1
eq "only the socket variable set: exit 1" $? 1
check "only the socket variable set: says which is missing" grep -q \
    'PISBX_SUPERVISOR_SOCKET is set but PISBX_SUPERVISOR_CAPABILITY is not' \
    "$T/half.out"
check "no command ran in any refused case" [ ! -e "$WS/ran" ]

# Allowed without a usable policy -- an extra, missing or malformed key,
# as pi-sandbox 0.8.0 reads it: deny-all, with a warning.
for mode in extra nonetwork badpolicy noallowed nodenied notobject nulllist; do
	stop_tsup
	: >"$PX_LOG"
	tsup --register "$mode" --network "$NET"
	srun -- curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
	    "http://allowed.test:$WEB/" >"$T/$mode.out" 2>"$T/$mode.err"
	eq "$mode: runs, but allowed.test is denied" "$(cat "$T/$mode.out")" 403
	check "$mode: warns that every destination is denied" grep -q \
	    'warning: supervisor: .*denying every destination' "$T/$mode.err"
	check "$mode: the deny-all policy decided (deny-list:*)" has_line \
	    "$PX_LOG" '"host":"allowed.test".*"reason":"deny-list:\*"'
	check "$mode: unregistered" [ "$(rec_count unregister)" -eq 1 ]
done
stop_tsup

# End to end with the reference supervisor, as an unprivileged user when
# the suite runs as root: pisbx-supervisor hands out its config's policy,
# its review command sees the review, its table shows the worker.
AS=""
if [ "$(id -u)" -eq 0 ]; then
	AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
mkdir -p "$T/e2e"
chmod 777 "$T/e2e"
cat >"$T/e2e/sup.json" <<EOF
{"network": {"allowedDomains": ["allowed.test"], "deniedDomains": ["denied.test"]}}
EOF
cat >"$T/e2e/rev.sh" <<EOF
#!/bin/sh
read -r line
printf '%s\n' "\$line" >>"$T/e2e/rev.rec"
id=\$(printf '%s' "\$line" | sed 's/.*"id":"\([^"]*\)".*/\1/')
printf '{"id":"%s","action":"deny","reason":"e2e says no"}\n' "\$id"
EOF
chmod 755 "$T/e2e/rev.sh"
chmod 644 "$T/e2e/sup.json"
$AS "$SUPERVISOR" --config "$T/e2e/sup.json" --socket "$T/e2e/s.sock" \
    --review-command "$T/e2e/rev.sh" >"$T/e2e/out" 2>"$T/e2e/err" &
E2E=$!
_pids="$_pids $E2E"
wait_file "$T/e2e/out"
E2E_CAP=$(sed -n 's/.*PISBX_SUPERVISOR_CAPABILITY=//p' "$T/e2e/out")
mkdir -p "$T/e2e/ws"
chmod 777 "$T/e2e/ws"
e2e() {
	(cd "$T/e2e/ws" && exec $AS env HOME="$T/e2e" \
	    PISBX_SUPERVISOR_SOCKET="$T/e2e/s.sock" \
	    PISBX_SUPERVISOR_CAPABILITY="$E2E_CAP" "$RUN" \
	    --config "$T/conf.json" -- curl -s -o /dev/null -w '%{http_code}' \
	    --max-time 10 "$1")
}
eq "e2e${AS:+ (as nobody)}: allowed.test from pisbx-supervisor's policy" \
    "$(e2e "http://allowed.test:$WEB/")" 200
eq "e2e: denied.test refused" "$(e2e "http://denied.test:$WEB/")" 403
eq "e2e: other.test reviewed and refused" "$(e2e "http://other.test:$WEB/")" 403
check "e2e: the review command saw other.test" grep -q \
    '"hostname":"other.test"' "$T/e2e/rev.rec"
kill -USR1 "$E2E"
i=0
while [ "$(grep -c ' exited ' "$T/e2e/err")" -lt 3 ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
check "e2e: three workers, all exited, one with a review" sh -c "
	grep -q '^pisbx-supervisor: 3 workers, 0 running' '$T/e2e/err' &&
	[ \$(grep -cE '^[0-9a-f-]{36} +exited .* +0 +[0-9]+ +/' '$T/e2e/err') -eq 2 ] &&
	[ \$(grep -cE '^[0-9a-f-]{36} +exited .* +1 +[0-9]+ +/' '$T/e2e/err') -eq 1 ]"
kill "$E2E"
wait "$E2E"
done_testing
