#!/bin/sh
# The command transport against hostile reviewers, through review_driver:
# for each, the answer and its detail, no child process left (zombies
# included) and no leaked fd.
. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/review.sh"

H="example.com 443 connect"

drive allow -t 20000 command $H "$FIX/allow.sh"
check_case allow review:allow 'test says yes$'

drive deny -t 20000 command $H "$FIX/deny.sh"
check_case deny review:deny 'not on my watch$'

# The request object as a reviewer sees it, id echoed back.
drive record -t 20000 -w sbx-7 -d /home/u/proj command \
    registry.example 8443 http "$FIX/reviewer.py" allow "$T/record"
check_case record review:allow 'allow registry.example:8443$'
check "record: one request, all fields" $PY -c '
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert list(r) == ["version", "id", "type", "hostname", "port", "protocol",
                   "workerId", "cwd"], list(r)
assert r["version"] == 1 and r["type"] == "network"
assert r["hostname"] == "registry.example" and r["port"] == 8443
assert r["protocol"] == "http" and r["workerId"] == "sbx-7"
assert r["cwd"] == "/home/u/proj"
assert re.fullmatch("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", r["id"])
' "$T/record"

drive hang -t 2000 command $H "$FIX/hang.sh" "$T/hang.pid"
check_case hang review:timeout 'no answer within 2000 ms$'
# both_dead FILE: the reviewer and its child named in FILE are gone (a
# reviewer killed before it could fork and write FILE left nothing).
both_dead() {
	[ -s "$1" ] || { echo "# $1: killed before it forked"; return 0; }
	set -- $(cat "$1")
	dead "$1" && dead "$2"
}
check "hang: reviewer and its child killed" both_dead "$T/hang.pid"

drive exit3 -t 20000 command $H "$FIX/exit-nonzero.sh"
check_case exit3 review:error 'reviewer exited with status 3$'

drive signal -t 20000 command $H "$FIX/signal.sh"
check_case signal review:error 'reviewer killed by signal 15$'

drive garbage -t 20000 command $H "$FIX/garbage.sh"
check_case garbage review:error 'reply is not JSON'

drive empty -t 20000 command $H "$FIX/empty-line.sh"
check_case empty review:error 'reviewer wrote an empty line$'

drive noreply -t 20000 command $H "$FIX/no-reply.sh"
check_case noreply review:error 'reviewer wrote no reply$'

drive big -t 20000 command $H "$FIX/big.py"
check_case big review:error 'reply over 16384 octets$'

drive two -t 20000 command $H "$FIX/two-lines.sh"
check_case two review:error 'reviewer wrote more than one line$'

drive twoobj -t 20000 command $H "$FIX/two-objects.sh"
check_case twoobj review:error 'reply is not JSON'

drive wrongid -t 20000 command $H "$FIX/wrong-id.sh"
check_case wrongid review:error 'reply id does not match the request$'

drive badaction -t 20000 command $H "$FIX/bad-action.sh"
check_case badaction review:error 'reply action is not allow or deny$'

drive noexec -t 20000 command $H "$FIX/not-executable.sh"
check_case noexec review:error 'cannot run .*: Permission denied$'

drive missing -t 20000 command $H "$FIX/no-such-reviewer.sh"
check_case missing review:error 'cannot run .*: No such file or directory$'

# stderr goes to the diagnostic log, one line each, control bytes masked.
drive stderr -t 20000 command $H "$FIX/stderr.sh"
check_case stderr review:deny 'see stderr$'
check "stderr: logged as reviewer[pid]" \
    has_line "$T/stderr.err" '^review_driver: reviewer\[[0-9]+\]: hello from stderr$'
check "stderr: escape sequence masked" \
    has_line "$T/stderr.err" '^review_driver: reviewer\[[0-9]+\]: evil \?\[2J line$'
check "stderr: no raw escape byte in the log" \
    sh -c "! grep -q \"\$(printf '\\033')\" '$T/stderr.err'"

# A clean environment and no fd beyond 0-2, whatever the caller has.
SECRET_TOKEN=hunter2 drive env -t 20000 command $H "$FIX/env.py" 5</dev/null 7>"$T/junk"
check_case env review:deny \
    'env=LANG=C,(LC_CTYPE=C.UTF-8,)?PATH=/usr/bin:/bin,PISBX_REVIEW=1 fds= pgrp=own$'

# The leader answers and exits; its child holds stdout for ten minutes:
# the answer does not wait for it, and the child is killed.
drive straggler -t 60000 command $H "$FIX/straggler.sh" "$T/straggler.pid"
check_case straggler review:allow 'left a child$'
check "straggler: its child was killed" dead "$(cat "$T/straggler.pid")"

# The cap: ten at once, four allowed in flight -> exactly six busy.
drive cap -n 10 -M 4 -t 20000 command $H "$FIX/reviewer.py" allow
check "cap: six busy" [ "$(count cap review:busy)" -eq 6 ]
check "cap: four allowed" [ "$(count cap review:allow)" -eq 4 ]
check "cap: busy says why" expect cap 9 review:busy 'too many reviews in flight \(max 4\)$'
check "cap: clean" clean cap

drive caphang -n 10 -M 4 -t 1000 command $H "$FIX/hang.sh" "$T/caphang.pid"
check "cap+hang: six busy" [ "$(count caphang review:busy)" -eq 6 ]
check "cap+hang: four timed out" [ "$(count caphang review:timeout)" -eq 4 ]
check "cap+hang: clean" clean caphang

# Cancel: the reviewer is killed and the callback never runs.
drive cancel -n 3 -x 1000 -t 60000 command $H "$FIX/hang.sh" "$T/cancel.pid"
check "cancel: three cancelled" [ "$(grep -c '^cancelled ' "$T/cancel.out")" -eq 3 ]
check "cancel: no callback" sh -c "! grep -q '^review ' '$T/cancel.out'"
check "cancel: clean" clean cancel
check "cancel: reviewer and its child killed" both_dead "$T/cancel.pid"

# The caller frees the reviewer from inside a callback (a proxy dropping
# its last reference to an old config) while other reviews run.
drive freecb -F -n 3 -t 60000 command $H "$FIX/allow.sh"
check "free in callback: one answer, then freed" [ "$(count freecb review:allow)" -eq 1 ]
check "free in callback: said so" has_line "$T/freecb.out" '^freed in callback$'
check "free in callback: clean" clean freecb
drive freebig -F -t 60000 command $H "$FIX/big.py"
check "free in callback (oversized reply): answered" expect freebig 0 review:error 'reply over'
check "free in callback (oversized reply): clean" clean freebig

drive none none $H
check_case none no-reviewer '-$'

done_testing
