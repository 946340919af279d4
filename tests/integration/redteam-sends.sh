#!/bin/sh
# Red team: sends straight to the kernel.  By default (namespaces, no
# allowUnixSockets, no allowUnixDatagramSockets) sendmsg, sendmmsg and
# sendto are not checked; what keeps an address from leaving the sandbox
# is that the command never holds a Unix datagram socket or a socket of
# another network namespace.  Each attack below tries to break that, or
# to get bytes to a host listener (a Unix datagram and a Unix stream
# socket under $T, an abstract Unix stream name, UDP and TCP on the
# host's 127.0.0.1), which log what arrives: nothing may.
#   1. every AF_UNIX type nibble, flag, junk above 32 bits, protocol,
#      AF_LOCAL, SOCK_PACKET, for socket() and socketpair(): only stream
#      (1) and seqpacket (5) sockets are made;
#   2. the i386 (int 0x80) and x32 spellings, io_uring: killed or ENOSYS;
#   3. PID 1's sockets: pidfd_getfd, ptrace, process_vm_readv, /proc/1/fd;
#   4. sends with an address on every socket the command can make, TCP
#      fast open and netlink to the host, connects to the host;
#   5. a descriptor flipped by dup2 between a stream and a UDP socket
#      under connect and sendto;
#   6. hostile socket()/socketpair() arguments: answered, no hang;
#   7. inherited: an unconnected host TCP socket as standard input (fast
#      open would connect it to the host), an unconnected host Unix
#      stream socket (its abstract names are the host's);
#   8. allowNestedUserNamespaces, inside a nested user and network
#      namespace;
#   9. without namespaces (the container helper): datagram sockets are
#      made, and every send still checked.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

RTSEND=$PISBX_BUILD/tests/helpers/rtsend
[ -x "$RTSEND" ] || skip "rtsend helper not built ($RTSEND): make tests-build"
cp "$RTSEND" "$WS/rtsend"
chmod 755 "$WS/rtsend"

S=$T/srv
mkdir -p "$S"
chmod 755 "$S"
: >"$S/log"
ABSTRACT=rtsend-host-abstract
cat >"$T/listen.py" <<'EOF'
import os, select, socket, sys
d, ab = sys.argv[1], sys.argv[2]
u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
u.bind(d + "/host.dgram")
os.chmod(d + "/host.dgram", 0o777)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(d + "/host.stream")
os.chmod(d + "/host.stream", 0o777)
s.listen(16)
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
a.bind("\0" + ab)
a.listen(16)
# UDP and TCP on one port number: a port free for UDP may be another
# scenario's for TCP, so pairs are drawn until one binds.
for _ in range(50):
    p = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    p.bind(("127.0.0.1", 0))
    port = p.getsockname()[1]
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.setsockopt(socket.IPPROTO_TCP, 23, 16)	# TCP_FASTOPEN: data in SYNs
    try:
        t.bind(("127.0.0.1", port))
        break
    except OSError:
        p.close()
        t.close()
t.listen(16)
with open(d + "/port.tmp", "w") as f:
    f.write(str(port))
os.rename(d + "/port.tmp", d + "/port")
names = {u: "dgram", s: "ustream", a: "abstract", p: "udp", t: "tcp"}
conns = {}

def log(what, data):
    with open(d + "/log", "a") as f:
        f.write("%s %s\n" % (what, data.decode(errors="replace")))

while True:
    for x in select.select(list(names) + list(conns), [], [], 60)[0]:
        if x in (s, a, t):
            c, _ = x.accept()
            conns[c] = names[x]
            log(names[x], b"<connected>")
        elif x in conns:
            data = x.recv(256)
            if not data:
                del conns[x]
                x.close()
            else:
                log(conns[x], data)
        else:
            log(names[x], x.recv(256))
EOF
spawn "$PY" "$T/listen.py" "$S" "$ABSTRACT"
wait_file "$S/port" || { not_ok "host listeners did not start"; done_testing; }
PORT=$(cat "$S/port")

# nothing DESC: the listeners logged nothing since the last call.
nothing() { nothing_in "$S/log" "$1"; }

# result NAME EXPECTED: rtsend's line NAME in $T/out says EXPECTED
# (a regular expression for the whole answer).
result() {
	_got=$(sed -n "s/^$1 //p" "$T/out")
	if printf '%s\n' "$_got" | grep -Eqx -- "$2"; then
		ok "$1: $_got"
	else
		not_ok "$1: got '${_got:-nothing}', want $2"
	fi
}

