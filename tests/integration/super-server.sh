#!/bin/sh
# pisbx-supervisor on its own: the socket and capability it hands out,
# registration with the trusted config's policy, reviews answered by a
# review command (also from approval's real socket client), host-IPC
# reviews, unregister, the worker table on SIGUSR1, and hostile clients
# (wrong or missing capability, garbage, oversized frames, silent
# connections) that never take it down; replayed request ids and requests
# for another cwd than the registration's refused; reviews answered on
# the supervisor's own loop (no process per review); --help, --version.
. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$SUPERVISOR" ] || skip "no $SUPERVISOR"
DRIVER=$PISBX_BUILD/tests/helpers/review_driver

cat >"$T/conf.json" <<'EOF'
{"network": {"allowedDomains": ["a.example", "*.b.example:443"],
             "deniedDomains": ["*:22"]}}
EOF
cat >"$T/rev.py" <<'EOF'
#!/usr/bin/python3
import json, sys, time
req = json.loads(sys.stdin.readline())
with open(sys.argv[1], "a") as f:
    f.write(json.dumps(req) + "\n")
act, why = "deny", "not on my list"
if req.get("type") == "network":
    if req.get("hostname") == "slow.example":
        time.sleep(30)
    if req.get("hostname") == "ok.example":
        act, why = "allow", "fine by me"
elif req.get("type") == "host-ipc":
    if req.get("command", "").startswith("tmux"):
        act, why = "allow", "tmux is fine"
print(json.dumps({"id": req["id"], "action": act, "reason": why}))
EOF
chmod +x "$T/rev.py"

SOCK=$T/s.sock
spawn "$SUPERVISOR" --config "$T/conf.json" --socket "$SOCK" \
    --access-log "$T/access.log" --review-timeout 20000 \
    --review-command "$T/rev.py" "$T/rev.rec" >"$T/sup.out" 2>"$T/sup.err"
SPID=$LAST_PID
wait_file "$T/sup.out"
check "prints the export line with socket and capability" has_line \
    "$T/sup.out" "^export PISBX_SUPERVISOR_SOCKET='$SOCK' PISBX_SUPERVISOR_CAPABILITY=[0-9a-f]{64}\$"
C=$(sed -n 's/.*PISBX_SUPERVISOR_CAPABILITY=//p' "$T/sup.out")
check "the socket is mode 0600" [ "$(stat -c %a "$SOCK")" = 600 ]

# req TYPE WORKER [EXTRA-JSON-MEMBERS] [CAPABILITY] [CWD]: one request with
# a fresh id (in REQ_ID; the line in REQ_LINE), the reply on stdout.
req() {
	REQ_ID=r-$(cat /proc/sys/kernel/random/uuid)
	REQ_LINE="{\"version\":1,\"capability\":\"${4-$C}\",\"id\":\"$REQ_ID\",\"type\":\"$1\",\"workerId\":\"$2\",\"cwd\":\"${5:-/work/p}\"${3:+,$3}}"
	send "$SOCK" "$REQ_LINE"
}
jget() {	# FILE EXPR: print a Python expression over the reply r
	$PY -c 'import json,sys
r = json.loads(open(sys.argv[1]).read().splitlines()[0])
print(eval(sys.argv[2]))' "$1" "$2"
}

# Registration hands out exactly the trusted config's network policy.
req register w1 >"$T/reg1"
check "register: allowed" [ "$(jget "$T/reg1" 'r["action"]')" = allow ]
check "register: the reply carries the request's id" \
    [ "$(jget "$T/reg1" 'r["id"]')" = "$REQ_ID" ]
check "register: the config's network policy, nothing else" \
    [ "$(jget "$T/reg1" 'json.dumps(r["network"], sort_keys=True)')" = \
    '{"allowedDomains": ["a.example", "*.b.example:443"], "deniedDomains": ["*:22"]}' ]
req register w1 >"$T/reg1b"
check "register: a running workerId is not taken twice" \
    [ "$(jget "$T/reg1b" 'r["action"] + " " + r["reason"]')" = \
    "deny workerId already registered" ]

