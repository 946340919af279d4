#!/bin/sh
# pisbx-run where a container refuses namespaces, without a container
# runtime: tests/helpers/container confines pisbx-run as Docker's default
# profile does a container without capabilities (no capability, no_new_privs,
# moby's seccomp profile: no unshare, no clone with namespace flags, no
# mount, no setns, no pidfd_getfd).  pisbx-run then confines the command
# without namespaces and says so: the proxy is its one way out (an
# allowed host works, a denied one gets 403); direct TCP to the host's
# loopback (every listening port, the proxy's real ports too, ::1,
# 0.0.0.0, an IPv4-mapped address, TCP fast open), UDP, raw, packet and
# netlink sockets, a TCP bind or listen, the host's abstract and
# filesystem Unix sockets, signals and ptrace to a process outside, its
# /proc/PID/environ and /proc/PID/root, hidden files, writes outside
# the workspace and removing a protected name are refused; processes left behind are killed; a socket
# inherited from the caller does not get in; --require-namespaces and
# requireNamespaces refuse to run.  Outside the helper, -v says the
# namespaces were made.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

CONTAINER=$PISBX_BUILD/tests/helpers/container
[ -x "$CONTAINER" ] || skip "container helper not built ($CONTAINER): make tests-build"
"$CONTAINER" --check >"$T/check" 2>&1 ||
    skip "the container helper's confinement does not hold here: $(tr '\n' ' ' <"$T/check")"
ok "the helper refuses what a container refuses ($(tr '\n' ' ' <"$T/check" | head -c 120))"

# csbx [options] -- CMD: pisbx-run under the helper, as sbx; with
# CONTAINER_OPTS=--ptrace-calls, the profile of a container granted
# CAP_SYS_PTRACE (the guard can borrow the command's sockets).
CONTAINER_OPTS=
csbx() {
	# shellcheck disable=SC2086
	(cd "$WS" && "$CONTAINER" $CONTAINER_OPTS "$RUN" --config "$CONF" \
	    --access-log "$PX_LOG" "$@")
}

srv_start http web
WEB=$SRV_PORT
run_config --allow "allowed.test" --deny "denied.test"

# The mode, and what an allowed host gets through the proxy.
body=$(csbx -- curl -s -m 10 "http://allowed.test:$WEB/hello" 2>"$T/err")
rc=$?
if grep -q "needs Landlock ABI" "$T/err"; then
	eq "without Landlock ABI 6 nothing runs" "$rc" 125
	skip "this kernel's Landlock lacks ABI 6: $(head -c 200 "$T/err")"
