# Helpers for the review-hook scenarios (source after common.sh).
# drive NAME ARGS...: run review_driver, stdout in $T/NAME.out, stderr in
# $T/NAME.err.  expect NAME INDEX REASON DETAIL-ERE: that review's line.
# clean NAME: no child process left and the fd count back where it began.
# dead PID: the process is gone (or a zombie of some other parent).
DRIVER=$PISBX_BUILD/tests/helpers/review_driver
FIX=$PISBX_TOP/tests/fixtures/reviewers
[ -x "$DRIVER" ] || skip "no $DRIVER (make tests-build)"

drive() {
	_n=$1; shift
	"$DRIVER" "$@" >"$T/$_n.out" 2>"$T/$_n.err"
}

expect() {
	if grep -Eq -- "^review $2 (now|async) $3 $4" "$T/$1.out"; then
		return 0
	fi
	echo "# $1: wanted review $2 $3 $4; got:"
	sed 's/^/#   /' "$T/$1.out" "$T/$1.err" | head -n 20
	return 1
}

clean() {
	_o=$T/$1.out
	_b=$(sed -n 's/^fds-before //p' "$_o")
	_l=$(sed -n 's/^fds-after-loop //p' "$_o")
	_f=$(sed -n 's/^fds-after-free //p' "$_o")
	if grep -q '^children 0$' "$_o" && [ -n "$_b" ] &&
	    [ "$_b" = "$_l" ] && [ "$_b" = "$_f" ]; then
		return 0
	fi
	echo "# $1: children/fds not clean:"
	grep -E '^(children|fds-)' "$_o" | sed 's/^/#   /'
	return 1
}

# count NAME REASON: how many reviews got REASON.
count() {
	grep -Ec -- "^review [0-9]+ (now|async) $2 " "$T/$1.out"
}

dead() {
	[ ! -e "/proc/$1" ] ||
	    [ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

# check_case NAME EXPECT-ARGS... : the answer and cleanliness, two results.
check_case() {
	_c=$1; shift
	check "$_c: $1" expect "$_c" 0 "$@"
	check "$_c: no child left, no fd leaked" clean "$_c"
}

# supervisor MODE [RECORD]: start the test supervisor on $T/sup.sock with
# capability "cap-$$" (in $CAP), replacing any earlier one.
CAP=cap-$$
_sup_pid=""
supervisor() {
	stop_supervisor
	rm -f "$T/sup.sock"
	spawn $PY "$FIX/supervisor.py" "$T/sup.sock" "$1" "$CAP" ${2:+"$2"}
	_sup_pid=$LAST_PID
	_i=0
	while [ ! -S "$T/sup.sock" ] && [ $_i -lt 200 ]; do
		sleep 0.05; _i=$((_i + 1))
	done
}
stop_supervisor() {
	if [ -n "$_sup_pid" ]; then
		kill "$_sup_pid" 2>/dev/null
		wait "$_sup_pid" 2>/dev/null
		_sup_pid=""
	fi
}
