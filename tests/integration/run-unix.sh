#!/bin/sh
# Unix sockets by address.  By default the command makes, binds and
# reaches its own Unix sockets (Python's multiprocessing Manager and
# forkserver work, getsockname() says the path bind() was given), abstract
# names are the sandbox's network namespace's own, and a socket of the
# host is refused with a line naming the key.  network.allowUnixSockets
# adds sockets reachable exactly, by their real path (through a symlink
# too), for stream connects and for datagrams sent by sendto, sendmsg,
# sendmmsg and connect + send; any other socket is refused with a
# reason; a path swapped outside, or an address rewritten by another
# thread, never reaches a socket that is not listed.  With
# allowAllUnixSockets everything is reachable, as before.  TCP through
# the proxy keeps working while the guard performs connect and sendmsg.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

UP=$PISBX_BUILD/tests/helpers/unixprobe
[ -x "$UP" ] || { not_ok "unixprobe not built ($UP)"; done_testing; }

# The servers, outside: allowed.sock / blocked.sock (stream, answer their
# name), dgram.sock / blocked-dgram.sock (datagrams logged to srv/log).
S=$T/srv
mkdir -p "$S"
chmod 755 "$S"
spawn "$UP" serve "$S" >"$T/serve.out" 2>&1
wait_file "$T/serve.out" || { not_ok "socket servers did not start"; done_testing; }
ln -s "$S/allowed.sock" "$WS/link.sock"
ln -s "$S/blocked.sock" "$WS/badlink.sock"
: >"$S/log"

# probe ARGS...: unixprobe inside the sandbox, output and errors in $T/out.
probe() {
	sbx -- "$UP" "$@" >"$T/out" 2>"$T/err"
	cat "$T/out"
}
# logged DESC MSG: the datagram server got MSG.
logged() {
	if grep -qx "$2" "$S/log"; then ok "$1"; else not_ok "$1 (log: $(tr '\n' ' ' <"$S/log"))"; fi
}
notlogged() {
	if grep -q "$2" "$S/log"; then not_ok "$1 (log: $(tr '\n' ' ' <"$S/log"))"; else ok "$1"; fi
}

# 1. No list: the command's own sockets, nothing of the host's (no
#    datagram socket is made; with allowUnixDatagramSockets a datagram
#    pair's socket sends to no host socket by path either);
#    stream pairs and descriptor passing work.
run_config
eq "no list: a host socket is refused" \
    "$(probe connect "$S/allowed.sock")" "connect EPERM"
contains "the refusal names the socket and the key" "$(cat "$T/err")" \
    "refused to connect to $S/allowed.sock: a Unix socket the command did not bind during this run, and not in network.allowUnixSockets"
eq "no list: a datagram socket pair cannot be made" \
    "$(probe pair-dgram "$S/dgram.sock" leak0)" "pair-dgram EPERM"
contains "... the refusal names the key" "$(cat "$T/err")" \
    "refused to make a Unix datagram socket: Unix datagram sockets are off in this sandbox"
# With datagram sockets allowed, their sends are the guard's.
run_config --net '{"allowUnixDatagramSockets": true}'
eq "no list, datagram sockets: a pair cannot reach a host socket" \
    "$(probe pair-dgram "$S/dgram.sock" leak1)" "pair-dgram EPERM"
contains "... the guard refused the send" "$(cat "$T/err")" \
    "refused to send to $S/dgram.sock"
notlogged "no list: nothing reached the datagram socket" "leak[01]"
run_config
eq "no list: a stream pair passes a descriptor (SCM_RIGHTS)" \
    "$(probe pair-rights)" "pair-rights ok"
# An abstract socket of the host: another network namespace.
spawn "$PY" -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind("\0pisbx-test-%s" % sys.argv[1])
s.listen(); print("ready", flush=True); time.sleep(120)' "$$" >"$T/abs.out"
wait_file "$T/abs.out" || not_ok "the abstract server did not start"
eq "no list: the host's abstract socket is out of reach" \
    "$(probe abstract "pisbx-test-$$")" "abstract ECONNREFUSED"
# The command's own: Python's Manager (its clients connect to the
# address getsockname() gave) and forkserver; bind's name as given.
cat >"$T/own.py" <<'EOF'
import multiprocessing as mp, os, socket
def sq(x):
    return x * x
