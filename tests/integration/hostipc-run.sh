#!/bin/sh
# The host-IPC fallback of pisbx-run: a command named by a prefix is
# reviewed and, if allowed, runs on the host (it reaches a Unix socket the
# host listens on, which no sandboxed command can); a denied one does not
# run.  With retryOnUnixSocketError, a sandboxed run that failed on a
# refused Unix socket is reviewed once and re-run on the host after its
# first output and a separator -- never after success, a timeout, another
# kind of error, or in a nested sandbox -- with only the time left; the
# time a reviewer takes counts against --timeout (a command whose time is
# up is not started, a retry never outlasts the timeout).  tmux's first
# use (its socket directory on a read-only filesystem) is retried too, and
# without hostIPC a failed tmux names the setting.
# Reviews go to the review command, the TTY (with a warning), or the
# supervisor in supervisor mode.
# run.sh: alone (its timeouts are measured against wall time).
. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY
WS=$T/ws
mkdir -p "$WS" "$T/home" "$T/bin"
export HOME=$T/home
export PATH="$T/bin:$PATH"
FIX=$PISBX_TOP/tests/fixtures/reviewers

# A service on a host Unix socket: answers "pong-from-host" and counts.
cat >"$T/hostsrv.py" <<'EOF'
import os, socket, sys
path, count = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path + ".tmp")
os.rename(path + ".tmp", path)
s.listen(16)
while True:
    c, _ = s.accept()
    with open(count, "a") as f:
        f.write("conn\n")
    c.sendall(b"pong-from-host\n")
    c.close()
EOF
spawn $PY "$T/hostsrv.py" "$T/host.sock" "$T/conns"
i=0
while [ ! -S "$T/host.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
conns() { [ -f "$T/conns" ] && wc -l <"$T/conns" | tr -d ' ' || echo 0; }

# hostcat SOCKET [WORD]: print a line, then what the socket answers.
cat >"$T/bin/hostcat" <<'EOF'
#!/usr/bin/python3
import socket, sys
print("attempt", flush=True)
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
sys.stdout.write(s.recv(100).decode())
EOF
chmod 755 "$T/bin/hostcat"

# The reviewer: allows a host-ipc request whose command says "allowed".
cat >"$T/rev.py" <<'EOF'
#!/usr/bin/python3
import json, sys
req = json.loads(sys.stdin.readline())
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(req) + "\n")
ok = req.get("type") == "host-ipc" and "allowed" in req.get("command", "")
print(json.dumps({"id": req["id"], "action": "allow" if ok else "deny",
                  "reason": "reviewer says " + ("yes" if ok else "no")}))
EOF
chmod 755 "$T/rev.py"

conf() {	# FILE RETRY [REVIEW-JSON]
	_rev=""
	[ -n "${3:-}" ] && _rev=", \"review\": $3"
	cat >"$1" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": []},
 "hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["hostcat"],
             "retryOnUnixSocketError": $2}$_rev}
EOF
	chmod 644 "$1"
}
conf "$T/c.json" true "{\"command\": [\"$T/rev.py\", \"$T/rev.rec\"], \"timeoutMs\": 20000}"
conf "$T/noretry.json" false "{\"command\": [\"$T/rev.py\", \"$T/rev.rec\"], \"timeoutMs\": 20000}"
conf "$T/norev.json" true ""
conf "$T/tty.json" true '{"mode": "tty", "timeoutMs": 20000}'
run() {	# CONFIG ARGS...: pisbx-run in $WS
	_c=$1; shift
	(cd "$WS" && exec "$RUN" --config "$_c" "$@")
}
reviews() { [ -f "$T/rev.rec" ] && wc -l <"$T/rev.rec" | tr -d ' ' || echo 0; }
last_review() {	# EXPR over the last request r
	$PY -c 'import json,sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(eval(sys.argv[2]))' "$T/rev.rec" "$1"
}
WSP=$(cd "$WS" && pwd -P)

# Sandboxed, the host socket is out of reach (the premise).
run "$T/noretry.json" -- /usr/bin/python3 "$T/bin/hostcat" "$T/host.sock" \
    >"$T/plain.out" 2>&1
