#!/bin/sh
# Secrets taken from the environment leave it for good: the upstream
# proxy's credentialsEnv, review.socket's capability and the supervisor
# capability appear in no /proc/PID/environ -- not of pisbx-proxy,
# pisbx-run or pisbx-supervisor, not of a review command or a host-IPC
# command, not of their parents -- and each is still used (a reload finds
# the credentials again, the review socket gets its capability).
. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"
SUPERVISOR=$PISBX_BINDIR/pisbx-supervisor
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY PISBX_CAPABILITY
S1="pxuser:sekrit-parent-$$-$(date +%s%N)"
S2="sekrit-cap-$$-$(date +%s%N)"
S3="sekrit-sup-$$-$(date +%s%N)"
mkdir -p "$T/bin" "$T/ws"
export PATH="$T/bin:$PATH"

# dumpenv FILE: this process's environment and every ancestor's
# /proc/PID/environ (with its name), appended to FILE.
cat >"$T/bin/dumpenv" <<'EOF2'
#!/bin/sh
{
	echo "== self"
	env
	p=$PPID
	while [ "$p" -gt 1 ]; do
		echo "== $p $(cat /proc/$p/comm 2>/dev/null)"
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null
		p=$(sed 's/.*) [A-Za-z] \([0-9]*\).*/\1/' "/proc/$p/stat")
	done
} >>"$1"
EOF2
# The review command: dumps, then allows host-IPC and denies the rest.
cat >"$T/rev.sh" <<EOF2
#!/bin/sh
read -r line
$T/bin/dumpenv "$T/rev.dump"
case \$line in
*host-ipc*) echo '{"action":"allow","reason":"dumped"}' ;;
*) echo '{"action":"deny","reason":"dumped"}' ;;
esac
EOF2
chmod 755 "$T/bin/dumpenv" "$T/rev.sh"
# A review socket that allows everything and records the capability.
cat >"$T/revsock.py" <<'EOF2'
import json, os, socket, sys
path, rec = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path + ".tmp")
os.rename(path + ".tmp", path)
s.listen(16)
while True:
    c, _ = s.accept()
    f = c.makefile("rwb")
    req = json.loads(f.readline())
    with open(rec, "a") as r:
        r.write(req.get("capability", "") + "\n")
    f.write(json.dumps({"id": req["id"], "action": "allow",
                        "reason": "ok"}).encode() + b"\n")
    f.flush()
    c.close()
EOF2
spawn $PY "$T/revsock.py" "$T/rev.sock" "$T/revsock.rec"
wait_file "$T/rev.sock" || true
echo "127.0.0.1 other.test" >"$T/hosts"
chmod -R a+rX "$T"

# nowhere DESC FILE...: none of the secrets is in the files.
nowhere() {
	_d=$1; shift
	if cat "$@" 2>/dev/null | grep -aqF -e "${S1#*:}" -e "$S2" -e "$S3"; then
		not_ok "$_d: a secret is there"
	else
		ok "$_d"
	fi
}
# environ PID: its /proc/PID/environ, one variable a line.
environ() { tr '\0' '\n' <"/proc/$1/environ"; }
# scan_all FILE: every readable /proc/*/environ now, into FILE.
scan_all() { cat /proc/[0-9]*/environ >"$1" 2>/dev/null; true; }

# 1. pisbx-proxy: the upstream proxy's credentials, a review command.
cat >"$T/p1.json" <<EOF2
{"network": {"allowedDomains": ["allowed.test"],
  "parentProxy": {"http": "http://127.0.0.1:9", "credentialsEnv": "PXCRED"}},
 "resolver": {"hostsFile": "$T/hosts"},
 "review": {"command": ["$T/rev.sh"], "timeoutMs": 10000}}
EOF2
PX_ERR=$T/p1.err
spawn env PXCRED="$S1" "$PROXY" --config "$T/p1.json" --listen 127.0.0.1:0 \
    --access-log "$PX_LOG" 2>"$PX_ERR"
