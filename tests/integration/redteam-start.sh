#!/bin/sh
# Red-team cases for the sandbox's start: the hidden private entries
# (directories sharing one read-only tmpfs per mode, files bound from one
# read-only bind), the creation guard's index built at its 32nd lookup,
# and the run directory's files on a tmpfs of the sandbox's own.
#   1. The base of the run directories stays hidden whatever the config
#      names: allowRead or allowWrite of the base itself refuses the run
#      (they showed another run's TMPDIR, and made the run's own
#      git-proxy replaceable); an allowRead pattern matching a file in
#      another run's TMPDIR does not show it.
#   2. Hidden private directories and files in /tmp, under an allowWrite
#      of /tmp: nothing written into one (so nothing seen in another),
#      none made writable, renamed, removed or replaced, by the plain
#      calls or by the mount API raw; their contents stay on the host.
#   3. Protected names are refused through every creating call, before
#      the guard's index is built (the first 31 lookups), after it, and
#      from 16 threads at once around the lookup that builds it.
#   4. The run directory's tmpfs: read-only everywhere it is mounted, its
#      files not replaced, nothing added, no descriptor of PID 1 read.
#   5. pisbx-run killed (SIGKILL) during its start leaves on the host
#      no file of the run directory (only tmp/), and the next run
#      removes what is left.
#   6. Without namespaces (the container helper): the base in allowWrite
#      refused as well, the run directory's files not writable.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

# Run directories of this scenario's own, not the machine's.
mkdir -p "$T/tmpd"
chmod 755 "$T/tmpd"
TMPDIR=$(cd "$T/tmpd" && pwd -P)
export TMPDIR
BASE=$TMPDIR/pisbx-$(id -u)
run_config

# 1. The base of the run directories.
spawn sbx --quiet -- sh -c 'echo OTHERSECRET >"$TMPDIR/a.secret" &&
    echo ready >"$PWD/ready" && sleep 60' >/dev/null 2>&1
A=$LAST_PID
wait_file "$WS/ready" 200 || { not_ok "the first run did not start"; done_testing; }
other=$(ls -d "$BASE"/pisbx-run.*/tmp)
# attack: read the other run's TMPDIR, plant in it and in the base,
# replace our own git-proxy.
attack='cat "$1"/pisbx-run.*/tmp/a.secret 2>/dev/null
D=$(dirname "$TMPDIR")
rm -f "$D/git-proxy" 2>/dev/null; echo pwned >"$D/git-proxy" 2>/dev/null
echo pwned >"$1/planted" 2>/dev/null
for d in "$1"/pisbx-run.*/tmp; do echo pwned >"$d/planted" 2>/dev/null; done
echo "proxy: $(sed -n 2p "$D/git-proxy")"'
for key in allowRead allowWrite; do
	run_config --fs "{\"$key\": [\"$BASE\"]}"
	out=$(sbx -- sh -c "$attack" sh "$BASE" 2>"$T/err")
	rc=$?
	case $out in
	*OTHERSECRET*) not_ok "$key of the base: another run's TMPDIR read" ;;
	*) ok "$key of the base: another run's TMPDIR not read" ;;
	esac
	case $out in
	*pwned*) not_ok "$key of the base: the run's own git-proxy replaced" ;;
	*) ok "$key of the base: the run's own git-proxy kept" ;;
	esac
	check "$key of the base: nothing planted in another run's TMPDIR" \
	    test ! -e "$other/planted" -a ! -e "$BASE/planted"
	eq "$key of the base: refused (exit 125)" "$rc" 125
	contains "... saying why" "$(cat "$T/err")" \
	    "the base of pisbx-run's run directories"
done
run_config --fs "{\"allowRead\": [\"$TMPDIR/**/*.secret\"]}"
out=$(sbx -- sh -c 'cat "$1"/pisbx-run.*/tmp/a.secret 2>/dev/null; echo ran' \
    sh "$BASE" 2>"$T/err")
eq "an allowRead pattern does not show a file of another run's TMPDIR" \
    "$out" ran
