#!/bin/sh
# The sends and connects that pass the guard unchecked stay inside.  The
# filter lets a send with no address straight through (send(), sendto
# with a NULL address), and the guard uses any address but a Unix path
# as given on a socket of the sandbox's network namespace.  Neither may
# reach the host: listeners outside (a Unix datagram and stream socket,
# UDP and TCP on 127.0.0.1) must log nothing while the command races to
# swap descriptors and rewrite addresses between the check and the call,
# tries TCP fast open with and without an address, sends on unconnected
# UDP and on a datagram socket connected to a host path, and sends on
# host sockets it inherited or was handed over SCM_RIGHTS (nor bind
# them to listen on the host's network) -- with sends checked by the
# guard, and, where it applies, with sends straight to the kernel.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

SF=$PISBX_BUILD/tests/helpers/sendfast
[ -x "$SF" ] || { not_ok "sendfast not built ($SF)"; done_testing; }

S=$T/srv
mkdir -p "$S"
chmod 755 "$S"
: >"$S/log"
spawn "$PY" "$PISBX_TOP/tests/lib/sendfast_host.py" "$S" >"$T/host.out" 2>&1
wait_file "$S/port" || { not_ok "host listeners did not start"; done_testing; }
PORT=$(cat "$S/port")

# The listeners work: the host itself reaches each of them.
"$PY" - "$S" "$PORT" <<'PYEOF'
import socket, sys
d, port = sys.argv[1], int(sys.argv[2])
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"selftest", d + "/host.dgram")
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"selftest", ("127.0.0.1", port))
socket.create_connection(("127.0.0.1", port)).close()
u = socket.socket(socket.AF_UNIX); u.connect(d + "/host.sock"); u.close()
PYEOF
sleep 1
for w in "dgram b'selftest'" "udp b'selftest'" tcp-conn unix-conn; do
	check "the host's own $w reaches its listener" grep -qx "$w" "$S/log"
done
: >"$S/log"

# nothing DESC: the listeners logged nothing since the last call.
nothing() { nothing_in "$S/log" "$1"; }
# result MODE-LINE-PREFIX: the result word the helper printed for it.
result() { sed -n "s/^$1 //p" "$T/out"; }

# Sends checked by the guard: Unix datagram sockets allowed (and a
# listed socket, which alone would keep sends the guard's).  Section 8
# tries what applies with sends straight to the kernel.
run_config --net "{\"allowUnixSockets\": [\"$S/rights.sock\"], \"allowUnixDatagramSockets\": true}"
sbx -v -- /bin/true 2>"$T/err"
contains "the guard checks sends in this config" "$(cat "$T/err")" \
    "sends: checked by the guard (network.allowUnixDatagramSockets is true)"

# 1. The race: descriptors swapped and addresses rewritten under the
#    calls, for a few seconds.
sbx -- "$SF" swap "$S/host.dgram" "$S/host.sock" 4 >"$T/out" 2>"$T/err"
check "the race ran (calls made)" grep -Eq '^swap [1-9][0-9]* calls' "$T/out"
nothing "swap race: nothing reached the host's Unix sockets"

# 2. TCP fast open from a fresh socket: with no address it has nowhere
#    to go; with one, it goes to the sandbox's own loopback.
sbx -- "$SF" fastopen "$PORT" >"$T/out" 2>"$T/err"
eq "fast open with no address: refused by the kernel" \
    "$(result "tcp fastopen-null")" EINVAL
check "fast open with the host's port: not ok" \
    sh -c "[ \"\$(sed -n 's/^tcp fastopen-addr //p' '$T/out')\" != ok ]"
nothing "fast open: nothing reached the host's TCP port"

# 3. Unconnected UDP: no address is EDESTADDRREQ; an address is the
#    sandbox's own 127.0.0.1.
sbx -- "$SF" udp "$PORT" >"$T/out" 2>"$T/err"
eq "unconnected UDP, no address" "$(result "udp send")" EDESTADDRREQ
nothing "UDP: nothing reached the host's UDP port"

# 4. A datagram socket connected to a host path: the connect is the
#    guard's, and a send with no address has no peer.
sbx -- "$SF" dgram-path "$S/host.dgram" >"$T/out" 2>"$T/err"
eq "datagram connect to a host path: refused" \
    "$(result "dgram-path connect")" EPERM
