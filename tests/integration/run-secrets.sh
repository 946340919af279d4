#!/bin/sh
# pisbx-run's side of TLS termination and credential masking
# (launcher/run/secrets.c): masked variables and files show placeholders
# inside, denied ones are gone, the real values are nowhere the command
# can read (its environment, /proc, the run directory), the run's CA is
# trusted by every client family without an option (the bundle bound
# over the system's, the variables), and the configured CA's key is
# hidden.  Through the terminated proxy, curl, python and node reach an
# https origin whose CA is in extraCaCertPaths, and the origin gets the
# real token.  Bad credentials config stops the run with 125, naming the
# entry.  Without namespaces, masked files are hidden instead (said).
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
command -v openssl >/dev/null 2>&1 || skip "openssl is not installed"
[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"

GH="ghp_REALgh$$x$(date +%s%N)"
DENIED="deniedREAL$$y$(date +%s%N)"
NPM="npmREAL$$z$(date +%s%N)"
WHOLE="wholeREAL$$w$(date +%s%N)"
DUP="dupREAL$$v$(date +%s%N)"
ENVF="envfileREAL$$u$(date +%s%N)"
export GH_TOKEN="$GH" DENIED_X="$DENIED"

printf 'registry=https://registry.example/\n//registry.example/:_authToken=%s\nemail=dev@example.org\n' \
    "$NPM" >"$FAKEHOME/.npmrc"
printf 'plain %s\n' "$WHOLE" >"$WS/token.txt"
printf 'token=%s\nagain: %s and %s\n' "$DUP" "$DUP" "$DUP" >"$WS/dup.ini"
printf 'SECRET=%s\n' "$ENVF" >"$WS/.env"
mkdir -p "$WS/adir"

# The https origin: a self-signed certificate for allowed.test (its own
# CA, trusted only through extraCaCertPaths); it records what it got.
"$PY" "$SERVERS" certgen "$T/srv" allowed.test
cat >"$T/origin.py" <<'EOF'
import http.server, json, ssl, sys
portfile, rec, cert, key = sys.argv[1:5]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(rec, "a") as f:
            f.write(json.dumps({"path": self.path,
                "auth": self.headers.get("Authorization", "")}) + "\n")
        body = b"origin-ok " + self.path.encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
s.socket = ctx.wrap_socket(s.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
EOF
spawn "$PY" "$T/origin.py" "$T/origin.port" "$T/origin.rec" \
    "$T/srv/cert.pem" "$T/srv/key.pem"
wait_file "$T/origin.port" 200 || { not_ok "the origin did not start"; exit 1; }
ORIGIN=$(cat "$T/origin.port")
chmod -R a+rX "$T"

CREDS='{"envVars":[{"name":"GH_TOKEN","mode":"mask"},
  {"name":"DENIED_X","mode":"deny"},
  {"name":"UNSET_ON_HOST_X","mode":"mask"}],
 "files":[{"path":"~/.npmrc","mode":"mask","extract":"_authToken=(.+)"},
  {"path":"'"$WS"'/token.txt","mode":"mask"},
  {"path":"'"$WS"'/dup.ini","mode":"mask","extract":"token=(.+)",
   "maskDuplicates":true},
  {"path":"'"$WS"'/.env","mode":"deny"},
  {"path":"'"$WS"'/missing.txt","mode":"mask"}]}'
run_config --allow "allowed.test" \
    --net '{"tlsTerminate":{"extraCaCertPaths":["'"$T"'/srv/cert.pem","'"$T"'/nope.pem"]}}' \
    --top '{"credentials":'"$CREDS"'}'

# reals FILE: none of the real values is in FILE.
reals() {
	! grep -aqF -e "$GH" -e "$DENIED" -e "$NPM" -e "$WHOLE" -e "$DUP" \
	    -e "$ENVF" "$@"
}