# The listeners work: the host itself reaches each.
"$PY" - "$S" "$PORT" "$ABSTRACT" <<'EOF'
import socket, sys
d, port, ab = sys.argv[1], int(sys.argv[2]), sys.argv[3]
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"selftest", d + "/host.dgram")
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"selftest", ("127.0.0.1", port))
for fam, addr in ((socket.AF_UNIX, d + "/host.stream"), (socket.AF_UNIX, "\0" + ab),
                  (socket.AF_INET, ("127.0.0.1", port))):
    c = socket.socket(fam, socket.SOCK_STREAM)
    c.connect(addr)
    c.sendall(b"selftest")
    c.close()
EOF
sleep 0.5
for k in dgram udp ustream abstract tcp; do
	check "the host reaches its own $k listener" grep -qx "$k selftest" "$S/log"
done
: >"$S/log"

run_config

# 1. Every spelling of an AF_UNIX socket type.
sbx -- ./rtsend types >"$T/out" 2>"$T/err"
result end types
_made=$(grep -c ' ok:' "$T/out")
_bad=$(grep ' ok:' "$T/out" | grep -Ev '^(socket|pair)\.t[15]\.[^ ]* ok:[15]$' |
    head -n 3 | tr '\n' ' ')
eq "types: only stream and seqpacket sockets made (72 of 576)" "$_made" 72
eq "types: no socket of another type made" "$_bad" ""
check "types: every other nibble refused EPERM (or EINVAL for junk flags)" \
    sh -c "! grep -Ev ' (ok:[15]|EPERM|EINVAL)$|^end ' '$T/out' | grep -q ."
result socket.dgram.domainhi EPERM
result socket.local.dgram.typehi EPERM
result pair.raw.domainneg EPERM
result socket.packet10 EPERM
eq "types: the refusal said once on stderr" \
    "$(grep -c 'refused to make a Unix datagram socket' "$T/err")" 1
check "types: the refusal names the key and the config" \
    grep -q '"allowUnixDatagramSockets": true under "network" in '"$CONF" \
    "$T/err"

# 2. Other ABIs: i386 killed by the filter (SIGSYS) or absent from this
#    kernel (SIGSEGV), x32 killed; io_uring ENOSYS.
sbx -q -- ./rtsend compat >"$T/out" 2>&1
result end compat
result compat.i386.socketcall 'sig:(31|11)'
result compat.i386.socket 'sig:(31|11)'
result compat.x32.socket 'sig:31'
result compat.x32.socketpair 'sig:31'
result io_uring.setup ENOSYS

# 3. PID 1 (reaper and guard, holding the parent's control socket and
#    copies of the command's).
sbx -q -- ./rtsend steal >"$T/out" 2>&1
result end steal
result steal.pidfd_getfd EPERM
result steal.ptrace_attach EPERM
result steal.ptrace_seize EPERM
result steal.process_vm_readv EPERM
result steal.proc1fd 'EACCES|EPERM'

# 4. Sends with an address, on every socket the command can make.
: >"$S/log"
sbx -q -- ./rtsend sends "$S" "$PORT" >"$T/out" 2>&1
result end sends
result send.dgram.host EPERM
result send.stream.unconnected EOPNOTSUPP
result send.stream.pair EISCONN
result send.seqpacket.unconnected ENOTCONN
result send.seqpacket.pair ok
result send.seqpacket.abstract ENOTCONN
result sendmsg.stream EOPNOTSUPP
result connect.stream.host EPERM
result connect.stream.abstract ECONNREFUSED
result send.udp.loopback ok
result send.udp6.mapped ok
result send.tcp.fastopen 'ECONNREFUSED|EINPROGRESS'
result connect.tcp.loopback ECONNREFUSED
result send.netlink.pid1 'EPERM|ECONNREFUSED'
nothing "sends: nothing reached a host listener"

# 5. dup2 races under connect and sendto.
sbx -q -- ./rtsend race "$S" >"$T/out" 2>&1
result end race
result race.connect none
result race.sendto none
nothing "race: nothing reached a host listener"

# 6. Hostile arguments: answered (EPERM), the run ends.
timeout 60 sh -c 'cd "$1" && "$2" --config "$3" -q -- ./rtsend hostile' \
    sh "$WS" "$RUN" "$CONF" >"$T/out" 2>&1
result end hostile
for c in pair.badptr pair.null pair.allones socket.allones socket.bigtype; do
	result "hostile.$c" EPERM
done