kill "$A" 2>/dev/null
wait_gone "$A" || not_ok "the first run did not end"
run_config

# 2. Hidden private entries in /tmp, /tmp writable.
P1=$(mktemp -d /tmp/pisbx-t-rs1.XXXXXX) && P2=$(mktemp -d /tmp/pisbx-t-rs2.XXXXXX) &&
    P3=$(mktemp -d /tmp/pisbx-t-rs3.XXXXXX) && F1=$(mktemp /tmp/pisbx-t-rsf.XXXXXX) ||
    { not_ok "mktemp in /tmp"; done_testing; }
trap '_cleanup; chmod -R u+rwx "$P3" 2>/dev/null; rm -rf "$P1" "$P2" "$P3" "$F1" /tmp/pisbx-t-rsmv.$$*' EXIT
echo ONE >"$P1/f"
echo TWO >"$P2/f"
echo THREE >"$P3/f"
chmod 500 "$P3"
echo FILE >"$F1"
run_config --fs '{"allowWrite": [".", "/tmp"]}'
cat >"$T/hide.py" <<'EOF'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
p1, p2, p3, f1, mv = sys.argv[1:6]
def say(what, f, *a):
    try:
        rc = f(*a)
    except OSError as e:
        print(what, errno.errorcode.get(e.errno, e.errno)); return
    if isinstance(rc, int) and rc < 0:
        e = ctypes.get_errno()
        print(what, errno.errorcode.get(e, e)); return
    print(what, "DONE")
def write(p):
    with open(p, "w") as f:
        f.write("x")
for d in (p1, p2, p3):
    say("mkdir", os.mkdir, d + "/new")
    say("create", write, d + "/new.txt")
    say("chmod", os.chmod, d, 0o777)
    say("rename-away", os.rename, d, mv + ".a")
    say("rmdir", os.rmdir, d)
os.mkdir(mv + ".d")
say("rename-over", os.rename, mv + ".d", p1)
say("write-file", write, f1)
say("truncate-file", os.truncate, f1, 0)
say("chmod-file", os.chmod, f1, 0o666)
say("unlink-file", os.unlink, f1)
write(mv + ".f")
say("rename-over-file", os.rename, mv + ".f", f1)
say("link-file", os.link, f1, mv + ".l")
# The mount API, raw: the shared tmpfs made writable, moved, unmounted.
class Attr(ctypes.Structure):
    _fields_ = [("set", ctypes.c_uint64), ("clr", ctypes.c_uint64),
                ("prop", ctypes.c_uint64), ("userns", ctypes.c_uint64)]
a = Attr(0, 1, 0, 0)
say("mount_setattr", libc.syscall, 442, -100, p1.encode(), 0,
    ctypes.byref(a), ctypes.sizeof(a))
say("open_tree", libc.syscall, 428, -100, p1.encode(), 1)
say("fsopen", libc.syscall, 430, b"tmpfs", 0)
say("umount2", libc.umount2, p1.encode(), 2)
say("unshare-mnt", libc.unshare, 0x00020000)
say("remount-rw", libc.mount, None, p1.encode(), None, 0x20 | 0x1000, None)
for d in (p1, p2, p3):
    print("list", os.path.basename(d), sorted(os.listdir(d)))
print("file", repr(open(f1).read()))
EOF
sbx -- "$PY" "$T/hide.py" "$P1" "$P2" "$P3" "$F1" "/tmp/pisbx-t-rsmv.$$" \
    >"$T/out" 2>"$T/err"
if grep -q ' DONE$' "$T/out"; then
	not_ok "a hidden entry changed: $(grep ' DONE$' "$T/out" | tr '\n' ' ')"
else
	ok "no hidden entry written, made writable, moved, removed or remounted"
fi
for d in "$P1" "$P2" "$P3"; do
	check "hidden $(basename "$d") stays empty inside" \
	    grep -qxF "list $(basename "$d") []" "$T/out"