check "premise: a sandboxed command cannot reach the host socket" \
    sh -c "! grep -q pong '$T/plain.out' && grep -q 'Operation not permitted' '$T/plain.out'"
eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi; }

# Preflight prefix, allowed: runs on the host.
n0=$(conns)
run "$T/c.json" -- hostcat "$T/host.sock" allowed >"$T/p1.out" 2>"$T/p1.err"
eq "preflight allowed: exit 0" $? 0
check "preflight allowed: reached the host socket" grep -q '^pong-from-host$' "$T/p1.out"
eq "preflight allowed: one connection on the host" "$(conns)" $((n0 + 1))
check "preflight allowed: ran once (no sandboxed attempt first)" \
    [ "$(grep -c '^attempt$' "$T/p1.out")" -eq 1 ]
check "preflight allowed: says it runs outside the sandbox" grep -q \
    'host-IPC: approved (preflight-prefix:hostcat); running on the host' "$T/p1.err"
check "preflight request: type, operation, rule, command, cwd" $PY -c '
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert r["type"] == "host-ipc" and r["operation"] == "execute-host", r
assert r["rule"] == "preflight-prefix:hostcat", r
assert r["command"] == "hostcat " + sys.argv[2] + " allowed", r
assert r["cwd"] == sys.argv[3] and r["version"] == 1 and len(r["id"]) == 36, r
' "$T/rev.rec" "$T/host.sock" "$WSP"

# -c strings are matched after trimming, and run through the shell.
run "$T/c.json" -c "   hostcat '$T/host.sock' allowed | tr a-z A-Z" >"$T/p2.out" 2>"$T/p2.err"
eq "preflight -c: exit 0" $? 0
check "preflight -c: the whole shell line ran on the host" grep -q \
    '^PONG-FROM-HOST$' "$T/p2.out"
eq "preflight -c: the reviewer saw the text as given" \
    "$(last_review 'r["command"]')" "   hostcat '$T/host.sock' allowed | tr a-z A-Z"
run "$T/c.json" -c "hostcat '$T/host.sock' allowed >/dev/null; grep '^SigIgn:' /proc/self/status" \
    >"$T/p2b.out" 2>/dev/null
# Standard signals only: glibc's own (32, 33) may come ignored from make.
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$T/p2b.out")
check "a host run starts with no standard signal ignored ($ign)" \
    [ $((0x${ign:-1} & 0x7fffffff)) -eq 0 ]

# Preflight denied: not run at all.
n0=$(conns); r0=$(reviews)
run "$T/c.json" -- hostcat "$T/host.sock" please >"$T/p3.out" 2>"$T/p3.err"
eq "preflight denied: exit 1" $? 1
check "preflight denied: the message" grep -qx \
    'pisbx: host-IPC execution denied: reviewer says no' "$T/p3.err"
eq "preflight denied: nothing ran" "$(cat "$T/p3.out")" ""
eq "preflight denied: no connection on the host" "$(conns)" "$n0"
eq "preflight denied: one review" "$(reviews)" $((r0 + 1))

# No reviewer: denied.
run "$T/norev.json" -- hostcat "$T/host.sock" allowed >"$T/p4.out" 2>"$T/p4.err"
eq "no reviewer: exit 1" $? 1
check "no reviewer: denied with the reason" grep -qx \
    'pisbx: host-IPC execution denied: no reviewer configured' "$T/p4.err"

# A prefix must end at whitespace: hostcatx is sandboxed, not reviewed.
cp "$T/bin/hostcat" "$T/bin/hostcatx"
r0=$(reviews)
run "$T/noretry.json" -- hostcatx "$T/host.sock" allowed >"$T/p5.out" 2>&1
check "hostcatx: not a prefix match, ran sandboxed and failed" \
    sh -c "! grep -q pong '$T/p5.out'"
eq "hostcatx: no review" "$(reviews)" "$r0"

# The TTY reviewer warns that the command runs outside the sandbox.
$PY "$FIX/pty-answer.py" y -- "$RUN" --config "$T/tty.json" -- hostcat \
    "$T/host.sock" allowed >"$T/tty.out" 2>&1