fi
contains "one line names the mode" "$(cat "$T/err")" "no namespaces here"
contains "... and what is weaker" "$(cat "$T/err")" "weaker than with namespaces"
eq "the start line is one line" "$(grep -c 'no namespaces here' "$T/err")" 1
contains "allowed host through the proxy (HTTP forward)" "$body" '"path": "/hello"'
check_log "allow record" event=decision proto=http host=allowed.test decision=allow
body=$(csbx -- curl -s -m 10 -p "http://allowed.test:$WEB/tunnel" 2>/dev/null)
contains "allowed host through the proxy (CONNECT)" "$body" '"path": "/tunnel"'
body=$(csbx -- curl -s -m 10 -x socks5h://127.0.0.1:1080 "http://allowed.test:$WEB/socks" 2>/dev/null)
contains "allowed host through the proxy (SOCKS5)" "$body" '"path": "/socks"'
code=$(csbx -- curl -s -o /dev/null -w '%{http_code}' -m 10 "http://denied.test:$WEB/" 2>/dev/null)
eq "denied host gets 403" "$code" 403
check_log "deny record" event=decision host=denied.test decision=deny

# Host listeners: every accepted connection or datagram is recorded.
HITS=$T/hits
: >"$HITS"
chmod 666 "$HITS"
ABSTRACT="pisbx-ctr-$$"
cat >"$T/listen.py" <<'EOF'
import os, select, socket, sys
portfile, hits, upath, abstract = sys.argv[1:5]
socks = []
t4 = socket.socket(); t4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t4.bind(("127.0.0.1", 0)); t4.listen(16); socks.append(("tcp4", t4))
ta = socket.socket(); ta.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ta.bind(("0.0.0.0", 0)); ta.listen(16); socks.append(("tcpany", ta))
t6 = socket.socket(socket.AF_INET6); t6.bind(("::", 0)); t6.listen(16)
socks.append(("tcp6", t6))
u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u4.bind(("127.0.0.1", 0))
socks.append(("udp4", u4))
us = socket.socket(socket.AF_UNIX); us.bind(upath); us.listen(16)
os.chmod(upath, 0o777); socks.append(("unix", us))
ab = socket.socket(socket.AF_UNIX); ab.bind("\0" + abstract); ab.listen(16)
socks.append(("abstract", ab))
with open(portfile + ".tmp", "w") as f:
    f.write("%d %d %d %d\n" % (t4.getsockname()[1], ta.getsockname()[1],
                               t6.getsockname()[1], u4.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
while True:
    r, _, _ = select.select([s for _, s in socks], [], [])
    for name, s in socks:
        if s in r:
            if s.type == socket.SOCK_DGRAM:
                s.recvfrom(2048)
            else:
                c, _ = s.accept(); c.close()
            with open(hits, "a") as f:
                f.write(name + "\n")
EOF
spawn "$PY" "$T/listen.py" "$T/listen.ports" "$HITS" "$T/host.sock" "$ABSTRACT" \
    2>"$T/listen.err"
wait_file "$T/listen.ports" 200 || { not_ok "host listeners: $(cat "$T/listen.err")"; done_testing; }
read -r TCP4 TCPANY TCP6 UDP4 <"$T/listen.ports"
check "host TCP listener reachable from the host" \
    "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $TCP4), 2).close()"
i=0; while [ ! -s "$HITS" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "host listener records hits" grep -q tcp4 "$HITS"
: >"$HITS"
# A process of the same user outside the sandbox.
spawn sleep 300
OUTSIDE=$LAST_PID

# probe NAME PYTHON: the snippet must raise inside; prints the exception.
probe() {
	_name=$1
	csbx -- "$PY" -c "
import socket, sys, errno, os, ctypes
libc = ctypes.CDLL(None, use_errno=True)
def sysfail(r):
    if r < 0:
        e = ctypes.get_errno(); raise OSError(e, errno.errorcode.get(e, '?'))
try:
$2
except OSError as e:
    print('refused', e.errno, e); sys.exit(0)
print('ESCAPED'); sys.exit(1)" >"$T/probe.out" 2>&1
	if [ $? -eq 0 ] && grep -q '^refused' "$T/probe.out"; then
		ok "$_name refused ($(sed -n 's/^refused [0-9]* //p' "$T/probe.out" | head -c 60))"
	else
		not_ok "$_name: $(head -c 400 "$T/probe.out")"
	fi
}

# net_walls: the network refusals, under the current profile.
net_walls() {
	probe "direct TCP to host 127.0.0.1" \
	"    socket.create_connection(('127.0.0.1', $TCP4), 2)"
	probe "direct TCP to 0.0.0.0" \
	"    socket.create_connection(('0.0.0.0', $TCPANY), 2)"
	probe "direct TCP to 127.0.0.2" \
	"    socket.create_connection(('127.0.0.2', $TCPANY), 2)"
	probe "direct TCP to ::1" \
	"    socket.create_connection(('::1', $TCP6), 2)"
	probe "direct TCP to ::ffff:127.0.0.1" \
	"    s = socket.socket(socket.AF_INET6); s.connect(('::ffff:127.0.0.1', $TCP4))"
	probe "the proxy's port on ::ffff:127.0.0.1" \
	"    s = socket.socket(socket.AF_INET6); s.connect(('::ffff:127.0.0.1', 3128))"
	probe "the proxy's port on 127.0.0.2" \
	"    socket.create_connection(('127.0.0.2', 3128), 2)"
	probe "every listening TCP port of the host (the proxy's real ones too)" \
	"    ports = set()
    for tab in ('/proc/net/tcp', '/proc/net/tcp6'):
        for line in open(tab).read().splitlines()[1:]:
            f = line.split()
            if f[3] == '0A': ports.add(int(f[1].split(':')[1], 16))
    ports.discard(3128); ports.discard(1080)
    assert $TCP4 in ports, 'the host listener is not listed'
    ok = []
    for p in sorted(ports):
        try:
            socket.create_connection(('127.0.0.1', p), 2).close(); ok.append(p)
        except OSError as e:
            if e.errno != errno.EPERM: ok.append((p, e.errno))
    if ok: print('reached', ok); sys.exit(1)
    raise OSError(errno.EPERM, 'all %d refused' % len(ports))"
	probe "TCP fast open to the host (sendto MSG_FASTOPEN)" \
	"    s = socket.socket()
    s.sendto(b'GET / HTTP/1.0\r\n\r\n', socket.MSG_FASTOPEN, ('127.0.0.1', $TCP4))"
	probe "UDP socket" \
	"    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
	probe "UDP6 socket" \
	"    socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)"
	probe "raw ICMP socket" \
	"    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)"
	probe "SCTP stream socket (connects by setsockopt)" \
	"    socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)"
	probe "packet socket" \
	"    socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)"
	probe "netlink socket" \
	"    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)"
	probe "TCP bind on the host's loopback" \
	"    s = socket.socket(); s.bind(('127.0.0.1', 0))"
	probe "TCP listen (an unbound socket binds a port)" \
	"    s = socket.socket(); s.listen(1)"
	probe "abstract Unix socket of a host process" \
	"    s = socket.socket(socket.AF_UNIX); s.connect('\0$ABSTRACT')"
	probe "filesystem Unix socket outside the policy" \
	"    s = socket.socket(socket.AF_UNIX); s.connect('$T/host.sock')"
}
net_walls
probe "kill a process of the same user outside" \
"    os.kill($OUTSIDE, 15)"
probe "kill the sandbox's reaper" \
"    os.kill(os.getppid(), 9)"
probe "ptrace a process outside" \
"    sysfail(libc.ptrace(16, $OUTSIDE, None, None))"
probe "process_vm_readv of a process outside" \
"    import ctypes as c
    class iov(c.Structure): _fields_ = [('b', c.c_void_p), ('l', c.c_size_t)]
    buf = c.create_string_buffer(8); l = iov(c.addressof(buf), 8); r = iov(0x400000, 8)
    sysfail(libc.process_vm_readv($OUTSIDE, c.byref(l), 1, c.byref(r), 1, 0))"
probe "/proc/PID/environ of a process outside" \
"    open('/proc/$OUTSIDE/environ').read()"
probe "/proc/PID/root of a process outside" \
"    os.listdir('/proc/$OUTSIDE/root/')"
probe "/proc/PID/mem of a process outside" \
"    open('/proc/$OUTSIDE/mem', 'rb')"
probe "a hidden file (~/.ssh/id_test)" \
"    open('$FAKEHOME/.ssh/id_test').read()"
probe "a write outside the workspace" \
"    open('$T/outside', 'w').write('x')"
check "the process outside is alive" alive "$OUTSIDE"
check "nothing was written outside" test ! -e "$T/outside"
csbx -- cat "$FAKEHOME/.ssh/id_test" >"$T/out" 2>&1
check "the hidden key is not shown" sh -c "! grep -q 'PRIVATE KEY' '$T/out'"
# A settings file shown filtered with namespaces: nothing stands in for
# it here, and the original holds what the copy leaves out.
printf 'registry=https://registry.example/\n//registry.example/:_authToken=npm-SECRET-TOKEN\n' >"$FAKEHOME/.npmrc"
chmod 644 "$FAKEHOME/.npmrc"
csbx -- cat "$FAKEHOME/.npmrc" >"$T/out" 2>&1
check "the original of a filtered copy (~/.npmrc) is not shown" \
    sh -c "! grep -q 'SECRET-TOKEN' '$T/out'"
contains "... it is refused" "$(cat "$T/out")" "Permission denied"

# What works: the workspace, Unix sockets made inside, a pipe.
csbx -- /bin/sh -c 'echo inside >made && cat made' >"$T/out" 2>/dev/null
eq "the workspace is writable" "$(cat "$T/out")" inside
check "... and the file is there" test -s "$WS/made"
# A protected name cannot be removed (no read-only bind keeps it here).
echo "original rc" >"$WS/.bashrc"
chmod 666 "$WS/.bashrc"
csbx -- /bin/sh -c 'rm -f .bashrc; echo x >t && rm t && mkdir d && rmdir d && echo removed' >"$T/out" 2>&1
eq ".bashrc is still there" "$(cat "$WS/.bashrc")" "original rc"
contains "... and its removal was refused" "$(cat "$T/out")" "refused to remove"
contains "what the command made it removes" "$(cat "$T/out")" "removed"
check "... and it is gone" test ! -e "$WS/t" -a ! -e "$WS/d"
check "socketpair(AF_UNIX) works" \
    csbx -- "$PY" -c "import socket; a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'"

# Shell-level clients.
csbx -- curl -s -m 3 --noproxy '*' "http://127.0.0.1:$TCP4/" >"$T/out" 2>&1
rc=$?
check "curl --noproxy '*' to the host fails (exit $rc)" test $rc -ne 0
contains "... and the refusal says why" "$(cat "$T/out")" "one way out is the proxy"
if [ -x /bin/bash ]; then
	csbx -- /bin/bash -c "exec 3<>/dev/tcp/127.0.0.1/$TCP4" >"$T/out" 2>&1
	rc=$?
	check "bash /dev/tcp to the host fails (exit $rc)" test $rc -ne 0
fi
code=$(csbx -- curl -s --noproxy '' -o /dev/null -w '%{http_code}' -m 5 "http://127.0.0.1:$TCP4/" 2>/dev/null)
eq "the proxy refuses the host's loopback by literal" "$code" 403

# Nothing reached the host.
sleep 0.3
eq "no host listener was reached" "$(sort -u "$HITS" | tr '\n' ' ')" ""

# A socket the caller holds (connected here, outside) does not get in.
if [ -x /bin/bash ]; then
	/bin/bash -c "exec 7<>/dev/tcp/127.0.0.1/$TCP4; cd '$WS' && '$CONTAINER' '$RUN' --config '$CONF' -- ls /proc/self/fd" >"$T/out" 2>/dev/null
	check "an inherited socket is closed" sh -c "! grep -qx 7 '$T/out'"
	check "... and the listing ran" grep -qx 0 "$T/out"
fi

# Processes the command leaves behind die with the run; a timeout too.
csbx -- /bin/sh -c "sleep 300 >/dev/null 2>&1 & echo \$! >'$WS/bg'" 2>/dev/null
bg=$(cat "$WS/bg" 2>/dev/null)
if [ -n "$bg" ] && wait_gone "$bg"; then ok "a background process is killed at exit"
else not_ok "a background process is killed at exit (pid $bg)"; fi
csbx --timeout 1 -- /bin/sh -c "sleep 300 >/dev/null 2>&1 & echo \$! >'$WS/bg2'; sleep 300" 2>/dev/null
eq "--timeout ends the run (124)" "$?" 124
bg=$(cat "$WS/bg2" 2>/dev/null)
if [ -n "$bg" ] && wait_gone "$bg"; then ok "... and kills what the command started"
else not_ok "... and kills what the command started (pid $bg)"; fi

# A profile that lets the guard borrow the command's sockets: the same
# walls, performed on the command's own socket; and what Docker's
# default profile refuses works here (a Unix server of the command's,
# descriptor passing, a datagram by address).
CONTAINER_OPTS=--ptrace-calls
: >"$HITS"
body=$(csbx -- curl -s -m 10 "http://allowed.test:$WEB/ptrace" 2>/dev/null)
contains "ptrace calls: allowed host through the proxy" "$body" '"path": "/ptrace"'
code=$(csbx -- curl -s -o /dev/null -w '%{http_code}' -m 10 "http://denied.test:$WEB/" 2>/dev/null)
eq "ptrace calls: denied host gets 403" "$code" 403
net_walls
csbx -- "$PY" -c "
import os, socket, array
p = os.path.join(os.getcwd(), 'own.sock')
srv = socket.socket(socket.AF_UNIX); srv.bind(p); srv.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(p); a, _ = srv.accept()
r, w = os.pipe()
c.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [r]))])
msg, anc, _, _ = a.recvmsg(1, socket.CMSG_SPACE(4))
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind(p + '.d')
e = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); e.sendto(b'dg', p + '.d')
print('own', msg.decode(), len(anc), d.recv(2).decode())
" >"$T/out" 2>&1
contains "ptrace calls: a Unix server, SCM_RIGHTS and a datagram of the command's" \
    "$(cat "$T/out")" "own x 1 dg"