eq "then a send with no address: no peer" \
    "$(result "dgram-path send")" ENOTCONN
nothing "datagram path: nothing reached the host's datagram socket"

# 5. Host sockets handed over SCM_RIGHTS by a listed socket: with no
#    address they have no peer; an address is refused (another network
#    namespace), fast open and bind too.
sbx -- "$SF" rights "$S/rights.sock" "$PORT" >"$T/out" 2>"$T/err"
eq "handed UDP socket, no address" "$(result "rights-udp send")" EDESTADDRREQ
eq "handed UDP socket, an address: refused" \
    "$(result "rights-udp fastopen-addr")" EPERM
eq "handed UDP socket, sendmsg with an address: refused" \
    "$(result "rights-udp fastopen-msg")" EPERM
eq "handed TCP socket, fast open with no address" \
    "$(result "rights-tcp fastopen-null")" EINVAL
eq "handed TCP socket, fast open to the host's port: refused" \
    "$(result "rights-tcp fastopen-addr")" EPERM
eq "handed TCP socket, sendmsg fast open: refused" \
    "$(result "rights-tcp fastopen-msg")" EPERM
eq "handed TCP socket, bound to the host's 127.0.0.1: refused" \
    "$(result "rights-tcp bind")" EPERM
contains "the refusal says why" "$(cat "$T/err")" \
    "through a socket of another network namespace"
nothing "handed sockets: nothing reached the host"

# 6. A host UDP socket inherited as standard input: the same.
"$PY" - "$RUN" "$CONF" "$SF" "$PORT" "$WS" >"$T/out" 2>"$T/err" <<'PYEOF'
import socket, subprocess, sys
run, conf, sf, port, ws = sys.argv[1:]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
subprocess.run([run, "--config", conf, "--", sf, "inherited", port],
               stdin=u.fileno(), cwd=ws, timeout=60)
PYEOF
eq "inherited UDP socket, no address" "$(result "inherited send")" EDESTADDRREQ
eq "inherited UDP socket, an address: refused" \
    "$(result "inherited fastopen-addr")" EPERM
nothing "inherited socket: nothing reached the host"

# 7. The sandbox's own loopback still works through the guard: a TCP
#    connect, a send on the socket accept() gave (its peer came with
#    it, no guard involved), and a UDP send of its own.
sbx -- /usr/bin/python3 -c '
import socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
c = socket.create_connection(l.getsockname()); a, _ = l.accept()
c.sendmsg([b"ping"]); assert a.recv(4) == b"ping"
a.send(b"back"); assert c.recv(4) == b"back"
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"pong", u.getsockname())
assert u.recv(4) == b"pong"
print("own loopback ok")' >"$T/out" 2>&1
check "the sandbox's own TCP connect, sendmsg, send on an accepted socket and UDP sendto work" \
    grep -qx "own loopback ok" "$T/out"

# 8. Sends straight to the kernel (the default): fast open and UDP to
#    the host's port go to the sandbox's own loopback, nothing arrives;
#    the sandbox's own loopback works.
run_config
sbx -v -- "$SF" fastopen "$PORT" >"$T/out" 2>"$T/err"
contains "kernel sends: chosen" "$(cat "$T/err")" "sends: the kernel's"
eq "kernel sends: fast open with no address: refused by the kernel" \
    "$(result "tcp fastopen-null")" EINVAL
check "kernel sends: fast open with the host's port: not ok" \
    sh -c "[ \"\$(sed -n 's/^tcp fastopen-addr //p' '$T/out')\" != ok ]"
sbx -- "$SF" udp "$PORT" >"$T/out" 2>"$T/err"
eq "kernel sends: unconnected UDP, no address" "$(result "udp send")" \
    EDESTADDRREQ
nothing "kernel sends: nothing reached the host's TCP or UDP port"
sbx -- "$SF" dgram-path "$S/host.dgram" >"$T/out" 2>"$T/err"
check "kernel sends: no datagram socket to connect to a host path" \
    grep -q "refused to make a Unix datagram socket" "$T/err"
nothing "kernel sends: nothing reached the host's datagram socket"

done_testing