# 1. Inside: the environment, /proc, the files, the run directory.
cat >"$WS/inside.sh" <<'EOF'
echo "== env"
env
echo "== proc"
tr '\0' '\n' </proc/self/environ
tr '\0' '\n' </proc/1/environ 2>/dev/null
tr '\0' '\n' </proc/$PPID/environ 2>/dev/null
echo "== npmrc"
cat ~/.npmrc
echo "== token"
cat token.txt
echo
echo "== dup"
cat dup.ini
echo "== dotenv"
cat .env 2>&1
echo "== rundir"
RD=$(dirname "$SSL_CERT_FILE")
ls -la "$RD"
echo "== rundir-files"
find "$RD" -type f -exec cat {} + 2>/dev/null
echo "== bundle-same"
cmp "$SSL_CERT_FILE" /etc/ssl/certs/ca-certificates.crt && echo BUNDLE-BOUND
echo "== end"
EOF
sbx -- /bin/sh inside.sh >"$T/in.out" 2>"$T/in.err"
rc=$?
check "the run succeeds (exit $rc)" [ "$rc" -eq 0 ]
sed -n '/^== env$/,/^== proc$/p' "$T/in.out" >"$T/env.out"
check "GH_TOKEN is a placeholder inside" grep -qE '^GH_TOKEN=pisbx_[a-z0-9]{32,}$' "$T/env.out"
check "DENIED_X is unset inside" sh -c "! grep -q '^DENIED_X=' '$T/env.out'"
check "a masked variable unset on the host stays unset" \
    sh -c "! grep -q '^UNSET_ON_HOST_X=' '$T/env.out'"
check "no real value anywhere the command read (env, /proc, files, run dir)" \
    reals "$T/in.out"
check "~/.npmrc: the token a placeholder, the rest intact" sh -c "
    sed -n '/^== npmrc$/,/^== token$/p' '$T/in.out' >'$T/npmrc.out' &&
    grep -qE '^//registry.example/:_authToken=pisbx_[a-z0-9]{32,}$' '$T/npmrc.out' &&
    grep -qxF 'registry=https://registry.example/' '$T/npmrc.out' &&
    grep -qxF 'email=dev@example.org' '$T/npmrc.out'"
check "a whole-file mask: one placeholder is the file" \
    sh -c "sed -n '/^== token$/,/^== dup$/p' '$T/in.out' | grep -qE '^pisbx_[a-z0-9]{32,}$'"
check "maskDuplicates: every repeat of the value is a placeholder" sh -c "
    sed -n '/^== dup$/,/^== dotenv$/p' '$T/in.out' >'$T/dup.out' &&
    p=\$(sed -n 's/^token=//p' '$T/dup.out') && case \$p in pisbx_*) ;; *) exit 1;; esac &&
    grep -qxF \"again: \$p and \$p\" '$T/dup.out'"