eq "tty: answered y, exit 0" $? 0
check "tty: the warning" grep -q 'WARNING: this command would run on the host, OUTSIDE the sandbox' "$T/tty.out"
check "tty: the command is shown" grep -q "command  hostcat $T/host.sock allowed" "$T/tty.out"
check "tty: ran on the host" grep -q 'pong-from-host' "$T/tty.out"
n0=$(conns)
$PY "$FIX/pty-answer.py" n -- "$RUN" --config "$T/tty.json" -- hostcat \
    "$T/host.sock" allowed >"$T/tty2.out" 2>&1
eq "tty: answered n, exit 1" $? 1
check "tty: denied" grep -q 'host-IPC execution denied: denied at the terminal' "$T/tty2.out"
eq "tty: no connection" "$(conns)" "$n0"

# Retry after a refused Unix socket: reviewed, re-run on the host.
n0=$(conns); r0=$(reviews)
run "$T/c.json" -- /usr/bin/python3 "$T/bin/hostcat" "$T/host.sock" allowed \
    >"$T/r1.out" 2>"$T/r1.err"
eq "retry allowed: the host run's status" $? 0
eq "retry allowed: stdout keeps the first attempt, then the host run" \
    "$(cat "$T/r1.out")" "attempt
attempt
pong-from-host"
check "retry allowed: the first attempt's stderr is kept" grep -q \
    'PermissionError: \[Errno 1\] Operation not permitted' "$T/r1.err"
check "retry allowed: a separator line after it" $PY -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
i = [n for n, l in enumerate(lines) if "Operation not permitted" in l][0]
sep = [n for n, l in enumerate(lines) if l.startswith("pisbx: ---- host-IPC retry:")]
assert len(sep) == 1 and sep[0] > i, lines
assert lines[sep[0]].endswith("----"), lines[sep[0]]
' "$T/r1.err"
eq "retry allowed: reached the host socket once" "$(conns)" $((n0 + 1))
eq "retry allowed: reviewed once" "$(reviews)" $((r0 + 1))
check "retry request: rule unix-socket-eperm with the side-effect warning" $PY -c '
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert r["type"] == "host-ipc" and r["rule"] == "unix-socket-eperm", r
assert "side effects" in r["warning"], r
assert r["command"].startswith("/usr/bin/python3 "), r
' "$T/rev.rec"

# Retry denied: the first attempt's status stands.
n0=$(conns)
run "$T/c.json" -- /usr/bin/python3 "$T/bin/hostcat" "$T/host.sock" nope \
    >"$T/r2.out" 2>"$T/r2.err"
eq "retry denied: the sandboxed attempt's status" $? 1
check "retry denied: the message" grep -qx \
    'pisbx: host-IPC execution denied: reviewer says no' "$T/r2.err"
eq "retry denied: no connection" "$(conns)" "$n0"

# Never retried: retry off, success, another error, a timeout, a signal.
r0=$(reviews)
run "$T/noretry.json" -- /usr/bin/python3 "$T/bin/hostcat" "$T/host.sock" \
    allowed >/dev/null 2>&1
eq "retry off: the failure stands" $? 1
run "$T/c.json" -- /bin/sh -c 'echo "connect: Operation not permitted" >&2; exit 0' \
    >/dev/null 2>"$T/n2.err"
eq "success: exit 0" $? 0
check "success: its stderr passed through" grep -q 'connect: Operation not permitted' "$T/n2.err"
run "$T/c.json" -- /bin/sh -c 'echo "rm: cannot remove x: Operation not permitted" >&2; exit 1' \
    >/dev/null 2>&1
eq "an error not about a socket: its status" $? 1
run "$T/c.json" --timeout 1 -- /bin/sh -c 'echo "connect: Operation not permitted" >&2; exec sleep 30' \
    >/dev/null 2>&1
eq "timeout: exit 124" $? 124
run "$T/c.json" -- /bin/sh -c 'echo "connect: Operation not permitted" >&2; kill -TERM $$' \
    >/dev/null 2>&1
