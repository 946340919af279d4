#!/bin/sh
# Sends straight to the kernel.  By default (namespaces, no
# allowUnixSockets, no allowUnixDatagramSockets, no inherited socket that
# could carry an address out) sendmsg, sendmmsg and sendto are not the
# guard's: instead the command cannot make an AF_UNIX socket other than a
# stream or seqpacket one -- SOCK_DGRAM with any flags, SOCK_RAW,
# socketpair, a type with junk above 32 bits are refused (EPERM), said
# once on stderr naming the key, counted in the summary.  Streams,
# seqpacket pairs, descriptor passing and UDP on the sandbox's loopback
# work; an address on a stream socket is the kernel's EISCONN.  A host
# Unix datagram socket or a host UDP socket inherited as standard output
# or input keeps sends the guard's (-v says why): a send through it to
# the host is refused and nothing arrives.  allowUnixDatagramSockets and
# a listed socket bring datagram sockets back, sends checked.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

# The host's listeners: a Unix datagram socket and a UDP port on
# 127.0.0.1, each logging what it receives to srv/log.
S=$T/srv
mkdir -p "$S"
chmod 755 "$S"
: >"$S/log"
cat >"$T/listen.py" <<'EOF'
import os, select, socket, sys
d = sys.argv[1]
u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
u.bind(d + "/host.dgram")
os.chmod(d + "/host.dgram", 0o777)
p = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
p.bind(("127.0.0.1", 0))
with open(d + "/port.tmp", "w") as f:
    f.write(str(p.getsockname()[1]))
os.rename(d + "/port.tmp", d + "/port")
while True:
    for s in select.select([u, p], [], [], 60)[0]:
        with open(d + "/log", "a") as f:
            f.write("%s %s\n" % ("dgram" if s is u else "udp",
                                 s.recv(64).decode(errors="replace")))
EOF
spawn "$PY" "$T/listen.py" "$S"
wait_file "$S/port" || { not_ok "host listeners did not start"; done_testing; }
PORT=$(cat "$S/port")

# nothing DESC: the listeners logged nothing since the last call.
nothing() { nothing_in "$S/log" "$1"; }

# The listeners work: the host itself reaches each.
"$PY" - "$S" "$PORT" <<'EOF'
import socket, sys
d, port = sys.argv[1], int(sys.argv[2])
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"selftest", d + "/host.dgram")
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"selftest", ("127.0.0.1", port))
EOF
sleep 0.5
check "the host's own datagram reaches its Unix listener" grep -qx "dgram selftest" "$S/log"
check "the host's own datagram reaches its UDP listener" grep -qx "udp selftest" "$S/log"
: >"$S/log"

# 1. The default: which AF_UNIX sockets can be made.
run_config
cat >"$T/unixkinds.py" <<'EOF'
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
SYS_socket, SYS_socketpair = 41, 53

def res(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]

def raw(nr, dom, ty):
    sv = (ctypes.c_int * 2)()
    args = [ctypes.c_long(dom), ctypes.c_long(ty), ctypes.c_long(0)]
    if nr == SYS_socketpair:
        args.append(sv)
    rc = libc.syscall(ctypes.c_long(nr), *args)
    return "ok" if rc >= 0 else errno.errorcode[ctypes.get_errno()]

U = socket.AF_UNIX
print("dgram", res(lambda: socket.socket(U, socket.SOCK_DGRAM)))
print("dgram-cloexec", res(lambda: socket.socket(U, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)))
print("dgram-nonblock", res(lambda: socket.socket(U, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK)))
print("raw", res(lambda: socket.socket(U, socket.SOCK_RAW)))
print("pair-dgram", res(lambda: socket.socketpair(U, socket.SOCK_DGRAM)))
print("dgram-hi", raw(SYS_socket, U, socket.SOCK_DGRAM | 0xdead << 32))
print("pair-dgram-hi", raw(SYS_socketpair, U | 1 << 32, socket.SOCK_DGRAM | 1 << 40))
print("stream-hi", raw(SYS_socket, U, socket.SOCK_STREAM | 5 << 32))
print("stream", res(lambda: socket.socket(U, socket.SOCK_STREAM)))
print("seqpacket", res(lambda: socket.socket(U, socket.SOCK_SEQPACKET)))
print("pair-stream", res(lambda: socket.socketpair(U, socket.SOCK_STREAM)))
print("pair-seqpacket", res(lambda: socket.socketpair(U, socket.SOCK_SEQPACKET)))
for i in range(50):
    res(lambda: socket.socket(U, socket.SOCK_DGRAM))
