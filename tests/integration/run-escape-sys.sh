#!/bin/sh
# System-call escapes: every filtered call issued raw (tests/helpers/
# sysraw.c) with garbage in the upper 32 bits of an int argument and as a
# negative 64-bit value whose low half is the refused constant -- socket
# families (an allow-list), CLONE_NEWUSER in clone/unshare, clone3,
# TIOCSTI, set-user-ID and set-group-ID bits in chmod and its kin (and
# none left by what the guard creates, cp -p, tar -xp, install -m or
# setcap), kernel attack surface (userfaultfd, bpf, perf, modules, kexec,
# open_by_handle_at), an unknown newer system call, creations and writes
# of protected names, bind() of a Unix socket onto a protected name (a
# socketpair's socket, and with allowAllUnixSockets any socket).  Then
# the ordinary tools still work under the filter: git, curl, python3,
# node and npm, make, gcc.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

SYSRAW=$PISBX_BUILD/tests/helpers/sysraw
[ -x "$SYSRAW" ] || skip "sysraw helper not built ($SYSRAW)"

# expect CASE ANSWER...: the case's line in $T/sys.out is one of ANSWERs.
expect() {
	_case=$1; shift
	_got=$(sed -n "s/^$_case //p" "$T/sys.out")
	for _a in "$@"; do
		if [ "$_got" = "$_a" ]; then
			ok "$_case: $_got"
			return
		fi
	done
	not_ok "$_case: got '${_got:-nothing}', want $*"
}

# A nested repository whose config must stay as it is.
git init -q "$WS/sub"
printf '[core]\n\tbare = false\n' >"$WS/sub/.git/config"
cp "$WS/sub/.git/config" "$T/sub.config"
chmod -R a+rwX "$WS"

run_config
sbx -- "$SYSRAW" "$WS" >"$T/sys.out" 2>"$T/sys.err"
eq "sysraw ran to the end" "$(tail -n 1 "$T/sys.out")" "bind.unix.plain ok"
for c in socket.vsock.hi \
    socket.vsock.neg socket.packet socket.alg socket.inet.low32junk \
    socket.netlink.audit.hi socket.netlink.uevent.neg socketpair.inet.neg \
    unshare.newuser unshare.newuser.hi clone.newuser clone.newuser.hi \
    setns ioctl.tiocsti.hi ioctl.tiocsti.neg userfaultfd perf_event_open \
    bpf kexec_load finit_module open_by_handle_at mount keyctl syslog; do
	expect "$c" EPERM
done
for c in clone3 io_uring_setup unknown.listmount; do
	expect "$c" ENOSYS
done
# What the kernel reads as AF_INET is AF_INET, whatever the upper half.
# Unix sockets by default (AF_UNIX, whatever the upper half): what they
# reach is the guard's to decide (run-unix.sh).
for c in socket.inet.hi socket.inet6 socket.netlink.route \
    socketpair.unix.hi clone.plain socket.unix socket.unix.hi \
    socket.unix.neg bind.unix.plain; do
	expect "$c" ok
done
for c in open.creat.hi openat.creat.neg open.write.nested.hi \
    openat.trunc.nested.neg truncate.nested bind.socketpair.protected \
    bind.unix.protected; do
	expect "$c" EACCES
done
# Nothing made in the sandbox keeps a set-user-ID or set-group-ID bit
# (a root run's copy of a shell, chmod 4755, would be a root shell for
# every local user): chmod and its kin refuse them, whatever the upper
# half of the mode says; the guard strips them from what it creates.
for c in chmod.setuid chmod.setuid.hi chmod.setgid.neg fchmod.setuid.hi \
    fchmod.setgid fchmodat.setid.hi fchmodat2.setuid; do
	expect "$c" EPERM
done
for c in open.creat.setuid chmod.plain.hi fchmod.plain mkdir.setid \
    mknod.setid; do
	expect "$c" ok
done
for c in open.creat.setuid.mode chmod.setid.mode mkdir.setid.mode \
    mknod.setid.mode; do
	expect "$c" setid=0000
done
rm -rf "$WS/setid.f" "$WS/setid.d" "$WS/setid.n"
rm -f "$WS/plain.sock"
check "no .bashrc, .zshenv or .bash_login was made" \
    test ! -e "$WS/.bashrc" -a ! -e "$WS/.zshenv" -a ! -e "$WS/.bash_login"
check "the nested repository's config is unchanged" \
    cmp -s "$T/sub.config" "$WS/sub/.git/config"

