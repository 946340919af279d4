#!/bin/sh
# pisbx-run's process model: exit statuses, -c, usage and config errors,
# the environment inside, the private TMPDIR, --timeout, signal
# forwarding, a server on the sandbox's own loopback, and nested runs.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

run_config

# Exit statuses.
sbx -- /bin/true; eq "exit 0 passes through" "$?" 0
sbx -- /bin/sh -c 'exit 3'; eq "exit 3 passes through" "$?" 3
sbx -- /bin/sh -c 'kill -TERM $$'; eq "death by SIGTERM is 128+15" "$?" 143
sbx -- /bin/sh -c 'kill -KILL $$'; eq "death by SIGKILL is 128+9" "$?" 137
sbx -- /nonexistent/cmd 2>"$T/err"; eq "missing command is 127" "$?" 127
contains "missing command named" "$(cat "$T/err")" "/nonexistent/cmd"

# -c runs through bash, whatever $SHELL says (agents write bash).
out=$(cd "$WS" && SHELL=/bin/sh "$RUN" --config "$CONF" -c 'echo one; echo two | tr o 0')
eq "-c runs a shell command line" "$out" "one
tw0"
out=$(cd "$WS" && SHELL=/bin/dash "$RUN" --config "$CONF" -c '[[ -n x ]] && echo $0')
eq "-c runs bash even when SHELL is dash" "$out" "/bin/bash"

# Usage, version, help.
"$RUN" >/dev/null 2>&1; eq "no command is a usage error" "$?" 2
"$RUN" --timeout abc -- true >/dev/null 2>&1; eq "bad --timeout is a usage error" "$?" 2
contains "--version" "$("$RUN" --version)" "pisbx-run "
contains "--help" "$("$RUN" --help)" "usage: pisbx-run"

# Config errors: exit 78 before anything starts.
echo '{"network": {"allowedDomains": ["https://x"]}, "bogus": 1}' >"$T/bad.json"
(cd "$WS" && "$RUN" --config "$T/bad.json" -- /bin/sh -c "touch $T/ran") \
    >"$T/err" 2>&1
eq "config error exits 78" "$?" 78
contains "config error names the file" "$(cat "$T/err")" "$T/bad.json"
check "nothing ran with a bad config" test ! -e "$T/ran"
(cd "$WS" && "$RUN" --config "$T/missing.json" -- true) >/dev/null 2>&1
eq "missing config exits 78" "$?" 78

# The environment inside.
# (The supervisor's variables: tests/integration/super-run.sh.)
PISBX_CAPABILITY=sekrit FOO=bar sbx -- /usr/bin/env >"$T/env" 2>&1
for kv in HTTP_PROXY=http://127.0.0.1:3128 http_proxy=http://127.0.0.1:3128 \
    HTTPS_PROXY=http://127.0.0.1:3128 https_proxy=http://127.0.0.1:3128 \
    ALL_PROXY=socks5h://127.0.0.1:1080 all_proxy=socks5h://127.0.0.1:1080 \
    NO_PROXY=localhost,127.0.0.1,::1 no_proxy=localhost,127.0.0.1,::1 \
    PISBX_SANDBOX=1 PISBX_DEPTH=1 FOO=bar; do
	check "env has $kv" grep -qx "$kv" "$T/env"
done
check "GIT_SSH_COMMAND uses --connect-proxy" \
    grep -q "^GIT_SSH_COMMAND=ssh -o 'ProxyCommand=.*--connect-proxy %h %p'" "$T/env"
check "review capability not passed in" \
    sh -c "! grep -q '^PISBX_CAPABILITY=' '$T/env'"
tmp=$(sed -n 's/^TMPDIR=//p' "$T/env")
check "TMP and TEMP equal TMPDIR" grep -qx "TMP=$tmp" "$T/env"
case $tmp in "${TMPDIR:-/tmp}/pisbx-$(id -u)"/pisbx-run.*/tmp) ok "TMPDIR is private" ;;
*) not_ok "TMPDIR is private ($tmp)" ;; esac
check "private TMPDIR removed at exit" test ! -e "$tmp"

# The review capabilityEnv named by the config is not passed in either.
"$PY" - "$CONF" "$T/cap.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["review"] = {"socket": "/nonexistent/sock", "capabilityEnv": "MY_CAP"}
json.dump(c, open(sys.argv[2], "w"))
EOF
(cd "$WS" && MY_CAP=sekrit "$RUN" --config "$T/cap.json" -- /usr/bin/env) >"$T/env2" 2>&1
check "review capabilityEnv not passed in" sh -c "! grep -q '^MY_CAP=' '$T/env2'"

