#!/bin/sh
# make demo: a short tour of pisbx on the real binaries, loopback only.
#   1. pisbx-proxy --check on conf/example.json
#   2. --explain on a few targets: allow, deny, review, invalid host
#   3. a real proxy run: a local web server, an allowed request that gets
#      its answer (HTTP and SOCKS5 on one listener), denied ones that get
#      403, and their access-log lines
#   4. pisbx-run: a sandboxed command reaches the allowed local server, is
#      refused a denied one, cannot go around the proxy or write a
#      protected file, and its access log is shown
#   5. Claude Code's command line through pisbx-sh
#   6. a secret kept out of the sandbox: TLS terminated, GH_TOKEN masked
#      (the command sees a placeholder, the server the real token), a
#      push refused by a request rule, a leak to another host refused
# Cleans up after itself; exits 0 only when every step went as expected.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
BINDIR=${BINDIR:-bin}
case $BINDIR in /*) ;; *) BINDIR=$top/$BINDIR ;; esac
PROXY=$BINDIR/pisbx-proxy
PY=/usr/bin/python3
SERVERS=$top/tests/lib/servers.py
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy \
    NO_PROXY no_proxy

T=$(mktemp -d "${TMPDIR:-/tmp}/pisbx-demo.XXXXXX")
pids=""
failed=0
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; }
good() { printf '   -> as expected: %s\n' "$*"; }
bad() { printf '   -> NOT as expected: %s\n' "$*"; failed=$((failed + 1)); }
short() { printf '%s' "$1" | sed "s|$top/||g; s|$T/||g"; }

[ -x "$PROXY" ] || { echo "demo: $PROXY not built (run make)" >&2; exit 1; }

# 1. Check the example config.
say "1. Validate a config before using it"
example=$top/conf/example.json
[ -f "$example" ] || example=$top/conf/default.json
show "pisbx-proxy --config $(short "$example") --check"
out=$("$PROXY" --config "$example" --check 2>&1); rc=$?
printf '%s\n' "$out"
if [ $rc -eq 0 ] && [ "$out" = "$example: configuration OK" ]; then
	good "exit 0, naming the file it checked"
else
	bad "exit $rc"
fi
printf '%s\n' '{"network": {"allowedDomains": ["*.com"]}}' >"$T/bad.json"
show "pisbx-proxy --config bad.json --check   # allowedDomains: [\"*.com\"]"
"$PROXY" --config "$T/bad.json" --check 2>&1 | sed "s|$T/||g"
rc=$("$PROXY" --config "$T/bad.json" --check >/dev/null 2>&1; echo $?)
[ "$rc" = 78 ] && good "refused, exit 78" || bad "exit $rc, want 78"

# 2. Explain.
say "2. Ask the policy, without any network"
cat >"$T/demo.json" <<EOF
{
  "network": {
    "allowedDomains": ["github.com", "*.github.com", "demo.test"],
    "deniedDomains":  ["uploads.github.com", "*:22"]
  },
  "resolver": {"hostsFile": "$T/hosts", "servers": ["127.0.0.1:9"], "timeoutMs": 1000}
}
EOF
sed "s|$T/||g; s/^/   /" "$T/demo.json"
explain() {
	show "pisbx-proxy --config demo.json --explain '$1'"
	out=$("$PROXY" --config "$T/demo.json" --explain "$1" 2>&1)
	printf '%s\n' "$out" | sed "s|$T/||g"
	d=$(printf '%s' "$out" | "$PY" -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())
    print(d["decision"], d["reason"])
except Exception:
    print("unparsed")' 2>/dev/null)
	[ "$d" = unparsed ] && d="unparsed: $out"
	case $d in
	$2) good "$d" ;;
	*) bad "got '$d', want $2" ;;
	esac
}
explain "API.GitHub.com.:443" "allow allow-list:\*.github.com"
explain "uploads.github.com:443" "deny deny-list:uploads.github.com"
explain "github.com:22" "deny deny-list:\*:22"
explain "example.org:443" "deny no-reviewer"
explain "exa mple.org" "*invalid*"

# 3. A real run.
say "3. A real proxy run on loopback"
echo "127.0.0.1 demo.test" >"$T/hosts"
"$PY" "$SERVERS" http --port-file "$T/web.port" 2>"$T/web.err" &
pids="$pids $!"
i=0
while [ ! -s "$T/web.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
WEB=$(cat "$T/web.port" 2>/dev/null)
[ -n "$WEB" ] || { bad "web server did not start: $(cat "$T/web.err")"; exit 1; }
echo "   a local web server answers on 127.0.0.1:$WEB (demo.test in the hosts file)"
show "pisbx-proxy --config demo.json --listen 127.0.0.1:0 --access-log access.log"
: >"$T/proxy.err"
"$PROXY" --config "$T/demo.json" --listen 127.0.0.1:0 \
    --access-log "$T/access.log" 2>"$T/proxy.err" &
PX_PID=$!
pids="$pids $PX_PID"
PX=
i=0
while [ -z "$PX" ] && [ $i -lt 100 ]; do
	PX=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/proxy.err")
	sleep 0.05; i=$((i + 1))
done
[ -n "$PX" ] || { bad "proxy did not start: $(cat "$T/proxy.err")"; exit 1; }
sed 's/^/   /' "$T/proxy.err"

show "curl -x http://127.0.0.1:$PX http://demo.test:$WEB/hello"
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX" -w '\nHTTP %{http_code}\n' \
    "http://demo.test:$WEB/hello" 2>&1)
printf '%s\n' "$out" | sed 's/^/   /'
case $out in
*'"path": "/hello"'*"HTTP 200"*) good "allowed: the server's answer came through" ;;
*) bad "allowed request failed" ;;
esac

show "curl --socks5-hostname 127.0.0.1:$PX http://demo.test:$WEB/over-socks"
out=$(curl -sS --max-time 10 --socks5-hostname "127.0.0.1:$PX" \
    -w '\nHTTP %{http_code}\n' "http://demo.test:$WEB/over-socks" 2>&1)
printf '%s\n' "$out" | sed 's/^/   /'
case $out in
*'"path": "/over-socks"'*"HTTP 200"*) good "the same listener speaks SOCKS5" ;;
*) bad "SOCKS5 request failed" ;;
esac

show "curl -x http://127.0.0.1:$PX https://uploads.github.com/   # CONNECT, denied before any DNS"
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX" -o /dev/null \
    -w 'HTTP %{http_code}\n' "https://uploads.github.com/" 2>&1)
printf '%s\n' "$out" | sed 's/^/   /'
case $out in
*"403"*) good "denied with 403" ;;
*) bad "denied request: $out" ;;
esac
show "printf 'GET http://example.org/ HTTP/1.1\\r\\n...' | tcp-client 127.0.0.1:$PX   # unlisted, no reviewer"
out=$(printf 'GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\nConnection: close\r\n\r\n' |
    "$PY" "$SERVERS" client --port "$PX" --http --timeout 5 | tr -d '\r')
printf '%s\n' "$out" | sed 's/^/   /'
case $out in
"HTTP/1.1 403"*) good "denied with 403 and the reason" ;;
*) bad "unlisted request" ;;
esac

show "cat access.log"
i=0
while [ "$(grep -c '"event": *"close"' "$T/access.log" 2>/dev/null)" -lt 1 ] && [ $i -lt 60 ]; do
	sleep 0.05; i=$((i + 1))
done
sed 's/^/   /' "$T/access.log"
if "$PY" - "$T/access.log" "$WEB" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
def has(**kw):
    return any(all(str(r.get(k)) == str(v) for k, v in kw.items()) for r in recs)
ok = has(event="decision", host="demo.test", port=sys.argv[2], decision="allow") \
    and has(event="decision", host="uploads.github.com", decision="deny",
            reason="deny-list:uploads.github.com") \
    and has(event="decision", host="example.org", decision="deny")
sys.exit(0 if ok else 1)
EOF
then
	good "one decision record per request, with host, port and reason"
else
	bad "the access log lacks the expected records"
fi

# 4. The same policy around a real command, with pisbx-run.
RUN=$BINDIR/pisbx-run
if [ -x "$RUN" ]; then
	say "4. A sandboxed command: pisbx-run"
	mkdir -p "$T/ws"
	cat >"$T/cmd.sh" <<EOF
curl -sS --max-time 10 -o /dev/null -w 'allowed  http://demo.test:$WEB/ -> HTTP %{http_code}\n' http://demo.test:$WEB/
curl -sS --max-time 10 -o /dev/null -w 'denied   https://uploads.github.com/ -> HTTP %{http_connect}\n' https://uploads.github.com/ 2>/dev/null
curl -sS --max-time 5 --noproxy '*' -o /dev/null http://127.0.0.1:$WEB/ 2>/dev/null &&
    echo 'escape   direct to the host web server -> REACHED' ||
    echo 'escape   direct to the host web server -> no route out'
(echo x >.bashrc) 2>/dev/null && echo 'write    ./.bashrc -> WRITTEN' || echo 'write    ./.bashrc -> refused'
echo hello >notes.txt && echo 'write    ./notes.txt -> ok'
EOF
	show "cd workspace && pisbx-run --config demo.json --access-log run.log -- sh cmd.sh"
	sed 's/^/   | /' "$T/cmd.sh"
	out=$(cd "$T/ws" && "$RUN" --config "$T/demo.json" --access-log "$T/run.log" \
	    -- sh "$T/cmd.sh" 2>"$T/run.err"); rc=$?
	printf '%s\n' "$out" | sed 's/^/   /'
	sed "s|$T/||g; s/^/   stderr: /" "$T/run.err"
	case $out in
	*"-> HTTP 200"*"-> HTTP 403"*"no route out"*"-> refused"*"-> ok"*)
		if [ $rc -eq 0 ]; then
			good "allowed went through, denied got 403, the escape and the protected write failed"
		else
			bad "pisbx-run exit $rc"
		fi ;;
	*) bad "sandboxed command: unexpected output" ;;
	esac
	if grep -q 'pisbx-run: the command exited 0; refused on the way' "$T/run.err" &&
	    grep -q 'uploads.github.com:443 (deny-list:uploads.github.com)' \
	    "$T/run.err" && grep -q "create $T/ws/.bashrc" "$T/run.err"; then
		good "at exit, pisbx-run summed up what it refused and what decided"
	else
		bad "no refusal summary on stderr"
	fi
	if [ -f "$T/ws/notes.txt" ] && [ "$(ls -A "$T/ws")" = notes.txt ]; then
		good "the workspace holds notes.txt and nothing else"
	else
		bad "workspace: $(ls -A "$T/ws" | tr '\n' ' ')"
	fi
	show "cat run.log"
	sed 's/^/   /' "$T/run.log"
	if grep -q '"host":"demo.test".*"decision":"allow"' "$T/run.log" &&
	    grep -q '"host":"uploads.github.com".*"decision":"deny"' "$T/run.log"; then
		good "the sandbox's decisions are in its access log"
	else
		bad "run.log lacks the expected records"
	fi
fi

# 5. What an agent hands its shell: Claude Code's line, through pisbx-sh.
SH=$BINDIR/pisbx-sh
if [ -x "$SH" ] && command -v git >/dev/null 2>&1; then
	say "5. An agent's command: CLAUDE_CODE_SHELL_PREFIX=pisbx-sh"
	mkdir -p "$T/proj/src" "$T/ctmp"
	chmod 700 "$T/ctmp"
	git -C "$T/proj" init -q
	cmd="cd src && curl -sS http://demo.test:$WEB/ -o /dev/null -w \"allowed -> %{http_code}\\n\" && curl -sS https://uploads.github.com/ 2>&1 | head -n 1; echo built >../build.log"
	line="{ shopt -u extglob || setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL; } >/dev/null 2>&1 || true && eval '$cmd' < /dev/null && pwd -P >| $T/ctmp/claude-1a2b-cwd"
	show "cd project && PISBX_CONFIG=\$PWD/../demo.json pisbx-sh \"\$LINE\"   # as Claude Code calls its prefix (PISBX_CONFIG absolute)"
	printf '   | %s\n' "$line" | sed "s|$T/||g"
	out=$(cd "$T/proj" && PISBX_CONFIG="$T/demo.json" CLAUDE_CODE_TMPDIR="$T/ctmp" \
	    "$SH" "$line" 2>&1); rc=$?
	printf '%s\n' "$out" | sed "s|$T/||g; s/^/   /"
	case $out in
	*"allowed -> 200"*"403"*) good "allowed went through; the denied host's 403 is in what the agent reads back" ;;
	*) bad "agent line: unexpected output" ;;
	esac
	if [ $rc -eq 0 ] && [ "$(cat "$T/ctmp/claude-1a2b-cwd" 2>/dev/null)" = "$T/proj/src" ]; then
		good "Claude Code's cwd file says src: the next command runs there"
	else
		bad "cwd file: $(cat "$T/ctmp/claude-1a2b-cwd" 2>&1)"
	fi
	if [ "$(cat "$T/proj/build.log" 2>/dev/null)" = built ]; then
		good "from src/, the project root (the git work tree) is writable"
	else
		bad "build.log was not written at the project root"
	fi
fi

# 6. A secret kept out of the sandbox: TLS termination and a masked token.
if [ -x "$RUN" ] && [ -f "$BINDIR/pisbx-tls.so" ] && command -v openssl >/dev/null 2>&1; then
	say "6. A secret the command can use but not read: tlsTerminate + credentials"
	. "$top/tests/lib/tlsca.sh"
	tlsca_make "$T/ca" "demo origin CA" && tlsca_leaf "$T/ca" api.demo.test other.demo.test ||
	    bad "cannot make the demo CA"
	real=ghp_demo0123456789realtoken0123456789abcdef
	"$PY" "$top/tests/lib/tlsserver.py" echo --cert "$T/ca/api.demo.test.pem" \
	    --key "$T/ca/api.demo.test.key" --port-file "$T/api.port" \
	    --log "$T/api.reqs" --auth "$real" >/dev/null 2>"$T/api.err" &
	pids="$pids $!"
	i=0
	while [ ! -s "$T/api.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	API=$(cat "$T/api.port" 2>/dev/null)
	printf '%s\n' "127.0.0.1 api.demo.test" "127.0.0.1 other.demo.test" >"$T/hosts6"
	cat >"$T/secrets.json" <<EOF
{
  "network": {
    "allowedDomains": ["api.demo.test", "other.demo.test"],
    "tlsTerminate": {"extraCaCertPaths": ["$T/ca/ca.pem"]},
    "requestRules": [{"host": "api.demo.test", "deny": ["POST /**/git-receive-pack"]}]
  },
  "credentials": {
    "envVars": [{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["api.demo.test"]}]
  },
  "resolver": {"hostsFile": "$T/hosts6", "servers": ["127.0.0.1:9"], "timeoutMs": 1000}
}
EOF
	sed "s|$T/||g; s/^/   /" "$T/secrets.json"
	cat >"$T/cmd6.sh" <<EOF
