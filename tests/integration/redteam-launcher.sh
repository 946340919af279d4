#!/bin/sh
# Red-team cases for pisbx-run's side of masked credentials: from inside
# the sandbox, no real value can be read, by any way around the masked
# copies and the parent's memory.
#   1. With namespaces: the masked file's bind cannot be undone (umount,
#      a new mount namespace, the new mount API) nor gone around
#      (/proc/self/root, /proc/1/root, a file handle, a link, a rename).
#   2. A whole-file value goes into a header as the file's text without
#      its last line end (the masked copy keeps it after the
#      placeholder); a value with a line break inside is never put in a
#      header: the request is refused, nothing reaches the host (a bare
#      LF there ended the head early: the rest, the command's own bytes,
#      was read by the host as a request of its own, past the request
#      rules).
#   3. Without namespaces (tests/helpers/container): the command cannot
#      raise the core-size limit of a process outside (the agent that
#      started pisbx-run holds the real values in its environment) nor
#      set a CPU limit whose SIGXCPU kills it and dumps its core into
#      the workspace -- prlimit(2) checks only the user ID, past
#      Landlock's ptrace and signal scopes.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
command -v openssl >/dev/null 2>&1 || skip "openssl is not installed"
[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"

WHOLE="wholeREAL$$w$(date +%s%N)"
NPM="npmREAL$$n$(date +%s%N)"
GH="ghREAL$$g$(date +%s%N)"
export GH_TOKEN="$GH"
printf 'plain %s\n' "$WHOLE" >"$WS/token.txt"
printf '//registry.example/:_authToken=%s\n' "$NPM" >"$FAKEHOME/.npmrc"
CREDS='{"envVars":[{"name":"GH_TOKEN","mode":"mask"}],
 "files":[{"path":"~/.npmrc","mode":"mask","extract":"_authToken=(.+)"},
  {"path":"'"$WS"'/token.txt","mode":"mask"}]}'
run_config --allow "allowed.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":'"$CREDS"'}'

# reals FILE...: none of the real values is in the files.
reals() {
	! grep -aqF -e "$GH" -e "$NPM" -e "$WHOLE" "$@"
}

# 1. With namespaces: around the bind.
cat >"$WS/around.py" <<'EOF'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
tok = os.path.join(os.getcwd(), "token.txt")
def say(what, rc):
    e = ctypes.get_errno() if rc == -1 else 0
    print("%s %s" % (what, "ok" if rc != -1 else errno.errorcode.get(e, e)))
def read(p):
    try:
        with open(p, "rb") as f:
            print("read %s: %r" % (p, f.read()))
    except OSError as e:
        print("read %s: %s" % (p, e))
say("umount2-detach", libc.umount2(tok.encode(), 2))
say("unshare-newns", libc.unshare(0x00020000))
say("umount2-after-unshare", libc.umount2(tok.encode(), 2))
say("open_tree", libc.syscall(428, -100, tok.encode(), 1))
for p in (tok, "/proc/self/root" + tok, "/proc/1/root" + tok,
          "/proc/1/cwd/token.txt"):
    read(p)
class FH(ctypes.Structure):
    _fields_ = [("n", ctypes.c_uint), ("t", ctypes.c_int),
                ("h", ctypes.c_ubyte * 128)]
fh = FH(); fh.n = 128; mid = ctypes.c_int()
libc.name_to_handle_at(-100, tok.encode(), ctypes.byref(fh),
    ctypes.byref(mid), 0)
dfd = os.open(".", os.O_RDONLY)
fd = libc.open_by_handle_at(dfd, ctypes.byref(fh), 0)
say("open_by_handle_at", fd)
if fd != -1:
    print(os.read(fd, 200))
for f, a in ((os.link, "hl"), (os.rename, "mv")):
    try:
        f(tok, a)
        read(a)
    except OSError as e:
        print("%s: %s" % (f.__name__, e))
EOF
sbx -- python3 around.py >"$T/around.out" 2>"$T/around.err"
check "around the bind: nothing real read" reals "$T/around.out" "$T/around.err"
check "umount2 and the new mount API are refused" sh -c "
    grep -qx 'umount2-detach EPERM' '$T/around.out' &&
    grep -qx 'open_tree EPERM' '$T/around.out'"
check "the masked copy is what every path shows" sh -c "
    grep -qE \"^read $WS/token.txt: b'pisbx_[a-z0-9]+.n'\" '$T/around.out' &&
    grep -qE \"^read /proc/self/root$WS/token.txt: b'pisbx_[a-z0-9]+.n'\" '$T/around.out'"

# 2. Values with line ends, into headers.  The upstream records each
#    request head's raw bytes.
"$PY" "$SERVERS" certgen "$T/srv" allowed.test
cat >"$T/raw.py" <<'EOF'
import os, socket, ssl, sys, threading
portfile, rec, cert, key = sys.argv[1:5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(8)
def serve(c):
    try:
        c = ctx.wrap_socket(c, server_side=True)
        data = b""
        while b"\r\n\r\n" not in data:
            d = c.recv(65536)
            if not d:
                break
            data += d
        with open(rec, "a") as f:
            f.write(repr(data) + "\n")
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
            b"Connection: close\r\n\r\nok\n")
        c.close()
    except Exception:
        pass
with open(portfile + ".tmp", "w") as f:
    f.write(str(ls.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
spawn "$PY" "$T/raw.py" "$T/raw.port" "$T/raw.rec" "$T/srv/cert.pem" \
    "$T/srv/key.pem"
wait_file "$T/raw.port" 200 || { not_ok "the raw upstream did not start"; exit 1; }
RAW=$(cat "$T/raw.port")
chmod -R a+rX "$T"
: >"$T/raw.rec"
LINE1="firstREAL$$a$(date +%s%N)"
printf '%s\nsecond line\n' "$LINE1" >"$WS/two.txt"
CREDS2='{"files":[{"path":"'"$WS"'/token.txt","mode":"mask"},
  {"path":"'"$WS"'/two.txt","mode":"mask"}]}'
