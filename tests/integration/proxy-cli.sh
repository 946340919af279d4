#!/bin/sh
# pisbx-proxy's command line: --help, --version, --check on good and bad
# configs (exit 0 / 78, the error names the key), --explain JSON, a bad
# option, several listeners (one IPv6), the access log on stdout ("-").
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

out=$("$PROXY" --help 2>&1); rc=$?
eq "--help exits 0" "$rc" 0
contains "--help mentions --config" "$out" "--config"
out=$("$PROXY" --version 2>&1)
contains "--version prints the version" "$out" "0."
"$PROXY" --no-such-option >/dev/null 2>&1
rc=$?
if [ $rc -ne 0 ]; then ok "unknown option refused ($rc)"; else not_ok "unknown option accepted"; fi

cat >"$T/good.json" <<'J'
{"network": {"allowedDomains": ["example.com", "*.example.org"], "deniedDomains": ["*:22"]},
 "proxy": {"maxConnections": 100, "connectTimeoutMs": 5000}}
J
out=$("$PROXY" --config "$T/good.json" --check 2>&1); rc=$?
eq "--check good config: exit 0" "$rc" 0
contains "--check good config: configuration OK" "$out" "configuration OK"
out=$("$PROXY" --config "$PISBX_TOP/conf/default.json" --check 2>&1)
contains "--check conf/default.json" "$out" "configuration OK"
if [ -f "$PISBX_TOP/conf/example.json" ]; then
	out=$("$PROXY" --config "$PISBX_TOP/conf/example.json" --check 2>&1)
	eq "--check conf/example.json: OK, no warning" "$out" \
	    "$PISBX_TOP/conf/example.json: configuration OK"
fi

# A reviewer that cannot run: --check still passes (every review is a
# deny, the safe outcome) and warns, naming the key and the program.
cat >"$T/norev.json" <<J
{"review": {"command": ["$T/no-such-reviewer", "--default-deny"]}}
J
"$PROXY" --config "$T/norev.json" --check >"$T/norev.out" 2>"$T/norev.err"
eq "--check, reviewer missing: exit 0" "$?" 0
eq "... configuration OK" "$(cat "$T/norev.out")" "$T/norev.json: configuration OK"
contains "... a warning with the key and the path" "$(cat "$T/norev.err")" \
    "pisbx-proxy: warning: $T/norev.json: \$.review.command[0]: the reviewer \"$T/no-such-reviewer\" cannot be run: No such file or directory"

# credentials: only pisbx-run makes placeholders (for the command it
# starts); pisbx-proxy on its own says it masks and injects nothing.
cat >"$T/creds.json" <<'J'
{"network": {"allowedDomains": ["api.test"]},
 "credentials": {"allowPlaintextInject": true,
  "envVars": [{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["api.test"]}]}}
J
nothing="pisbx-proxy on its own masks and injects nothing: only pisbx-run, which starts the command, does"
"$PROXY" --config "$T/creds.json" --check -v >"$T/creds.out" 2>"$T/creds.err"
eq "--check -v, credentials: exit 0" "$?" 0
contains "... a note: nothing masked standalone" "$(cat "$T/creds.err")" \
    "$T/creds.json: \$.credentials: $nothing"
"$PROXY" --config "$T/creds.json" --check >"$T/creds.out" 2>"$T/creds.err"
contains "--check, credentials: the note counted" "$(cat "$T/creds.err")" \
    "1 note on keys accepted without effect here"
"$PROXY" --config "$T/creds.json" --listen 127.0.0.1:0 >"$T/creds.out" \
    2>"$T/creds.err" &
cpid=$!
i=0
while [ $i -lt 50 ] && ! grep -q "listening" "$T/creds.err"; do
	sleep 0.1; i=$((i + 1))
done
kill "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
contains "serving, credentials: a warning line at start" \
    "$(cat "$T/creds.err")" \
    "pisbx-proxy: warning: $T/creds.json: \$.credentials: $nothing"