if __name__ == "__main__":
    with mp.get_context("forkserver").Pool(2) as p:
        print("forkserver", sum(p.map(sq, range(10))))
    with mp.Manager() as m:
        d = m.dict()
        d["k"] = 7
        print("manager", d["k"])
    tmp = os.environ["TMPDIR"]
    s = socket.socket(socket.AF_UNIX)
    s.bind(tmp + "/own.sock")
    print("getsockname absolute", s.getsockname() == tmp + "/own.sock")
    s.listen()
    c = socket.socket(socket.AF_UNIX)
    c.connect(s.getsockname())
    print("connect own", c.getpeername() == tmp + "/own.sock")
    os.chdir(tmp)
    r = socket.socket(socket.AF_UNIX)
    r.bind("rel.sock")
    print("getsockname relative", r.getsockname())
    a = socket.socket(socket.AF_UNIX)
    a.bind("\0own-abstract")
    a.listen()
    b = socket.socket(socket.AF_UNIX)
    b.connect("\0own-abstract")
    print("abstract own ok")
EOF
chmod 644 "$T/own.py"
OWN_WANT=$(printf 'forkserver 285\nmanager 7\ngetsockname absolute True\nconnect own True\ngetsockname relative rel.sock\nabstract own ok')
out=$(sbx -- "$PY" "$T/own.py" 2>&1)
eq "no list: the command's own Unix sockets" "$out" "$OWN_WANT"

# 2. The list: exactly those sockets.
run_config --net "{\"allowUnixSockets\": [\"$S/allowed.sock\", \"$S/dgram.sock\"]}"
eq "listed socket: connect reaches it" \
    "$(probe connect "$S/allowed.sock")" "connect ok allowed"
eq "another socket: refused" "$(probe connect "$S/blocked.sock")" \
    "connect EPERM"
contains "the refusal names the socket and the key" "$(cat "$T/err")" \
    "refused to connect to $S/blocked.sock: a Unix socket the command did not bind during this run, and not in network.allowUnixSockets"
eq "a symlink in the workspace to the listed socket: reaches it" \
    "$(probe connect link.sock)" "connect ok allowed"
eq "a symlink to another socket: refused" "$(probe connect badlink.sock)" \
    "connect EPERM"
out=$(sbx -- "$PY" "$T/own.py" 2>&1)
eq "with the list: the command's own Unix sockets, getsockname() as given" \
    "$out" "$OWN_WANT"
for how in sendto sendmsg sendmmsg dgconnect; do
	eq "datagram by $how to the listed socket" \
	    "$(probe $how "$S/dgram.sock" "via-$how")" "$how ok"
	logged "the listed datagram socket got it ($how)" "dgram via-$how"
	eq "datagram by $how to another socket: refused" \
	    "$(probe $how "$S/blocked-dgram.sock" "bad-$how")" "$how EPERM"
	notlogged "the other datagram socket got nothing ($how)" "bad-$how"
done
eq "with the list, a datagram pair may exist; it reaches the listed socket" \
    "$(probe pair-dgram "$S/dgram.sock" pair-ok)" "pair-dgram ok"
logged "the pair's datagram arrived" "dgram pair-ok"
eq "and not another one" \
    "$(probe pair-dgram "$S/blocked-dgram.sock" pair-bad)" "pair-dgram EPERM"
notlogged "the pair's refused datagram did not arrive" pair-bad
eq "descriptor passing through the guard's sendmsg" "$(probe pair-rights)" \
    "pair-rights ok"

# The address rewritten by another thread while the guard decides: it
# reads the address once and connects to what it checked.
out=$(probe race-mem "$S/allowed.sock" "$S/blocked.sock" 300)
case $out in
"race-mem allowed="*" blocked=0 refused="*) ok "address rewritten by a thread: never the blocked socket ($out)" ;;
*) not_ok "address rewritten by a thread reached the blocked socket: $out" ;;
esac

# The path swapped outside between check and use: the guard connects to
# the socket file it checked, never to what the name says by then.
spawn sh -c "cd '$WS' && while :; do ln -sfn '$S/blocked.sock' flip.tmp &&
    mv -T flip.tmp race.sock; ln -sfn '$S/allowed.sock' flip.tmp &&
    mv -T flip.tmp race.sock; done"
FLIP=$LAST_PID
out=$(probe race-path race.sock 300)
kill "$FLIP"
case $out in
"race-path allowed="*" blocked=0 refused="*) ok "path swapped between check and use: never the blocked socket ($out)" ;;
*) not_ok "path swapped between check and use reached the blocked socket: $out $(sort "$T/err" | uniq -c | head -3)" ;;
esac

