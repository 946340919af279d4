#!/bin/sh
# A review that is pending when a reload (SIGHUP) comes is decided under
# the new config when its answer arrives: a host the new deny list
# covers is denied (deny-list reason) whatever the reviewer says; an
# answer from a reviewer the reload removed or changed is dropped
# (review:dropped) and remembers nothing; one from the same reviewer
# holds for that request only.  Approvals remembered for the run (scope
# run, and a kept-alive connection's own) end with a reload.
#
# Reviewed destinations must be public to be dialled, so the scenario runs
# in a private network namespace where 11.0.0.1 sits on lo.
. "$(dirname "$0")/../lib/netns.sh"
ip addr add 11.0.0.1/32 dev lo || exit 1

. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/review.sh"

spawn $PY "$FIX/origin.py" 11.0.0.1 "$T/origin.port"
wait_file "$T/origin.port" 200 || { not_ok "origin did not start"; exit 1; }
O=$(cat "$T/origin.port")
dns_start test=11.0.0.1
mkdir "$T/rv"
chmod 777 "$T/rv"

# The slow reviewer: records the request, waits for DIR/go (at most
# 10 s), then allows for the rest of the run (scope run).
cat >"$T/slow.sh" <<'EOF2'
#!/bin/sh
read -r req
printf '%s\n' "$req" >>"$1/requests"
i=0
while [ ! -e "$1/go" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
printf '{"action":"allow","scope":"run","reason":"slow yes"}\n'
EOF2
cp "$T/slow.sh" "$T/slow2.sh"
chmod 755 "$T/slow.sh" "$T/slow2.sh"

# conf FILE REVIEWER|none [DENY...]
conf() {
	_f=$1 _r=$2; shift 2
	$PY - "$DNS_PORT" "$_f" "$_r" "$T/rv" "$@" <<'EOF2'
import json, sys
dns, out, rv, d = sys.argv[1:5]
c = {"network": {"allowedDomains": [], "deniedDomains": sys.argv[5:]},
     "resolver": {"servers": ["127.0.0.1:" + dns], "timeoutMs": 2000}}
if rv != "none":
    c["review"] = {"command": [rv, d], "timeoutMs": 20000}
json.dump(c, open(out, "w"))
EOF2
	chmod 644 "$_f"
}
asked() {
	[ -f "$T/rv/requests" ] || { echo 0; return; }
	grep -c "\"hostname\":\"$1\"" "$T/rv/requests"
}
# wait_asked HOST N: until the reviewer has N requests for HOST.
wait_asked() {
	_i=0
	while [ "$(asked "$1")" -lt "$2" ] && [ $_i -lt 200 ]; do
		sleep 0.05; _i=$((_i + 1))
	done
}
get() {
	curl -s -o /dev/null -w '%{http_code}' -m 15 -x "http://127.0.0.1:$PX_PORT" "$@"
}
hup() {
	_n=$(grep -c 'configuration reloaded' "$PX_ERR")
	kill -HUP "$PX_PID"
	_i=0
	while [ "$(grep -c 'configuration reloaded' "$PX_ERR")" -le "$_n" ] &&
	    [ $_i -lt 100 ]; do
		sleep 0.05; _i=$((_i + 1))
	done
}
# pending URL CONFIG: a request whose review is answered only after a
# reload to CONFIG; its status in $CODE.
pending() {
	rm -f "$T/rv/go"
	_n=$(asked "$2")
	get "$1" >"$T/code" &
	_g=$!
	wait_asked "$2" $((_n + 1))
	cp "$3" "$T/conf.json"
	hup
	: >"$T/rv/go"
	wait "$_g"
	CODE=$(cat "$T/code")
}

conf "$T/slow.json" "$T/slow.sh"
conf "$T/slow-deny.json" "$T/slow.sh" late.test
conf "$T/slow2.json" "$T/slow2.sh"
conf "$T/none.json" none
cp "$T/slow.json" "$T/conf.json"
px_start "$T/conf.json" -v

# 1. The new deny list covers the host: denied, the answer ignored.
: >"$PX_LOG"
pending "http://late.test:$O/" late.test "$T/slow-deny.json"
eq "newly denied during its review: 403" "$CODE" 403
check_log "... with the deny-list reason" event=decision host=late.test \
    decision=deny reason=deny-list:late.test
cp "$T/slow.json" "$T/conf.json"
hup
: >"$T/rv/go"
n=$(asked late.test)
eq "... and its scope run was not kept" "$(get "http://late.test:$O/")" 200
eq "... the next request is asked again" "$(asked late.test)" $((n + 1))

# 2. The reviewer was removed: the answer is dropped, nothing remembered.
: >"$PX_LOG"
cp "$T/slow.json" "$T/conf.json"
hup
pending "http://gone.test:$O/" gone.test "$T/none.json"
eq "reviewer removed during its review: 403" "$CODE" 403
check_log "... review:dropped" event=decision host=gone.test \
    decision=deny reason=review:dropped error~'dropped by a configuration reload'
eq "... the next request has no reviewer" "$(get "http://gone.test:$O/")" 403
check_log "... no-reviewer, not a late scope run" event=decision \
    host=gone.test decision=deny reason=no-reviewer

# 3. The reviewer was changed: dropped too.
: >"$PX_LOG"
cp "$T/slow.json" "$T/conf.json"
hup
pending "http://swap.test:$O/" swap.test "$T/slow2.json"
eq "reviewer changed during its review: 403" "$CODE" 403
check_log "... review:dropped" event=decision host=swap.test \
    decision=deny reason=review:dropped

# 4. The same reviewer: the answer holds for that request only.
: >"$PX_LOG"
cp "$T/slow.json" "$T/conf.json"
hup
pending "http://same.test:$O/" same.test "$T/slow.json"
eq "same reviewer after a reload: its allow holds" "$CODE" 200
n=$(asked same.test)
eq "... for that request only" "$(get "http://same.test:$O/")" 200
eq "... the next one is asked again" "$(asked same.test)" $((n + 1))

# 5. A scope-run approval ends with a reload, and a deny list always wins.
: >"$T/rv/go"
eq "scope run: allowed" "$(get "http://kept.test:$O/")" 200
n=$(asked kept.test)
eq "... and remembered" "$(get "http://kept.test:$O/") $(asked kept.test)" "200 $n"
conf "$T/conf.json" "$T/slow.sh" kept.test
hup
eq "... a reload that denies it: denied" "$(get "http://kept.test:$O/")" 403
check_log "... deny-list" event=decision host=kept.test decision=deny \
    reason=deny-list:kept.test

# 6. Open tunnels a reviewer approved: a reload that keeps the reviewer
# keeps them; one that removes it closes them (policy-changed).
cp "$T/slow.json" "$T/conf.json"
hup
: >"$T/rv/go"
cat >"$T/tun.py" <<EOF2
import os, socket, sys, time
def tunnel(host):
    s = socket.create_connection(("127.0.0.1", $PX_PORT))
    s.sendall(("CONNECT %s:$O HTTP/1.1\\r\\nHost: %s:$O\\r\\n\\r\\n"
               % (host, host)).encode())
    head = b""
    while b"\\r\\n\\r\\n" not in head:
        head += s.recv(1)
    return s, head.split(b" ")[1].decode()
def get(s):
    try:
        s.sendall(b"GET /t HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n")
        d = s.recv(200)
        return d.split(b" ")[1].decode() if d else "eof"
    except OSError:
        return "error"
def step(name):
    with open("$T/" + name + ".tmp", "w") as f:
        f.write(out)
    os.rename("$T/" + name + ".tmp", "$T/" + name)
    for _ in range(300):
        if os.path.exists("$T/go-" + name):
            return
        time.sleep(0.05)
t1, c1 = tunnel("tun1.test")
t2, c2 = tunnel("tun2.test")
out = c1 + " " + c2
step("t1")
out = get(t1)
step("t2")
out = get(t2)
step("t3")
EOF2
spawn "$PY" "$T/tun.py"
wait_file "$T/t1" 200
eq "two tunnels the reviewer approved" "$(cat "$T/t1" 2>/dev/null)" "200 200"
hup
touch "$T/go-t1"
wait_file "$T/t2" 200
eq "a reload with the same reviewer: the tunnel relays on" \
    "$(cat "$T/t2" 2>/dev/null)" 200
eq "... and was not closed by the reload" \
    "$(log_count event=close host=tun2.test end=policy-changed)" 0
cp "$T/none.json" "$T/conf.json"
hup
check_log "a reload without the reviewer closes the other tunnel" \
    event=close host=tun2.test end=policy-changed \
    "error~refused by the new policy: review:dropped"
touch "$T/go-t2"
wait_file "$T/t3" 200
eq "... which the client sees" "$(cat "$T/t3" 2>/dev/null)" eof
touch "$T/go-t3"

check "proxy still running" px_alive
px_done
