#!/bin/sh
# The private run directories ($TMPDIR/pisbx-UID/pisbx-run.PID.XXXXXX): no
# sandbox reaches another run's, or the others' base, even when its
# allowWrite covers $TMPDIR; on the host they hold the command's TMPDIR
# alone, their other files being on each sandbox's tmpfs; and removing a dead run's directory goes by
# descriptors, so a tree swapped under the walk (a directory exchanged
# with a symlink) never makes the host remove or chmod anything outside.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

SWAPOPEN=$PISBX_BUILD/tests/helpers/swapopen
# A $TMPDIR of our own: the runs of other tests stay out of it.
TMPDIR=$T/tmpbase
export TMPDIR
mkdir -p "$TMPDIR"
run_config --fs "{\"allowWrite\": [\".\", \"$TMPDIR\"]}"

tmp=$(sbx -- /bin/sh -c 'echo $TMPDIR')
rundir=$(dirname "$tmp")
base=$(dirname "$rundir")
echo "# run directories in $base"

# 1. A concurrent run's directory, and our own, with $TMPDIR writable.
(cd "$WS" && exec "$RUN" --config "$CONF" -- /bin/sh -c \
    'echo "$TMPDIR" >"$0"; exec sleep 30' "$WS/other") >/dev/null 2>&1 &
other=$!
_pids="$_pids $other"
wait_file "$WS/other" 100
otherdir=$(dirname "$(cat "$WS/other")")
rm -f "$WS/other"
check "the other run's directory exists on the host" test -d "$otherdir"
sbx -- /bin/sh -c '
	rundir=$(dirname "$TMPDIR")
	ls -d "$1"/pisbx-run.* 2>/dev/null | grep -v "^$rundir\$" | sed "s/^/sees /"
	for f in "$2/tmp/planted" "$2/planted" "$rundir/planted" "$1/planted"; do
		(echo x >"$f") 2>/dev/null && echo "wrote $f"
	done
	rm -f "$2/git-proxy" "$rundir/git-proxy" 2>/dev/null
	mv "$2" "$2.moved" 2>/dev/null && echo "moved the other run directory"
	echo x >"$TMPDIR/mine" && echo "own TMPDIR writable"
	test -x "$rundir/git-proxy" && echo "own git-proxy there"
	stat -f -c "run directory on %T" "$rundir"
	stat -f -c "TMPDIR on %T" "$TMPDIR"' sh \
    "$base" "$otherdir" >"$T/out" 2>"$T/err"
eq "allowWrite \$TMPDIR: other runs' directories unseen and untouched, ours read-only but its TMPDIR" \
    "$(cat "$T/out")" "own TMPDIR writable
own git-proxy there
run directory on tmpfs
TMPDIR on $(stat -f -c %T "$TMPDIR")"
# Its files (git-proxy, ssh_config, the copies) are on the sandbox's own
# tmpfs: on the host, the directory holds the command's TMPDIR alone.
eq "the other run's directory on the host holds tmp/ alone" \
    "$(ls -A "$otherdir")" tmp
check "... and the summary names the refused creates under /tmp" grep -q \
    "create $base/planted: /tmp is read-only in the sandbox" "$T/err"
kill "$other" 2>/dev/null
wait "$other" 2>/dev/null

# 2. The sweep, racing a swap: every open of the dead run's directory "a"
# exchanges it with "swap", a symlink to a victim (fanotify holds the walk
# meanwhile).  A walk by path then goes on inside the victim.
if [ "$(id -u)" -ne 0 ]; then
	ok "# skip the sweep race: fanotify needs root"
else
	V=$T/victim
	R=$base/pisbx-run.999999999.AAAAAA
	mkdir -p "$V/sub" "$R/a/sub"
	echo precious >"$V/precious"
	echo keep >"$V/sub/keep"
	echo x >"$R/a/precious"
	echo x >"$R/a/sub/keep"
	chmod 500 "$V/sub" "$R/a/sub"
	chmod 750 "$V"
	ln -s "$V" "$base/swap"
	(cd "$V" && find . -printf '%p %m %s\n' | sort) >"$T/victim.before"
	(cd "$WS" && "$SWAPOPEN" "$R" a "$base/swap" -- "$RUN" --config "$CONF" -- \
	    /bin/true) >/dev/null 2>"$T/swap.err"
	eq "the run around the sweep exits 0" "$?" 0
	echo "# $(cat "$T/swap.err")"
	(cd "$V" && find . -printf '%p %m %s\n' | sort) >"$T/victim.after"
	check "the victim's files and modes are unchanged" \
	    cmp -s "$T/victim.before" "$T/victim.after"
	chmod -R u+rwx "$R" 2>/dev/null
	rm -rf "$R" "$base/swap"
	chmod -R u+rwx "$V"
fi

# 3. A dead run's directory with unwritable subdirectories goes.
R=$base/pisbx-run.999999998.BBBBBB
mkdir -p "$R/tmp/deep/er" "$R/tmp/locked"
echo x >"$R/tmp/deep/er/f"
echo x >"$R/tmp/locked/f"
ln -s / "$R/tmp/root"
chmod 0 "$R/tmp/locked"
chmod 500 "$R/tmp/deep"
sbx -- /bin/true
check "a dead run's directory is swept, unwritable parts too" test ! -e "$R"
[ -e "$R" ] && { chmod -R u+rwx "$R"; rm -rf "$R"; }
done_testing
