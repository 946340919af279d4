#!/bin/sh
# network.parentProxy under pisbx-run, against Debian's tinyproxy with
# Basic auth: clients in the sandbox reach a name only the gateway can
# resolve (forwarded HTTP, CONNECT, SOCKS5), a denied name never reaches
# it; the credentials file is neither readable nor writable from the
# sandbox, the credentials variable is not in its environment, and the
# password is in no log and no output.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/parent.sh"

SECRET='Run-S3cret_77'
SECRET_B64=$(printf 'alice:%s' "$SECRET" | base64)
HOSTS_NAMES="denied.parent.test"
export HOSTS_NAMES

srv_start http web
WEB=$SRV_PORT
hosts_file "$T/gw-hosts" "127.0.0.1 localhost" \
    "127.0.0.1 origin.parent.test" "127.0.0.1 denied.parent.test"
tp_start gw --hosts "$T/gw-hosts" --auth "alice:$SECRET" \
    --allow "origin.parent.test denied.parent.test"
chmod 644 "$TP_LOG"

# In the workspace, which the sandbox may write: protected all the same.
CRED=$WS/.gw.cred
printf 'alice:%s\n' "$SECRET" >"$CRED"
chmod 600 "$CRED"
run_config --allow "origin.parent.test" --deny "denied.parent.test" \
    --net "{\"parentProxy\": {\"http\": \"http://127.0.0.1:$TP_PORT\",
	\"credentialsFile\": \"$CRED\"}}"

body=$(sbx -v -- curl -s -m 10 "http://origin.parent.test:$WEB/fwd" 2>"$T/run.err")
contains "forwarded HTTP from the sandbox through the gateway" "$body" \
    '"path": "/fwd"'
cat "$T/run.err" >>"$T/all.err"
body=$(sbx -- curl -s -m 10 -p "http://origin.parent.test:$WEB/tunnel" 2>>"$T/all.err")
contains "CONNECT from the sandbox through the gateway" "$body" \
    '"path": "/tunnel"'
body=$(sbx -- curl -s -m 10 -x socks5h://127.0.0.1:1080 \
    "http://origin.parent.test:$WEB/socks" 2>>"$T/all.err")
contains "SOCKS5 from the sandbox through the gateway" "$body" \
    '"path": "/socks"'
check_log "allow records name the gateway" event=decision proto=connect \
    host=origin.parent.test decision=allow parent="127.0.0.1:$TP_PORT"
if tp_saw "$TP_LOG" "CONNECT origin.parent.test:$WEB"; then
	ok "the gateway got the sandbox's CONNECT"
else
	not_ok "the gateway did not log the CONNECT"
fi

code=$(sbx -- curl -s -o /dev/null -w '%{http_code}' -m 10 \
    "http://denied.parent.test:$WEB/" 2>>"$T/all.err")
eq "denied name from the sandbox: 403" "$code" 403
check_log "deny record" event=decision host=denied.parent.test \
    reason=deny-list:denied.parent.test
if grep -q 'denied\.parent\.test' "$TP_LOG"; then
	not_ok "the denied name reached the gateway"
else
	ok "the denied name never reached the gateway"
fi

# The credentials file: hidden and untouchable from the sandbox.
sbx_sh "cat '$CRED'; echo rc=\$?"
case $(cat "$T/out") in
*"$SECRET"*) not_ok "the sandbox read the credentials file" ;;
*) ok "the sandbox cannot read the credentials file" ;;
esac
sbx_sh "echo 'alice:planted' >'$CRED'; rm -f '$CRED'; \
    mv '$CRED' '$WS/moved' 2>&1; true"
if [ "$(cat "$CRED" 2>/dev/null)" = "alice:$SECRET" ] &&
    [ ! -e "$WS/moved" ]; then
	ok "the sandbox cannot write, remove or move the credentials file"
else
	not_ok "the credentials file changed: $(cat "$CRED" 2>&1)"
fi

# From a variable: works, and the sandbox's environment lacks it.
run_config --allow "origin.parent.test" \
    --net "{\"parentProxy\": {\"http\": \"http://127.0.0.1:$TP_PORT\",
	\"credentialsEnv\": \"PISBX_TEST_GW_CRED\"}}"
export PISBX_TEST_GW_CRED="alice:$SECRET"
body=$(sbx -- /bin/sh -c "curl -s -m 10 http://origin.parent.test:$WEB/env; \
    env; cat /proc/self/environ" 2>>"$T/all.err")
unset PISBX_TEST_GW_CRED
contains "credentials from the variable: through the gateway" "$body" \
    '"path": "/env"'
case $body in
*PISBX_TEST_GW_CRED* | *"$SECRET"*)
	not_ok "the credentials variable reached the sandbox" ;;
*) ok "the credentials variable is not in the sandbox's environment" ;;
esac

# Wrong credentials: the sandbox's client gets parent-auth.
printf 'alice:nope\n' >"$CRED"
run_config --allow "origin.parent.test" \
    --net "{\"parentProxy\": {\"http\": \"http://127.0.0.1:$TP_PORT\",
	\"credentialsFile\": \"$CRED\"}}"
out=$(sbx -- curl -s -m 10 -p -D - -o /dev/null \
    "http://origin.parent.test:$WEB/" 2>"$T/auth.err" | tr -d '\r')
cat "$T/auth.err" >>"$T/all.err"
contains "wrong credentials, from the sandbox: 502 parent-auth" "$out" \
    "X-Pisbx-Reason: parent-auth"
contains "... in the summary at exit, with what to check" \
    "$(cat "$T/auth.err")" \
    "connect origin.parent.test:$WEB (parent-auth): check the upstream proxy's credentials in $CRED"
# A missing file stops the run before anything starts.
rm -f "$CRED"
sbx -- /bin/true 2>"$T/miss.err"
rc=$?
eq "a missing credentials file: exit 78 (config)" "$rc" 78
contains "... and says which key" "$(cat "$T/miss.err")" \
    "network.parentProxy.credentialsFile: cannot open \"$CRED\""

leak=
for f in "$PX_LOG" "$T/all.err" "$T/out"; do
	grep -qF -e "$SECRET" -e "$SECRET_B64" "$f" && leak="$leak $f"
done
if [ -z "$leak" ]; then
	ok "the password is in no access log, diagnostics or output"
else
	not_ok "the password leaked into:$leak"
fi

done_testing