check "a denied file is empty inside (as denyRead)" sh -c "
    [ \"\$(sed -n '/^== dotenv$/,/^== rundir$/p' '$T/in.out' | sed '1d;\$d')\" = '' ]"
check "the run directory holds no private key" \
    sh -c "! grep -q 'PRIVATE KEY' '$T/in.out'"
check "the run directory: the bundle, the trust store, the masked copies" sh -c "
    sed -n '/^== rundir$/,/^== rundir-files$/p' '$T/in.out' >'$T/ls.out' &&
    grep -q ' ca-bundle.pem\$' '$T/ls.out' && grep -q ' truststore.p12\$' '$T/ls.out' &&
    grep -q ' masked\.' '$T/ls.out' && grep -q '^-r--r--r-- .* masked\.' '$T/ls.out'"
check "the system bundle inside is the run's (bound over it)" \
    grep -qx BUNDLE-BOUND "$T/in.out"
RD=$(sed -n 's/^SSL_CERT_FILE=//p' "$T/env.out")
for v in SSL_CERT_FILE CURL_CA_BUNDLE REQUESTS_CA_BUNDLE PIP_CERT \
    NODE_EXTRA_CA_CERTS GIT_SSL_CAINFO CARGO_HTTP_CAINFO AWS_CA_BUNDLE \
    DENO_CERT NIX_SSL_CERT_FILE; do
	check "$v names the run's bundle" grep -qxF "$v=$RD" "$T/env.out"
done
check "JAVA_TOOL_OPTIONS names the trust store" grep -qE \
    "^JAVA_TOOL_OPTIONS=.* -Djavax.net.ssl.trustStore=$(dirname "$RD")/truststore.p12 -Djavax.net.ssl.trustStoreType=PKCS12$" \
    "$T/env.out"
check "a missing extraCaCertPaths file is said" \
    grep -q "extraCaCertPaths\[1\].*nope.pem" "$T/in.err"
check "the caller's SSL_CERT_FILE gives way" sh -c "
    SSL_CERT_FILE=/elsewhere.pem sh -c 'cd \"$WS\" && \"$RUN\" --config \"$CONF\" -- env' |
    grep -qx 'SSL_CERT_FILE=/.*/pisbx-run\.[0-9]*\.[^/]*/ca-bundle\.pem'"

# The bundle: the system's roots, the run's CA, the origin's certificate.
sbx -- /bin/sh -c 'cat "$SSL_CERT_FILE"' >"$T/bundle.pem" 2>/dev/null
check "the bundle starts with the system's" sh -c "
    head -c 2000 /etc/ssl/certs/ca-certificates.crt | cmp -s - '$T/bundle.pem' -n 2000 ||
    [ \"\$(head -c 2000 /etc/ssl/certs/ca-certificates.crt)\" = \"\$(head -c 2000 '$T/bundle.pem')\" ]"
check "the bundle holds the origin's certificate (extraCaCertPaths)" sh -c "
    openssl x509 -in '$T/srv/cert.pem' | sed '1d;\$d' | head -1 >'$T/line' &&
    grep -qF -f '$T/line' '$T/bundle.pem'"
check "the bundle holds the run's CA" sh -c "
    sed -n '/^# pisbx: the run.s CA/,/END CERTIFICATE/p' '$T/bundle.pem' | sed 1d >'$T/runca.pem' &&
    openssl x509 -in '$T/runca.pem' -noout -ext basicConstraints | grep -q 'CA:TRUE'"

# The bundle, the trust store and the masked copies are on the sandbox's
# own tmpfs: on the host, a running command's directory holds tmp/ alone.
(cd "$WS" && exec "$RUN" --config "$CONF" -- /bin/sh -c \
    'echo "$SSL_CERT_FILE" >"$0"; exec sleep 30' "$WS/live") >/dev/null 2>&1 &
live=$!
_pids="$_pids $live"
if wait_file "$WS/live" 100; then
	eq "the running command's directory on the host holds tmp/ alone" \
	    "$(ls -A "$(dirname "$(cat "$WS/live")")")" tmp
else
	not_ok "the running command did not say its bundle"
fi
kill "$live" 2>/dev/null
wait "$live" 2>/dev/null
rm -f "$WS/live"

# 2. Through the terminated proxy: no client option, the origin gets the
#    real token, the command never sees it.
: >"$T/origin.rec"
sbx -- /bin/sh -c "curl -sS --max-time 20 -H \"Authorization: Bearer \$GH_TOKEN\" https://allowed.test:$ORIGIN/curl" \
    >"$T/curl.out" 2>"$T/curl.err"
check "curl: https through the proxy verifies without an option" \
    grep -qx "origin-ok /curl" "$T/curl.out"
check "curl: the origin got the real GH_TOKEN" \
    grep -qF "\"path\": \"/curl\", \"auth\": \"Bearer $GH\"" "$T/origin.rec"
sbx -- python3 -c "
import os, urllib.request
r = urllib.request.Request('https://allowed.test:$ORIGIN/python',
    headers={'Authorization': 'Bearer ' + os.environ['GH_TOKEN']})
print(urllib.request.urlopen(r, timeout=20).read().decode(), end='')
" >"$T/py.out" 2>"$T/py.err"
check "python urllib: verifies and reaches the origin" \
    grep -qx "origin-ok /python" "$T/py.out"
check "python urllib: the origin got the real GH_TOKEN" \
    grep -qF "\"path\": \"/python\", \"auth\": \"Bearer $GH\"" "$T/origin.rec"
if command -v node >/dev/null 2>&1; then
	# node's own https, through the proxy by CONNECT (no agent library).
	cat >"$WS/n.js" <<EOF
const http = require('http'), https = require('https'), tls = require('tls');
const req = http.request({host: '127.0.0.1', port: 3128, method: 'CONNECT',
    path: 'allowed.test:$ORIGIN'});
req.on('connect', (res, sock) => {
  https.get({host: 'allowed.test', port: $ORIGIN, path: '/node',
      createConnection: () => tls.connect({socket: sock, servername: 'allowed.test'}),
      headers: {Authorization: 'Bearer ' + process.env.GH_TOKEN}}, r => {
    let b = ''; r.on('data', d => b += d); r.on('end', () => process.stdout.write(b));
  }).on('error', e => { console.error(e.message); process.exit(1); });
});
req.end();
EOF
	sbx -- node n.js >"$T/node.out" 2>"$T/node.err"
	check "node https (NODE_EXTRA_CA_CERTS): verifies, reaches the origin" \
	    grep -qx "origin-ok /node" "$T/node.out"
	check "node: the origin got the real GH_TOKEN" \
	    grep -qF "\"path\": \"/node\", \"auth\": \"Bearer $GH\"" "$T/origin.rec"
fi
check "the origin got no placeholder" sh -c "! grep -q pisbx_ '$T/origin.rec'"

# A placeholder sent where its credential may not go: refused, and the
# summary and --report name the credential (never its value).
HOSTS_NAMES="allowed.test denied.test other.test"
srv_start http plain
PLAIN=$SRV_PORT
CREDS_INJ='{"envVars":[{"name":"GH_TOKEN","mode":"mask","injectHosts":["allowed.test"]}]}'
run_config --allow "allowed.test other.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":'"$CREDS_INJ"'}'
sbx --report "$T/leak.json" -- /bin/sh -c \
    "curl -sS --max-time 10 -H \"Authorization: Bearer \$GH_TOKEN\" http://other.test:$PLAIN/leak" \
    >"$T/leak.out" 2>"$T/leak.err"
check "a leak: the summary names the refusal and the credential" sh -c "
    grep -q 'other.test:$PLAIN (credential-leak.*GH_TOKEN' '$T/leak.err'"
check "a leak: --report has it, with the credential's name" "$PY" -c "
import json, sys
r = json.load(open('$T/leak.json'))
sys.exit(0 if any(i.get('reason') == 'credential-leak' and
    'GH_TOKEN' in i.get('detail', '') for i in r) else 1)"
check "a leak: the value is in neither" reals "$T/leak.err" "$T/leak.json"

# 3. A configured CA: its key is hidden from the command.
mkdir -p "$WS/ca"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$WS/ca/key.pem" -out "$WS/ca/cert.pem" -days 2 \
    -subj "/CN=pisbx test CA $$" -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign >/dev/null 2>&1
chmod 600 "$WS/ca/key.pem"
run_config --allow "allowed.test" \
    --net '{"tlsTerminate":{"caCertPath":"'"$WS"'/ca/cert.pem","caKeyPath":"'"$WS"'/ca/key.pem"}}'
sbx -- /bin/sh -c 'cat ca/key.pem; echo "== bundle"; cat "$SSL_CERT_FILE"' \
    >"$T/ca.out" 2>"$T/ca.err"
check "caKeyPath: the key is unreadable inside" \
    sh -c "! grep -q 'PRIVATE KEY' '$T/ca.out'"
check "caKeyPath: the configured CA is in the bundle" sh -c "
    sed -n '2p' '$WS/ca/cert.pem' >'$T/caline' && grep -qF -f '$T/caline' '$T/ca.out'"

# 4. Errors name the entry; nothing runs.
run_config --allow "allowed.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":{"envVars":[{"name":"GH_TOKEN","mode":"mask","extract":"ghp_[a-z]+"}]}}'
sbx -- /bin/sh -c 'echo RAN' >"$T/e1.out" 2>"$T/e1.err"
rc=$?
check "extract without a group: exit 125 (got $rc)" [ "$rc" -eq 125 ]
check "extract without a group: the entry is named" \
    grep -qF '$.credentials.envVars[0].extract' "$T/e1.err"
