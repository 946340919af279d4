#!/bin/sh
# Failures that used to say nothing now say the one line that helps,
# without changing what is allowed:
#   - a TCP connect to the sandbox's own loopback (a dev server on
#     127.0.0.1:PORT, localhost:PORT) that nothing inside answered names
#     host.pisbx.internal:PORT and the exact allow entry, once per port,
#     for a non-blocking connect (curl) and a blocking one (python); a
#     server inside the sandbox is not mentioned; with the entry in the
#     config, the line says to use the name, and the name works;
#   - a write to the read-only /tmp or /var/tmp names $TMPDIR and the
#     allowWrite line; tmux works inside (TMUX_TMPDIR is the run's
#     TMPDIR), unless the config lets commands reach host sockets;
#   - under pisbx-sh, every line is signed pisbx-sh and no line offers
#     --quiet or --report, which the model cannot pass;
#   - a denyWrite name that does not exist yet (.env) is no -v warning.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

SH=$PISBX_BINDIR/pisbx-sh
srv_start http web
WEB=$SRV_PORT
PY_IN=/usr/bin/python3
[ -x "$PY_IN" ] || skip "no /usr/bin/python3 for the blocking connect"
DEAD=$(free_port)

# 1. The host's dev server, asked for at the sandbox's loopback.
run_config --allow "allowed.test"
sbx --report "$T/r1.json" -- sh -c "
curl -sS -o /dev/null http://127.0.0.1:$WEB/
curl -sS -o /dev/null http://localhost:$WEB/
curl -sS -o /dev/null http://127.0.0.1:$WEB/again
$PY_IN -c 'import socket; socket.create_connection((\"127.0.0.1\", $DEAD))' 2>/dev/null
echo ran" >"$T/l1.out" 2>"$T/l1.err"
eq "the command ran to its end" "$(cat "$T/l1.out")" ran
contains "curl still fails as before" "$(cat "$T/l1.err")" \
    "Failed to connect to 127.0.0.1 port $WEB"
contains "the summary names host.pisbx.internal and the entry (curl)" \
    "$(cat "$T/l1.err")" \
    "  tcp 127.0.0.1:$WEB (sandbox-loopback): nothing listens on port $WEB inside the sandbox, whose loopback is its own; a server on this machine is host.pisbx.internal:$WEB inside; to allow it, add \"host.pisbx.internal:$WEB\" to network.allowedDomains in $CONF"
eq "... once for the port, whatever the name and the tries" \
    "$(grep -c "sandbox-loopback): nothing listens on port $WEB " "$T/l1.err")" 1
contains "a blocking connect (python) is named too" "$(cat "$T/l1.err")" \
    "  tcp 127.0.0.1:$DEAD (sandbox-loopback): nothing listens on port $DEAD inside"
contains "under the heading of what could not be reached" \
    "$(cat "$T/l1.err")" "pisbx-run: allowed, but could not be reached (--quiet hides this):"
"$PY" - "$T/r1.json" "$WEB" "$CONF" >"$T/r1.check" 2>&1 <<'EOF'
import json, sys
items = json.load(open(sys.argv[1]))
port = int(sys.argv[2])
got = [i for i in items if i.get("reason") == "sandbox-loopback" and
       i.get("port") == port]
assert len(got) == 1, items
i = got[0]
assert i["kind"] == "unreachable" and i["proto"] == "tcp", i
assert i["host"] == "127.0.0.1", i
assert i["hint"] == ('to allow it, add "host.pisbx.internal:%d" to '
                     'network.allowedDomains in %s' % (port, sys.argv[3])), i
print("ok")
EOF
eq "--report has the item, its hint the same" "$(cat "$T/r1.check")" ok

