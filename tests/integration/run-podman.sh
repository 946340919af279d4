#!/bin/sh
# pisbx-run inside real containers: podman (rootful with crun and with
# runc, rootless as nobody) and docker where its daemon runs, each under
# its default seccomp profile and capability set, then under a profile
# like Kubernetes' "restricted" pod security (--cap-drop=ALL,
# no-new-privileges).  No image is pulled: the root filesystem is a
# directory of mountpoints with the host's /usr and /etc bound read-only
# (--rootfs), and pisbx's bin/ and the scenario's $T bound in; the
# container shares the host's network, so it reaches the test server on
# 127.0.0.1.  In each container: `unshare -Ur true` says whether
# namespaces can be made, and pisbx-run must then say the matching mode
# (-v: namespaces made, or the no-namespace line); an allowed host is
# reached through the proxy, a denied one gets 403, a direct connect to
# the host's loopback is refused, and a hidden file is not shown (each
# beside a control run in the same container without pisbx-run).  A
# runtime that cannot start a container is reported with its own error
# line; when none can, the scenario skips with those lines.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v podman >/dev/null 2>&1 || command -v docker >/dev/null 2>&1 ||
    skip "podman not installed (./bootstrap --all installs it)"
# diag TEXT: what a runtime said, beside the results.
diag() { echo "# $*"; }

# Podman's default limits are above what this user may set on some
# hosts, and crun/runc then stop at setrlimit
# ("error setting rlimit type 7: operation not permitted"): ask for
# limits below the host's hard ones instead.
NOFILE=$(awk '/^Max open files/ { print $5 }' /proc/self/limits)
[ "$NOFILE" = unlimited ] || [ "$NOFILE" -gt 4096 ] && NOFILE=4096
ULIMITS="--ulimit nofile=$NOFILE:$NOFILE --ulimit nproc=4096:4096"

# The hidden file must be readable in the container without pisbx-run
# (even as an unmapped or capability-less root), or its check proves
# nothing.
chmod 755 "$FAKEHOME/.ssh"
chmod 644 "$FAKEHOME/.ssh/id_test"
chmod 777 "$WS"

# The root filesystem: mountpoints and the merged-/usr links.
ROOTFS=$T/rootfs
mkdir -p "$ROOTFS/usr" "$ROOTFS/etc" "$ROOTFS/proc" "$ROOTFS/sys" \
    "$ROOTFS/dev" "$ROOTFS/tmp" "$ROOTFS/run" "$ROOTFS$WS" \
    "$ROOTFS$FAKEHOME" "$ROOTFS$T/out" "$ROOTFS$PISBX_BINDIR" "$T/out"
touch "$ROOTFS$CONF" "$ROOTFS$T/hosts" "$ROOTFS$T/inner.sh"
chmod 1777 "$ROOTFS/tmp"
for d in bin sbin lib lib32 lib64 libx32; do
	[ -L "/$d" ] && ln -s "$(readlink "/$d")" "$ROOTFS/$d"
	[ -d "/$d" ] && [ ! -L "/$d" ] && mkdir -p "$ROOTFS/$d" &&
	    MOUNTS="${MOUNTS:-} -v /$d:/$d:ro"
done
MOUNTS="${MOUNTS:-} -v /usr:/usr:ro -v $PISBX_BINDIR:$PISBX_BINDIR:ro"
# Of $T only what the run needs: the root filesystem lies in $T, and
# through a bind of all of $T it would be reachable below itself, a
# second name for / that Landlock's grant on it would open.
for p in "$WS" "$FAKEHOME" "$T/out"; do MOUNTS="$MOUNTS -v $p:$p"; done
for p in "$CONF" "$T/hosts" "$T/inner.sh"; do MOUNTS="$MOUNTS -v $p:$p:ro"; done
# /etc is a copy, owned as the rest of the root filesystem is: pisbx-run
# trusts /etc/pisbx/managed.json only when every directory above it is
# root's, and in a rootless container the host's root is unmapped.
cp -a /etc "$ROOTFS/" 2>/dev/null
rm -rf "$ROOTFS/etc/pisbx"
# Rootless: the same tree owned by nobody, the container's root there.
ROOTFS_RL=$T/rootfs-rl

