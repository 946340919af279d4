#!/bin/sh
# Run the test suite: unit binaries (cmocka), integration scenarios
# (tests/integration/*.sh, found by name) and a short run of each fuzz
# target over its seed corpus.  Ends with one line "N passed, N failed".
#   sh tests/run.sh [unit|integration|fuzz|all] [NAME-FILTER]
set -u
what=${1:-all}
filter=${2:-${T:-}}
BUILD=${BUILD:-build}
BINDIR=${BINDIR:-bin}
SANITIZE=${SANITIZE:-0}
top=$(cd "$(dirname "$0")/.." && pwd)
export PISBX_TOP="$top" PISBX_BINDIR="$top/$BINDIR" PISBX_BUILD="$top/$BUILD"
# What an interactive session sets and CI's runner does not: a scenario
# that leans on one of them fails here as it would there.
unset SHELL TERM OLDPWD USER LOGNAME DISPLAY SSH_AUTH_SOCK
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

passed=0 failed=0 skipped=0
failures=""
logdir=$(mktemp -d "${TMPDIR:-/tmp}/pisbx-tests.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

# One scenario: run_exec runs it (its output and "rc seconds" kept under
# $logdir; the .rc file appears whole, when it has ended), run_count
# counts its "ok"/"not ok" lines; a non-zero exit with no "not ok" line
# counts as one failure; exit 77 is a skip.
run_exec() {
	name=$1; shift
	out="$logdir/$(echo "$name" | tr '/' '_').log"
	start=$(date +%s)
	timeout -k 10 "${TEST_TIMEOUT:-300}" "$@" >"$out" 2>&1
	echo "$? $(( $(date +%s) - start ))" >"$out.rc.new"
	mv "$out.rc.new" "$out.rc"
}

ended() {
	[ -f "$logdir/$(echo "$1" | tr '/' '_').log.rc" ]
}

run_count() {
	name=$1
	out="$logdir/$(echo "$name" | tr '/' '_').log"
	read -r rc secs <"$out.rc"
	nok=$(grep -c '^ok ' "$out")
	nfail=$(grep -c '^not ok ' "$out")
	if [ $rc -eq 77 ]; then
		skipped=$((skipped + 1))
		printf 'SKIP %-44s %s\n' "$name" "$(tail -n 1 "$out")"
		return
	fi
	# cmocka summaries
	cp=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	cf=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	[ -n "$cp" ] && nok=$((nok + cp))
	[ -n "$cf" ] && nfail=$((nfail + cf))
	if [ $rc -ne 0 ] && [ "$nfail" -eq 0 ]; then
		nfail=1
	fi
	if [ $rc -eq 0 ] && [ "$nfail" -eq 0 ] && [ "$nok" -eq 0 ]; then
		nok=1
	fi
	passed=$((passed + nok))
	failed=$((failed + nfail))
	if [ "$nfail" -ne 0 ]; then
		printf 'FAIL %-44s %3ss  (%d ok, %d failed, exit %d)\n' "$name" "$secs" "$nok" "$nfail" "$rc"
		sed 's/^/    | /' "$out" | tail -n 60
		failures="$failures $name"
	else
		printf 'pass %-44s %3ss  (%d ok)\n' "$name" "$secs" "$nok"
	fi
}

run_one() {
	run_exec "$@"
	run_count "$1"
}

matches() {
	[ -z "$filter" ] && return 0
	case "$1" in *"$filter"*) return 0 ;; esac
	return 1
}

if [ "$what" = all ] || [ "$what" = unit ]; then
	for t in "$top/$BUILD"/tests/test_*; do
		[ -x "$t" ] || continue
		n=unit/$(basename "$t")
		matches "$n" && run_one "$n" "$t"
	done
fi

# Integration scenarios run TEST_JOBS at a time (default: one per CPU;
# most of their time is spent waiting on servers and sandboxes), their
# results printed in order.  A scenario marked "# run.sh: alone" (it
# installs packages, takes a system-wide lock, or races and wants the
# CPUs to itself) runs after the others, with nothing beside it.
#   pending: the names started and not yet counted, in order.
pending=""
running() {
	_n=0
	for _p in $pending; do
		ended "$_p" || _n=$((_n + 1))
	done
	echo $_n
}
# count_ended [all]: count the pending scenarios that have ended, in
# order, up to the first still running (all: wait for each).
count_ended() {
	_mode=${1:-}
	while [ -n "$pending" ]; do
		set -- $pending
		if ! ended "$1"; then
			[ "$_mode" = all ] || return 0
			sleep 0.2
			continue
		fi
		run_count "$1"
		shift
		pending="$*"
	done
}

if [ "$what" = all ] || [ "$what" = integration ]; then
	jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
	alone=""
	for t in "$top"/tests/integration/*.sh; do
		[ -f "$t" ] || continue
		n=integration/$(basename "$t" .sh)
		matches "$n" || continue
		if grep -q '^# run\.sh: alone' "$t"; then
			alone="$alone $(basename "$t" .sh)"
			continue
		fi
		while [ "$(running)" -ge "$jobs" ]; do
			sleep 0.2
			count_ended
		done
		run_exec "$n" sh "$t" &
		pending="$pending $n"
		count_ended
	done
	count_ended all
	wait
	for t in $alone; do
		run_one "integration/$t" sh "$top/tests/integration/$t.sh"
	done
fi

# The fuzz targets run FUZZ_JOBS at a time (default: one per CPU), each
# for FUZZ_SECONDS: each is one process on one CPU.
if { [ "$what" = all ] && [ "$SANITIZE" != 1 ]; } || [ "$what" = fuzz ]; then
	fuzz_secs=${FUZZ_SECONDS:-5}
	fuzz_jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
	batch=""
	for f in "$top/$BUILD"/fuzz/fuzz_* ""; do
		if [ -n "$f" ]; then
			[ -x "$f" ] || continue
			n=$(basename "$f")
			matches "fuzz/$n" || continue
			corpus="$top/tests/fuzz/corpus/${n#fuzz_}"
			work="$logdir/corpus-$n"
			mkdir -p "$work"
			[ -d "$corpus" ] && cp "$corpus"/* "$work"/ 2>/dev/null
			# libFuzzer's own error exit code is 77, a skip here:
			# a crash must count as a failure.  Its input is
			# printed (Base64) and kept with the logs, never in
			# the work tree.
			run_exec "fuzz/$n" "$f" -max_total_time="$fuzz_secs" \
			    -timeout=10 -rss_limit_mb=2048 \
			    -print_final_stats=0 -error_exitcode=1 \
			    -timeout_exitcode=1 -artifact_prefix="$logdir/$n-" \
			    "$work" &
			batch="$batch fuzz/$n"
			set -- $batch
			[ $# -lt "$fuzz_jobs" ] && continue
		fi
		wait
		for n in $batch; do
			run_count "$n"
		done
		batch=""
	done
fi

echo
[ -n "$failures" ] && echo "failed:$failures"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