# Capabilities.
req register w9 "" "wrong-$C" >"$T/wrong"
check "wrong capability: denied" \
    [ "$(jget "$T/wrong" 'r["action"] + " " + r["reason"]')" = "deny bad capability" ]
send "$SOCK" '{"version":1,"id":"x1","type":"register","workerId":"w9","cwd":"/"}' >"$T/nocap"
check "missing capability: denied" \
    [ "$(jget "$T/nocap" 'r["reason"]')" = "bad capability" ]
req register w9 "" "${C%?}" >"$T/short"
check "a capability one character short: denied" \
    [ "$(jget "$T/short" 'r["reason"]')" = "bad capability" ]
check "wrong capabilities are logged" has_line "$T/sup.err" \
    'refused a request with a (wrong|missing) capability'

# Reviews through the review command.
req network w1 '"hostname":"ok.example","port":443,"protocol":"connect"' >"$T/n1"
check "network review: the reviewer's allow" \
    [ "$(jget "$T/n1" 'r["action"] + "/" + r["reason"] + "/" + r["id"]')" = \
    "allow/fine by me/$REQ_ID" ]
req network w1 '"hostname":"no.example","port":443,"protocol":"http"' >"$T/n2"
check "network review: the reviewer's deny" \
    [ "$(jget "$T/n2" 'r["action"] + "/" + r["reason"]')" = "deny/not on my list" ]
check "the reviewer never sees the capability" \
    sh -c "! grep -q -- '$C' '$T/rev.rec'"
req network nobody '"hostname":"ok.example","port":443,"protocol":"http"' >"$T/n3"
check "network review from an unregistered worker: denied" \
    [ "$(jget "$T/n3" 'r["action"] + "/" + r["reason"]')" = "deny/unknown worker" ]
req network w1 '"hostname":"ok.example","port":0,"protocol":"http"' >"$T/n4"
check "malformed network review: denied" \
    [ "$(jget "$T/n4" 'r["reason"]')" = "malformed network request" ]

req host-ipc w1 '"operation":"execute-host","command":"tmux ls","rule":"preflight-prefix:tmux"' >"$T/h1"
check "host-ipc review: allowed by the reviewer" \
    [ "$(jget "$T/h1" 'r["action"]')" = allow ]
req host-ipc w1 '"operation":"execute-host","command":"docker ps","rule":"unix-socket-eperm"' >"$T/h2"
check "host-ipc review: denied by the reviewer" \
    [ "$(jget "$T/h2" 'r["action"]')" = deny ]
check "the reviewer saw the host-ipc request whole" $PY -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
h = [r for r in rs if r["type"] == "host-ipc"]
assert len(h) == 2, h
assert h[0]["operation"] == "execute-host" and h[0]["command"] == "tmux ls"
assert h[0]["rule"] == "preflight-prefix:tmux" and h[0]["cwd"] == "/work/p"
assert h[0]["workerId"] == "w1" and h[0]["version"] == 1
' "$T/rev.rec"

# approval's own socket client (what pisbx-run's proxy uses) against it.
if [ -x "$DRIVER" ]; then
	req register drv >/dev/null
	PISBX_CAPABILITY=$C "$DRIVER" -t 20000 -w drv -d /work/p \
	    "socket:$SOCK" ok.example 443 connect >"$T/drv1" 2>&1
	check "approval's socket client: allowed" has_line "$T/drv1" \
	    '^review 0 async review:allow fine by me'
	PISBX_CAPABILITY=$C "$DRIVER" -t 20000 -w drv -d /work/p \
	    "socket:$SOCK" evil.example 443 socks5 >"$T/drv2" 2>&1
	check "approval's socket client: denied" has_line "$T/drv2" \
	    '^review 0 async review:deny not on my list'
else
	not_ok "no $DRIVER (make tests-build)"
fi

# A reviewer that takes its time holds up nobody else.
req network w1 '"hostname":"slow.example","port":443,"protocol":"http"' \
    >"$T/slow" 2>&1 &