srv_start http web
WEB=$SRV_PORT
run_config --allow "allowed.test" --deny "denied.test"

# The script each container runs: a control without pisbx-run, then the
# same under pisbx-run; results in its output directory $1.
cat >"$T/inner.sh" <<EOF
O=\$1
cd "$WS" || exit 1
export HOME="$FAKEHOME"
grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status >"\$O/status"
unshare -Ur true >"\$O/unshare.out" 2>&1; echo \$? >"\$O/unshare.rc"
"$PY" -c "
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
# pisbx-run's clone: network, mount, PID, IPC; a user namespace too
# unless it runs as uid 0 (launcher/run/run.c).
f = 0x40000000 | 0x00020000 | 0x20000000 | 0x08000000 | 17
if os.geteuid() != 0: f |= 0x10000000
r = libc.syscall(56, f, 0, 0, 0, 0)
if r == 0: os._exit(0)
if r < 0: print('clone:', os.strerror(ctypes.get_errno())); sys.exit(1)
os.waitpid(r, 0); print('clone made the namespaces')" >"\$O/clone.out" 2>&1
echo \$? >"\$O/clone.rc"
cat "$FAKEHOME/.ssh/id_test" >"\$O/hidden.ctl" 2>&1
"$PY" -c "import socket; socket.create_connection(('127.0.0.1', $WEB), 2).close(); print('connected')" >"\$O/direct.ctl" 2>&1
R() { "$RUN" --config "$CONF" --access-log "\$O/access.log" "\$@"; }
R -v -- curl -s -m 10 "http://allowed.test:$WEB/hello" >"\$O/allow.body" 2>"\$O/allow.err"
echo \$? >"\$O/allow.rc"
R -- curl -s -o /dev/null -w '%{http_code}' -m 10 "http://denied.test:$WEB/" >"\$O/deny.code" 2>"\$O/deny.err"
R -- "$PY" -c "
import socket, sys
try:
    socket.create_connection(('127.0.0.1', $WEB), 2).close()
except OSError as e:
    print('refused', e); sys.exit(0)
print('ESCAPED'); sys.exit(1)" >"\$O/direct.out" 2>&1
echo \$? >"\$O/direct.rc"
R -- cat "$FAKEHOME/.ssh/id_test" >"\$O/hidden.out" 2>&1
echo \$? >"\$O/hidden.rc"
echo done >"\$O/done"
EOF
chmod 644 "$T/inner.sh"

# engine_cmd ENGINE: the command line that runs a container of ENGINE
# (podman-crun, podman-runc, rootless-crun, rootless-runc; docker runs
# an imported image instead, in checks).
PODMAN_STORE="--root $T/podman/root --runroot $T/podman/run --tmpdir $T/podman/tmp"
RL=$T/rootless
engine_cmd() {
	case $1 in
	podman-crun) echo "podman $PODMAN_STORE --runtime crun run" ;;
	podman-runc) echo "podman $PODMAN_STORE --runtime runc run" ;;
	rootless-*)
		echo "setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$RL/home XDG_RUNTIME_DIR=$RL/run podman --runtime ${1#rootless-} run" ;;
	docker) echo "docker run" ;;
	esac
}

# container ENGINE PROFILE-OPTS -- CMD...: run CMD in a fresh container.
container() {
	_cmd=$(engine_cmd "$1")
	_root=$ROOTFS
	case $1 in rootless-*) _root=$ROOTFS_RL ;; esac
	_opts=$2
	shift 3
	# shellcheck disable=SC2086
	timeout 240 $_cmd --rm --network host $ULIMITS $_opts $MOUNTS \
	    --workdir "$WS" --rootfs "$_root" "$@"
}