check "extract without a group: nothing ran" sh -c "! grep -q RAN '$T/e1.out'"
run_config --allow "allowed.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":{"files":[{"path":"'"$WS"'/adir","mode":"mask"}]}}'
sbx -- /bin/sh -c 'echo RAN' >"$T/e2.out" 2>"$T/e2.err"
rc=$?
check "mask of a directory: exit 125 (got $rc)" [ "$rc" -eq 125 ]
check "mask of a directory: the entry is named" \
    grep -qF '$.credentials.files[0]' "$T/e2.err"
run_config --allow "allowed.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":{"envVars":[{"name":"GH_TOKEN","mode":"mask","extract":"^zzz(x)","onExtractNoMatch":"error"}]}}'
sbx -- /bin/sh -c 'echo RAN' >"$T/e3.out" 2>"$T/e3.err"
rc=$?
check "onExtractNoMatch error: exit 125 naming the entry" sh -c "
    [ $rc -eq 125 ] && grep -qF '\$.credentials.envVars[0]' '$T/e3.err'"
# A masked JAVA_TOOL_OPTIONS joins the trust store's options: one entry.
JAVA_TOOL_OPTIONS="-Dx.token=$GH" run_config --allow "allowed.test" \
    --net '{"tlsTerminate":{}}' \
    --top '{"credentials":{"envVars":[{"name":"JAVA_TOOL_OPTIONS","mode":"mask","extract":"token=(.+)"}]}}'