SLOW=$!
_pids="$_pids $SLOW"
i=0
while ! grep -q slow.example "$T/rev.rec" 2>/dev/null && [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
req network w1 '"hostname":"ok.example","port":443,"protocol":"http"' >"$T/fast"
check "a slow review does not block another" \
    [ "$(jget "$T/fast" 'r["action"]')" = allow ]
check "... which is still pending" kill -0 "$SLOW"
# The reviews run on the supervisor's own loop: its only children are
# the review commands, never a copy of itself per review.
kids=$(for st in /proc/[0-9]*/stat; do
	sed -n "s/^[0-9]* (\(.*\)) . $SPID .*/\1/p" "$st" 2>/dev/null
done)
case $kids in
*pisbx-supervis*) not_ok "a review forked the supervisor (children: $(echo $kids))" ;;
*) ok "no process per review: the children are the reviewers ($(echo $kids))" ;;
esac
kill "$SLOW" 2>/dev/null
wait "$SLOW" 2>/dev/null
i=0
while [ -n "$(for st in /proc/[0-9]*/stat; do sed -n "s/^[0-9]* (.*) . $SPID .*/x/p" "$st" 2>/dev/null; done)" ] &&
    [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
check "a client that goes away cancels its review (the reviewer is gone)" \
    [ $i -lt 100 ]
check_rec_slow() { grep -q '"slow.example".*"review:error"\|"slow.example"' "$T/access.log"; }

# Replays: an id is good for one request, whatever the line asks.
req register w6 >"$T/reg6"
REG6=$REQ_LINE
send "$SOCK" "$REG6" >"$T/reg6b"
check "a replayed register line: denied" \
    [ "$(jget "$T/reg6b" 'r["action"] + "/" + r["reason"]')" = "deny/replayed request id" ]
req network w6 '"hostname":"ok.example","port":443,"protocol":"http"' >"$T/n6"
N6=$REQ_LINE
send "$SOCK" "$N6" >"$T/n6b"
check "a replayed network review: denied without asking" \
    [ "$(jget "$T/n6b" 'r["action"] + "/" + r["reason"]')" = "deny/replayed request id" ]
send "$SOCK" "$(printf '%s' "$N6" | sed 's/"type":"network"/"type":"unregister"/')" >"$T/n6c"
check "the same id on another type: denied" \
    [ "$(jget "$T/n6c" 'r["reason"]')" = "replayed request id" ]
req unregister w6 >"$T/u6"
check "w6 unregisters" [ "$(jget "$T/u6" 'r["action"]')" = allow ]
send "$SOCK" "$REG6" >"$T/reg6c"
check "a replayed register cannot bring a retired worker back" \
    [ "$(jget "$T/reg6c" 'r["reason"]')" = "replayed request id" ]
check "replays are logged" has_line "$T/access.log" \
    '"decision":"deny","reason":"replayed request id"'

# A worker is bound to the cwd it registered with.
req register w7 >"$T/reg7"
req unregister w7 "" "$C" /elsewhere >"$T/u7"
check "unregister with another cwd: denied" \
    [ "$(jget "$T/u7" 'r["action"] + "/" + r["reason"]')" = \
    "deny/cwd does not match the registration" ]
req network w7 '"hostname":"ok.example","port":443,"protocol":"http"' "$C" /elsewhere >"$T/n7"
check "a network review with another cwd: denied" \
    [ "$(jget "$T/n7" 'r["reason"]')" = "cwd does not match the registration" ]
req host-ipc w7 '"operation":"execute-host","command":"tmux ls","rule":"preflight-prefix:tmux"' "$C" /elsewhere >"$T/h7"
check "a host-ipc review with another cwd: denied" \
    [ "$(jget "$T/h7" 'r["reason"]')" = "cwd does not match the registration" ]
check "the reviewer never saw the other cwd" \
    sh -c "! grep -q /elsewhere '$T/rev.rec'"
req network w7 '"hostname":"ok.example","port":443,"protocol":"http"' >"$T/n7b"
check "w7 is still registered and reviewed in its own cwd" \
    [ "$(jget "$T/n7b" 'r["action"]')" = allow ]
req unregister w7 >"$T/u7b"
check "w7 unregisters from its own cwd" [ "$(jget "$T/u7b" 'r["action"]')" = allow ]

# Hostile clients.
send "$SOCK" 'this is not json' >"$T/g1"
check "garbage: denied with a reason" \
    [ "$(jget "$T/g1" 'r["action"]')" = deny ]
$PY -c 'print("{\"x\":\"" + "a" * 20000 + "\"}")' >"$T/bigline"
send "$SOCK" "$(cat "$T/bigline")" >"$T/g2" 2>&1
check "a frame over 16 KiB is refused and logged" has_line "$T/sup.err" \
    'request frame over 16384 octets'
send "$SOCK" '{"version":2,"id":"v2","capability":"x"}' >"$T/g3"
check "another protocol version: denied" \
    [ "$(jget "$T/g3" 'r["reason"]')" = "unsupported protocol version" ]
req teleport w1 >"$T/g4"
check "unknown type: denied" \
    [ "$(jget "$T/g4" 'r["reason"]')" = "unknown request type" ]
send "$SOCK" "{\"version\":1,\"capability\":\"$C\",\"id\":\"bad\",\"type\":\"register\",\"workerId\":\"../../x\",\"cwd\":\"/\"}" >"$T/g5"
check "a workerId that is not a token: denied" \
    [ "$(jget "$T/g5" 'r["action"]')" = deny ]
# --help and --version.
"$SUPERVISOR" --help >"$T/help.out" 2>&1
check "--help: exit 0 and the usage" sh -c "[ $? -eq 0 ] && grep -q '^usage: pisbx-supervisor' '$T/help.out' && grep -q -- '--review-command' '$T/help.out'"
"$SUPERVISOR" -h >/dev/null 2>&1
check "-h: exit 0" [ $? -eq 0 ]
out=$("$SUPERVISOR" --version 2>&1)
check "--version: exit 0" [ $? -eq 0 ]
check "--version: pisbx-supervisor VERSION" sh -c "printf '%s' '$out' | grep -Eqx 'pisbx-supervisor [0-9]+\.[0-9]+\.[0-9]+'"
"$SUPERVISOR" --bogus >/dev/null 2>"$T/bogus.err"
check "an unknown option: exit 2" [ $? -eq 2 ]
check "... with the usage on stderr" grep -q '^usage: pisbx-supervisor' "$T/bogus.err"

# A connection that says nothing stays open beside the others.
$PY -c 'import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(30)' \
    "$SOCK" &
IDLE=$!
_pids="$_pids $IDLE"
req register w2 >"$T/reg2"
check "still serving after every bad client" \
    [ "$(jget "$T/reg2" 'r["action"]')" = allow ]
# w3 registers from a process that stays alive, as a launcher does.
$PY -c 'import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n"); print(s.recv(4096).decode(), flush=True)
time.sleep(30)' "$SOCK" "{\"version\":1,\"capability\":\"$C\",\"id\":\"w3r\",\"type\":\"register\",\"workerId\":\"w3\",\"cwd\":\"/work/p\"}" >"$T/reg3" &
W3=$!
_pids="$_pids $W3"
wait_file "$T/reg3"
check "the supervisor is alive" kill -0 "$SPID"
kill "$IDLE" 2>/dev/null

# Unregister, then the table.
req unregister w1 >"$T/u1"
check "unregister: acknowledged" [ "$(jget "$T/u1" 'r["action"]')" = allow ]
req unregister w1 >"$T/u2"
check "unregister twice: unknown worker" \
    [ "$(jget "$T/u2" 'r["reason"]')" = "unknown worker" ]
: >"$T/sup.err.before"
cp "$T/sup.err" "$T/sup.err.before"
kill -USR1 "$SPID"
i=0
while ! grep -q '^w3 ' "$T/sup.err" && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
check "SIGUSR1: the table's header" has_line "$T/sup.err" \
    '^WORKER +STATE +STARTED +REQUESTS +PID +CWD$'
check "SIGUSR1: w1 exited, with its requests counted" has_line "$T/sup.err" \
    '^w1 +exited +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z +[0-9]+ +[0-9]+ +/work/p$'
n1=$(sed -n 's/^w1 \+exited \+[^ ]\+ \+\([0-9]\+\) .*/\1/p' "$T/sup.err")
check "SIGUSR1: w1's six reviews counted" [ "$n1" = 6 ]
check "SIGUSR1: w3 running" has_line "$T/sup.err" '^w3 +running .* /work/p$'
check "SIGUSR1: a registered client that went away shows as lost" \
    has_line "$T/sup.err" '^w2 +lost '
kill "$W3" 2>/dev/null
check "access log: one record per request with its decision" $PY -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
k = {(r.get("type"), r.get("hostname", r.get("command")), r["decision"], r["reason"]) for r in rs}
want = {("register", None, "allow", "registered"),
        ("network", "ok.example", "allow", "review:allow"),
        ("network", "no.example", "deny", "review:deny"),
        ("host-ipc", "tmux ls", "allow", "review:allow"),
        ("unregister", None, "allow", "unregistered"),
        ("register", None, "deny", "bad capability")}
assert want <= k, want - k
for r in rs:
    assert "capability" not in r and r["ts"].endswith("Z")
' "$T/access.log"
check "access log: malformed requests have their line and reason" $PY -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
why = [r["reason"] for r in rs if r["decision"] == "deny"]
assert any(x.startswith("request is not a JSON object") for x in why), why
assert "request frame over 16384 octets" in why, why
assert "unsupported protocol version" in why, why
' "$T/access.log"

# One path, one supervisor.
"$SUPERVISOR" --config "$T/conf.json" --socket "$SOCK" >/dev/null 2>"$T/two.err"
check "a second supervisor on a live socket refuses" has_line "$T/two.err" \
    'another process is listening there'

kill "$SPID"
wait "$SPID"
rc=$?
check "SIGTERM: exit 0" [ "$rc" -eq 0 ]
check "SIGTERM: the socket is removed" [ ! -e "$SOCK" ]

# The agent host's own capability; a stale socket file replaced.
$PY -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$SOCK"
PISBX_SUPERVISOR_CAPABILITY=host-chosen-secret spawn "$SUPERVISOR" \
    --config "$T/conf.json" --socket "$SOCK" >"$T/sup2.out" 2>"$T/sup2.err"
SPID2=$LAST_PID
wait_file "$T/sup2.out"
check "capability from the environment: not printed" \
    sh -c "! grep -q CAPABILITY '$T/sup2.out' && grep -q '^export PISBX_SUPERVISOR_SOCKET=' '$T/sup2.out'"
C=host-chosen-secret
req register w5 >"$T/reg5"
check "capability from the environment: accepted" \
    [ "$(jget "$T/reg5" 'r["action"]')" = allow ]
req network w5 '"hostname":"ok.example","port":443,"protocol":"http"' >"$T/n5"
check "no reviewer configured: reviews denied" \
    [ "$(jget "$T/n5" 'r["action"] + "/" + r["reason"]')" = "deny/no-reviewer" ]
kill "$SPID2"
wait "$SPID2"

$PY -c 'import json
print(json.dumps({"network": {"allowedDomains":
    ["host%d.example" % i for i in range(2000)]}}))' >"$T/huge.json"
"$SUPERVISOR" --socket "$T/x.sock" --config "$T/huge.json" >/dev/null 2>"$T/huge.err"
check "a policy too big for one reply frame: refuses to start" \
    grep -q 'a registration reply holds at most' "$T/huge.err"
"$SUPERVISOR" --socket "$T/x.sock" --config "$T/nope.json" >/dev/null 2>"$T/bad.err"
check "a missing config: refuses to start" [ $? -eq 78 ]
check "... and no socket left" [ ! -e "$T/x.sock" ]
done_testing
