#!/bin/sh
# Under a supervisor, a refusal names the file to edit: the real
# pisbx-supervisor hands out the file its policy is written in
# (policyFile in the registration reply), and pisbx-run's 403 bodies and
# summary name it, with the entry and the note that the supervisor reads
# it when it starts.  A supervisor that sends no policyFile, or one that
# is not an absolute path of printable characters (said in a warning),
# is named by its socket as before.  The review request it gets warns
# that a name the hosts file makes non-public stays refused.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$SUPERVISOR" ] || skip "no $SUPERVISOR"

srv_start http web
WEB=$SRV_PORT
HOSTS_NAMES="allowed.test denied.test other.test" run_config
cat >"$T/sup.json" <<EOF
{"network": {"allowedDomains": ["allowed.test"], "deniedDomains": ["denied.test"]}}
EOF
chmod 644 "$T/sup.json"
spawn "$SUPERVISOR" --config "$T/sup.json" --socket "$T/s.sock" \
    >"$T/sup.out" 2>"$T/sup.err"
wait_file "$T/sup.out" || { not_ok "pisbx-supervisor did not start: $(cat "$T/sup.err")"; done_testing; }
SCAP=$(sed -n 's/.*PISBX_SUPERVISOR_CAPABILITY=//p' "$T/sup.out")

# supervised SOCK CAP URL...: curl each URL in one run under the supervisor.
supervised() {
	_s=$1 _c=$2
	shift 2
	_cmd=""
	for _u in "$@"; do
		_cmd="$_cmd curl -s -w '%{http_code}\\n' --max-time 10 '$_u';"
	done
	(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$_s PISBX_SUPERVISOR_CAPABILITY=$_c \
	    "$RUN" --config "$CONF" -- sh -c "$_cmd")
}

supervised "$T/s.sock" "$SCAP" "http://allowed.test:$WEB/" \
    "http://other.test:$WEB/" "http://denied.test:$WEB/" \
    >"$T/r1.out" 2>"$T/r1.err"
contains "the supervisor's policy allows allowed.test" "$(cat "$T/r1.out")" 200
contains "the 403 body for other.test names the supervisor's file and entry" \
    "$(cat "$T/r1.out")" \
    "to allow it, add \"other.test:$WEB\" to network.allowedDomains in $T/sup.json (the network policy of the supervisor at $T/s.sock, which reads that file when it starts: restart it, and the runs that register after that have the change)"
contains "the summary says the same" "$(cat "$T/r1.err")" \
    "  http other.test:$WEB (review:deny): to allow it, add \"other.test:$WEB\" to network.allowedDomains in $T/sup.json (the network policy of the supervisor at $T/s.sock"
contains "a deny entry is named in the supervisor's file" \
    "$(cat "$T/r1.err")" \
    "  http denied.test:$WEB (deny-list:denied.test): \"denied.test\" in network.deniedDomains of $T/sup.json refuses it"
check "no line names pisbx-run's own config for the policy" \
    sh -c "! grep -q 'allowedDomains in $CONF' '$T/r1.err'"

# A supervisor that says nothing of its file: its socket, as before.
tsup
supervised "$T/sup.sock" "$CAP" "http://other.test:$WEB/" \
    >"$T/r2.out" 2>"$T/r2.err"
contains "without policyFile: the socket is named" "$(cat "$T/r2.err")" \
    "the network policy comes from the supervisor at $T/sup.sock: only it can allow this"
check "... and no warning" sh -c "! grep -q policyFile '$T/r2.err'"
# The review request the supervisor gets says, before anyone answers,
# that other.test (127.0.0.1 in the hosts file) stays refused.
"$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "network" and r.get("hostname") == "other.test":
        print(r.get("warning"))' "$T/sup.rec" >"$T/warn.out"
eq "the review request warns of the non-public address" "$(cat "$T/warn.out")" \
    "other.test is 127.0.0.1 (loopback) in $T/hosts: refused even when allowed here (non-public-address); the network policy comes from the supervisor at $T/sup.sock: only it can allow this"

# A policyFile that is not an absolute path of printable characters.
for bad in '"relative/agents.json"' '"/tmp/a\u001b[31mb.json"' '42'; do
	tsup --policy-file "$bad"
	supervised "$T/sup.sock" "$CAP" "http://other.test:$WEB/" \
	    >"$T/r3.out" 2>"$T/r3.err"
	contains "policyFile $bad: warned" "$(cat "$T/r3.err")" \
	    "warning: supervisor: the registration reply's policyFile is not an absolute path of printable characters; refusals name the supervisor's socket instead"
	contains "policyFile $bad: the socket is named" "$(cat "$T/r3.err")" \
	    "the network policy comes from the supervisor at $T/sup.sock: only it can allow this"
	eq "policyFile $bad: the run still goes (403 for other.test)" \
	    "$(tail -n 1 "$T/r3.out")" 403
done
stop_tsup
done_testing
