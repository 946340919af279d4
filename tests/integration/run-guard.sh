#!/bin/sh
# The creation guard as the command sees it, where it keeps state to be
# fast (launcher/guard/guard.c): every file it opens for the command carries
# the descriptor flags the command asked for; every creation gets the
# creating thread's umask, as it changes, in threads, children and after
# exec, though the guard reads it only once per thread; a relative path
# is checked where its directory is now, after that directory (or one
# above it) was renamed, or removed and its inode number taken by a new
# one, or moved by the host into .git/hooks or a core.hooksPath; a git
# hook cannot be planted through an inode number the guard
# once knew as outside any repository; the protected names are refused
# before and after the guard indexes them; parallel creators are all served,
# and an orphan too (the guard is PID 1); a process the guard may not
# read is refused, with the reason.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

run_config --fs '{"denyWrite": ["vault/*", "safe/*", "deep/*/*"]}'
chmod -R a+rwX "$WS"

# 1. Descriptor flags: what the command asked for, not the guard's.
sbx_sh 'exec 3>fd.txt; sh -c "echo through-fd3 >&3"; cat fd.txt'
contains "a file opened for writing is inherited across exec" \
    "$(cat "$T/out")" through-fd3
sbx -- "$PY" -c 'import os, fcntl
fd = os.open("ce.txt", os.O_WRONLY | os.O_CREAT)
print("cloexec", fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)' \
    >"$T/out" 2>&1
contains "O_CLOEXEC asked for: close-on-exec" "$(cat "$T/out")" "cloexec 1"

# 2. umask: changed, inherited by children, kept across exec.
sbx_sh 'umask 077; : >u077; umask 022; : >u022; umask 027
    sh -c ": >child027"; umask 002; mkdir d002; umask 077; mkdir d077
    sh -c "umask 037; exec sh -c \": >exec037\""; mkfifo p077
    stat -c "%n %a" u077 u022 child027 d002 d077 exec037 p077'
for want in "u077 600" "u022 644" "child027 640" "d002 775" "d077 700" \
    "exec037 640" "p077 600"; do
	check "umask: $want" grep -qx "$want" "$T/out"
done

# Threads share one umask: another thread's umask() holds for a thread
# the guard knows already (its first file made with the old one), and
# node's way of reading it (umask(0), then back) leaves no trace.
sbx -- "$PY" - >"$T/out" 2>&1 <<'EOF'
import os, threading
go, done = threading.Event(), threading.Event()
order = []
def worker():
    while True:
        go.wait(); go.clear()
        if not order:
            return
        open(order.pop(0), "w").close()
        done.set()
t = threading.Thread(target=worker)
t.start()
for name, mask in (("t022", 0o022), ("t077", 0o077), ("t000", 0o000),
                   ("t027", 0o027)):
    os.umask(mask)
    order.append(name)
    go.set(); done.wait(); done.clear()
os.umask(0o022)
old = os.umask(0)
os.umask(old)
order.append("tnode")
go.set(); done.wait(); done.clear()
go.set()
t.join()
for n in ("t022", "t077", "t000", "t027", "tnode"):
    print(n, oct(os.stat(n).st_mode & 0o777))
EOF
for want in "t022 0o644" "t077 0o600" "t000 0o666" "t027 0o640" \
    "tnode 0o644"; do
	check "umask across threads: $want" grep -qx "$want" "$T/out"
done

# 3. Relative paths are checked where their directory is now, never
# where it was at an earlier request: the cwd renamed into a
# write-protected place...
sbx_sh 'mkdir a && cd a && echo >x && rm x && mv ../a ../vault &&
    if echo >k 2>/dev/null; then echo made-renamed; else echo refused-renamed; fi'
contains "cwd renamed into vault/: a new name in it is refused" \
    "$(cat "$T/out")" refused-renamed
check "... and not made" test ! -e "$WS/vault/k"
# ... a directory above it renamed ...
sbx_sh 'mkdir -p p/c && cd p/c && echo >x && rm x && mv ../../p ../../deep &&
    if echo >k 2>/dev/null; then echo made-above; else echo refused-above; fi'
contains "the cwd's parent renamed into deep/: deep/c/k is refused" \
    "$(cat "$T/out")" refused-above
check "... and not made" test ! -e "$WS/deep/c/k"
# ... and removed, its inode number taken by a new directory (ext4 gives
# a removed directory's number to the next one, mostly; tried 20 times,
# each name alternating, so a stale answer would show either way).
sbx_sh 'top=$PWD; n=0; while [ $n -lt 20 ]; do n=$((n + 1)); cd "$top"
    mkdir b; cd b; echo >x 2>/dev/null || echo refused-plain; rm -f x
    i=$(stat -c %i .); cd "$top"; rmdir b
    mkdir safe; cd safe; [ "$(stat -c %i .)" = "$i" ] && echo reused
    if echo >k 2>/dev/null; then echo made-reused; rm -f k; fi
    cd "$top"; rmdir safe; done'
check "a new directory with a known inode number: safe/k is refused" \
    sh -c "! grep -q made-reused '$T/out'"
check "... and a directory that had the number of safe/ is writable" \
    sh -c "! grep -q refused-plain '$T/out'"
ok "(inode numbers reused: $(grep -cx reused "$T/out") of 20)"

# ... and moved by the host while the command runs: into a repository
# older than the run, as its .git/hooks (which it lacked).  The command
# made a file in its cwd before; after the move, pre-commit there is a
# git hook, refused.
git init -q "$WS/old"
rm -rf "$WS/old/.git/hooks"
mkdir -p "$WS/hostmv/d"
chmod -R a+rwX "$WS/old" "$WS/hostmv"
spawn sbx -- /bin/sh -c 'cd hostmv/d && : >before && echo x >"$0/ready"
    i=0; while [ ! -e "$0/moved" ] && [ $i -lt 200 ]; do sleep 0.05
    i=$((i + 1)); done
    if echo "#!/bin/sh" >pre-commit; then echo made-hook; else
    echo refused-hook; fi' "$WS" >"$T/hostmv.out" 2>&1