eq "killed by a signal: 128+15" $? 143
eq "none of those was reviewed" "$(reviews)" "$r0"

# Only the time left: 3 of 4 seconds used sandboxed, the host run needs 2.5.
cat >"$T/bin/slowcat" <<EOF
#!/bin/sh
if [ -n "\${PISBX_SANDBOX:-}" ]; then
	sleep 3
	echo "connect($T/host.sock): Operation not permitted" >&2
	exit 1
fi
sleep 2.5
echo finished-on-host
EOF
chmod 755 "$T/bin/slowcat"
run "$T/c.json" --timeout 4 -- slowcat allowed >"$T/t1.out" 2>"$T/t1.err"
eq "remaining timeout: the host run is stopped when the 4 s are up" $? 124
check "remaining timeout: the host run started" grep -q 'host-IPC retry' "$T/t1.err"
check "remaining timeout: it did not finish" sh -c "! grep -q finished '$T/t1.out'"
run "$T/c.json" --timeout 30 -- slowcat allowed >"$T/t2.out" 2>/dev/null
eq "with time left the same retry finishes" "$(cat "$T/t2.out")" finished-on-host

# The reviewer's time is the run's time.  A reviewer that takes 3 s
# (then allows) under --timeout 1.5: the command is not started, 124.
cat >"$T/slowrev.py" <<'EOF'
#!/usr/bin/python3
import json, sys, time
req = json.loads(sys.stdin.readline())
time.sleep(float(sys.argv[1]))
print(json.dumps({"id": req["id"], "action": "allow", "reason": "slowly"}))
EOF
chmod 755 "$T/slowrev.py"
conf "$T/slow3.json" true "{\"command\": [\"$T/slowrev.py\", \"3\"], \"timeoutMs\": 20000}"
conf "$T/slow1.json" true "{\"command\": [\"$T/slowrev.py\", \"1\"], \"timeoutMs\": 20000}"
n0=$(conns)
run "$T/slow3.json" --timeout 1.5 -- hostcat "$T/host.sock" >"$T/d1.out" 2>"$T/d1.err"
eq "preflight, review outlasting --timeout: exit 124" $? 124
check "... says the command was not started" grep -q \
    'passed while waiting for the reviewer; the command was not started' "$T/d1.err"
eq "... and nothing ran on the host" "$(conns)" "$n0"
check "... nothing was printed by the command" [ ! -s "$T/d1.out" ]

# A retry whose review outlasts the rest of --timeout: no retry.
cat >"$T/bin/failcat" <<EOF
#!/bin/sh
if [ -n "\${PISBX_SANDBOX:-}" ]; then
	echo "connect($T/host.sock): Operation not permitted" >&2
	exit 1
fi
exec hostcat "$T/host.sock"
EOF
chmod 755 "$T/bin/failcat"
n0=$(conns)
run "$T/slow3.json" --timeout 2 -- failcat >"$T/d2.out" 2>"$T/d2.err"
eq "retry, review outlasting --timeout: the first attempt's status" $? 1
check "... says there is no retry" grep -q \
    'passed while waiting for the reviewer; no retry' "$T/d2.err"
eq "... and nothing ran on the host" "$(conns)" "$n0"

# A retry gets what is left after its review: a review of at least 1 s
# under --timeout 3 leaves the host run at most 2 s.
cat >"$T/bin/longcat" <<EOF
#!/bin/sh
if [ -n "\${PISBX_SANDBOX:-}" ]; then
	echo "connect($T/host.sock): Operation not permitted" >&2
	exit 1
fi
exec sleep 30
EOF
chmod 755 "$T/bin/longcat"
run "$T/slow1.json" --timeout 3 -- longcat >/dev/null 2>"$T/d3.err"
eq "retry after a 1 s review under --timeout 3: 124" $? 124
budget=$(sed -n 's/^pisbx: timed out after \([0-9]*\) ms on the host$/\1/p' "$T/d3.err")
check "... the host run's budget (${budget:-?} ms) leaves out the review" \
    [ "${budget:-99999}" -le 2000 ]