# The tools' ways to a set-ID file: chmod, install -m, cp -p and tar -xp
# of a set-user-ID file made outside, chmod g+s on a directory, file
# capabilities (setcap); ordinary modes and user.* attributes still work.
cp /bin/true "$T/suid.bin"
chmod 4755 "$T/suid.bin"
tar -cpf "$T/suid.tar" -C "$T" suid.bin
chmod 644 "$T/suid.tar"
mkdir -p "$WS/setid"
chmod a+rwx "$WS/setid"
sbx_sh "cd setid; cp /bin/sh sh.copy; chmod 4755 sh.copy; echo chmod=\$?
    chmod g+s sh.copy; echo chmod.gs=\$?
    install -m 4755 /bin/true inst; echo install=\$?
    cp -p '$T/suid.bin' cpp; echo cp.p=\$?
    mkdir tx; tar -xpf '$T/suid.tar' -C tx; echo tar.xp=\$?
    mkdir sgd; chmod 2775 sgd; echo chmod.dir=\$?
    /usr/sbin/setcap cap_net_raw+ep sh.copy; echo setcap=\$?
    : >plain; chmod +x plain; echo chmod.x=\$?; : >plain2
    chmod 644 plain2; echo chmod.644=\$?
    stat -c 'mode %n %a' plain plain2
    /usr/bin/python3 -c 'import os; os.setxattr(\"plain\", \"user.k\", b\"v\"); print(\"xattr\", os.getxattr(\"plain\", \"user.k\").decode())'"
for want in chmod=1 chmod.gs=1 install=1 cp.p=1 chmod.dir=1 chmod.x=0 \
    chmod.644=0 "mode plain 755" "mode plain2 644" "xattr v"; do
	check "set-ID: $want" grep -qx "$want" "$T/out"
done
check "set-ID: tar -xp fails" grep -q '^tar.xp=[1-9]' "$T/out"
check "set-ID: setcap fails" grep -q '^setcap=[1-9]' "$T/out"
contains "set-ID: chmod says why" "$(cat "$T/out")" \
    "chmod: changing permissions of 'sh.copy': Operation not permitted"
left=$(find "$WS" -perm /6000 | tr '\n' ' ')
check "set-ID: no set-user-ID or set-group-ID file left ($left)" \
    [ -z "$left" ]
check "set-ID: the copies are there, without the bits" \
    test -x "$WS/setid/sh.copy" -a -f "$WS/setid/inst" -a -f "$WS/setid/cpp" \
    -a -f "$WS/setid/tx/suid.bin"
caps=$(/usr/sbin/getcap -r "$WS" 2>/dev/null | tr '\n' ' ')
check "set-ID: no file capability left ($caps)" [ -z "$caps" ]
rm -rf "$WS/setid"

# With allowAllUnixSockets: Unix sockets, but bind onto a protected name
# is still a creation the guard refuses.
run_config --net '{"allowAllUnixSockets": true}'
sbx -- "$SYSRAW" "$WS" >"$T/sys.out" 2>"$T/sys.err"
for c in socket.unix socket.unix.hi socket.unix.neg bind.unix.plain; do
	expect "$c" ok
done
expect socket.vsock.hi EPERM
expect bind.unix.protected EACCES
expect bind.socketpair.protected EACCES
contains "the refusal names the path" "$(cat "$T/sys.err")" \
    "refused to create $WS/.bash_login: protected path"
check "no socket inode on a protected name" \
    test ! -e "$WS/.zshenv" -a ! -e "$WS/.bash_login"
check "an ordinary socket path was bound" test -S "$WS/plain.sock"
rm -f "$WS/plain.sock"

# The tools a build, a test suite or a package manager runs still work.
HOSTS_NAMES="allowed.test" run_config --allow "allowed.test"
mkdir -p "$T/srv"
echo "served" >"$T/srv/file.txt"
spawn "$PY" -u -m http.server --bind 127.0.0.1 0 --directory "$T/srv" \
    >"$T/http.log" 2>&1
i=0
while ! grep -q 'port' "$T/http.log" && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
HTTP_PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$T/http.log" | head -n 1)
cat >"$T/tools.sh" <<'EOF'
set -e
cd "$TMPDIR"
# The home (and ~/.npm) is hidden: a cache of the run's own.
export npm_config_cache="$TMPDIR/npm-cache"
mkdir proj && cd proj
printf '#include <stdio.h>\n#include <pthread.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); puts("c ok"); return 0; }\n' >m.c
printf 'all: m\nm: m.c\n\tgcc -O1 -pthread -o m m.c\n' >Makefile
make -s >/dev/null
./m
/usr/bin/python3 -c 'import subprocess, threading, socket, tempfile; t = threading.Thread(target=lambda: None); t.start(); t.join(); print(subprocess.check_output(["echo", "py ok"]).decode().strip())'
node -e 'const { Worker } = require("worker_threads"); new Worker("process.exit(0)", { eval: true }).on("exit", () => console.log("node ok"))'
npm init -y >/dev/null 2>&1 && npm pack --silent >/dev/null 2>&1 && ls *.tgz >/dev/null && echo "npm ok"
git init -q r && cd r && git -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m one && git log --format=%s && cd ..
git clone -q r r2 && git -C r2 log --format=%s
curl -s --noproxy '' "http://allowed.test:$HTTP_PORT/file.txt"
EOF
chmod 644 "$T/tools.sh"
HTTP_PORT=$HTTP_PORT sbx -- /bin/sh "$T/tools.sh" >"$T/tools.out" 2>"$T/tools.err"
eq "gcc, make, pthreads, python3, node, npm, git and curl work inside" \
    "$(cat "$T/tools.out")" "c ok
py ok
node ok
npm ok
one
one
served"
[ -s "$T/tools.err" ] && echo "# tools stderr: $(head -c 600 "$T/tools.err")"
done_testing