run_config --allow "allowed.test" \
    --net '{"tlsTerminate":{"extraCaCertPaths":["'"$T"'/srv/cert.pem"]}}' \
    --top '{"credentials":'"$CREDS2"'}'
sbx -- /bin/sh -c '
od -c token.txt | tail -2 | head -1
curl -sS --max-time 10 -w "status %{http_code}\n" \
    -H "Authorization: Bearer $(cat token.txt)" \
    https://allowed.test:'"$RAW"'/one' >"$T/nl.out" 2>"$T/nl.err"
check "a whole-file mask: the copy ends with the file's line end" \
    grep -qE '[a-z0-9]  \\n$' "$T/nl.out"
check "a whole-file value: sent without the file's last line end" \
    grep -qF "Authorization: Bearer plain $WHOLE\\r\\n" "$T/raw.rec"
check "a whole-file value: no bare LF in what reached the host" sh -c "
    ! grep -qF 'plain $WHOLE\\n' '$T/raw.rec'"
sbx -- /bin/sh -c '
curl -sS --max-time 10 -w "status %{http_code}\n" \
    -H "Content-Length: 0" -H "Authorization: Bearer $(cat two.txt)" \
    https://allowed.test:'"$RAW"'/two' >"$T/two.out" 2>"$T/two.err"
check "a value with a line break in a header: refused (403)" \
    grep -qx "status 403" "$T/two.out"
check "a value with a line break: nothing of it reached the host" sh -c "
    ! grep -q '/two' '$T/raw.rec' && ! grep -qF '$LINE1' '$T/raw.rec'"
check "a value with a line break: not in what the command got" \
    sh -c "! grep -qF '$LINE1' '$T/two.out' '$T/two.err'"

# maskDuplicates: a repeat of one value that runs into another value's
# span must not let the rest of that span through.
DUPV="AAAAAAAA"
TAILV="tailREAL$$t$(date +%s%N)"
printf 'one=%s\ntwo=%s%s\n' "$DUPV" "$DUPV" "$TAILV" >"$WS/over.ini"
run_config --allow "allowed.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":{"files":[{"path":"'"$WS"'/over.ini","mode":"mask","extract":"(?:one=|two=.{3})(\\w+)","maskDuplicates":true}]}}'
sbx -- cat over.ini >"$T/over.out" 2>"$T/over.err"
check "maskDuplicates, overlapping: the run shows the file" \
    grep -q '^one=pisbx_' "$T/over.out"
check "maskDuplicates, overlapping: no part of a value shows" sh -c "
    ! grep -qF '$TAILV' '$T/over.out' && ! grep -q 'tailREAL' '$T/over.out'"

# 3. Without namespaces: the limits of a process outside.
CONTAINER=$PISBX_BUILD/tests/helpers/container
if [ -x "$CONTAINER" ] && "$CONTAINER" --check >/dev/null 2>&1; then
	# The victim stands for the agent: the real value in its
	# environment, the workspace its working directory, a soft core
	# limit of 0 under an unlimited hard one (most distributions'
	# default), burning CPU as an agent does now and then.
	(cd "$WS" && { ulimit -Hc unlimited 2>/dev/null; ulimit -Sc 0; } &&
	    SECRET_OF_AGENT="$GH" exec "$PY" -c 'while 1: pass') &
	VICTIM=$!
	_pids="$_pids $VICTIM"
	sleep 0.2
	grep -E '^Max (core file size|cpu time)' "/proc/$VICTIM/limits" \
	    >"$T/lims.before"
	cat >"$WS/limits.py" <<EOF
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
class RL(ctypes.Structure):
    _fields_ = [("cur", ctypes.c_ulong), ("max", ctypes.c_ulong)]
INF = 2**64 - 1
for name, res, lim in (("core", 4, RL(INF, INF)), ("cpu", 0, RL(1, INF))):
    rc = libc.prlimit($VICTIM, res, ctypes.byref(lim), None)
    print("prlimit-%s %s" % (name, "ok" if rc == 0 else ctypes.get_errno()))
# Its own limits: as ever (bash's ulimit, prlimit(1) on itself).
rc = libc.prlimit(0, 4, ctypes.byref(RL(0, INF)), None)
print("prlimit-self %s" % ("ok" if rc == 0 else ctypes.get_errno()))
EOF
	(cd "$WS" && "$CONTAINER" "$RUN" --config "$CONF" \
	    --access-log "$PX_LOG" -- python3 limits.py) >"$T/lim.out" \
	    2>"$T/lim.err"
	# Past the 1 s a CPU limit would have allowed.
	sleep 2
	check "no namespaces: prlimit of a process outside is refused" sh -c "
	    grep -qx 'prlimit-core 1' '$T/lim.out' &&
	    grep -qx 'prlimit-cpu 1' '$T/lim.out'"
	check "no namespaces: the command's own limits still change" \
	    grep -qx 'prlimit-self ok' "$T/lim.out"
	check "no namespaces: the process outside is alive" kill -0 "$VICTIM"
	check "no namespaces: its limits are unchanged" sh -c "
	    grep -E '^Max (core file size|cpu time)' /proc/$VICTIM/limits |
	    cmp -s - '$T/lims.before'"
	check "no namespaces: no core of it in the workspace" \
	    sh -c "! ls '$WS' | grep -q '^core'"
	kill "$VICTIM" 2>/dev/null
fi

done_testing