# Nested: pisbx-run refuses to run inside a sandbox, host-IPC included.
n0=$(conns); r0=$(reviews)
run "$T/noretry.json" -- /bin/sh -c "'$RUN' --config '$T/c.json' -- hostcat '$T/host.sock' allowed; echo nested-exit \$?" \
    >"$T/nest.out" 2>&1
check "nested: refused" grep -q '^nested-exit 125$' "$T/nest.out"
check "nested: says it is inside a sandbox" grep -q 'already inside a pisbx sandbox' "$T/nest.out"
eq "nested: nothing reached the host" "$(conns)" "$n0"
eq "nested: nothing was reviewed" "$(reviews)" "$r0"

# tmux's first use makes its socket directory, which the sandbox's
# read-only filesystem refuses: for a listed program named in the command
# and on that line, that is retried too.  Without hostIPC, a failed tmux
# says how to let it work.
if command -v tmux >/dev/null 2>&1; then
	mkdir -p "$T/tmuxdir"
	cat >"$T/tmux.json" <<EOF
{"hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["tmux"],
             "retryOnUnixSocketError": true},
 "review": {"command": ["$T/rev.py", "$T/rev.rec"], "timeoutMs": 20000}}
EOF
	echo '{}' >"$T/plain.json"
	echo '{"network": {"allowUnixSockets": ["/nonexistent.sock"]}}' \
	    >"$T/uds.json"
	chmod 644 "$T/tmux.json" "$T/plain.json" "$T/uds.json"
	r0=$(reviews)
	TMUX_TMPDIR=$T/tmuxdir run "$T/tmux.json" -c \
	    'echo allowed; tmux -L pisbx-test ls' >"$T/x1.out" 2>"$T/x1.err"
	check "tmux's first use: its socket directory is refused inside" \
	    grep -q "couldn't create directory $T/tmuxdir/tmux-$(id -u) (Read-only file system)" "$T/x1.err"
	eq "tmux's first use: reviewed once" "$(reviews)" $((r0 + 1))
	eq "tmux's first use: the rule names the prefix" \
	    "$(last_review 'r["rule"]')" "socket-dir-erofs:tmux"
	check "tmux's first use: the separator says why" grep -q \
	    'host-IPC retry: the sandboxed attempt exited 1 where tmux could not make its socket directory' "$T/x1.err"
	check "tmux's first use: the retry ran on the host (made the directory)" \
	    test -d "$T/tmuxdir/tmux-$(id -u)"
	eq "tmux's first use: both attempts' output" "$(cat "$T/x1.out")" \
	    "allowed
allowed"
	TMUX_TMPDIR=$T/tmuxdir tmux -L pisbx-test kill-server 2>/dev/null
	rm -rf "$T/tmuxdir/tmux-$(id -u)"
	r0=$(reviews)
	TMUX_TMPDIR=$T/tmuxdir run "$T/tmux.json" -c \
	    'echo allowed; tmux -V; touch /usr/x' >/dev/null 2>&1
	eq "tmux ran, but another file was read-only: no review" \
	    "$(reviews)" "$r0"
	TMUX_TMPDIR=$T/tmuxdir run "$T/plain.json" -c 'tmux -L pisbx-test ls' \
	    >/dev/null 2>"$T/x2.err"
	check "without hostIPC, a failed tmux names the setting" grep -qF \
	    'pisbx: tmux works through its server'"'"'s Unix socket on the host, which the sandbox refuses (a tmux started inside runs a server of its own, in $TMUX_TMPDIR, which is the run'"'"'s TMPDIR, and ends with the run); to run it on the host after a review, set "hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["tmux"], "retryOnUnixSocketError": true} and a reviewer in '"$T/plain.json" "$T/x2.err"
	TMUX_TMPDIR=$T/tmuxdir run "$T/plain.json" -c 'echo tmux' \
	    >/dev/null 2>"$T/x3.err"
	check "not after a success" sh -c "! grep -q 'pisbx: tmux' '$T/x3.err'"
	TMUX_TMPDIR=$T/tmuxdir run "$T/uds.json" -c 'tmux -L pisbx-test ls' \
	    >/dev/null 2>"$T/x4.err"
	check "not when Unix sockets are configured" \
	    sh -c "! grep -q 'pisbx: tmux' '$T/x4.err'"