sleep 0.3
eq "ptrace calls: no host listener was reached" "$(sort -u "$HITS" | tr '\n' ' ')" ""
CONTAINER_OPTS=

# A hidden path keeps its name and its contents: hiding finds it by name
# when a run starts, so under a new one (renamed, hard-linked, its
# directory renamed) the next run would read it; nor is it removed,
# written or made in (with namespaces it is an empty read-only stand-in).
mkdir -p "$WS/hid/deep" "$WS/keep"; : >"$WS/keep/other"
echo SECRET-ENV >"$WS/.env"
echo SECRET-DIR >"$WS/hid/deep/key"
echo SECRET-NEST >"$WS/keep/nest.env"
run_config --allow "allowed.test" \
    --fs '{"denyRead": [".env", "hid", "keep/nest.env"]}'
for c in "mv .env env-moved" "ln .env env-linked" "mv hid hid-moved" \
    "mv keep keep-moved" "rm -f .env" "rm -rf hid" \
    "$PY -c \"import os; os.rename('.env', 'env-py')\"" \
    "$PY -c \"import ctypes, os; fd = os.open('.env', os.O_PATH); l = ctypes.CDLL(None); l.linkat(fd, b'', -100, b'env-fd', 0x1000)\"" \
    "$PY -c \"import ctypes; l = ctypes.CDLL(None); l.renameat2(-100, b'hid', -100, b'keep', 2)\"" \
    "echo planted >>.env" "echo planted >.env" "truncate -s 0 hid/deep/key" \
    "echo planted >hid/new" "mkdir hid/newdir" "ln -s x hid/sym" \
    "$PY -c \"import os; os.truncate('keep/nest.env', 0)\""; do
	csbx -- /bin/sh -c "$c" >"$T/out" 2>&1
	contains "hidden: '$c' is refused" "$(cat "$T/out")" "is hidden"
