#!/bin/sh
# Client families reach an HTTPS server through pisbx-run's terminating
# proxy with no option of their own: the run's CA is trusted through the
# bundle bound over the system's and each family's variable (curl,
# Python's urllib, Node's fetch, Java's HttpsURLConnection with the
# JAVA_TOOL_OPTIONS trust store).  The server's own CA reaches pisbx
# through extraCaCertPaths.  An excluded host is untouched: the client
# sees the server's certificate, and no request record is written for it.
# A masked token sent to another allowed host is refused (403,
# credential-leak, naming the credential) and shows in the summary.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/tlsca.sh"
. "$PISBX_TOP/tests/lib/tools.sh"
command -v openssl >/dev/null 2>&1 || skip "openssl is not installed"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"

HOSTS_NAMES="echo.test excl.test git.test"
export HOSTS_NAMES
GH="ghp_REALleak$$x$(date +%s%N)"
export GH_TOKEN="$GH"
# Node 24 from the npm registry (cached under build/), fetched with this
# machine's own trust settings, before they are dropped.
node24=0
tool_node24 >"$T/node24.out" 2>&1 && node24=1
unset PIP_FIND_LINKS PIP_CERT REQUESTS_CA_BUNDLE SSL_CERT_FILE \
    CURL_CA_BUNDLE GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS JAVA_TOOL_OPTIONS \
    JDK_JAVA_OPTIONS

TLSCA=$T/ca
tlsca_make "$TLSCA" "pisbx clients test CA" &&
    tlsca_leaf "$TLSCA" echo.test excl.test git.test ||
    { not_ok "the test CA"; exit 1; }
tls_start echo echo echo.test
ECHO=$SRV_PORT
tls_start echo excl echo.test
EXCL=$SRV_PORT
chmod -R a+rX "$T"

run_config --allow "echo.test excl.test git.test" \
    --net '{"tlsTerminate":{"extraCaCertPaths":["'"$TLSCA"'/ca.pem"],
      "excludeDomains":["excl.test"]}}' \
    --top '{"credentials":{"envVars":[{"name":"GH_TOKEN","mode":"mask",
      "injectHosts":["git.test"]}]}}'

# srv_saw NAME JQ: some request NAME's server logged matches JQ.
srv_saw() {
	jq -n -e "[inputs | select($2)] | length > 0" "$T/$1.reqs" >/dev/null
}

# 1. curl and Python's urllib, no option.
sbx -- /bin/sh -c "curl -sS https://echo.test:$ECHO/curl;
    /usr/bin/python3 -c 'import urllib.request as u
