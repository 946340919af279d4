#!/bin/sh
# Masked credentials with the real clients that use them, through
# pisbx-run with TLS termination, against HTTPS servers on 127.0.0.1
# (tests/lib/tlsserver.py) that answer 401 to anything but the real value:
# - the GitHub CLI: `gh api /user` to an Enterprise host (ghe.test, whose
#   token gh reads from GH_ENTERPRISE_TOKEN) and to github.com's API host
#   (GH_TOKEN; port 443, so as root); the command sees placeholders, the
#   servers the real tokens ("Authorization: token X"), the request
#   records name them; gh's Enterprise token sent to another host is
#   refused;
# - git with a credential helper printing $GH_TOKEN: the clone answers
#   the server's Basic challenge with the placeholder, swapped;
# - an agent's command through pisbx-sh: curl with a Bearer API key; the
#   echoing server's answer reaches the command with the placeholder;
# - the leaks, through the same clients: curl and git push with the
#   placeholder to an allowed host that is not an injectHost (403), curl
#   through the SOCKS5 port to a plain TCP server (closed, the server
#   never gets it); the summary and --report name each, never a value;
# - what went in: -v's summary and --report count each credential per
#   host:port (never as a refusal); a value with a space goes in a
#   header and is refused in a request target (403, naming it and why);
# - the AWS CLI: a masked AWS_SECRET_ACCESS_KEY is a config error (78)
#   naming the key (pisbx does not re-sign SigV4); denied, aws finds no
#   secret.
# run.sh: alone (it binds the host's port 443 when it is free).
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/tlsca.sh"
command -v openssl >/dev/null 2>&1 || skip "openssl is not installed"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"
[ -x /usr/lib/git-core/git-http-backend ] || skip "no git-http-backend"

HOSTS_NAMES="ghe.test api.github.com git.test other.test api.test tcp.test"
export HOSTS_NAMES
GHE="ghe_REALent$$a$(date +%s%N)"
GH="ghp_REALgh$$b$(date +%s%N)"
API="sk-REALapi$$c$(date +%s%N)"
export GH_ENTERPRISE_TOKEN="$GHE" GH_TOKEN="$GH" API_KEY="$API"
# A value with a space: fine in a header, refused in a request target.
SPC="sk REALspace$$e"
export SPACE_KEY="$SPC"
# This machine's own client settings stay outside.
unset PIP_CERT REQUESTS_CA_BUNDLE SSL_CERT_FILE CURL_CA_BUNDLE \
    GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS GH_HOST GITHUB_TOKEN \
    GITHUB_ENTERPRISE_TOKEN GH_CONFIG_DIR

TLSCA=$T/ca
tlsca_make "$TLSCA" && tlsca_leaf "$TLSCA" ghe.test api.github.com \
    git.test other.test api.test || { not_ok "the test CA"; exit 1; }

# The servers; each accepts only its real token.
mkdir -p "$T/git" "$T/git2"
git init -q -b main "$T/src"
echo "cloned with a credential helper" >"$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=t -c user.email=t@example.invalid commit -qm one
git clone -q --bare "$T/src" "$T/git/repo.git"
git clone -q --bare "$T/src" "$T/git2/repo.git"
tls_start gh ghe ghe.test --auth "$GHE"
GHEP=$SRV_PORT
tls_start gh ghcom ghe.test
GHCOMP=$SRV_PORT
tls_start git git ghe.test --root "$T/git" --auth "x-access-token:$GH"
GITP=$SRV_PORT
# other.test: the same token would open it, so only pisbx keeps the
# placeholder from being tried there.
tls_start git other ghe.test --root "$T/git2" --auth "x-access-token:$GH"
OTHERGITP=$SRV_PORT
tls_start echo otherecho ghe.test
OTHERP=$SRV_PORT
tls_start echo api ghe.test --auth "$API"
APIP=$SRV_PORT