# 7. Inherited host sockets that a datagram-only check would miss.
cat >"$T/inherit.py" <<'EOF'
import socket, subprocess, sys
run, conf, ws, which, port, ab = sys.argv[1:7]
if which == "tcp":
    h = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    code = ("import errno, socket, sys\n"
            "s = socket.socket(fileno=0)\n"
            "try:\n"
            "    s.sendto(b'leak-fastopen', 0x20000000, ('127.0.0.1', %s))\n"
            "    r = 'ok'\n"
            "except OSError as e:\n"
            "    r = errno.errorcode[e.errno]\n"
            "sys.stderr.write('inherited-tcp ' + r + '\\n')\n") % port
else:
    h = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    code = ("import errno, socket, sys\n"
            "s = socket.socket(fileno=0)\n"
            "try:\n"
            "    s.connect('\\0%s')\n"
            "    s.send(b'leak-abstract')\n"
            "    r = 'ok'\n"
            "except OSError as e:\n"
            "    r = errno.errorcode[e.errno]\n"
            "sys.stderr.write('inherited-unix ' + r + '\\n')\n") % ab
p = subprocess.run([run, "-v", "--config", conf, "--", sys.executable,
                    "-c", code], cwd=ws, timeout=60, stdin=h,
                   stderr=subprocess.PIPE)
sys.stdout.write(p.stderr.decode(errors="replace"))
EOF
chmod 644 "$T/inherit.py"
"$PY" "$T/inherit.py" "$RUN" "$CONF" "$WS" tcp "$PORT" "$ABSTRACT" >"$T/out" 2>&1
contains "inherited host TCP stdin: -v says the guard checks sends" \
    "$(cat "$T/out")" \
    "pisbx-run: sends: checked by the guard (standard input is an IPv4 stream socket)"
check "inherited host TCP stdin: fast open to the host's 127.0.0.1 refused" \
    grep -qx "inherited-tcp EPERM" "$T/out"
nothing "inherited host TCP stdin: nothing reached the host"
"$PY" "$T/inherit.py" "$RUN" "$CONF" "$WS" unix "$PORT" "$ABSTRACT" >"$T/out" 2>&1
contains "inherited host Unix stream stdin: sends stay the kernel's" \
    "$(cat "$T/out")" "pisbx-run: sends: the kernel's"
check "inherited host Unix stream stdin: a host abstract name refused" \
    grep -qx "inherited-unix EPERM" "$T/out"
nothing "inherited host Unix stream stdin: nothing reached the host"

# 8. Nested user namespaces: the same filter inside a new user and
#    network namespace of the command's.
run_config --top '{"allowNestedUserNamespaces": true}'
sbx -v -- unshare -U -n ./rtsend types >"$T/out" 2>"$T/err"
if grep -q '^end types' "$T/out"; then
	contains "nested userns: -v says sends are the kernel's" \
	    "$(cat "$T/err")" "pisbx-run: sends: the kernel's"
	eq "nested userns: only stream and seqpacket sockets made" \
	    "$(grep -c ' ok:' "$T/out")" 72
	eq "nested userns: no socket of another type made" \
	    "$(grep ' ok:' "$T/out" | grep -Evc '^(socket|pair)\.t[15]\.[^ ]* ok:[15]$')" 0
else
	not_ok "nested userns: unshare -U -n did not run ($(head -c 200 "$T/err"))"
fi
sbx -q -- unshare -U -n ./rtsend sends "$S" "$PORT" >"$T/out" 2>&1
result connect.stream.host EPERM
result send.stream.unconnected EOPNOTSUPP
nothing "nested userns: nothing reached a host listener"

# 9. Without namespaces every send is the guard's.
CONTAINER=$PISBX_BUILD/tests/helpers/container
run_config
if [ -x "$CONTAINER" ] && "$CONTAINER" --check >/dev/null 2>&1; then
	cat >"$T/nons.py" <<'EOF'
import errno, socket, sys
d = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    s.sendto(b"leak-nons", d + "/host.dgram")
    r = "ok"
except OSError as e:
    r = errno.errorcode[e.errno]
print("nons-dgram-made " + r)
EOF
	cp "$T/nons.py" "$WS/nons.py"
	(cd "$WS" && "$CONTAINER" "$RUN" --config "$CONF" -v -- "$PY" nons.py \
	    "$S") >"$T/out" 2>&1
	contains "no namespaces: -v says the guard checks sends" \
	    "$(cat "$T/out")" "pisbx-run: sends: checked by the guard (no namespaces)"
	check "no namespaces: a datagram socket is made, its send refused" \
	    grep -qx "nons-dgram-made EPERM" "$T/out"
	nothing "no namespaces: nothing reached the host"
else
	ok "# skip no namespaces: the container helper does not hold here"
fi

done_testing
