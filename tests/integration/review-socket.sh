#!/bin/sh
# The supervisor (Unix socket) transport against a hostile test
# supervisor, through review_driver: the answer and its detail for each
# misbehaviour, no leaked fd, no child process.
. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/review.sh"

H="example.com 443 connect"
S="socket:$T/sup.sock"
export PISBX_CAPABILITY="$CAP"

supervisor allow "$T/record"
drive allow -t 20000 -w sbx-9 -d /home/u/p $S registry.example 443 socks5
check_case allow review:allow 'supervisor allows registry.example$'
check "allow: the request as the supervisor saw it" $PY -c '
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert sorted(r) == sorted(["version", "capability", "id", "type", "workerId",
    "cwd", "hostname", "port", "protocol"]), list(r)
assert r["version"] == 1 and r["type"] == "network"
assert r["capability"] == sys.argv[2]
assert r["hostname"] == "registry.example" and r["port"] == 443
assert r["protocol"] == "socks5" and r["workerId"] == "sbx-9"
assert r["cwd"] == "/home/u/p"
assert re.fullmatch("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", r["id"])
' "$T/record" "$CAP"

# One connection per request: several at once, each its own answer.
drive many -n 8 -t 20000 $S $H
check "many: eight allowed" [ "$(count many review:allow)" -eq 8 ]
check "many: clean" clean many

supervisor deny
drive deny -t 20000 $S $H
check_case deny review:deny 'supervisor says no$'

supervisor wrong-id
drive wrongid -t 20000 $S $H
check_case wrongid review:error 'reply id does not match the request$'

supervisor no-id
drive noid -t 20000 $S $H
check_case noid review:error 'reply has no id string$'

# The first request is answered; the second gets the first's id back.
supervisor replay
drive replay -n 2 -t 20000 $S $H
check "replay: one allowed" [ "$(count replay review:allow)" -eq 1 ]
check "replay: one error" [ "$(count replay review:error)" -eq 1 ]
check "replay: named" has_line "$T/replay.out" \
    'review:error (reply carries a replayed id|reply id does not match the request)$'
check "replay: clean" clean replay

supervisor two
drive two -t 20000 $S $H
check_case two review:error 'reply id does not match the request$'

supervisor hang
drive hang -t 1000 $S $H
check_case hang review:timeout 'no answer within 1000 ms$'

supervisor close
drive close -t 20000 $S $H
check_case close review:error 'supervisor closed the connection without a reply$'

supervisor close-mid
drive closemid -t 20000 $S $H
check_case closemid review:error 'supervisor closed the connection mid-reply$'

supervisor big
drive big -t 20000 $S $H
check_case big review:error 'reply frame over 16384 octets$'

supervisor garbage
drive garbage -t 20000 $S $H
check_case garbage review:error 'reply is not JSON'

# The capability: wrong, unset, empty, or from another variable.
supervisor allow
PISBX_CAPABILITY=not-it drive wrongcap -t 20000 $S $H
check_case wrongcap review:deny 'bad capability$'
env -u PISBX_CAPABILITY "$DRIVER" -t 20000 $S $H >"$T/nocap.out" 2>"$T/nocap.err"
check_case nocap review:error 'no capability$'
PISBX_CAPABILITY= drive emptycap -t 20000 $S $H
check_case emptycap review:error 'no capability$'
MY_CAP="$CAP" PISBX_CAPABILITY=not-it drive envcap -e MY_CAP -t 20000 $S $H
check_case envcap review:allow 'supervisor allows example.com$'
PISBX_CAPABILITY=not-it drive argcap -k "$CAP" -t 20000 $S $H
check_case argcap review:allow 'supervisor allows example.com$'

drive nosock -t 20000 "socket:$T/none.sock" $H
check_case nosock review:error "connect .*none.sock: No such file or directory$"

# The cap and cancel with a supervisor that never answers.
supervisor hang
drive cap -n 6 -M 2 -t 1000 $S $H
check "cap: four busy" [ "$(count cap review:busy)" -eq 4 ]
check "cap: two timed out" [ "$(count cap review:timeout)" -eq 2 ]
check "cap: clean" clean cap

drive cancel -n 3 -x 500 -t 60000 $S $H
check "cancel: three cancelled" [ "$(grep -c '^cancelled ' "$T/cancel.out")" -eq 3 ]
check "cancel: no callback" sh -c "! grep -q '^review ' '$T/cancel.out'"
check "cancel: clean" clean cancel

stop_supervisor
done_testing