if wait_file "$WS/ready" 200; then
	mv "$WS/hostmv/d" "$WS/old/.git/hooks"
	echo x >"$WS/moved"
else
	not_ok "the command did not start (hostmv)"
fi
wait "$LAST_PID"
contains "cwd moved by the host into .git/hooks: pre-commit is refused" \
    "$(cat "$T/hostmv.out")" refused-hook
check "... and not made" test ! -e "$WS/old/.git/hooks/pre-commit"
contains "... the refusal names where the directory is now" \
    "$(cat "$T/hostmv.out")" "refused to create $WS/old/.git/hooks/pre-commit"
rm -rf "$WS/old" "$WS/hostmv" "$WS/ready" "$WS/moved"
# ... the same into a work tree's core.hooksPath (husky's way), which the
# guard finds by walking up from the directory and remembers by inode.
git init -q "$WS/husky"
git -C "$WS/husky" config core.hooksPath hk
mkdir -p "$WS/hostmv/d"
chmod -R a+rwX "$WS/husky" "$WS/hostmv"
spawn sbx -- /bin/sh -c 'cd hostmv/d && : >before && echo x >"$0/ready"
    i=0; while [ ! -e "$0/moved" ] && [ $i -lt 200 ]; do sleep 0.05
    i=$((i + 1)); done
    if echo "#!/bin/sh" >pre-commit; then echo made-hook; else
    echo refused-hook; fi' "$WS" >"$T/hostmv.out" 2>&1
if wait_file "$WS/ready" 200; then
	mv "$WS/hostmv/d" "$WS/husky/hk"
	echo x >"$WS/moved"
else
	not_ok "the command did not start (hostmv hooksPath)"
fi
wait "$LAST_PID"
contains "cwd moved by the host into core.hooksPath: pre-commit is refused" \
    "$(cat "$T/hostmv.out")" refused-hook
check "... and not made" test ! -e "$WS/husky/hk/pre-commit"
rm -rf "$WS/husky" "$WS/hostmv" "$WS/ready" "$WS/moved"

# 4. A git hook through an inode number known to be outside any repository
# (a hole before: the guard remembered that answer by inode number).
git init -q "$WS/repo"
git -C "$WS/repo" config core.hooksPath newdir/hooks
chmod -R a+rwX "$WS/repo"
sbx_sh 'mkdir x && echo >x/f && rm x/f && i=$(stat -c %i x) && rmdir x &&
    mkdir repo/newdir && echo "inodes $i $(stat -c %i repo/newdir)"
    mkdir repo/newdir/hooks 2>/dev/null
    printf "#!/bin/sh\n" >repo/newdir/hooks/pre-commit 2>/dev/null &&
    echo PLANTED'
check "no hook planted through a reused inode number" \
    sh -c "! grep -q PLANTED '$T/out'"
check "... repo/newdir/hooks/pre-commit does not exist" \
    test ! -e "$WS/repo/newdir/hooks/pre-commit"

# 5. Parallel creators: every file made, every protected name refused.
sbx -- "$PY" - >"$T/out" 2>&1 <<'EOF'
import os, threading
refused = []
def worker(n):
    os.makedirs("par/%d" % n)
    for i in range(300):
        with open("par/%d/f%d" % (n, i), "w") as f:
            f.write("%d.%d" % (n, i))
        if i == 150:
            try:
                open(".bashrc", "a").close()
            except PermissionError:
                refused.append(n)
ts = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print("refused", len(refused))
EOF
eq "parallel: 1200 files made" \
    "$(find "$WS/par" -type f | wc -l | tr -d ' ')" 1200
eq "parallel: each holds what was written" "$(cat "$WS/par/3/f299")" \
    "3.299"
contains "parallel: .bashrc refused to every thread" "$(cat "$T/out")" \
    "refused 4"
check "parallel: no .bashrc" test ! -e "$WS/.bashrc"

# 6. An orphan (reparented to PID 1, the guard) still gets its files.
sbx_sh '(sh -c "sleep 0.3; : >orphan.txt" &) ; sleep 1; ls orphan.txt'
contains "an orphan's file is made" "$(cat "$T/out")" orphan.txt

# 7. A process the guard may not read (it made itself non-dumpable): its
# creations are refused, and the reason is said once.
sbx -- "$PY" -c 'import ctypes
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)	# PR_SET_DUMPABLE 0
try:
    open("nd.txt", "w")
    print("made")
except PermissionError:
    print("refused")' >"$T/out" 2>&1
contains "a non-dumpable process: its creation is refused" "$(cat "$T/out")" \
    refused
contains "... with the reason" "$(cat "$T/out")" "(not dumpable)"
check "... and nothing made" test ! -e "$WS/nd.txt"

# 8. The guarded paths answer the same before the guard indexes them (its
# first lookups) and after (from the 32nd on).
sbx_sh 'try() { if (: >"$1") 2>/dev/null; then echo "$2 made $1"; else
    echo "$2 refused $1"; fi; }
    try .bashrc before; try vault/x before; mkdir many
    i=0; while [ $i -lt 40 ]; do : >many/$i; i=$((i+1)); done
    try .bashrc after; try vault/x after; try many/40 after'
for want in "before refused .bashrc" "before refused vault/x" \
    "after refused .bashrc" "after refused vault/x" "after made many/40"; do
	check "index: $want" grep -qx "$want" "$T/out"
done
check "index: no .bashrc" test ! -e "$WS/.bashrc"

done_testing
