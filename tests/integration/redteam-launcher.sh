#!/bin/sh
# Red-team cases for pisbx-run's side of masked credentials: from inside
# the sandbox, no real value can be read, by any way around the masked
# copies and the parent's memory.
#   1. With namespaces: the masked file's bind cannot be undone (umount,
#      a new mount namespace, the new mount API) nor gone around
#      (/proc/self/root, /proc/1/root, a file handle, a link, a rename).
#   2. Without namespaces (tests/helpers/container): the command cannot
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
    grep -qE \"^read $WS/token.txt: b'pisbx_[a-z0-9]+'\" '$T/around.out' &&
    grep -qE \"^read /proc/self/root$WS/token.txt: b'pisbx_[a-z0-9]+'\" '$T/around.out'"

# 2. Without namespaces: the limits of a process outside.
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