done
eq "hidden: the hidden files are unchanged" \
    "$(cat "$WS/.env" "$WS/hid/deep/key" "$WS/keep/nest.env" | tr '\n' ' ')" \
    "SECRET-ENV SECRET-DIR SECRET-NEST "
eq "hidden: nothing was made in a hidden directory" "$(ls "$WS/hid" | tr '\n' ' ')" "deep "
csbx -- /bin/sh -c 'cat env-moved env-linked env-py env-fd hid-moved/deep/key keep-moved/nest.env keep/deep/key hid/nest.env .env' >"$T/out" 2>&1
check "hidden: the next run reads no secret ($(grep -c SECRET "$T/out") read)" \
    sh -c "! grep -q SECRET '$T/out'"
csbx -- /bin/sh -c 'mv keep/other keep/other2 && ls keep' >"$T/out" 2>&1
contains "hidden: a rename beside a hidden path works" "$(cat "$T/out")" "other2"

# Refuse instead: the option and the config key.
csbx --require-namespaces -- /bin/sh -c "touch '$WS/ran1'" >"$T/out" 2>&1
eq "--require-namespaces refuses (125)" "$?" 125
contains "... and says so" "$(cat "$T/out")" "requireNamespaces is set"
check "... and nothing ran" test ! -e "$WS/ran1"
run_config --allow "allowed.test" --top '{"requireNamespaces": true}'
csbx -- /bin/sh -c "touch '$WS/ran2'" >"$T/out" 2>&1
eq "requireNamespaces refuses (125)" "$?" 125
contains "... and names the fix" "$(cat "$T/out")" "namespaces are not permitted here"
check "... and nothing ran" test ! -e "$WS/ran2"
run_config --allow "allowed.test" --top '{"requireNamespaces": true, "enableWeakerNestedSandbox": true}'
csbx -- /bin/true >"$T/out" 2>&1
eq "requireNamespaces with enableWeakerNestedSandbox is a config error" "$?" 78

# Where namespaces can be made, -v says so, and the mode line is absent.
run_config --allow "allowed.test" --top '{"requireNamespaces": true}'
sbx -v -- /bin/true >"$T/out" 2>&1
eq "with namespaces the run succeeds" "$?" 0
contains "-v says the namespaces were made" "$(cat "$T/out")" "network, mount, PID and IPC made"
check "no mode line with namespaces" sh -c "! grep -q 'no namespaces here' '$T/out'"
done_testing