done
check "the hidden file stays empty inside" grep -qxF "file ''" "$T/out"
eq "the hidden entries unchanged on the host" \
    "$(cat "$P1/f" "$P2/f" "$P3/f" "$F1"
    for d in "$P1" "$P2" "$P3"; do ls -A "$d"; done | tr '\n' ' ')" \
    "ONE
TWO
THREE
FILE
f f f "
check "... nothing left in /tmp by the attempts but the prepared names" \
    test ! -e "/tmp/pisbx-t-rsmv.$$.a" -a ! -e "/tmp/pisbx-t-rsmv.$$.l"

# 3. The guard's index: protected names before, at and after it.
mkdir -p "$WS/.git/hooks"
run_config
cat >"$T/guard.py" <<'EOF'
import errno, os, socket, sys, threading
k, mode = int(sys.argv[1]), sys.argv[2]
os.makedirs("pre", exist_ok=True)
for i in range(k):
    with open("pre/f%d" % i, "w") as f:
        f.write("x")
names = [".bashrc", ".git/hooks/x", ".git/config.lock",
         ".claude/settings.json", ".vscode/tasks.json", ".npmrc", ".claude",
         ".vscode"]
ops = ["open", "mkdir", "rename", "link", "symlink", "mknod", "bind"]
made = []
def attempt(op, name, tag):
    try:
        if op == "open":
            os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644))
        elif op == "mkdir":
            os.mkdir(name)
        elif op in ("rename", "link"):
            p = "pre/src_%s" % tag
            open(p, "w").close()
            (os.rename if op == "rename" else os.link)(p, name)
        elif op == "symlink":
            os.symlink("/etc/passwd", name)
        elif op == "mknod":
            os.mkfifo(name)
        else:
            s = socket.socket(socket.AF_UNIX)
            s.bind(name)
            s.close()
        if not name.startswith("pre/"):
            made.append("%s %s" % (op, name))
    except OSError:
        pass
if mode == "seq":
    for n in names:
        for op in ops:
            attempt(op, n, op)
else:
    bar = threading.Barrier(int(mode))
    def th(i):
        bar.wait()
        for j in range(4):
            if (i + j) % 2:
                attempt("open", "pre/t%d_%d" % (i, j), "%d%d" % (i, j))
            else:
                attempt(ops[(i + j) % len(ops)],
                        names[(i * 3 + j) % len(names)], "%d%d" % (i, j))
    ts = [threading.Thread(target=th, args=(i,)) for i in range(int(mode))]
    [t.start() for t in ts]
    [t.join() for t in ts]
print("made:", " ".join(made) if made else "none")
EOF
fails=""
for run in "0 seq" "20 seq" "30 seq" "31 seq" "32 seq" "45 seq" \
    "20 16" "24 16" "26 16" "28 16" "30 16" "31 16"; do
	rm -rf "$WS/pre"
	# shellcheck disable=SC2086
	out=$(sbx --quiet -- "$PY" "$T/guard.py" $run 2>/dev/null)
	[ "$out" = "made: none" ] || fails="$fails [$run: $out]"
done
eq "protected names refused before, at and after the guard's index" \
    "$fails" ""
eq "... none of them on the host" "$(cd "$WS" && ls -A .git/hooks;
    ls -d .bashrc .claude .vscode .npmrc .git/config.lock 2>/dev/null)" ""
rm -rf "$WS/pre" "$WS/.git"

# 4. The run directory's tmpfs, from inside.
sbx -- sh -c 'D=$(dirname "$TMPDIR")
for f in git-proxy ssh_config empty; do
	[ -e "$D/$f" ] || continue
	chmod 777 "$D/$f" 2>/dev/null && echo "chmod $f DONE"
	echo pwned >"$D/$f" 2>/dev/null && echo "write $f DONE"
	rm -f "$D/$f" 2>/dev/null && echo "rm $f DONE"
	mv "$TMPDIR/x" "$D/$f" 2>/dev/null && echo "mv $f DONE"
	echo x >"$TMPDIR/x"