EOF
chmod 644 "$T/unixkinds.py"
sbx -v -- "$PY" "$T/unixkinds.py" >"$T/out" 2>"$T/err"
contains "-v: sends are the kernel's" "$(cat "$T/err")" \
    "pisbx-run: sends: the kernel's (Unix datagram sockets refused; network.allowUnixDatagramSockets)"
for c in dgram dgram-cloexec dgram-nonblock raw pair-dgram dgram-hi \
    pair-dgram-hi; do
	eq "AF_UNIX $c: refused" "$(sed -n "s/^$c //p" "$T/out")" EPERM
done
for c in stream-hi stream seqpacket pair-stream pair-seqpacket; do
	eq "AF_UNIX $c: made" "$(sed -n "s/^$c //p" "$T/out")" ok
done
eq "the refusal is said once for 57" \
    "$(grep -c 'refused to make a Unix datagram socket' "$T/err")" 1
contains "... naming the key and the file" "$(cat "$T/err")" \
    "refused to make a Unix datagram socket: Unix datagram sockets are off in this sandbox (syslog(3) makes one for /dev/log, which the sandbox refuses anyway: only the log line is lost); if the command needs one for itself, set \"allowUnixDatagramSockets\": true under \"network\" in $CONF (every send is then checked by the guard)"
contains "the summary counts them" "$(cat "$T/err")" \
    "  make a Unix datagram socket (57 times): Unix datagram sockets are off"

# 2. The default: sends that work, straight to the kernel.
sbx -- "$PY" -c '
import array, errno, os, socket
a, b = socket.socketpair()
r, w = os.pipe()
a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r]))])
msg, anc, _, _ = b.recvmsg(1, socket.CMSG_SPACE(4))
fd = array.array("i", anc[0][2])[0]
os.write(w, b"through")
print("rights", msg.decode(), os.read(fd, 7).decode())
p, q = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
p.sendmsg([b"seq", b"packet"])
print("seqpacket", q.recv(16).decode())
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.sendto(b"udp", u.getsockname())
v.sendmsg([b"msg"], [], 0, u.getsockname())
print("udp", u.recv(8).decode(), u.recv(8).decode())
try:
    a.sendto(b"x", "/tmp/x.sock")
    print("stream-addr ok")
except OSError as e:
    print("stream-addr", errno.errorcode[e.errno])
s = socket.socket(socket.AF_UNIX)
try:
    s.sendto(b"x", "'"$S/host.dgram"'")
    print("unconnected-stream-addr ok")
except OSError as e:
    print("unconnected-stream-addr", "EOPNOTSUPP" if e.errno == errno.EOPNOTSUPP else errno.errorcode[e.errno])
' >"$T/out" 2>"$T/err"
check "SCM_RIGHTS over a stream pair" grep -qx "rights x through" "$T/out"
check "sendmsg on a seqpacket pair" grep -qx "seqpacket seqpacket" "$T/out"
check "UDP sendto and sendmsg to the sandbox's own loopback" \
    grep -qx "udp udp msg" "$T/out"
check "sendto with an address on a connected stream socket: EISCONN" \
    grep -qx "stream-addr EISCONN" "$T/out"
check "sendto with a host path on an unconnected stream socket: EOPNOTSUPP" \
    grep -qx "unconnected-stream-addr EOPNOTSUPP" "$T/out"
nothing "default: nothing reached the host"

# 3. Inherited sockets keep sends the guard's: a host Unix datagram
#    socket as standard output, a host UDP socket as standard input.
#    Through them a send to the host is refused, and nothing arrives.
cat >"$T/inherit.py" <<'EOF'
import socket, subprocess, sys
run, conf, ws, which, target, port = sys.argv[1:]
if which == "dgram":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    io = {"stdout": s.fileno()}
    fd, addr = 1, target
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    io = {"stdin": s.fileno()}
    fd, addr = 0, ("127.0.0.1", int(port))
