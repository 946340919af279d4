#!/bin/sh
# pisbx-run --control-fd: the policy of a running command changes with
# each line written to the descriptor.  One command inside the sandbox
# connects to loopback servers in three phases while this script writes
# lines between them: a host refused before a line is allowed after it,
# one allowed before is refused after, and a CONNECT tunnel the new line
# refuses is closed (end "policy-changed").  Invalid JSON, an unknown
# key and a filesystem change are each refused with an error on stderr
# and change nothing.  A descriptor that cannot be read stops the run
# before anything starts.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v curl >/dev/null 2>&1 || skip "curl is not installed"
HOSTS_NAMES="a.test b.test"
export HOSTS_NAMES
srv_start http web
WEB=$SRV_PORT
srv_start echo echo
ECHO=$SRV_PORT

FS='{"denyRead": ["~/.ssh"], "denyWrite": []}'
run_config --allow "a.test" --fs "$FS"

# line ALLOW DENY [FS]: a whole config as one JSON line, srt's shape
# (network and filesystem), with the run's resolver.
line() {
	"$PY" - "$T/hosts" "$1" "$2" "${3:-$FS}" <<'EOF'
import json, sys
hosts, allow, deny, fs = sys.argv[1:5]
print(json.dumps({"network": {"allowedDomains": allow.split(),
                              "deniedDomains": deny.split()},
                  "filesystem": json.loads(fs),
                  "resolver": {"hostsFile": hosts, "timeoutMs": 2000}}))
EOF
}

# The command: three phases, each after a go file this script writes;
# each result in a file of the workspace.
cat >"$WS/phases.py" <<EOF
import os, socket, subprocess, time

def wait(name):
    for _ in range(600):
        if os.path.exists(name):
            return
        time.sleep(0.05)
    raise SystemExit("no " + name)

def curl(host, path):
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                        "-m", "10", "http://%s:$WEB/%s" % (host, path)],
                       capture_output=True, text=True)
    return r.stdout

def ping(s, data):
    try:
        s.sendall(data)
        got = s.recv(100)
        return got.decode() if got else "eof"
    except OSError as e:
        return "error"

def out(name, text):
    with open(name + ".tmp", "w") as f:
        f.write(text)
    os.rename(name + ".tmp", name)

t = socket.create_connection(("127.0.0.1", 3128))
t.sendall(b"CONNECT a.test:$ECHO HTTP/1.1\r\nHost: a.test:$ECHO\r\n\r\n")
head = b""
while b"\r\n\r\n" not in head:
    head += t.recv(1)
t.settimeout(10)
out("r1", " ".join([curl("b.test", "one"), curl("a.test", "one"),
                    head.split(b" ")[1].decode(), ping(t, b"ping1")]))
wait("go1")
out("r2", " ".join([curl("b.test", "two"), ping(t, b"ping2")]))
wait("go2")
out("r3", " ".join([curl("b.test", "three"), curl("a.test", "three"),
                    ping(t, b"ping3")]))
EOF

mkfifo "$T/ctl"
(cd "$WS" && exec "$RUN" --config "$CONF" --access-log "$PX_LOG" \
    --control-fd 3 -- /usr/bin/python3 phases.py 3<"$T/ctl") \
    >"$T/run.out" 2>"$T/run.err" &
RUN_PID=$!
_pids="$_pids $RUN_PID"
# Read-write: the open never blocks, nor does a write if pisbx-run is gone.
exec 4<>"$T/ctl"

# phase FILE: wait (20 s) for the command to write FILE while pisbx-run
# runs.
phase() {
	_i=0
	while [ $_i -lt 400 ] && kill -0 "$RUN_PID" 2>/dev/null; do
		[ -s "$1" ] && return 0
		sleep 0.05; _i=$((_i + 1))
	done
	[ -s "$1" ] && return 0
	not_ok "the command did not write $1: $(tail -n 3 "$T/run.err")"
	return 1
}

# until_err TEXT: wait (5 s) for pisbx-run's stderr to say TEXT.
until_err() {
	_i=0
	while [ $_i -lt 100 ]; do
		grep -qF -- "$1" "$T/run.err" && return 0
		sleep 0.05; _i=$((_i + 1))
	done
	return 1
}

phase "$WS/r1"
eq "before any line: b.test refused, a.test allowed, a tunnel to a.test, its echo" \
    "$(cat "$WS/r1" 2>/dev/null)" "403 200 200 ping1"