done
dd if=/dev/zero of="$D/fill" bs=64k count=4 2>/dev/null && echo "fill DONE"
mkdir "$D/d" 2>/dev/null && echo "mkdir DONE"
for l in /proc/1/fd/*; do cat "$l" >/dev/null 2>&1 && echo "read $l DONE"; done
awk -v d="$D" '"'"'$5 == d { split($6, o, ","); print "mount", o[1] }'"'"' \
    /proc/self/mountinfo | sort -u
echo "proxy: $(sed -n 2p "$D/git-proxy")"' >"$T/out" 2>"$T/err"
if grep -q ' DONE$' "$T/out"; then
	not_ok "the run directory changed: $(grep ' DONE$' "$T/out" | tr '\n' ' ')"
else
	ok "the run directory's files not written, replaced or added to; PID 1's descriptors not read"
fi
eq "the run directory's tmpfs read-only wherever it is mounted" \
    "$(grep '^mount' "$T/out")" "mount ro"
check "... git-proxy is pisbx's" grep -q '^proxy: # git:// through' "$T/out"

# 5. SIGKILL during the start: nothing of the run directory on the host.
KD=$T/kd
mkdir -p "$KD"
chmod 755 "$KD"
for d in 0 0.005 0.01 0.02 0.04 0.08; do
	(cd "$WS" && TMPDIR=$KD exec "$RUN" --config "$CONF" \
	    --access-log "$PX_LOG" -- sleep 5) >/dev/null 2>&1 &
	k=$!
	sleep "$d"
	kill -9 "$k" 2>/dev/null
	wait "$k" 2>/dev/null
done
sleep 0.3
left=$(cd "$KD" && find . -mindepth 1 ! -type s ! -type d | sort)
eq "killed during start: no run directory file left on the host" "$left" ""
left=$(cd "$KD" && find . -mindepth 3 -type d ! -name tmp | sort)
eq "... nor a directory beside tmp/" "$left" ""
(cd "$WS" && TMPDIR=$KD "$RUN" --quiet --config "$CONF" \
    --access-log "$PX_LOG" -- true) >/dev/null 2>&1
eq "... and the next run removes the dead runs' directories" \
    "$(find "$KD/pisbx-$(id -u)" -mindepth 1 2>/dev/null)" ""

# 6. Without namespaces.
CT=$PISBX_BUILD/tests/helpers/container
if [ ! -x "$CT" ]; then
	not_ok "container helper not built ($CT)"
elif ! out=$("$CT" "$RUN" --quiet --config "$CONF" --access-log "$PX_LOG" \
    -- true 2>&1); then
	ok "# skip without namespaces: pisbx-run does not run here: $out"
else
	run_config --fs "{\"allowWrite\": [\".\", \"$BASE\"]}"
	out=$(cd "$WS" && "$CT" "$RUN" --config "$CONF" --access-log "$PX_LOG" \
	    -- sh -c "$attack" sh "$BASE" 2>"$T/err")
	rc=$?
	eq "no namespaces: allowWrite of the base refused (exit 125)" "$rc" 125
	run_config
	out=$(cd "$WS" && "$CT" "$RUN" --quiet --config "$CONF" \
	    --access-log "$PX_LOG" -- sh -c 'D=$(dirname "$TMPDIR")
	for f in git-proxy ssh_config empty; do
		[ -e "$D/$f" ] || continue
		echo pwned >"$D/$f" 2>/dev/null && echo "write $f DONE"
		rm -f "$D/$f" 2>/dev/null && echo "rm $f DONE"
	done
	touch "$D/new" 2>/dev/null && echo "create DONE"
	echo "proxy: $(sed -n 2p "$D/git-proxy")"' 2>&1)
	case $out in
	*DONE*) not_ok "no namespaces: the run directory changed: $out" ;;
	*"proxy: # git:// through"*) ok "no namespaces: the run directory's files kept" ;;
	*) not_ok "no namespaces: git-proxy not read: $out" ;;
	esac
fi
done_testing
