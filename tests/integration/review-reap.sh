#!/bin/sh
# Every reviewer's answer reaches the decision: pisbx-run reaps only the
# processes it owns (the sandbox's PID 1 by its pid; reviewers by their
# pidfd in approval/), so a reviewer's exit status is never taken by
# another part of the program.  Many reviews, each in its own process,
# some at once, with the machine kept busy: every one approved, and no
# "waitid: No child processes" on stderr.
#
# Reviewed destinations must be public to be dialled, so the scenario runs
# in a private network namespace where 11.0.0.1 sits on lo.
. "$(dirname "$0")/../lib/netns.sh"
ip addr add 11.0.0.1/32 dev lo || exit 1

. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/review.sh"

RUN=$PISBX_BINDIR/pisbx-run
[ -x "$RUN" ] || skip "no $RUN"
spawn $PY "$FIX/origin.py" 11.0.0.1 "$T/origin.port"
wait_file "$T/origin.port" 200 || { not_ok "origin did not start"; exit 1; }
O=$(cat "$T/origin.port")
dns_start test=11.0.0.1
mkdir "$T/rv" "$T/ws" "$T/home"
chmod 777 "$T/rv"
$PY - "$DNS_PORT" "$T/conf.json" "$FIX/by-host.sh" "$T/rv" <<'EOF'
import json, sys
dns, out, rv, d = sys.argv[1:5]
json.dump({"network": {"allowedDomains": [], "deniedDomains": []},
           "resolver": {"servers": ["127.0.0.1:" + dns], "timeoutMs": 2000},
           "review": {"command": [rv, d], "timeoutMs": 20000}},
          open(out, "w"))
EOF
chmod 644 "$T/conf.json"
export HOME=$T/home
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY

# Keep both CPUs busy, so callbacks of the same loop turn interleave.
for i in 1 2; do
	spawn sh -c 'while :; do :; done'
done

# N reviews per round, four at a time, each to a host of its own (scope
# once: one reviewer process per connection).
N=${REAP_REVIEWS:-48}
rounds=3
good=0 total=0 stolen=0
r=1
while [ $r -le $rounds ]; do
	out=$(cd "$T/ws" && "$RUN" --config "$T/conf.json" -- sh -c "
		i=1
		while [ \$i -le $N ]; do
			for j in 1 2 3 4; do
				curl -s -o /dev/null -w '%{http_code}\n' -m 20 \
				    http://allow-$r-\$i-\$j.test:$O/ &
			done
			wait
			i=\$((i + 4))
		done" 2>"$T/err.$r")
	total=$((total + $(printf '%s\n' "$out" | grep -c .)))
	good=$((good + $(printf '%s\n' "$out" | grep -c '^200$')))
	stolen=$((stolen + $(grep -c 'No child processes' "$T/err.$r")))
	r=$((r + 1))
done
eq "every reviewed connection approved ($total of them)" "$good" "$total"
eq "no reviewer's exit status taken by another reaper" "$stolen" 0
[ "$total" -ge $((rounds * N)) ] && ok "all $total connections were made" ||
    not_ok "only $total connections of $((rounds * N))"
done_testing