# Lines that change nothing: each an error naming what is wrong.
printf '\n   \n' >&4
echo '{ invalid json }' >&4
check "invalid JSON: an error on stderr" until_err "--control-fd 3, line 3"
check "invalid JSON: nothing changed" until_err \
    "--control-fd 3, line 3: refused (1 error); the policy in force is unchanged"
printf '%s\n' '{"network": {"allowedDomains": ["b.test"], "bogusKey": 1}}' >&4
check "an unknown key: the error names it" until_err \
    '--control-fd 3, line 4: $.network.bogusKey: unknown key'
line "a.test b.test" "" '{"denyRead": [], "denyWrite": []}' >&4
check "a filesystem change: refused, the key named" until_err \
    "--control-fd 3, line 5: filesystem.denyRead cannot change while the command runs"
check "a filesystem change: nothing changed" until_err \
    "--control-fd 3, line 5: refused (1 key fixed while the command runs)"
check "blank lines said nothing" sh -c \
    "! grep -qE -- '--control-fd 3, line (1|2)' '$T/run.err'"
touch "$WS/go1"
phase "$WS/r2"
eq "after the refused lines: b.test still refused, the tunnel still open" \
    "$(cat "$WS/r2" 2>/dev/null)" "403 ping2"
check_log "b.test still decided by the first policy" event=decision \
    host=b.test decision=deny reason=no-reviewer

# A valid line: b.test allowed, a.test denied; the open tunnel closed.
n_before=$(log_count event=close port="$ECHO")
line "b.test" "a.test" >&4
check_log "the tunnel to a.test is closed by the new policy" event=close \
    host=a.test port="$ECHO" end=policy-changed
check_log "its close record says which rule refuses it" event=close \
    host=a.test port="$ECHO" "error~refused by the new policy: deny-list:a.test"
eq "no tunnel closed before the valid line" "$n_before" 0
touch "$WS/go2"
phase "$WS/r3"
eq "after the line: b.test allowed, a.test refused, the tunnel gone" \
    "$(cat "$WS/r3" 2>/dev/null)" "200 403 eof"
check_log "b.test allowed by the line's entry" event=decision host=b.test \
    decision=allow reason=allow-list:b.test
check_log "a.test refused by the line's deny entry" event=decision \
    host=a.test port="$WEB" decision=deny reason=deny-list:a.test
wait "$RUN_PID"
eq "pisbx-run exits with the command's status" "$?" 0

# The command never holds the descriptor that carries its policy.
out=$(sbx --control-fd 3 -- /bin/sh -c \
    'if [ -e /proc/$$/fd/3 ]; then echo open; else echo closed; fi' 3<&4)
eq "the command does not get the control descriptor" "$out" closed

# A descriptor that cannot be read: refused before anything runs.
for bad in "1" "x3" "0x10"; do
	sbx --control-fd "$bad" -- touch "$WS/ran" >/dev/null 2>"$T/bad.err"
	eq "--control-fd $bad: a usage error" "$?" 2
done
contains "--control-fd 1: says what it must be" "$(cat "$T/bad.err")" \
    "an integer file descriptor >= 3"
sbx --control-fd 9 -- touch "$WS/ran" 2>"$T/bad.err"
eq "--control-fd 9 (not open): refused" "$?" 2
contains "--control-fd 9: says why" "$(cat "$T/bad.err")" "descriptor 9 is not open"
: >"$T/regular"
sbx --control-fd 7 -- touch "$WS/ran" 7<"$T/regular" 2>"$T/bad.err"
eq "--control-fd on a regular file: refused" "$?" 2
contains "a regular file: says what to give instead" "$(cat "$T/bad.err")" \
    "not a pipe or a socket"
sbx --control-fd 7 -- touch "$WS/ran" 7>"$T/regular" 2>"$T/bad.err"
eq "--control-fd open for writing only: refused" "$?" 2
# A listening socket: it would never carry a line.
python3 -c '
import os, socket, subprocess, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1)
os.dup2(s.fileno(), 7)
sys.exit(subprocess.call(sys.argv[2:], pass_fds=(7,)))' "$T/listen.sock" \
    "$RUN" --config "$CONF" --control-fd 7 -- touch "$WS/ran" 2>"$T/bad.err"
eq "--control-fd on a listening socket: refused" "$?" 2
contains "... and says why" "$(cat "$T/bad.err")" "a listening socket"
check "none of the refused runs ran the command" test ! -e "$WS/ran"
exec 4>&-

done_testing