echo "inside, GH_TOKEN=\$GH_TOKEN"
curl -sS -H "Authorization: Bearer \$GH_TOKEN" -o /dev/null -w 'GET  https://api.demo.test/user -> HTTP %{http_code}\n' https://api.demo.test:$API/user
curl -sS -X POST -o /dev/null -w 'POST https://api.demo.test/o/r.git/git-receive-pack -> HTTP %{http_code}\n' https://api.demo.test:$API/o/r.git/git-receive-pack
curl -sS -H "Authorization: Bearer \$GH_TOKEN" -o /dev/null -w 'GET  https://other.demo.test/ with the token -> HTTP %{http_code}\n' https://other.demo.test:$API/
EOF
	show "GH_TOKEN=ghp_demo...realtoken... pisbx-run --config secrets.json --access-log secrets.log -- sh cmd6.sh"
	sed 's/^/   | /' "$T/cmd6.sh"
	out=$(cd "$T/ws" && GH_TOKEN=$real "$RUN" --config "$T/secrets.json" \
	    --access-log "$T/secrets.log" -- sh "$T/cmd6.sh" 2>"$T/run6.err"); rc=$?
	printf '%s\n' "$out" | sed 's/^/   /'
	sed "s|$T/||g; s/^/   stderr: /" "$T/run6.err"
	case $out in
	*"GH_TOKEN=pisbx_"*"/user -> HTTP 200"*"git-receive-pack -> HTTP 403"*"token -> HTTP 403"*)
		good "the command saw a placeholder; the GET got its answer, the push and the leak got 403" ;;
	*) bad "secrets: unexpected output (exit $rc)" ;;
	esac
	case $out$(cat "$T/secrets.log" "$T/run6.err") in
	*"$real"*) bad "the real token reached the command, its stderr or the log" ;;
	*) good "the real token is in neither the command's output nor the access log" ;;
	esac
	if grep -q "\"auth\": *\"$real\"" "$T/api.reqs"; then
		good "the server received the real token (the proxy put it in, over verified TLS)"
	else
		bad "the server did not see the real token"
	fi
	if grep -q '"event":"request".*"reason":"request-rule"' "$T/secrets.log" &&
	    grep -q '"reason":"credential-leak".*"credential":"\$GH_TOKEN"' "$T/secrets.log"; then
		good "the access log has the refused push and the leak, naming \$GH_TOKEN"
	else
		bad "secrets.log lacks the request-rule and credential-leak records"
	fi
fi

echo
if [ $failed -eq 0 ]; then
	echo "demo: all steps went as expected"
else
	echo "demo: $failed step(s) did not go as expected"
fi
[ $failed -eq 0 ]