# The runtimes to try.
ENGINES=""
REASONS=""
if command -v podman >/dev/null 2>&1; then
	for r in crun runc; do
		command -v $r >/dev/null 2>&1 && ENGINES="$ENGINES podman-$r"
	done
	if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
		mkdir -p "$RL/home" "$RL/run"
		chown -R 65534:65534 "$RL"
		cp -a "$ROOTFS" "$ROOTFS_RL"
		chown -R -h 65534:65534 "$ROOTFS_RL"
		chmod 700 "$RL/run"
		for r in crun runc; do
			command -v $r >/dev/null 2>&1 && ENGINES="$ENGINES rootless-$r"
		done
	fi
fi
# docker.io: only with a running daemon, and it needs an image (no
# --rootfs): a local "pisbx-rootfs" image made from $ROOTFS by import.
if command -v docker >/dev/null 2>&1; then
	if docker info >"$T/docker.info" 2>&1; then
		if tar -C "$ROOTFS" -c . | docker import - pisbx-rootfs:run-podman \
		    >"$T/docker.import" 2>&1; then
			ENGINES="$ENGINES docker"
		else
			diag "docker could not import a rootfs: $(tail -n 1 "$T/docker.import")"
			REASONS="$REASONS; docker import: $(tail -n 1 "$T/docker.import")"
		fi
	else
		diag "docker has no daemon here: $(grep -m1 -i 'cannot\|error' "$T/docker.info")"
		REASONS="$REASONS; docker: $(grep -m1 -i 'cannot\|error' "$T/docker.info")"
	fi
fi
command -v podman >/dev/null 2>&1 || [ -n "$ENGINES" ] ||
    skip "podman not installed$REASONS"
[ -n "$ENGINES" ] || skip "no runtime to run podman with (crun, runc)$REASONS"