P1=$LAST_PID
i=0
while ! grep -q "listening on" "$PX_ERR" && [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$PX_ERR")
environ "$P1" >"$T/p1.environ"
check "pisbx-proxy: its environ was read" grep -q '^PATH=' "$T/p1.environ"
nowhere "pisbx-proxy: no credentials in /proc/PID/environ" "$T/p1.environ"
curl -s -o /dev/null -m 10 -x "http://127.0.0.1:$PORT" http://other.test/ || true
check "pisbx-proxy: the review command ran and saw its parent" \
    grep -q "== $P1 pisbx-proxy" "$T/rev.dump"
nowhere "pisbx-proxy: not in its review command's nor its parent's environ" \
    "$T/rev.dump"
kill -HUP "$P1"
sleep 0.3
check "pisbx-proxy: a reload finds the credentials again" \
    sh -c "kill -0 $P1 && ! grep -q 'not set\|not valid' '$PX_ERR'"
kill "$P1"

# 2. pisbx-proxy: review.socket's capability.
cat >"$T/p2.json" <<EOF2
{"network": {"allowedDomains": []}, "resolver": {"hostsFile": "$T/hosts"},
 "review": {"socket": "$T/rev.sock", "timeoutMs": 10000}}
EOF2
: >"$T/p2.err"
spawn env PISBX_CAPABILITY="$S2" "$PROXY" --config "$T/p2.json" \
    --listen 127.0.0.1:0 2>"$T/p2.err"
P2=$LAST_PID
i=0
while ! grep -q "listening on" "$T/p2.err" && [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/p2.err")
environ "$P2" >"$T/p2.environ"
nowhere "pisbx-proxy: no capability in /proc/PID/environ" "$T/p2.environ"
kill -HUP "$P2"
sleep 0.3
curl -s -o /dev/null -m 10 -x "http://127.0.0.1:$PORT" http://other.test:9/ || true
check "pisbx-proxy: after a reload the review socket still gets it" \
    grep -qxF "$S2" "$T/revsock.rec"
kill "$P2"

# 3. pisbx-run: both, and a host-IPC command reviewed over the socket.
cat >"$T/r3.json" <<EOF2
{"network": {"allowedDomains": ["allowed.test"],
  "parentProxy": {"http": "http://127.0.0.1:9", "credentialsEnv": "PXCRED"}},
 "resolver": {"hostsFile": "$T/hosts"},
 "review": {"socket": "$T/rev.sock", "timeoutMs": 10000},
 "hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["dumpenv"]}}
EOF2
chmod 644 "$T/r3.json"
: >"$T/revsock.rec"
(cd "$T/ws" && env PXCRED="$S1" PISBX_CAPABILITY="$S2" "$RUN" \
    --config "$T/r3.json" -- dumpenv "$T/h3.dump") >"$T/r3.out" 2>&1
check "pisbx-run: the host-IPC command ran on the host" \
    grep -q "pisbx-run" "$T/h3.dump"
check "pisbx-run: its review went over the socket with the capability" \
    grep -qxF "$S2" "$T/revsock.rec"
nowhere "pisbx-run: no secret in the host-IPC command's or its parents' environ" \
    "$T/h3.dump"
(cd "$T/ws" && env PXCRED="$S1" PISBX_CAPABILITY="$S2" "$RUN" \
    --config "$T/r3.json" -- sleep 2) >"$T/r3b.out" 2>&1 &
R3=$!
_pids="$_pids $R3"
sleep 1
environ "$R3" >"$T/r3.environ"
scan_all "$T/r3.all"
wait "$R3"
check "pisbx-run: its environ was read" grep -q '^PATH=' "$T/r3.environ"
nowhere "pisbx-run: no secret in /proc/PID/environ" "$T/r3.environ"
nowhere "pisbx-run: no secret in any process's environ while it runs" \
    "$T/r3.all"

# 4. pisbx-supervisor's capability, its review command, a worker.
cat >"$T/sup.json" <<EOF2
{"network": {"allowedDomains": ["allowed.test"]}}
EOF2
cat >"$T/w4.json" <<EOF2
{"network": {"allowedDomains": []}, "resolver": {"hostsFile": "$T/hosts"}}
EOF2
chmod 644 "$T/sup.json" "$T/w4.json"
: >"$T/rev.dump"
spawn env PISBX_SUPERVISOR_CAPABILITY="$S3" "$SUPERVISOR" \
    --config "$T/sup.json" --socket "$T/s.sock" --review-command "$T/rev.sh" \
    >"$T/sup.out" 2>"$T/sup.err"
SUP=$LAST_PID
i=0
while [ ! -S "$T/s.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
environ "$SUP" >"$T/sup.environ"
nowhere "pisbx-supervisor: no capability in /proc/PID/environ" "$T/sup.environ"
(cd "$T/ws" && env PISBX_SUPERVISOR_SOCKET="$T/s.sock" \
    PISBX_SUPERVISOR_CAPABILITY="$S3" "$RUN" --config "$T/w4.json" -- \
    /bin/sh -c 'curl -s -o /dev/null -m 10 http://other.test:9/; sleep 1.5') \
    >"$T/w4.out" 2>&1 &
W4=$!
_pids="$_pids $W4"
sleep 0.8
environ "$W4" >"$T/w4.environ"
scan_all "$T/w4.all"
wait "$W4"
check "supervisor: the review command ran and saw pisbx-supervisor" \
    grep -q "== $SUP pisbx-superviso" "$T/rev.dump"
nowhere "supervisor: not in the review command's nor its parents' environ" \
    "$T/rev.dump"
nowhere "supervisor: not in the worker pisbx-run's environ" "$T/w4.environ"
nowhere "supervisor: not in any process's environ while a worker runs" \
    "$T/w4.all" "$T/sup.environ"
done_testing