bad() {
	printf '%s\n' "$2" >"$T/bad.json"
	out=$("$PROXY" --config "$T/bad.json" --check 2>&1); rc=$?
	eq "--check $1: exit 78" "$rc" 78
	contains "--check $1: names $3" "$out" "$3"
}
bad "unknown key" '{"network": {"allowedDomains": []}, "nope": 1}' nope
bad "unknown nested key" '{"proxy": {"maxConnectionz": 3}}' maxConnectionz
bad "wildcard TLD" '{"network": {"allowedDomains": ["ok.test", "*.com"]}}' "allowedDomains"
bad "URL as a pattern" '{"network": {"deniedDomains": ["https://x.test"]}}' "deniedDomains"
bad "bare * in the allow list" '{"network": {"allowedDomains": ["*"]}}' "allowedDomains"
bad "port out of range" '{"network": {"allowedDomains": ["a.test:65536"]}}' "allowedDomains"
bad "wrong type" '{"proxy": {"maxConnections": "many"}}' maxConnections
bad "malformed JSON" '{"network": ' "bad.json"
"$PROXY" --config "$T/nonexistent.json" --check >/dev/null 2>&1
rc=$?
if [ $rc -ne 0 ]; then ok "missing config file refused ($rc)"; else not_ok "missing config file accepted"; fi
# The proxy refuses to start on a bad config as well.
printf '%s\n' '{"nope": 1}' >"$T/bad.json"
timeout 5 "$PROXY" --config "$T/bad.json" --listen 127.0.0.1:0 --access-log "$T/x.log" >/dev/null 2>&1
rc=$?
eq "proxy refuses to start on a bad config: exit 78" "$rc" 78

out=$("$PROXY" --config "$T/good.json" --explain "WWW.Example.ORG.:443")
d=$(printf '%s' "$out" | "$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
print(d["host"], d["port"], d["decision"], d["reason"])')
eq "--explain wildcard allow" "$d" "www.example.org 443 allow allow-list:*.example.org"
out=$("$PROXY" --config "$T/good.json" --explain "example.com:22")
contains "--explain port deny" "$out" '"deny-list:*:22"'
out=$("$PROXY" --config "$T/good.json" --explain "exa mple.com" 2>&1)
contains "--explain invalid host" "$out" "invalid"

# Two listeners, one IPv6; access log on stdout.
srv_start echo echo
E=$SRV_PORT
dns_start
px_config "$T/conf.json" --allow "127.0.0.1 [::1]"
spawn "$PROXY" --config "$T/conf.json" --listen 127.0.0.1:0 --listen '[::1]:0' \
    --access-log - >"$T/stdout.log" 2>"$T/two.err"
_px_all="$_px_all $LAST_PID:$T/two.err"
i=0
while [ "$(grep -c 'listening on' "$T/two.err")" -lt 2 ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
p4=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/two.err")
p6=$(sed -n 's/^pisbx-proxy: listening on \[::1\]:\([0-9]*\)$/\1/p' "$T/two.err")
if [ -n "$p4" ] && [ -n "$p6" ]; then
	ok "two listeners announced on stderr"
	out=$(printf 'CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\nv6' "$E" |
	    "$PY" "$SERVERS" client --host ::1 --port "$p6" --timeout 2 | tr -d '\r')
	contains "IPv6 listener serves CONNECT" "$out" "HTTP/1.1 200"
	contains "IPv6 listener relays" "$out" "v6"
	PX_LOG=$T/stdout.log
	check_log "--access-log - writes records to stdout" event=decision \
	    host=127.0.0.1 port="$E" decision=allow
else
	not_ok "two listeners: $(cat "$T/two.err")"
fi

# Listeners from the config file when no --listen is given.
px_config "$T/listen.json" --allow "127.0.0.1" --proxy '{"listen": ["127.0.0.1:0"]}'
spawn "$PROXY" --config "$T/listen.json" --access-log "$T/listen.log" 2>"$T/listen.err"
_px_all="$_px_all $LAST_PID:$T/listen.err"
i=0
while ! grep -q 'listening on' "$T/listen.err" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
pl=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/listen.err")
if [ -n "$pl" ]; then
	px_req --port "$pl" "CONNECT 127.0.0.1:$E HTTP/1.1\r\nHost: x\r\n\r\n"
	eq "listener from proxy.listen in the config serves" "$STATUS" 200
else
	not_ok "proxy.listen from the config: $(cat "$T/listen.err")"
fi

# A Unix-socket listener.
spawn "$PROXY" --config "$T/conf.json" --listen "$T/px.sock" \
    --access-log "$T/unix.log" 2>"$T/unix.err"
_px_all="$_px_all $LAST_PID:$T/unix.err"
i=0
while [ ! -S "$T/px.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
if [ -S "$T/px.sock" ]; then
	out=$(printf 'CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: x\r\n\r\nunix' "$E" |
	    "$PY" "$SERVERS" client --unix "$T/px.sock" --timeout 2 | tr -d '\r')
	contains "Unix-socket listener serves CONNECT" "$out" "HTTP/1.1 200"
	contains "Unix-socket listener relays" "$out" "unix"
else
	not_ok "Unix-socket listener not created: $(cat "$T/unix.err")"
fi
px_done