# tcp.test: a plain TCP server that echoes and records every byte.
cat >"$T/tcprec.py" <<'EOF'
import os, socket, sys, threading
portfile, record = sys.argv[1], sys.argv[2]
lock = threading.Lock()
def serve(c):
    data = b""
    c.settimeout(10)
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            data += d
            c.sendall(d)
    except OSError:
        pass
    with lock, open(record, "ab") as f:
        f.write(data + b"\n--\n")
    c.close()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
: >"$T/tcp.bytes"
spawn "$PY" "$T/tcprec.py" "$T/tcp.port" "$T/tcp.bytes"
wait_file "$T/tcp.port" 200 || { not_ok "the TCP recorder did not start"; exit 1; }
TCPP=$(cat "$T/tcp.port")
chmod -R a+rX "$T"

CREDS='{"envVars":[
  {"name":"GH_ENTERPRISE_TOKEN","mode":"mask","injectHosts":["ghe.test"]},
  {"name":"GH_TOKEN","mode":"mask","injectHosts":["git.test","api.github.com"]},
  {"name":"API_KEY","mode":"mask","injectHosts":["api.test"]},
  {"name":"SPACE_KEY","mode":"mask","injectHosts":["api.test"]}]}'
run_config --allow "$HOSTS_NAMES" \
    --net '{"tlsTerminate":{"extraCaCertPaths":["'"$TLSCA"'/ca.pem"]}}' \
    --top '{"credentials":'"$CREDS"'}'

# srv_saw NAME JQ: some request NAME's server logged matches JQ;
# srv_never NAME JQ: none does.
srv_saw() {
	jq -n -e "[inputs | select($2)] | length > 0" "$T/$1.reqs" >/dev/null
}
srv_never() {
	jq -n -e "[inputs | select($2)] | length == 0" "$T/$1.reqs" >/dev/null
}
# jqq ARGS...: jq -e, quietly.
jqq() {
	jq -e "$@" >/dev/null
}
# reals FILE...: none of the real values is in the files.
reals() {
	! grep -aqF -e "$GHE" -e "$GH" -e "$API" -e "$SPC" "$@"
}

# 1. The GitHub CLI.  gh picks the token by the request's host: GH_TOKEN
#    for github.com (api.github.com), GH_ENTERPRISE_TOKEN for any other
#    (an Enterprise host, or a host with a port: gh keeps the port in the
#    name it looks the token up by).  GH_HOST takes no port, so `gh api
#    /user` needs a server on 443: as root, when the port is free; the
#    Enterprise case also runs with a full URL on a free port.
if command -v gh >/dev/null 2>&1; then
	cat >"$WS/gh.sh" <<'EOF'
export GH_CONFIG_DIR=$TMPDIR/gh GH_NO_UPDATE_NOTIFIER=1 GH_PROMPT_DISABLED=1
echo "== env"
env | grep -E '^GH_(ENTERPRISE_)?TOKEN='
echo "== ghe"
GH_HOST=ghe.test gh api "https://ghe.test:$1/api/v3/user"
echo
echo "ghe=$?"
echo "== leak"
gh api "https://api.github.com:$2/user"
echo "leak=$?"
if [ "$3" = 443 ]; then
	echo "== github"
	gh api /user
	echo
	echo "github=$?"
	echo "== ghe443"
	GH_HOST=ghe.test gh api /user
	echo
	echo "ghe443=$?"
