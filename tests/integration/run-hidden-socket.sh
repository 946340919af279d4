#!/bin/sh
# A Unix socket in a hidden place stays out of reach, even with
# network.allowAllUnixSockets, with and without namespaces: another
# concurrent run's own socket (--explain --run, a supervisor's push: it
# answers what that run allows and has been granted) and a socket under
# a denyRead directory.  With namespaces the mount hides them; without
# (tests/helpers/container, a container that refuses namespaces) the
# guard must, since Landlock does not refuse connect(2).  A socket in a
# place that is not hidden is reached, and a hidden one listed in
# allowUnixSockets is too.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

UP=$PISBX_BUILD/tests/helpers/unixprobe
CONTAINER=$PISBX_BUILD/tests/helpers/container
[ -x "$UP" ] || skip "unixprobe not built ($UP): make tests-build"

mkdir -p "$T/open" "$T/secret"
chmod 755 "$T/open" "$T/secret"
spawn "$UP" serve "$T/open" >"$T/serve1.out" 2>&1
wait_file "$T/serve1.out" || { not_ok "socket servers did not start"; done_testing; }
spawn "$UP" serve "$T/secret" >"$T/serve2.out" 2>&1
wait_file "$T/serve2.out" || { not_ok "socket servers did not start"; done_testing; }

run_config --net '{"allowAllUnixSockets": true}' \
    --fs "{\"denyRead\": [\"$T/secret\"]}"

# Another run, concurrent: its socket is next to its run directory.  It
# is found by the mark it leaves in its TMPDIR, not as the run directory
# that appeared: other scenarios' runs share the base.
sbx -- sh -c 'echo VICTIM >"$TMPDIR/v.txt"; : >"$TMPDIR/victim.$1"
    exec sleep 60' sh "$$" >/dev/null 2>&1 &
VICTIM=$!
victim_dir() {
	for _d in $(rundirs); do
		[ -e "$_d/tmp/victim.$$" ] && echo "$_d"
	done | head -n 1
}
i=0
while [ -z "$(victim_dir)" ] && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
VDIR=$(victim_dir)
VSOCK=$VDIR.sock
i=0
while [ ! -S "$VSOCK" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ -S "$VSOCK" ]; then
	ok "the other run's socket is there ($VSOCK)"
else
	not_ok "the other run has no socket ($VDIR)"
fi


# probe MODE: the three connects inside, with or without namespaces.
probe() {
	_w=
	[ "$1" = nons ] && _w=$CONTAINER
	PISBX_RUN_WRAP=$_w sbx -- /bin/sh -c 'for s; do "$0" connect "$s"; done' \
	    "$UP" "$T/open/allowed.sock" "$T/secret/allowed.sock" "$VSOCK"
}

for mode in ns nons; do
	if [ $mode = nons ]; then
		if [ ! -x "$CONTAINER" ] || ! "$CONTAINER" --check >/dev/null 2>&1; then
			ok "# SKIP without namespaces: the container helper does not hold here"
			continue
		fi
	fi
	out=$(probe $mode 2>"$T/err.$mode")
	if [ $mode = nons ] && grep -q "needs Landlock ABI" "$T/err.$mode"; then
		ok "# SKIP without namespaces: this kernel's Landlock lacks ABI 6"
		continue
	fi
	lines=$(printf '%s\n' "$out" | grep -c '^connect ')
	eq "$mode: three connects tried" "$lines" 3
	first=$(printf '%s\n' "$out" | sed -n 1p)
	contains "$mode: a socket in a visible place is reached" "$first" "connect ok allowed"
	second=$(printf '%s\n' "$out" | sed -n 2p)
	case $second in
	"connect ok"*) not_ok "$mode: a socket under denyRead was reached: $second" ;;
	connect*) ok "$mode: a socket under denyRead is out of reach ($second)" ;;
	*) not_ok "$mode: no answer for the denyRead socket: $out" ;;
	esac
	third=$(printf '%s\n' "$out" | sed -n 3p)
	case $third in
	"connect ok"*) not_ok "$mode: another run's socket was reached: $third" ;;
	connect*) ok "$mode: another run's socket is out of reach ($third)" ;;
	*) not_ok "$mode: no answer for the other run's socket: $out" ;;
	esac
done
if [ -x "$CONTAINER" ] && "$CONTAINER" --check >/dev/null 2>&1; then
	contains "nons: the refusal says where and what to do" \
	    "$(cat "$T/err.nons")" "in a hidden path"
fi

# Listed by name, a hidden socket is the config owner's choice.
run_config --net "{\"allowAllUnixSockets\": true, \"allowUnixSockets\": [\"$T/secret/allowed.sock\"]}" \
    --fs "{\"denyRead\": [\"$T/secret\"]}"
if [ -x "$CONTAINER" ] && "$CONTAINER" --check >/dev/null 2>&1; then
	out=$(PISBX_RUN_WRAP=$CONTAINER sbx -- "$UP" connect "$T/secret/allowed.sock" 2>"$T/err.l")
	if ! grep -q "needs Landlock ABI" "$T/err.l"; then
		contains "nons: a hidden socket listed in allowUnixSockets is reached" \
		    "$out" "connect ok allowed"
	fi
fi

# Writes into what is hidden, under allowWrite of the base's parent.
BASE=$(dirname "$VDIR")
run_config --fs "{\"allowWrite\": [\"$(dirname "$BASE")\", \"$WS\"]}"
if [ -x "$CONTAINER" ] && "$CONTAINER" --check >/dev/null 2>&1; then
	PISBX_RUN_WRAP=$CONTAINER sbx -- /bin/sh -c '
	    echo x >"$1/planted" && echo "base=written"
	    echo x >"$2/tmp/new" && echo "new=written"
	    echo x >>"$2/tmp/v.txt" && echo "old=written"
	    echo own >"$TMPDIR/own" && echo "own=written"' sh "$BASE" "$VDIR" \
	    >"$T/w.out" 2>"$T/w.err"
	if ! grep -q "needs Landlock ABI" "$T/w.err"; then
		out=$(cat "$T/w.out")
		check "nons: nothing created in the base of the run directories" \
		    test ! -e "$BASE/planted"
		check "nons: nothing created in another run's TMPDIR" \
		    test ! -e "$VDIR/tmp/new"
		eq "nons: another run's file unchanged" "$(cat "$VDIR/tmp/v.txt")" VICTIM
		eq "nons: the command's own TMPDIR is written" "$out" "own=written"
		contains "nons: the refusal names the hidden path" \
		    "$(cat "$T/w.err")" "is hidden"
		rm -f "$BASE/planted"
	fi
fi

kill "$VICTIM" 2>/dev/null
wait "$VICTIM" 2>/dev/null
done_testing