print(u.urlopen(\"https://echo.test:$ECHO/urllib\").read().decode())'" \
    >"$T/c1.out" 2>&1
contains "curl over terminated TLS, no option" "$(cat "$T/c1.out")" \
    "GET /curl HTTP/1.1"
contains "Python's urllib over terminated TLS, no option" \
    "$(cat "$T/c1.out")" "GET /urllib HTTP/1.1"
check_log "curl's request has its record" event=request host=echo.test \
    method=GET path=/curl status=200 tls=terminated
check_log "urllib's request has its record" event=request host=echo.test \
    method=GET path=/urllib status=200

# 2. Node's fetch (Node 24: fetch follows NODE_USE_ENV_PROXY; the run's
#    CA through NODE_EXTRA_CA_CERTS).
if [ $node24 -eq 1 ]; then
	sbx -- "$NODE24" -e "fetch('https://echo.test:$ECHO/node-fetch')
	    .then(r => r.text()).then(t => console.log(t))
	    .catch(e => { console.log('ERR', e.cause || e); process.exit(1); })" \
	    >"$T/node.out" 2>&1
	contains "Node's fetch over terminated TLS, no option" \
	    "$(cat "$T/node.out")" "GET /node-fetch HTTP/1.1"
	check_log "Node's request has its record" event=request \
	    host=echo.test method=GET path=/node-fetch status=200
else
	echo "# Node case skipped: $(tail -n 1 "$T/node24.out")"
fi

# 3. Java: HttpsURLConnection, no option (JAVA_TOOL_OPTIONS has the
#    proxy and the run's trust store).
if command -v java >/dev/null 2>&1; then
	mkdir -p "$T/java"
	cat >"$T/java/Probe.java" <<'EOF'
import java.net.URL;
import javax.net.ssl.HttpsURLConnection;

public class Probe {
	public static void main(String[] a) throws Exception {
		HttpsURLConnection c = (HttpsURLConnection)new URL(a[0]).openConnection();
		System.out.println("java " + c.getResponseCode() + " " +
		    new String(c.getInputStream().readAllBytes()).contains("/java "));
	}
}
EOF
	chmod -R a+rX "$T/java"
	sbx -- java "$T/java/Probe.java" "https://echo.test:$ECHO/java" \
	    >"$T/java.out" 2>&1
	contains "Java's HttpsURLConnection over terminated TLS, no option" \
	    "$(cat "$T/java.out")" "java 200 true"
	check_log "Java's request has its record" event=request \
	    host=echo.test method=GET path=/java status=200
else
	echo "# Java case skipped: java is not installed"
fi

# 4. An excluded host: the tunnel carries the server's own certificate.
sbx -- /bin/sh -c "curl -sS -v --cacert $TLSCA/ca.pem \
    https://excl.test:$EXCL/excluded 2>&1; echo;
    curl -sS -v https://echo.test:$ECHO/terminated 2>&1" >"$T/excl.out" 2>&1
contains "the excluded host answers through the tunnel" \
    "$(cat "$T/excl.out")" "GET /excluded HTTP/1.1"
excl_issuer=$(sed -n '/excl.test/,/GET \/excluded/s/^\*  issuer: //p' \
    "$T/excl.out" | head -n 1)
term_issuer=$(sed -n '/echo.test/,/GET \/terminated/s/^\*  issuer: //p' \
    "$T/excl.out" | tail -n 1)
eq "the excluded host's certificate is the server's own" "$excl_issuer" \
    "CN=pisbx clients test CA"
case $term_issuer in
"" | *"pisbx clients test CA"*)
	not_ok "a terminated host's certificate is the run CA's ($term_issuer)" ;;
*) ok "a terminated host's certificate is the run CA's ($term_issuer)" ;;
esac
check_log "the excluded host's tunnel is decided" event=decision \
    host=excl.test port="$EXCL" decision=allow
eq "no request record for the excluded host" \
    "$(log_count event=request host=excl.test)" 0

# 5. A leak: GH_TOKEN's placeholder to another allowed host.
sbx -- /bin/sh -c "curl -sS -o /dev/null -w 'leak=%{http_code}\n' \
    -H \"Authorization: Bearer \$GH_TOKEN\" https://echo.test:$ECHO/leak" \
    >"$T/leak.out" 2>"$T/leak.err"
contains "the leak is answered 403" "$(cat "$T/leak.out")" "leak=403"
check_log "the leak's request record: 403 credential-leak" event=request \
    host=echo.test path=/leak status=403 reason=credential-leak \
    error~'placeholder of [$]GH_TOKEN'
check_log "the leak's decision record names the credential" \
    event=decision host=echo.test decision=deny reason=credential-leak \
    credential='$GH_TOKEN'
check "the leak never reached the server" \
    jq -n -e '[inputs | select(.path == "/leak")] | length == 0' \
    "$T/echo.reqs" >/dev/null
check "the end-of-run summary names the leak and the credential" \
    grep -q "echo.test:$ECHO (credential-leak.*GH_TOKEN" "$T/leak.err"
check "the real token is in neither the log nor the summary" \
    sh -c "! grep -qF '$GH' '$PX_LOG' '$T/leak.err'"

done_testing
