#!/bin/sh
# make bench keeps to its time budget and still finishes: when the budget
# runs out it prints the table with what it has, says what it skipped
# (rows and the policy evaluation figures alike) and exits 0.  Run with a
# budget too small for anything, against no peers.
. "$(dirname "$0")/../lib/common.sh"

[ -x "$PISBX_BUILD/bench/bench_policy" ] ||
    skip "bench_policy not built ($PISBX_BUILD/bench/bench_policy)"
# The run has no root-only parts when only the guard row is asked for.
BUILD=$PISBX_BUILD BINDIR=$PISBX_BINDIR BENCH_BUDGET=3 BENCH_ONLY=guard \
    BENCH_PEERS= BENCH_NO_SRT=1 BENCH_RUNS=1 \
    timeout 120 sh "$PISBX_TOP/bench/run.sh" >"$T/out" 2>"$T/err"
rc=$?
eq "a bench out of budget exits 0" "$rc" 0
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err" | tail -n 5
check "it prints the table" grep -q '^| row ' "$T/out"
check "it says which row it skipped, and why" \
    grep -q '^- one create: skipped: time budget spent' "$T/out"
# bench_policy gets at least 5 s: it finishes or is said to be skipped.
check "the policy figures are there, or said to be skipped" \
    grep -Eq '^- (policy evaluation: skipped: |policy_eval: )' "$T/out"
check "it ends with its total time" grep -q '^total [0-9]* s$' "$T/out"
check "no traceback" sh -c "! grep -q Traceback '$T/err'"
done_testing