# A server the command runs inside: reached, and nothing said.
IN=$(free_port)
cat >"$WS/srv.py" <<'EOF'
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
open(os.path.join(os.environ["TMPDIR"], "ready"), "w").close()
c, _ = s.accept()
c.recv(4096)
c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
c.close()
EOF
sbx -- sh -c "$PY_IN srv.py $IN & i=0
while [ ! -e \"\$TMPDIR/ready\" ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done
curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$IN/; wait" \
    >"$T/l2.out" 2>"$T/l2.err"
rm -f "$WS/srv.py"
eq "a server inside the sandbox answers" "$(cat "$T/l2.out")" 200
check "... and its port is not named" \
    sh -c "! grep -q 'sandbox-loopback' '$T/l2.err'"

# With the entry: the line says to use the name, and the name works.
run_config --allow "host.pisbx.internal:$WEB"
sbx -- sh -c "curl -sS -o /dev/null http://127.0.0.1:$WEB/
curl -s -o /dev/null -w '%{http_code}' http://host.pisbx.internal:$WEB/" \
    >"$T/l3.out" 2>"$T/l3.err"
eq "host.pisbx.internal:PORT, allowed, reaches the host's server" \
    "$(cat "$T/l3.out")" 200
contains "the line says the name is allowed and where" "$(cat "$T/l3.err")" \
    "a server on this machine is host.pisbx.internal:$WEB inside; host.pisbx.internal:$WEB is allowed in $CONF: use that name"

# 2. /tmp and /var/tmp are read-only: say where the command can write.
run_config --allow "allowed.test"
sbx --report "$T/r2.json" -- sh -c 'echo x >/tmp/pisbx-hint.txt
mkdir /var/tmp/pisbx-hint 2>/dev/null
echo "$TMPDIR" >tmpdir.txt
echo ok >"$TMPDIR/f" && cat "$TMPDIR/f"' >"$T/t1.out" 2>"$T/t1.err"
TD=$(cat "$WS/tmpdir.txt")
rm -f "$WS/tmpdir.txt"
eq "the command's TMPDIR is writable" "$(cat "$T/t1.out")" ok
contains "the write to /tmp is said at once, with TMPDIR and the entry" \
    "$(cat "$T/t1.err")" \
    "pisbx-run: refused to create /tmp/pisbx-hint.txt: /tmp is read-only in the sandbox; write under \$TMPDIR ($TD), the command's own, or add \"/tmp\" to filesystem.allowWrite in $CONF"
contains "... after the shell's own error" "$(cat "$T/t1.err")" \
    "Read-only file system"
contains "/var/tmp alike (mkdir)" "$(cat "$T/t1.err")" \
    "pisbx-run: refused to create /var/tmp/pisbx-hint: /var/tmp is read-only in the sandbox; write under \$TMPDIR ($TD)"
contains "the summary lists it" "$(cat "$T/t1.err")" \
    "  create /tmp/pisbx-hint.txt: /tmp is read-only in the sandbox;"
check "nothing was made on the host" test ! -e /tmp/pisbx-hint.txt
"$PY" -c 'import json,sys
items = json.load(open(sys.argv[1]))
print(sum(1 for i in items if i.get("kind") == "file" and
          i.get("path") == "/tmp/pisbx-hint.txt" and
          "filesystem.allowWrite" in i.get("why", "")))' "$T/r2.json" \
    >"$T/r2.n" 2>&1
eq "--report has the /tmp item with its why" "$(cat "$T/r2.n")" 1

if command -v tmux >/dev/null 2>&1; then
	sbx -- sh -c 'tmux new-session -d -s pisbx-hint "sleep 20" && tmux ls
echo "TMUX_TMPDIR=$TMUX_TMPDIR TMPDIR=$TMPDIR"' >"$T/x1.out" 2>"$T/x1.err"
	check "tmux inside starts a session and lists it" \
	    grep -q '^pisbx-hint: 1 windows' "$T/x1.out"
	line=$(grep '^TMUX_TMPDIR=' "$T/x1.out")
	eq "TMUX_TMPDIR is the run's TMPDIR" "${line%% *}" \
	    "TMUX_TMPDIR=${line##* TMPDIR=}"
	check "... and no /tmp refusal" \
	    sh -c "! grep -q 'refused to [a-z]* /tmp' '$T/x1.err'"
	run_config --allow "allowed.test" \
	    --net '{"allowUnixSockets": ["/nonexistent/pisbx.sock"]}'
	TMUX_TMPDIR=/nonexistent/tmuxdir sbx -- sh -c 'echo "$TMUX_TMPDIR"' \
	    >"$T/x2.out" 2>&1
	eq "with allowUnixSockets, the caller's TMUX_TMPDIR is kept" \
	    "$(cat "$T/x2.out")" /nonexistent/tmuxdir
else
	echo "# tmux is not installed: its run inside is not tried"
fi

# 3. pisbx-sh: one signature, no option the model cannot pass.
run_config --allow "allowed.test"
(cd "$WS" && PISBX_CONFIG=$CONF "$SH" -c "echo x >.bashrc; curl -sS -o /dev/null http://127.0.0.1:$WEB/; exit 3") \
    >"$T/s1.out" 2>"$T/s1.err"
eq "pisbx-sh passes the exit status on" $? 3
contains "the summary is signed pisbx-sh" "$(cat "$T/s1.err")" \
    "pisbx-sh: refused during this run:"
contains "... its could-not-be-reached part too" "$(cat "$T/s1.err")" \
    "pisbx-sh: allowed, but could not be reached:"
check "no line of the result is signed pisbx-run" \
    sh -c "! grep -q 'pisbx-run:' '$T/s1.err'"
check "no line offers --quiet or --report" \
    sh -c "! grep -q -e '--quiet' -e '--report' '$T/s1.err'"
(cd "$WS" && PISBX_CONFIG=$CONF "$SH" pisbx-no-such-program arg) \
    >"$T/s2.out" 2>"$T/s2.err"
eq "a missing program: 127" $? 127
eq "... said as pisbx-sh" "$(no_asan "$T/s2.err")" \
    "pisbx-sh: pisbx-no-such-program: No such file or directory"

# 4. A denyWrite name that does not exist yet is what it protects.
run_config --allow "allowed.test" --fs '{"denyWrite": [".env", ".env.local"]}'
sbx -v -- true >"$T/e1.out" 2>&1
check "-v: no warning for a missing denyWrite name" \
    sh -c "! grep -q 'denyWrite' '$T/e1.out'"
sbx -vv -- true >"$T/e2.out" 2>&1
contains "-vv: said as a debug line" "$(cat "$T/e2.out")" \
    "fs: filesystem.denyWrite[0]: .env ($WS/.env) does not exist: commands cannot create it"
sbx -- sh -c 'echo x >.env' >"$T/e3.out" 2>&1
check "... and it is still protected" test ! -e "$WS/.env"
done_testing
