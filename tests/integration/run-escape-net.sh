#!/bin/sh
# Network escapes from the sandbox, each refused inside and each checked
# on the host side too: nothing reached the test's own listeners on the
# host's loopback (127.0.0.1 / ::1 only).  TCP direct, curl --noproxy,
# bash /dev/tcp, IPv6, UDP, DNS to a host dnsmasq, raw and packet sockets,
# an abstract and a filesystem Unix socket, AF_VSOCK, io_uring, TIOCSTI.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

# Host listeners: every accepted connection or datagram is recorded.
HITS=$T/hits
: >"$HITS"
chmod 666 "$HITS"
ABSTRACT="pisbx-test-$$"
cat >"$T/listen.py" <<'EOF'
import os, select, socket, sys
portfile, hits, upath, abstract = sys.argv[1:5]
socks = []
t4 = socket.socket(); t4.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t4.bind(("127.0.0.1", 0)); t4.listen(16); socks.append(("tcp4", t4))
t6 = socket.socket(socket.AF_INET6); t6.bind(("::1", 0)); t6.listen(16)
socks.append(("tcp6", t6))
u4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u4.bind(("127.0.0.1", 0))
socks.append(("udp4", u4))
us = socket.socket(socket.AF_UNIX); us.bind(upath); us.listen(16)
os.chmod(upath, 0o777); socks.append(("unix", us))
ab = socket.socket(socket.AF_UNIX); ab.bind("\0" + abstract); ab.listen(16)
socks.append(("abstract", ab))
with open(portfile + ".tmp", "w") as f:
    f.write("%d %d %d\n" % (t4.getsockname()[1], t6.getsockname()[1],
                            u4.getsockname()[1]))
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
read -r TCP4 TCP6 UDP4 <"$T/listen.ports"
dns_start escape.test=127.0.0.1
run_config

# The host listeners work from the host (so a refusal below means something).
check "host TCP listener reachable from the host" \
    "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $TCP4), 2).close()"
i=0; while [ ! -s "$HITS" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "host listener records hits" grep -q tcp4 "$HITS"
: >"$HITS"

# probe NAME PYTHON: the snippet must raise inside; prints the exception.
probe() {
	_name=$1
	sbx -- "$PY" -c "
import socket, sys, errno
try:
$2
except OSError as e:
    print('refused', e.errno, e); sys.exit(0)
print('ESCAPED'); sys.exit(1)" >"$T/probe.out" 2>&1
	if [ $? -eq 0 ] && grep -q '^refused' "$T/probe.out"; then
		ok "$_name refused inside ($(sed -n 's/^refused [0-9]* //p' "$T/probe.out" | head -c 60))"
	else
		not_ok "$_name: $(cat "$T/probe.out" | head -c 300)"
	fi
}

probe "direct TCP to host 127.0.0.1" \
"    socket.create_connection(('127.0.0.1', $TCP4), 2)"
probe "direct TCP to host ::1" \
"    socket.create_connection(('::1', $TCP6), 2)"
probe "UDP to host 127.0.0.1 (connected socket)" \
"    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(('127.0.0.1', $UDP4))
    for i in range(5): s.send(b'x')
    s.settimeout(1); s.recv(10)"
probe "DNS query to the host's dnsmasq" \
"    q = b'\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x06escape\x04test\x00\x00\x01\x00\x01'
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    s.sendto(q, ('127.0.0.1', $DNS_PORT)); s.recvfrom(512)"
probe "raw ICMP socket" \
"    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)"
probe "packet socket" \
"    socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)"
probe "abstract Unix socket of a host process" \
"    s = socket.socket(socket.AF_UNIX); s.connect('\0$ABSTRACT')"
probe "filesystem Unix socket the host listens on" \
"    s = socket.socket(socket.AF_UNIX); s.connect('$T/host.sock')"
probe "AF_VSOCK" \
"    socket.socket(40, socket.SOCK_STREAM)"
probe "io_uring_setup" \
"    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(120)
    if libc.syscall(425, 4, buf) < 0:
        e = ctypes.get_errno(); raise OSError(e, errno.errorcode.get(e, '?'))"
probe "TIOCSTI (push input into a terminal)" \
"    import fcntl, termios
    fd = open('/dev/null', 'rb')
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b'x')
    except OSError as e:
        if e.errno == errno.EPERM: raise
        print('ioctl reached the driver:', e); sys.exit(1)"
probe "mount(2)" \
"    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) < 0:
        e = ctypes.get_errno(); raise OSError(e, errno.errorcode.get(e, '?'))"
check "socketpair(AF_UNIX) still works" \
    sbx -- "$PY" -c "import socket; a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'"

# With allowAllUnixSockets the abstract socket is still out of reach: it
# belongs to the host's network namespace.
run_config --net '{"allowAllUnixSockets": true}'
probe "abstract Unix socket, allowAllUnixSockets" \
"    s = socket.socket(socket.AF_UNIX); s.connect('\0$ABSTRACT')"
run_config

# Shell-level clients.
sbx -- curl -s -m 3 --noproxy '*' "http://127.0.0.1:$TCP4/" >"$T/out" 2>&1
rc=$?
check "curl --noproxy '*' to the host fails (exit $rc)" test $rc -ne 0
if [ -x /bin/bash ]; then
	sbx -- /bin/bash -c "exec 3<>/dev/tcp/127.0.0.1/$TCP4" >"$T/out" 2>&1
	rc=$?
	check "bash /dev/tcp to the host fails (exit $rc)" test $rc -ne 0
fi
# Through the proxy, a loopback literal nobody allowed is refused.
code=$(sbx -- curl -s --noproxy '' -o /dev/null -w '%{http_code}' -m 5 "http://127.0.0.1:$TCP4/")
eq "proxy refuses the host's loopback by literal" "$code" 403
code=$(sbx -- curl -s --noproxy '' -o /dev/null -w '%{http_code}' -m 5 "http://localhost:$TCP4/")
eq "proxy refuses localhost" "$code" 403

# Nothing reached the host.
sleep 0.3
eq "no host listener was reached" "$(sort -u "$HITS" | tr '\n' ' ')" ""
check "dnsmasq saw no query" sh -c "! dns_asked escape.test 2>/dev/null && ! grep -q 'escape.test' '$T/dnsmasq.log'"
done_testing