fi
EOF
	P443=0
	if [ "$(id -u)" -eq 0 ] && ! ss -ltnH 'sport = :443' | grep -q .; then
		tls_start gh gh443 ghe.test --port 443 --auth "$GH" --auth "$GHE"
		P443=$SRV_PORT
	fi
	sbx -- /bin/sh gh.sh "$GHEP" "$GHCOMP" "$P443" >"$T/gh.out" 2>"$T/gh.err"
	# gh_json SECTION: the JSON gh printed in that section is the user.
	gh_json() {
		sed -n "/^== $1\$/,/^$1=/p" "$T/gh.out" | sed '1d;$d' |
		    jq -e '.login == "pisbx-test"' >/dev/null
	}
	check "gh: the command sees GH_ENTERPRISE_TOKEN as a placeholder" \
	    grep -qE '^GH_ENTERPRISE_TOKEN=pisbx_[a-z0-9]{32,}$' "$T/gh.out"
	check "gh: the command sees GH_TOKEN as a placeholder" \
	    grep -qE '^GH_TOKEN=pisbx_[a-z0-9]{32,}$' "$T/gh.out"
	check "gh api on the Enterprise host: the user's JSON" gh_json ghe
	contains "gh api on the Enterprise host exits 0" "$(cat "$T/gh.out")" "ghe=0"
	check "the Enterprise server got the real token (\"token X\")" \
	    srv_saw ghe ".path == \"/api/v3/user\" and .action == \"user\" and
	        (.headers | any(.[0] == \"Authorization\" and .[1] == \"token $GHE\"))"
	check_log "gh's Enterprise request record names GH_ENTERPRISE_TOKEN" \
	    event=request host=ghe.test method=GET path=/api/v3/user status=200 \
	    injected~'[$]GH_ENTERPRISE_TOKEN'
	# gh sends GH_ENTERPRISE_TOKEN's placeholder to api.github.com:PORT,
	# not one of its injectHosts: refused, the server never sees it.
	check "gh: the Enterprise token toward another host fails (HTTP 403)" sh -c "
	    grep -qx 'leak=[1-9][0-9]*' '$T/gh.out' && grep -q 'HTTP 403' '$T/gh.err'"
	check_log "gh's misdirected token: 403 credential-leak" event=request \
	    host=api.github.com port="$GHCOMP" path=/user status=403 \
	    reason=credential-leak error~'[$]GH_ENTERPRISE_TOKEN'
	check "gh's misdirected token never reached the server" \
	    srv_never ghcom '.path == "/user"'
	if [ "$P443" = 443 ]; then
		check "gh api /user (github.com, GH_TOKEN): the user's JSON" gh_json github
		check "api.github.com got the real GH_TOKEN" \
		    srv_saw gh443 ".path == \"/user\" and .auth == \"$GH\" and
		        (.headers | any(.[0] == \"Host\" and .[1] == \"api.github.com\"))"
		check_log "gh's github.com request record names GH_TOKEN" \
		    event=request host=api.github.com port=443 method=GET path=/user \
		    status=200 injected~'[$]GH_TOKEN'
		check "GH_HOST=ghe.test gh api /user: the user's JSON" gh_json ghe443
		check "ghe.test:443 got the real GH_ENTERPRISE_TOKEN at /api/v3/user" \
		    srv_saw gh443 ".path == \"/api/v3/user\" and .auth == \"$GHE\""
	else
		echo "# gh on port 443 skipped: needs root and a free 127.0.0.1:443"
	fi
	check "gh: no real token in what the command printed" \
	    reals "$T/gh.out" "$T/gh.err"
else
	echo "# gh case skipped: the GitHub CLI is not installed (apt-get install gh)"
fi

# 2. git with a credential helper printing $GH_TOKEN: the server's 401
#    Basic challenge is answered with the placeholder, swapped on the way.
cat >"$WS/helper.sh" <<'EOF'
export GIT_TERMINAL_PROMPT=0
git -c credential.helper='!f() { echo username=x-access-token; echo "password=$GH_TOKEN"; }; f' \
    clone -q "https://git.test:$1/repo.git" "$TMPDIR/c" && cat "$TMPDIR/c/README"
echo "clone=$?"
EOF
sbx -- /bin/sh helper.sh "$GITP" >"$T/helper.out" 2>&1
contains "git clone with a credential helper" "$(cat "$T/helper.out")" \
    "cloned with a credential helper"
contains "the clone exits 0" "$(cat "$T/helper.out")" "clone=0"
check "the git server challenged first (401, no credential)" \
    srv_saw git '.action == "unauthorised" and .auth == null'
check "the git server got the real token from the helper's placeholder" \
    srv_saw git ".action == \"upload-pack\" and .auth == \"x-access-token:$GH\""
check_log "the clone's request record names GH_TOKEN" event=request \
    host=git.test method=POST path=/repo.git/git-upload-pack status=200 \
    injected~'[$]GH_TOKEN'

# 3. An agent's command through pisbx-sh: the API gets the real key; the
#    echo of its headers comes back with the placeholder.
SH=$PISBX_BINDIR/pisbx-sh
(cd "$WS" && PISBX_CONFIG="$CONF" "$SH" -c \
    "curl -sS --max-time 20 -H \"Authorization: Bearer \$API_KEY\" https://api.test:$APIP/agent") \
    >"$T/agent.out" 2>&1
contains "pisbx-sh: curl reaches the API" "$(cat "$T/agent.out")" \
    "GET /agent HTTP/1.1"
check "pisbx-sh: the API got the real key" \
    srv_saw api ".path == \"/agent\" and .auth == \"$API\""
check "pisbx-sh: the echoed header shows the placeholder, not the key" sh -c "
    grep -qE '^Authorization: Bearer pisbx_[a-z0-9]{32,}' '$T/agent.out' &&
    ! grep -qF '$API' '$T/agent.out'"

# 3b. What went in, in pisbx-run's summary: three requests with API_KEY
#    to api.test, one with SPACE_KEY in a header (a space goes there);
#    SPACE_KEY in the query is refused (its value cannot be put in a
#    request target: the space would end it), and the server never sees
#    the request.  --report has "injected" items, -v one line each; the
#    credentials put in are no refusals.
cat >"$WS/inj.sh" <<'EOF'
for i in 1 2 3; do
	curl -sS --max-time 20 -o /dev/null -w "api=%{http_code}\n" \
	    -H "Authorization: Bearer $API_KEY" "https://api.test:$1/inj$i"
done
curl -sS --max-time 20 -o /dev/null -w "hdr=%{http_code}\n" \
    -H "X-Key: $SPACE_KEY" "https://api.test:$1/spc"
EOF
sbx -v --report "$T/inj.json" -- /bin/sh inj.sh "$APIP" \
    >"$T/inj.out" 2>"$T/inj.err"
eq "the three requests with API_KEY succeed" \
    "$(grep -c '^api=200$' "$T/inj.out")" 3
check "the API got the real key three times" \
    jqq -n "[inputs | select((.path | startswith(\"/inj\")) and
        .auth == \"$API\")] | length == 3" "$T/api.reqs"
check "the API got SPACE_KEY's value, space and all, in a header" \
    srv_saw api ".path == \"/spc\" and (.headers | any(.[0] == \"X-Key\"
        and .[1] == \"$SPC\"))"
check "-v: the summary says API_KEY went to api.test 3 times" grep -qF \
    "pisbx-run: put in on the way: \$API_KEY → api.test:$APIP (3 requests)" \
    "$T/inj.err"
check "-v: the summary says SPACE_KEY went once" grep -qF \
    "pisbx-run: put in on the way: \$SPACE_KEY → api.test:$APIP (1 request)" \
    "$T/inj.err"
check "what went in is no refusal: no refusal heading" sh -c "
    ! grep -qE 'refused (on the way|during this run)' '$T/inj.err'"
check "--report: API_KEY to api.test, 3 requests" jqq --argjson p "$APIP" \
    'any(.[]; .kind == "injected" and .credential == "$API_KEY" and
        .host == "api.test" and .port == $p and .requests == 3)' "$T/inj.json"
check "--report: injected items only (nothing was refused)" jqq \
    'length == 2 and all(.[]; .kind == "injected")' "$T/inj.json"
sbx -- /bin/sh -c "curl -sS --max-time 20 -o /dev/null -w 'q=%{http_code}\n' \
    -H \"Authorization: Bearer \$API_KEY\" 'https://api.test:$APIP/again'" \
    >"$T/inj2.out" 2>"$T/inj2.err"
contains "without -v: the request goes" "$(cat "$T/inj2.out")" "q=200"
check "without -v: no line on what went in" sh -c "
    ! grep -q 'put in on the way' '$T/inj2.err'"
sbx --report "$T/tgt.json" -- /bin/sh -c "curl -sS --max-time 20 \
    -w 'tgt=%{http_code}\n' \"https://api.test:$APIP/tgt?key=\$SPACE_KEY\"" \
    >"$T/tgt.out" 2>"$T/tgt.err"
contains "SPACE_KEY in the request target: 403" "$(cat "$T/tgt.out")" \
    "tgt=403"
contains "the 403 names the credential" "$(cat "$T/tgt.out")" \
    'placeholder of $SPACE_KEY, which may go to api.test'
contains "... and says its value cannot be put in a request target" \
    "$(cat "$T/tgt.out")" "its value cannot be put in a request target"
check "SPACE_KEY in the target: the server never saw the request" \
    srv_never api '.path | startswith("/tgt")'
check_log "SPACE_KEY in the target: request record 403 credential-leak" \
    event=request host=api.test port="$APIP" status=403 \
    reason=credential-leak error~'request target'
check "--report: the refusal, and nothing put in" jqq \
    'any(.[]; .kind == "network" and .reason == "credential-leak" and
        (.detail | contains("SPACE_KEY"))) and
     all(.[]; .kind != "injected")' "$T/tgt.json"
check "no real value in what the command or the summary printed" \
    reals "$T/inj.out" "$T/inj.err" "$T/inj.json" "$T/tgt.out" \
    "$T/tgt.err" "$T/tgt.json"

# 4. Leaks through the same clients, in one run: curl to an allowed host
#    that is not GH_TOKEN's, git push with the placeholder as password to
#    it, curl through the SOCKS5 port to a plain TCP server.
cat >"$WS/leak.sh" <<'EOF'
export GIT_TERMINAL_PROMPT=0
curl -sS --max-time 10 -o /dev/null -w 'curl=%{http_code}\n' \
    -H "Authorization: Bearer $GH_TOKEN" "https://other.test:$1/leak"
git init -q -b main "$TMPDIR/p" && cd "$TMPDIR/p" && echo x >x && git add x &&
    git -c user.name=t -c user.email=t@example.invalid commit -qm leak &&
    git push "https://x-access-token:$GH_TOKEN@other.test:$2/repo.git" main
echo "push=$?"
curl -sS --max-time 10 --socks5-hostname 127.0.0.1:1080 \
    -H "Authorization: Bearer $GH_TOKEN" "http://tcp.test:$3/socks"
echo "socks=$?"
EOF
sbx --report "$T/leak.json" -- /bin/sh leak.sh "$OTHERP" "$OTHERGITP" "$TCPP" \
    >"$T/leak.out" 2>"$T/leak.err"
contains "curl: the placeholder to another host is answered 403" \
    "$(cat "$T/leak.out")" "curl=403"
check_log "curl's leak: request record 403 credential-leak" event=request \
    host=other.test port="$OTHERP" path=/leak status=403 reason=credential-leak
check "curl's leak never reached the server" srv_never otherecho '.path == "/leak"'
contains "git push with the placeholder to another host fails" \
    "$(cat "$T/leak.out" "$T/leak.err")" "push=1"
check_log "git push's leak: request record 403 credential-leak" \
    event=request host=other.test port="$OTHERGITP" status=403 \
    reason=credential-leak
check "the other git server never got the placeholder, nor a push" sh -c "
    jq -n -e '[inputs | select((.auth // \"\") | contains(\"pisbx_\"))] | length == 0' \
        '$T/other.reqs' >/dev/null &&
    jq -n -e '[inputs | select(.action == \"receive-pack\")] | length == 0' \
        '$T/other.reqs' >/dev/null"
eq "other.test's repository is unchanged" \
    "$(git -C "$T/git2/repo.git" log --format=%s main)" one
check "SOCKS5: curl gets nothing back (the connection closed)" sh -c "
    grep -qx 'socks=[1-9][0-9]*' '$T/leak.out' && ! grep -q 'GET /socks' '$T/leak.out'"
check "SOCKS5: the TCP server never got the placeholder" sh -c "
    ! grep -aq 'pisbx_' '$T/tcp.bytes'"
check_log "SOCKS5: the decision record names the credential" \
    event=decision host=tcp.test port="$TCPP" reason=credential-leak \
    credential='$GH_TOKEN'
check "the summary lists the leak to other.test (curl)" \
    grep -q "other.test:$OTHERP (credential-leak.*GH_TOKEN" "$T/leak.err"
check "the summary lists the leak to other.test (git push)" \
    grep -q "other.test:$OTHERGITP (credential-leak.*GH_TOKEN" "$T/leak.err"
check "the summary lists the leak through SOCKS5" \
    grep -q "tcp.test:$TCPP (credential-leak.*GH_TOKEN" "$T/leak.err"
# reported HOST PORT: --report has HOST:PORT's credential-leak naming
# GH_TOKEN.
reported() {
	jq -e --arg h "$1" --argjson p "$2" 'any(.[]; .kind == "network" and
	    .host == $h and .port == $p and .reason == "credential-leak" and
	    (.detail | contains("GH_TOKEN")))' "$T/leak.json" >/dev/null
}
check "--report: the curl leak, naming GH_TOKEN" reported other.test "$OTHERP"
check "--report: the git push leak, naming GH_TOKEN" \
    reported other.test "$OTHERGITP"
check "--report: the SOCKS5 leak, naming GH_TOKEN" reported tcp.test "$TCPP"
check "no real value in the output, the summary, the report or the log" \
    reals "$T/leak.out" "$T/leak.err" "$T/leak.json" "$PX_LOG"

# 5. AWS: a SigV4 secret cannot be masked (a placeholder breaks the
#    signature and pisbx does not re-sign): a config error naming the key.
export AWS_ACCESS_KEY_ID=AKIAPISBXTEST AWS_SECRET_ACCESS_KEY="awsREAL$$d"
run_config --allow "sts.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":{"envVars":[
      {"name":"AWS_SECRET_ACCESS_KEY","mode":"mask","injectHosts":["sts.test"]}]}}'