JAVA_TOOL_OPTIONS="-Dx.token=$GH" sbx -- env >"$T/j.out" 2>"$T/j.err"
eq "a masked JAVA_TOOL_OPTIONS: one entry inside" \
    "$(grep -c '^JAVA_TOOL_OPTIONS=' "$T/j.out")" 1
check "... with the placeholder and the trust store" grep -qE \
    '^JAVA_TOOL_OPTIONS=-Dx.token=pisbx_[a-z0-9]+ .*-Djavax.net.ssl.trustStore=' \
    "$T/j.out"
# A variable pisbx-run sets for the command itself cannot be masked.
SSL_CERT_FILE=/x run_config --allow "allowed.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":{"envVars":[{"name":"SSL_CERT_FILE","mode":"mask"}]}}'
SSL_CERT_FILE=/x sbx -- /bin/sh -c 'echo RAN' >"$T/e5.out" 2>"$T/e5.err"
rc=$?
check "a masked SSL_CERT_FILE: refused (got $rc), nothing ran" sh -c "
    [ $rc -ne 0 ] && ! grep -q RAN '$T/e5.out'"
check "... saying why" grep -qF \
    'pisbx-run sets $SSL_CERT_FILE for the command itself, so it cannot be masked' \
    "$T/e5.err"
run_config --allow "allowed.test" --net '{"tlsTerminate":{}}' \
    --top '{"credentials":{"envVars":[{"name":"GH_TOKEN","mode":"mask","extract":"^zzz(x)"}]}}'
sbx -- env >"$T/e4.out" 2>"$T/e4.err"
check "onExtractNoMatch default (deny): the variable is gone" sh -c "
    ! grep -q '^GH_TOKEN=' '$T/e4.out' && ! grep -qF '$GH' '$T/e4.out'"

# 5. Without namespaces (as in a container): masked files hidden, said.
CONTAINER=$PISBX_BUILD/tests/helpers/container
if [ -x "$CONTAINER" ] && "$CONTAINER" --check >/dev/null 2>&1; then
	run_config --allow "allowed.test" --net '{"tlsTerminate":{}}' \
	    --top '{"credentials":'"$CREDS"'}'
	(cd "$WS" && "$CONTAINER" "$RUN" --config "$CONF" --access-log "$PX_LOG" \
	    -- /bin/sh -c 'cat token.txt; cat .env; env' >"$T/nons.out" 2>"$T/nons.err")
	check "no namespaces: the masked copy is hidden instead, said" grep -qF \
	    "token.txt: cannot show a masked copy without namespaces: the file is hidden instead" \
	    "$T/nons.err"
	check "no namespaces: no real value reaches the command" reals "$T/nons.out"
	check "no namespaces: GH_TOKEN still a placeholder" \
	    grep -qE '^GH_TOKEN=pisbx_' "$T/nons.out"
	check "no namespaces: SSL_CERT_FILE names the bundle" \
	    grep -q '^SSL_CERT_FILE=.*/ca-bundle.pem$' "$T/nons.out"
fi

done_testing