else
	echo "# tmux is not installed: its first use is not tried"
fi

# sudo and its kind: a failure says no privileges are gained inside.
mkdir -p "$T/fakebin"
printf '#!/bin/sh\necho "sudo: no valid sudoers sources found" >&2\nexit 1\n' \
    >"$T/fakebin/sudo"
chmod 755 "$T/fakebin" "$T/fakebin/sudo"
echo '{}' >"$T/none.json"
chmod 644 "$T/none.json"
PATH=$T/fakebin:$PATH run "$T/none.json" -c 'sudo -n id' >/dev/null \
    2>"$T/p1.err"
check "a failed sudo: pisbx says no privileges are gained inside" grep -qF \
    'pisbx: sudo cannot gain privileges in the sandbox (it runs with no_new_privs and no capabilities); run what needs root outside it (pisbx-run(1))' "$T/p1.err"
PATH=$T/fakebin:$PATH run "$T/none.json" -c 'sudo -n id || true' \
    >/dev/null 2>"$T/p2.err"
check "not after a success" sh -c "! grep -q 'pisbx: sudo' '$T/p2.err'"
PATH=$T/fakebin:$PATH run "$T/none.json" -c 'echo pseudo; exit 1' \
    >/dev/null 2>"$T/p3.err"
check "nor for a word that only holds sudo" \
    sh -c "! grep -q 'pisbx: ' '$T/p3.err'"

# Supervisor mode: host-IPC reviews go to the supervisor.
tsup --hostipc allow
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock PISBX_SUPERVISOR_CAPABILITY=$CAP \
    "$RUN" --config "$T/c.json" -- hostcat "$T/host.sock" allowed) \
    >"$T/s1.out" 2>&1
eq "supervisor: allowed, exit 0" $? 0
check "supervisor: ran on the host" grep -q pong-from-host "$T/s1.out"
check "supervisor: the review went there, with the worker's id" $PY -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["type"] for r in rs] == ["register", "host-ipc", "unregister"], rs
h = rs[1]
assert h["workerId"] == rs[0]["workerId"] and h["capability_ok"], h
assert h["rule"] == "preflight-prefix:hostcat" and h["operation"] == "execute-host"
' "$T/sup.rec"
eq "supervisor: the config's reviewer was not asked" "$(reviews)" "$r0"
stop_tsup
tsup --hostipc deny
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock PISBX_SUPERVISOR_CAPABILITY=$CAP \
    "$RUN" --config "$T/c.json" -- hostcat "$T/host.sock" allowed) \
    >"$T/s2.out" 2>&1
eq "supervisor: denied, exit 1" $? 1
check "supervisor: the supervisor's reason" grep -q \
    'host-IPC execution denied: scripted host-ipc deny' "$T/s2.out"
check "supervisor: unregistered after a denied preflight" \
    [ "$(rec_count unregister)" -eq 1 ]
stop_tsup

# A retry after a git init at the project directory: the sandbox's
# repository, with a core.fsmonitor, is moved aside as soon as the
# sandbox ends; the host run's own git init and setting (approved) are
# the user's and stay.
if command -v git >/dev/null 2>&1; then
	WS=$T/ws-git
	mkdir -p "$WS"
	run "$T/c.json" -c "git init -q && git config core.fsmonitor true &&
	    /usr/bin/python3 '$T/bin/hostcat' '$T/host.sock' allowed" \
	    >"$T/g.out" 2>"$T/g.err"
	eq "git init, retried on the host: the host run's status" $? 0
	check "... the sandbox's repository was moved aside, and said" grep -q \
	    "made a git repository at the project directory" "$T/g.err"
	eq "... one repository held" \
	    "$(ls -d "$WS"/.git.pisbx-held-* 2>/dev/null | wc -l | tr -d ' ')" 1
	check "... the host run's own repository stays" test -d "$WS/.git"
	eq "... with the setting the host run made" \
	    "$(git -C "$WS" config core.fsmonitor)" true
fi
done_testing
