#!/bin/sh
# The pisbx-run scenarios again as an ordinary user (nobody, through
# setpriv): pisbx-run then builds an unprivileged user namespace.  As root
# the other run-*.sh files cover the privileged path; run by an ordinary
# user, they already are the unprivileged run and this file skips.
. "$(dirname "$0")/../lib/common.sh"

[ "$(id -u)" -eq 0 ] || skip "already unprivileged: run-*.sh ran as $(id -un)"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"
if ! setpriv --reuid=65534 --regid=65534 --clear-groups \
    unshare -U -r -n -m true 2>/dev/null; then
	not_ok "nobody cannot create user namespaces here; pisbx-run cannot run unprivileged"
	done_testing
fi

# A copy nobody can read, wherever the checkout lives (CI may keep it
# under a private home): the scenarios, their helpers and the binaries.
mkdir -p "$T/top/tests/integration" "$T/top/bin" "$T/top/build/tests"
cp -R "$PISBX_TOP/tests/lib" "$T/top/tests/" &&
    cp "$PISBX_TOP"/tests/integration/run-*.sh \
    "$PISBX_TOP"/tests/integration/redteam-start.sh \
    "$T/top/tests/integration/" &&
    cp "$RUN" "$PROXY" "$PISBX_BINDIR/pisbx-supervisor" "$T/top/bin/" &&
    cp -P "$PISBX_BINDIR/pisbx-sh" "$T/top/bin/" &&
    cp -R "$PISBX_BUILD/tests/helpers" "$T/top/build/tests/" ||
    { not_ok "copy the scenarios"; done_testing; }
chmod -R a+rX "$T/top"

# One scenario as nobody, its output and exit status kept in $T.
as_nobody() {
	# A scratch dir nobody owns: the scenario's own $T lives below it.
	mkdir -p "$T/$1"
	chown 65534:65534 "$T/$1"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	    env HOME=/nonexistent TMPDIR="$T/$1" PISBX_TOP="$T/top" \
	    PISBX_BINDIR="$T/top/bin" PISBX_BUILD="$T/top/build" \
	    sh "$T/top/tests/integration/$1.sh" >"$T/$1.out" 2>&1
	echo $? >"$T/$1.rc"
}

# Two at a time (each is mostly waiting on its sandboxes), reported in
# order once both are done.
set -- run-basic run-escape-net run-escape-fs run-escape-sys \
    run-escape-git run-proxy run-unix run-globs run-guard run-home \
    run-guardfd run-guard-race run-jobs run-rundir run-private run-tty \
    run-hostfiles run-reviewer run-workspace run-git-init run-git-worktree \
    run-git-common redteam-start
while [ $# -gt 0 ]; do
	batch=$1; shift
	if [ $# -gt 0 ]; then batch="$batch $1"; shift; fi
	for s in $batch; do
		as_nobody "$s" &
	done
	wait
	for s in $batch; do
		rc=$(cat "$T/$s.rc")
		sed -n "s/^\(not \)\{0,1\}ok - /&[nobody $s] /p" "$T/$s.out"
		n=$(grep -c '^ok ' "$T/$s.out")
		if [ "$rc" -eq 77 ]; then
			not_ok "[nobody] $s skipped: $(tail -n 1 "$T/$s.out")"
		elif [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$T/$s.out"; then
			not_ok "[nobody] $s exited $rc: $(tail -n 5 "$T/$s.out" | tr '\n' ' ')"
		elif [ "$n" -eq 0 ]; then
			not_ok "[nobody] $s ran no test"
		fi
	done
done
done_testing