# The private TMPDIR is writable and goes away, whatever is left in it.
sbx_sh 'echo x >"$TMPDIR/f" && mkdir "$TMPDIR/d" && echo y >"$TMPDIR/d/g" && chmod 000 "$TMPDIR/d" && echo $TMPDIR'
eq "TMPDIR writable inside" "$?" 0
tmp=$(tail -n 1 "$T/out")
check "TMPDIR removed after a run that left files" test ! -e "$tmp"
check "its per-run directory removed too" test ! -e "$(dirname "$tmp")"

# /dev/stdout and /dev/stderr: through a pipe, and to a file outside the
# workspace (reopened through the guard and Landlock).
eq "echo >/dev/stdout into a pipe" "$(sbx -- /bin/sh -c 'echo hi >/dev/stdout' | cat)" hi
eq "echo >/dev/stderr into a pipe" "$(sbx -- /bin/sh -c 'echo e >/dev/stderr' 2>&1 | cat)" e
sbx -- /bin/sh -c 'echo tofile >/dev/stdout' >"$T/stdout.txt"
eq "echo >/dev/stdout into a file outside the workspace" "$(cat "$T/stdout.txt")" tofile

# A FIFO writer waiting for its reader, whose shell first creates a file:
# the creation guard must not block on the FIFO.
eq "FIFO with a reader that creates a file first" \
    "$(sbx --timeout 20 -- /bin/sh -c 'mkfifo p; cat p >out & echo hi >p; wait; cat out; rm -f p out')" hi

# /dev/tty, opened by the guard for the command, is the command's own
# controlling terminal: the caller's, a pty the command made (numbered
# like the caller's: only the session tells them apart), or none.
if command -v script >/dev/null; then
	cat >"$T/inpty.py" <<'EOF'
import os, pty
pid, fd = pty.fork()
if pid == 0:
    os.execv("/bin/sh", ["sh", "-c", "echo inner >/dev/tty"])
out = b""
while True:
    try:
        d = os.read(fd, 100)
    except OSError:
        break
    if not d:
        break
    out += d
print("pty got", out.decode().strip())
EOF
	cat >"$T/tty.sh" <<'EOF'
echo outer >/dev/tty
/usr/bin/python3 "$1"
setsid /bin/sh -c 'echo none >/dev/tty' 2>/dev/null || echo "no tty after setsid"
EOF
	chmod 644 "$T/inpty.py" "$T/tty.sh"
	(cd "$WS" && script -qec "'$RUN' --config '$CONF' -- /bin/sh '$T/tty.sh' '$T/inpty.py'" \
	    /dev/null) </dev/null >"$T/tty.out" 2>&1
	eq "/dev/tty: the caller's terminal, a pty made inside, none after setsid" \
	    "$(tr -d '\r' <"$T/tty.out")" "outer
pty got inner
no tty after setsid"
fi

# PID 1 is the reaper; the command is not.
eq "command is not PID 1" "$(sbx -- /bin/sh -c 'echo $$')" 2
eq "PID 1 is pisbx-run's reaper" "$(sbx -- /bin/cat /proc/1/comm)" pisbx-run
n=$(sbx -- /bin/sh -c 'ls /proc | grep -c "^[0-9]*$"')
check "only the sandbox's processes are visible ($n)" test "$n" -le 6

# --timeout kills the whole tree.
start=$(date +%s)
sbx --timeout 1 -- /bin/sh -c "sleep 30 & echo \$! >'$WS/bg'; sleep 30" 2>"$T/err"
eq "--timeout exits 124" "$?" 124
contains "--timeout says so" "$(cat "$T/err")" "timed out"
check "--timeout ended the run early" test $(( $(date +%s) - start )) -lt 20
rm -f "$WS/bg"

# A process that outlives the command dies with the sandbox.
MARK=$((300 + $$ % 500)).7
sbx -- /bin/sh -c "(setsid /bin/sleep $MARK >/dev/null 2>&1 &) ; echo started" >"$T/out" 2>&1
eq "double-forked child: command returns" "$?" 0
check "double-forked sleeper is dead after the run" \
    sh -c "! pgrep -u $(id -u) -f '^/bin/sleep $MARK\$' >/dev/null"