code = ("import errno, socket, sys\n"
        "s = socket.socket(fileno=%d)\n"
        "try:\n"
        "    s.sendto(b'leak-%s', %r)\n"
        "    r = 'ok'\n"
        "except OSError as e:\n"
        "    r = errno.errorcode[e.errno]\n"
        "sys.stderr.write('inherited-%s ' + r + '\\n')\n") % (fd, which, addr, which)
p = subprocess.run([run, "-v", "--config", conf, "--", sys.executable,
                    "-c", code], cwd=ws, timeout=60, stderr=subprocess.PIPE,
                   **io)
sys.stdout.write(p.stderr.decode(errors="replace"))
EOF
chmod 644 "$T/inherit.py"
run_config
"$PY" "$T/inherit.py" "$RUN" "$CONF" "$WS" dgram "$S/host.dgram" "$PORT" >"$T/out" 2>&1
contains "inherited Unix datagram stdout: -v says the guard checks sends" \
    "$(cat "$T/out")" \
    "pisbx-run: sends: checked by the guard (standard output is a Unix datagram socket)"
check "inherited Unix datagram stdout: a send to a host path is refused" \
    grep -qx "inherited-dgram EPERM" "$T/out"
nothing "inherited Unix datagram stdout: nothing reached the host"
"$PY" "$T/inherit.py" "$RUN" "$CONF" "$WS" udp "$S/host.dgram" "$PORT" >"$T/out" 2>&1
contains "inherited UDP stdin: -v says the guard checks sends" \
    "$(cat "$T/out")" \
    "pisbx-run: sends: checked by the guard (standard input is an IPv4 datagram socket)"
check "inherited UDP stdin: a send to the host's 127.0.0.1 is refused" \
    grep -qx "inherited-udp EPERM" "$T/out"
nothing "inherited UDP stdin: nothing reached the host"

# 4. allowUnixDatagramSockets, or a listed socket: datagram sockets are
#    made, and their sends checked (a host path refused).
cat >"$T/dgram.py" <<'EOF'
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.send(b"pair")
print("made", b.recv(4).decode())
try:
    s.sendto(b"leak-key", sys.argv[1])
    print("host ok")
except OSError as e:
    print("host", errno.errorcode[e.errno])
EOF
chmod 644 "$T/dgram.py"
run_config --net '{"allowUnixDatagramSockets": true}'
sbx -v -- "$PY" "$T/dgram.py" "$S/host.dgram" >"$T/out" 2>"$T/err"
contains "allowUnixDatagramSockets: -v says the guard checks sends" \
    "$(cat "$T/err")" \
    "sends: checked by the guard (network.allowUnixDatagramSockets is true)"
check "allowUnixDatagramSockets: datagram sockets and pairs work" \
    grep -qx "made pair" "$T/out"
check "allowUnixDatagramSockets: a send to a host path is refused" \
    grep -qx "host EPERM" "$T/out"
run_config --net "{\"allowUnixSockets\": [\"$T/none.sock\"]}"
sbx -v -- "$PY" "$T/dgram.py" "$S/host.dgram" >"$T/out" 2>"$T/err"
contains "allowUnixSockets: -v says the guard checks sends" \
    "$(cat "$T/err")" \
    "sends: checked by the guard (network.allowUnixSockets lists sockets"
check "allowUnixSockets: datagram sockets and pairs work" \
    grep -qx "made pair" "$T/out"
check "allowUnixSockets: a send to an unlisted host path is refused" \
    grep -qx "host EPERM" "$T/out"
nothing "checked sends: nothing reached the host"

# 5. allowAllUnixSockets: nothing checked, datagram sockets made.
run_config --net '{"allowAllUnixSockets": true}'
sbx -v -- "$PY" "$T/dgram.py" "$S/host.dgram" >"$T/out" 2>"$T/err"
contains "allowAllUnixSockets: -v says sends are the kernel's" \
    "$(cat "$T/err")" "sends: the kernel's (network.allowAllUnixSockets"
check "allowAllUnixSockets: datagram sockets work" grep -qx "made pair" "$T/out"
: >"$S/log"

done_testing
