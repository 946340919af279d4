#!/bin/sh
# A name that resolves to a non-public address is refused after a
# reviewer allows it (only an exact allow entry reaches one): the person
# is told before answering.  The hosts file is read for the answer -- a
# local file: the name reaches no DNS before it is approved -- and a
# name that is local by its form (one label, .local, .internal, ...)
# gets the conditional note.  The note is in the tty question (above
# "Allow this connection once?"), in the request JSON as "warning" for a
# reviewer command, and in what pisbx-run sends its supervisor; a public
# name gets none.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
FIX=$PISBX_TOP/tests/fixtures/reviewers

srv_start http web
WEB=$SRV_PORT
cat >"$T/hosts" <<EOF
127.0.0.1 devbox.test
10.1.2.3 nas.test
1.1.1.1 far.test
EOF
dns_start any.test=127.0.0.1
# conf FILE REVIEW-JSON: the hosts file above, no list entry.
conf() {
	cat >"$1" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": []},
 "resolver": {"hostsFile": "$T/hosts", "servers": ["127.0.0.1:$DNS_PORT"], "timeoutMs": 2000},
 "review": $2}
EOF
}

# 1. The terminal: the note comes before the question; "y" still ends
#    in non-public-address, as the note said.
conf "$T/tty.json" '{"mode": "tty", "timeoutMs": 20000}'
TP=$(free_port)
spawn $PY "$FIX/pty-answer.py" --pid-file "$T/tty.pid" --run "$PROXY" y -- \
    --config "$T/tty.json" --listen "127.0.0.1:$TP" --access-log "$T/tty.log" \
    >"$T/tty.out" 2>&1
runner=$LAST_PID
wait_port 127.0.0.1 "$TP" 200
code=$(curl -s -o "$T/tty.body" -w '%{http_code}' --max-time 30 \
    -x "http://127.0.0.1:$TP" "http://devbox.test:$WEB/")
eq "after y, devbox.test (127.0.0.1) is still refused" "$code" 403
kill "$(cat "$T/tty.pid")"
wait "$runner"
tr -d '\r' <"$T/tty.out" >"$T/tty.txt"
NOTE="  note:     devbox.test is 127.0.0.1 (loopback) in $T/hosts: refused even when allowed here (non-public-address); to allow it, add the exact entry \"devbox.test:$WEB\" to network.allowedDomains in $T/tty.json (only an exact entry reaches a non-public address)"
check "the question says why, and the entry, before the answer" \
    grep -qxF "$NOTE" "$T/tty.txt"
nl=$(grep -nF "  note:     devbox.test" "$T/tty.txt" | cut -d: -f1)
ql=$(grep -n "Allow this connection once?" "$T/tty.txt" | cut -d: -f1)
check "... above the question" test -n "$nl" -a -n "$ql" -a "${nl:-0}" -lt "${ql:-0}"
contains "the 403 body says non-public-address" "$(cat "$T/tty.body")" \
    "non-public-address"

# 2. A reviewer command gets it as "warning"; a public name gets none.
cat >"$T/rec.sh" <<EOF
#!/bin/sh
read -r req
printf '%s\n' "\$req" >>"$T/requests"
printf '{"action":"deny","reason":"recorded"}\n'
EOF
chmod 755 "$T/rec.sh"
conf "$T/cmd.json" "{\"command\": [\"$T/rec.sh\"], \"timeoutMs\": 20000}"
px_start "$T/cmd.json"
for h in nas.test far.test any.test buildbox printer.local; do
	curl -s -o /dev/null --max-time 20 -x "http://127.0.0.1:$PX_PORT" \
	    "http://$h:$WEB/"
done
"$PY" - "$T/requests" "$WEB" "$T/cmd.json" "$T/hosts" >"$T/req.check" 2>&1 <<'EOF'
import json, sys
reqs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    reqs[r["hostname"]] = r
port, conf, hosts = sys.argv[2], sys.argv[3], sys.argv[4]
hint = ('to allow it, add the exact entry "%%s:%s" to network.allowedDomains '
        'in %s (only an exact entry reaches a non-public address)' %
        (port, conf))
want = {
    "nas.test": "nas.test is 10.1.2.3 (rfc1918) in %s: refused even when "
                "allowed here (non-public-address); " % hosts +
                hint % "nas.test",
    "buildbox": "buildbox is a local name: if it resolves to a non-public "
                "address, that is refused even when allowed here "
                "(non-public-address); " + hint % "buildbox",
    "printer.local": "printer.local is a local name: if it resolves to a "
                     "non-public address, that is refused even when "
                     "allowed here (non-public-address); " +
                     hint % "printer.local",
}
for h in ("nas.test", "far.test", "any.test", "buildbox", "printer.local"):
    got = reqs[h].get("warning")
    if got != want.get(h):
        print("%s: warning %r, want %r" % (h, got, want.get(h)))
        sys.exit(1)
print("ok")
EOF
eq "the request's warning: hosts file, local form, none for the rest" \
    "$(cat "$T/req.check")" ok
px_done