sbx -- /bin/sh -c 'echo RAN' >"$T/aws1.out" 2>"$T/aws1.err"
rc=$?
eq "a masked AWS_SECRET_ACCESS_KEY: exit 78 (config error)" "$rc" 78
check "the error names the key and says to deny it" grep -qF \
    '$.credentials.envVars[0].mode: not supported: AWS_SECRET_ACCESS_KEY is part of an AWS SigV4 signature' \
    "$T/aws1.err"
contains "the error says what to do" "$(cat "$T/aws1.err")" 'use mode "deny"'
check "nothing ran" sh -c "! grep -q RAN '$T/aws1.out'"
(cd "$WS" && "$RUN" --check --config "$CONF") >"$T/aws2.out" 2>&1
eq "pisbx-run --check: exit 78" "$?" 78
contains "pisbx-run --check names the key" "$(cat "$T/aws2.out")" \
    '$.credentials.envVars[0].mode: not supported: AWS_SECRET_ACCESS_KEY'
if command -v aws >/dev/null 2>&1; then
	run_config --allow "sts.test" \
	    --top '{"credentials":{"envVars":[{"name":"AWS_SECRET_ACCESS_KEY","mode":"deny"}]}}'
	sbx -- /bin/sh -c 'env | grep "^AWS_"; aws sts get-caller-identity \
	    --region us-east-1 --endpoint-url https://sts.test:1; echo aws=$?' \
	    >"$T/aws3.out" 2>&1
	check "denied: the command has no AWS_SECRET_ACCESS_KEY" \
	    sh -c "! grep -q '^AWS_SECRET_ACCESS_KEY=' '$T/aws3.out'"
	contains "denied: aws says the secret is missing, and stops" \
	    "$(cat "$T/aws3.out")" \
	    "Partial credentials found in env, missing: AWS_SECRET_ACCESS_KEY"
	check "denied: aws fails" grep -qx 'aws=[1-9][0-9]*' "$T/aws3.out"
	eq "denied: nothing was tried toward sts.test" \
	    "$(log_count host=sts.test)" 0
	check "denied: the secret is nowhere in the output" \
	    sh -c "! grep -qF 'awsREAL$$d' '$T/aws3.out'"
else
	echo "# aws case skipped: the AWS CLI is not installed"
fi

done_testing