# A socket the command binds itself is its own: reachable.
sbx_sh "\"$UP\" serve \"\$TMPDIR\" >\"\$TMPDIR/o\" 2>&1 & p=\$!;
    i=0; while [ ! -s \"\$TMPDIR/o\" ] && [ \$i -lt 100 ]; do sleep 0.05; i=\$((i+1)); done;
    \"$UP\" connect \"\$TMPDIR/blocked.sock\"; kill \$p"
contains "a socket the command bound is reachable" "$(cat "$T/out")" \
    "connect ok blocked"

# TCP (the proxy) and Python's multiprocessing (forkserver: a Unix socket
# of its own, descriptors passed with sendmsg) through the guard.
srv_start http web
run_config --allow "allowed.test" \
    --net "{\"allowUnixSockets\": [\"$S/allowed.sock\"]}"
body=$(sbx -- curl -s -m 10 "http://allowed.test:$SRV_PORT/via-guard")
contains "curl through the proxy while the guard connects" "$body" \
    '"path": "/via-guard"'
cat >"$T/mp.py" <<'EOF'
import multiprocessing as mp
def sq(x):
    return x * x
if __name__ == "__main__":
    for m in ("forkserver", "spawn", "fork"):
        with mp.get_context(m).Pool(2) as p:
            print(m, sum(p.map(sq, range(10))))
EOF
chmod 644 "$T/mp.py"
out=$(sbx -- "$PY" "$T/mp.py" 2>&1)
eq "Python multiprocessing (forkserver, spawn, fork)" "$out" \
    "$(printf 'forkserver 285\nspawn 285\nfork 285')"

# A connect that waits (the backlog full) waits in a worker of the
# guard: the guard goes on serving, so the command can create the file
# the server waits for before it accepts.
spawn "$UP" serve-slow "$T/slow.sock" "$WS/marker" >"$T/slow.out" 2>&1
wait_file "$T/slow.out" || { not_ok "slow socket server did not start"; done_testing; }
run_config --net "{\"allowUnixSockets\": [\"$T/slow.sock\"]}"
out=$(sbx -- timeout 20 /bin/sh -c "\"$UP\" fill \"$T/slow.sock\" 3 & p=\$!
    sleep 0.3; : >marker; wait \$p" 2>&1)
eq "a connect waiting for the backlog does not stop the guard" "$out" \
    "fill ok 3"
rm -f "$WS/marker"

# A caller killed while its call waits for the guard: the guard goes on
# (it used to take the kernel's ENOENT for "every process is gone", and
# every later creation, connect or send failed with ENOSYS).
cat >"$T/kill.py" <<'EOF'
import os, signal, socket, sys, time
d, sock = os.environ["TMPDIR"], sys.argv[1]
for r in range(150):
    pid = os.fork()
    if pid == 0:
        i = 0
        while True:
            open("%s/c%d-%d" % (d, os.getpid(), i), "w").close()
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(sock)
            except OSError:
                pass
            s.close()
            i += 1
    time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
open(d + "/after", "w").close()
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
print("after the kills:", s.recv(16).decode().strip())
EOF
chmod 644 "$T/kill.py"
run_config --net "{\"allowUnixSockets\": [\"$S/allowed.sock\"]}"
out=$(sbx -- "$PY" "$T/kill.py" "$S/allowed.sock" 2>&1)
eq "callers killed mid-call: the guard still creates and connects" \
    "$out" "after the kills: allowed"

# An AF_UNIX address longer than a sockaddr_un (128 bytes, a 126-byte
# path without NUL): EINVAL from connect, sendto and bind, as the kernel
# says -- never a path the guard copies past its buffer.
cat >"$T/long.py" <<'EOF'
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(b'\x01\x00' + b'A' * 126, 128)
out = []
for name in ('connect', 'sendto', 'bind'):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if name == 'sendto':
        r = libc.sendto(s.fileno(), b'x', 1, 0, buf, 128)
    else:
        r = getattr(libc, name)(s.fileno(), buf, 128)
    out.append('%s %s' % (name, 'ok' if r == 0 else
                          errno.errorcode.get(ctypes.get_errno())))
print(' '.join(out))
EOF
chmod 644 "$T/long.py"
eq "an over-long Unix address is EINVAL" "$(sbx -- "$PY" "$T/long.py" 2>&1)" \
    "connect EINVAL sendto EINVAL bind EINVAL"

# 3. allowAllUnixSockets: every socket, as before.
run_config --net '{"allowAllUnixSockets": true}'
eq "allowAllUnixSockets: any socket" "$(probe connect "$S/blocked.sock")" \
    "connect ok blocked"

done_testing