# SIGTERM to pisbx-run reaches the command (forwarded by the reaper).
(cd "$WS" && exec "$RUN" --config "$CONF" -- /bin/sh -c \
    "trap 'echo got-term; exit 7' TERM; echo ready; while :; do sleep 0.1; done") \
    >"$T/sig.out" 2>&1 &
rpid=$!
_pids="$_pids $rpid"
wait_file "$T/sig.out" 100
sleep 0.2
kill -TERM "$rpid"
wait "$rpid"
eq "forwarded SIGTERM: the command's status" "$?" 7
contains "forwarded SIGTERM: the command's trap ran" "$(cat "$T/sig.out")" "got-term"

# A server on the sandbox's own loopback works.
out=$(sbx -- "$PY" -c '
import socket, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
port = s.getsockname()[1]
def srv():
    c, _ = s.accept(); c.sendall(c.recv(100).upper()); c.close()
threading.Thread(target=srv).start()
c = socket.create_connection(("127.0.0.1", port)); c.sendall(b"ping")
print(c.recv(100).decode())
' 2>&1)
eq "server on the sandbox's loopback" "$out" "PING"
out=$(sbx -- "$PY" -c '
import socket
s = socket.socket(socket.AF_INET6); s.bind(("::1", 0)); s.listen(1)
c = socket.create_connection(("::1", s.getsockname()[1])); a, _ = s.accept()
a.sendall(b"v6"); print(c.recv(10).decode())' 2>&1)
eq "server on the sandbox's ::1" "$out" "v6"

# Nested runs refuse clearly (documented in pisbx-run(1)).
sbx -- "$RUN" --config "$CONF" -- /bin/true >"$T/out" 2>&1
eq "nested run exits 125" "$?" 125
contains "nested run says why" "$(cat "$T/out")" "nested sandboxes are not supported"
PISBX_DEPTH=1 "$RUN" --config "$CONF" -- /bin/true >"$T/out" 2>&1
eq "PISBX_DEPTH>0 refuses" "$?" 125
# Even with the variables stripped, the kernel side refuses (no
# capabilities, no mounts) and nothing runs.
sbx -- /usr/bin/env -u PISBX_DEPTH -u PISBX_SANDBOX "$RUN" --config "$CONF" -- \
    /bin/sh -c "echo RAN" >"$T/out" 2>&1
rc=$?
# Not root: the sandbox's user namespace shows root's files as the
# overflow uid, and the managed file's path cannot be verified there
# (exit 78, before the kernel would refuse).
if [ "$(id -u)" = 0 ]; then
	eq "stripped nested run exits 125" "$rc" 125
else
	eq "stripped nested run exits 78" "$rc" 78
	contains "... because the managed file cannot be verified" \
	    "$(cat "$T/out")" "outside this user namespace"
fi
check "stripped nested run ran nothing" sh -c "! grep -q RAN '$T/out'"
contains "stripped nested run says why" "$(cat "$T/out")" "cannot"

# -v ends with one timing line: each step of pisbx-run(1)'s list once, in
# order, a non-negative figure each, the total not below the command's.
sbx -v -- /bin/sh -c 'sleep 0.05' >"$T/out" 2>&1
eq "-v run exits 0" "$?" 0
line=$(grep '^pisbx-run: timing (ms): ' "$T/out")
eq "-v prints one timing line" "$(printf '%s\n' "$line" | grep -c .)" 1
steps=$(printf '%s\n' "$line" | sed 's/^pisbx-run: timing (ms): //' |
    sed 's/ ([^)]*)//; s/; /, /' | tr ',' '\n' |
    sed 's/^ *//; s/ [0-9][0-9.]*$//')
eq "the timing line names the steps in order" "$(echo $steps)" \
    "config policy clone network mounts landlock proxy command start command sandbox exit cleanup total"
check "every figure is a non-negative number" sh -c "printf '%s\n' '$line' |
    sed 's/^pisbx-run: timing (ms): //' | grep -Eq '^([a-z ]+ [0-9]+\.[0-9]{2}( \(waited for: [0-9]+\.[0-9]{2}\))?[,;] )+total [0-9]+\.[0-9]{2}$'"
cmd=$(printf '%s\n' "$line" | sed -n 's/.* command \([0-9.]*\),.*/\1/p')
total=$(printf '%s\n' "$line" | sed -n 's/.*total \([0-9.]*\)$/\1/p')
check "the command's 50 ms sleep is in its step and the total" awk \
    "BEGIN { exit !($cmd >= 50 && $total >= $cmd) }"

done_testing