# The rootless pause process is the scenario's to end.
stop_pause() {
	for f in "$RL"/run/libpod/tmp/pause.pid "$RL"/run/containers/*/pause.pid; do
		[ -s "$f" ] || continue
		_p=$(cat "$f")
		kill "$_p" 2>/dev/null
		wait_gone "$_p" 100 || kill -9 "$_p" 2>/dev/null
	done
}
drop_image() {
	case $ENGINES in
	*docker*) docker rmi pisbx-rootfs:run-podman >/dev/null 2>&1 ;;
	esac
}
# Podman may bind its storage's overlay directory onto itself; $T goes
# only once that is undone.
drop_storage() {
	_m=$T/podman/root/overlay
	if grep -q " $_m " /proc/self/mountinfo 2>/dev/null; then
		umount "$_m" 2>/dev/null || umount -l "$_m"
	fi
}
trap 'stop_pause; drop_image; drop_storage; _cleanup' EXIT

STARTED=""
for e in $ENGINES; do
	if [ "$e" = docker ]; then
		# shellcheck disable=SC2086
		out=$(timeout 120 docker run --rm --network host $ULIMITS pisbx-rootfs:run-podman /bin/true 2>&1)
	else
		out=$(container "$e" "" -- /bin/true 2>&1)
	fi
	if [ $? -eq 0 ]; then
		STARTED="$STARTED $e"
		diag "$e starts a container"
	else
		line=$(printf '%s\n' "$out" | grep -m1 '^Error' ||
		    printf '%s\n' "$out" | tail -n 1)
		diag "$e cannot start a container here: $line"
		REASONS="$REASONS; $e: $line"
	fi
done
[ -n "$STARTED" ] || skip "no runtime starts a container here$REASONS"

# checks ENGINE PROFILE OPTS: run inner.sh in a container, assert.
checks() {
	_e=$1 _p=$2 _o=$T/out/$1-$2
	mkdir -p "$_o"
	chmod 777 "$_o"
	if [ "$_e" = docker ]; then
		# shellcheck disable=SC2086
		timeout 240 docker run --rm --network host $ULIMITS $3 $MOUNTS \
		    --workdir "$WS" pisbx-rootfs:run-podman /bin/sh "$T/inner.sh" "$_o" \
		    >"$_o/ctr.log" 2>&1
	else
		container "$_e" "$3" -- /bin/sh "$T/inner.sh" "$_o" >"$_o/ctr.log" 2>&1
	fi
	[ -n "${PODMAN_KEEP:-}" ] && cp -r "$_o" "$PODMAN_KEEP/"
	if [ ! -e "$_o/done" ]; then
		not_ok "$_e $_p: the container ran the checks: $(tail -n 3 "$_o/ctr.log" | tr '\n' ' ')"
		return
	fi
	_st=$(tr '\n' ' ' <"$_o/status" | tr -s '\t ' ' ')
	case $_p in
	restricted)
		contains "$_e $_p: no capability, no_new_privs, seccomp filter" \
		    "$_st" "CapEff: 0000000000000000 NoNewPrivs: 1 Seccomp: 2" ;;
	default)
		contains "$_e $_p: a seccomp filter is on ($_st)" "$_st" "Seccomp: 2" ;;
	esac
	contains "$_e $_p: control: the key is readable without pisbx-run" \
	    "$(cat "$_o/hidden.ctl")" "PRIVATE KEY"
	contains "$_e $_p: control: the host's loopback is reachable without pisbx-run" \
	    "$(cat "$_o/direct.ctl")" "connected"
	# The mode follows from pisbx-run's own clone, probed alike; `unshare
	# -Ur` is reported beside it: where it works and the clone does not
	# (root without CAP_SYS_ADMIN: pisbx-run asks no user namespace of
	# uid 0), the command still runs without namespaces.
	_u="unshare -Ur: $( [ "$(cat "$_o/unshare.rc")" = 0 ] && echo works || head -c 70 "$_o/unshare.out")"
	if [ "$(cat "$_o/clone.rc")" = 0 ]; then
		contains "$_e $_p: the clone works ($_u), so -v says namespaces were made" \
		    "$(cat "$_o/allow.err")" "network, mount, PID and IPC made"
		check "... and no no-namespace line" \
		    sh -c "! grep -q 'no namespaces here' '$_o/allow.err'"
	else
		contains "$_e $_p: $(cat "$_o/clone.out") ($_u), so the no-namespace line" \
		    "$(cat "$_o/allow.err")" "no namespaces here"
		eq "... once" "$(grep -c 'no namespaces here' "$_o/allow.err")" 1
	fi
	eq "$_e $_p: the allowed run exits 0" "$(cat "$_o/allow.rc")" 0
	contains "$_e $_p: allowed host through the proxy" \
	    "$(cat "$_o/allow.body")" '"path": "/hello"'
	eq "$_e $_p: denied host gets 403" "$(cat "$_o/deny.code")" 403
	eq "$_e $_p: direct connect to the host's loopback refused ($(head -c 60 "$_o/direct.out"))" \
	    "$(cat "$_o/direct.rc")" 0
	contains "... and the probe saw the refusal" "$(cat "$_o/direct.out")" "refused"
	if grep -q 'PRIVATE KEY' "$_o/hidden.out"; then
		not_ok "$_e $_p: the hidden key is not shown: $(grep -h 'hide\|id_test\|ssh' "$_o/allow.err" | head -n 5 | tr '\n' ' ')"
	else
		ok "$_e $_p: the hidden key is not shown"
	fi
	check "... and cat failed" test "$(cat "$_o/hidden.rc")" != 0
}

for e in $STARTED; do
	checks "$e" default ""
	checks "$e" restricted "--cap-drop=ALL --security-opt no-new-privileges"
done
stop_pause
done_testing
