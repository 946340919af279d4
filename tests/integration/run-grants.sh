#!/bin/sh
# pisbx-run --explain HOST[:PORT] --run PID asks a running pisbx-run: the
# person at the terminal answers "r" (allow for the rest of this run) to
# a review (the name then resolves to 127.0.0.1, which no exact entry
# opens, so the dial is still refused: the grant is what is looked at),
# and --explain of that run shows the grant ("granted", with
# its protocol and scope) next to the policy's answer; another target
# shows none.  A --control-fd line then changes the policy: --explain
# answers with the new policy at once, and the grant has ended with the
# old one.  A pid that is no pisbx-run of ours is an error.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v curl >/dev/null 2>&1 || skip "curl is not installed"
FIX=$PISBX_TOP/tests/fixtures/reviewers
HOSTS_NAMES="r.test other.test"
export HOSTS_NAMES
srv_start http web
WEB=$SRV_PORT
run_config --top '{"review": {"mode": "tty", "timeoutMs": 20000}}'
chmod -R a+rwX "$WS"

mkfifo "$T/ctl"
exec 4<>"$T/ctl"
# The command: one request the person is asked about, then it waits.
(cd "$WS" && exec "$PY" "$FIX/pty-answer.py" --pid-file "$T/run.pid" r -- \
    "$RUN" --config "$CONF" --access-log "$PX_LOG" --control-fd 3 -- \
    /bin/sh -c "curl -s -o /dev/null -m 10 http://r.test:$WEB/; touch asked;
        i=0; while [ ! -e done ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done" \
    3<&4) >"$T/pty.out" 2>&1 &
PTY_PID=$!
_pids="$_pids $PTY_PID"

wait_file "$T/run.pid" 200
RPID=$(cat "$T/run.pid" 2>/dev/null)
i=0
while [ ! -e "$WS/asked" ] && [ $i -lt 400 ] && kill -0 "$PTY_PID" 2>/dev/null; do
	sleep 0.05; i=$((i + 1))
done
check "the command made its request" test -e "$WS/asked"

out=$("$RUN" --explain "r.test:$WEB" --run "$RPID" 2>&1)
eq "--explain --run: answered" "$?" 0
contains "--explain --run: the policy's answer" "$out" \
    "\"host\":\"r.test\",\"port\":$WEB,\"decision\":\"review\""
contains "--explain --run: the person's grant, its protocol and scope" "$out" \
    '"granted":[{"protocol":"http","scope":"run"}]}'
out=$("$RUN" --explain "other.test:$WEB" --run "$RPID" 2>&1)
contains "another target: the policy's answer" "$out" '"host":"other.test"'
case $out in
*granted*) not_ok "another target: no grant ($out)" ;;
*) ok "another target: no grant" ;;
esac

# A new policy: --explain says it at once; the grant ended with the old.
"$PY" - "$T/hosts" >&4 <<'EOF'
import json, sys
print(json.dumps({"network": {"allowedDomains": ["other.test"],
                              "deniedDomains": []},
                  "resolver": {"hostsFile": sys.argv[1], "timeoutMs": 2000},
                  "review": {"mode": "tty", "timeoutMs": 20000}}))
EOF
i=0
while [ $i -lt 100 ]; do
	out=$("$RUN" --explain "other.test:$WEB" --run "$RPID" 2>&1)
	case $out in *allow-list:other.test*) break ;; esac
	sleep 0.05; i=$((i + 1))
done
contains "after a --control-fd line: the new policy answers" "$out" \
    '"decision":"allow","reason":"allow-list:other.test"'
out=$("$RUN" --explain "r.test:$WEB" --run "$RPID" 2>&1)
case $out in
*granted*) not_ok "after the line: the grant has ended ($out)" ;;
*'"decision":"review"'*) ok "after the line: the grant has ended" ;;
*) not_ok "after the line: an answer ($out)" ;;
esac

touch "$WS/done"
wait "$PTY_PID"
eq "the run ends with the command's status" "$?" 0
contains "the person was asked, and offered this run" "$(cat "$T/pty.out")" "y/r/N"
contains "... and answered r: for the rest of this run" \
    "$(cat "$T/pty.out")" "r = for the rest of this run, N = no [y/r/N] r"
"$RUN" --explain "r.test:$WEB" --run "$RPID" >"$T/gone.out" 2>&1
eq "--run of a run that has ended: an error" "$?" 1
contains "... saying there is no such run" "$(cat "$T/gone.out")" \
    "no pisbx-run of yours with that pid is running here"
out=$("$RUN" --config "$CONF" --explain "r.test" 2>"$T/usage.out")
eq "--explain without --run: the config's answer, exit 0" "$?" 0
contains "... as the --explain JSON line" "$out" '{"host":"r.test","port":443,'
"$RUN" --run 1 >/dev/null 2>"$T/usage.out"
eq "--run without --explain: a usage error" "$?" 2
"$RUN" --explain "r.test" --run 12x >/dev/null 2>"$T/usage.out"
eq "--run that is no pid: a usage error" "$?" 2
# A socket planted under a run's name (a pid whose run is not there: a
# base some command could write to, a stale name whose pid came back)
# is not that run's: nothing is sent to it, and --run says so.
sleep 30 &
FPID=$!
FSOCK=${TMPDIR:-/tmp}/pisbx-$(id -u)/pisbx-run.$FPID.planted.sock
"$PY" - "$FSOCK" "$T/planted.got" <<'EOF2' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(4); s.settimeout(20)
open(sys.argv[2] + ".ready", "w").close()
try:
    c, _ = s.accept(); c.settimeout(3)
    got = c.recv(4096)
    open(sys.argv[2], "wb").write(got)
    c.sendall(b'{"host":"planted","decision":"allow"}\n')
except Exception:
    pass
EOF2
PLPID=$!
i=0
while [ ! -e "$T/planted.got.ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
"$RUN" --explain "r.test:$WEB" --run "$FPID" >"$T/planted.out" 2>&1
eq "--run of a planted socket: an error" "$?" 1
contains "--run of a planted socket: says whose it is" "$(cat "$T/planted.out")" \
    "is not the socket of pisbx-run pid $FPID"
if [ -s "$T/planted.got" ]; then
	not_ok "the planted socket got the line: $(cat "$T/planted.got")"
else
	ok "the planted socket got nothing"
fi
kill "$FPID" "$PLPID" 2>/dev/null
wait "$FPID" "$PLPID" 2>/dev/null
rm -f "$FSOCK"
done_testing
