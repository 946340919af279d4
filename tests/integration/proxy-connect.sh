#!/bin/sh
# CONNECT tunnels with real clients: curl -x to a TLS origin (certificate
# checked), openssl s_client -proxy, a denied and an unlisted target (403
# with the canonical target, the reason and X-Pisbx-Reason, and no DNS
# query), early bytes after the request head, half-close, and the
# access-log records of each.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

"$PY" "$SERVERS" certgen "$T/cert" tls.test
srv_start http tls --tls-cert "$T/cert/cert.pem" --tls-key "$T/cert/key.pem"
TLS_PORT=$SRV_PORT
srv_start echo echo
ECHO_PORT=$SRV_PORT
srv_start sink sink
SINK_PORT=$SRV_PORT
dns_start tls.test=127.0.0.1 echo.test=127.0.0.1 denied.test=127.0.0.1 \
    unlisted.test=127.0.0.1
px_config "$T/conf.json" --allow "tls.test echo.test" --deny "denied.test"
px_start "$T/conf.json"

# curl through CONNECT to the TLS origin, verifying its certificate.
out=$(curl -sS --max-time 10 -x "http://127.0.0.1:$PX_PORT" \
    --cacert "$T/cert/cert.pem" "https://tls.test:$TLS_PORT/hello?x=1" 2>&1)
contains "curl -x https: origin answered through the tunnel" "$out" '"path": "/hello?x=1"'
contains "curl -x https: Host is the origin's" "$out" "[\"Host\", \"tls.test:$TLS_PORT\"]"
check_log "CONNECT allow record" event=decision proto=connect host=tls.test \
    port="$TLS_PORT" decision=allow reason=allow-list:tls.test addr~127.0.0.1
check_log "CONNECT close record with bytes both ways" event=close proto=connect \
    host=tls.test port="$TLS_PORT" bytes_up~'^[1-9][0-9]*$' \
    bytes_down~'^[1-9][0-9]*$' ms~'^[0-9]+(\.[0-9]+)?$'
conn=$(log_field conn event=decision host=tls.test)
check_log "decision and close share the conn id" event=close host=tls.test conn="$conn"

# openssl s_client -proxy.
out=$(printf 'GET /s HTTP/1.1\r\nHost: tls.test\r\nConnection: close\r\n\r\n' |
    timeout 15 openssl s_client -proxy "127.0.0.1:$PX_PORT" \
    -connect "tls.test:$TLS_PORT" -servername tls.test \
    -CAfile "$T/cert/cert.pem" -verify_return_error -ign_eof 2>&1)
contains "openssl s_client -proxy: certificate verified" "$out" "Verify return code: 0 (ok)"
contains "openssl s_client -proxy: origin answered" "$out" '"path": "/s"'

# A ClientHello whose SNI names another host than the CONNECT target.
out=$(printf 'GET /sni HTTP/1.1\r\nHost: tls.test\r\nConnection: close\r\n\r\n' |
    timeout 15 openssl s_client -proxy "127.0.0.1:$PX_PORT" \
    -connect "tls.test:$TLS_PORT" -servername other.test \
    -CAfile "$T/cert/cert.pem" -ign_eof 2>&1)
case $out in
*'"path": "/sni"'*) not_ok "SNI other.test through a tunnel to tls.test reached the origin" ;;
*) ok "SNI other.test through a tunnel to tls.test: no handshake with the origin" ;;
esac
check_log "sni-mismatch record" proto=connect host=tls.test port="$TLS_PORT" \
    reason=sni-mismatch

# A denied target: 403, canonical target and reason in body and header.
px_connect "DENIED.Test.:443"
eq "deny-listed CONNECT gets 403" "$STATUS" 403
eq "403 carries X-Pisbx-Reason" "$REASON_HDR" "deny-list:denied.test"
contains "403 body names the canonical target" "$RESP" "denied.test:443"
contains "403 body names the reason" "$RESP" "deny-list:denied.test"
check_log "deny record, canonical host" event=decision proto=connect \
    host=denied.test port=443 decision=deny reason=deny-list:denied.test
if dns_asked denied.test; then
	not_ok "a denied name was sent to DNS"
else
	ok "a denied name never reaches DNS"
fi

# An unlisted target without a reviewer: deny, no-reviewer, no DNS.
px_connect "unlisted.test:443"
eq "unlisted CONNECT gets 403" "$STATUS" 403
eq "unlisted: X-Pisbx-Reason no-reviewer" "$REASON_HDR" "no-reviewer"
check_log "no-reviewer record" event=decision host=unlisted.test port=443 \
    decision=deny reason=no-reviewer
if dns_asked unlisted.test; then
	not_ok "an unreviewed name was sent to DNS"
else
	ok "an unreviewed name never reaches DNS"
fi
if dns_asked tls.test; then
	ok "an allowed name is resolved through the configured resolver"
else
	not_ok "the allowed name was not resolved through the test dnsmasq"
fi

# Early bytes sent together with the request head reach the upstream.
out=$(printf 'CONNECT echo.test:%s HTTP/1.1\r\nHost: echo.test\r\n\r\nEARLY-BYTES\n' \
    "$ECHO_PORT" | raw "$PX_PORT" --timeout 2 | tr -d '\r')
contains "CONNECT 200" "$out" "HTTP/1.1 200"
contains "early bytes after the head are relayed" "$out" "EARLY-BYTES"

# Half-close: the client shuts its side, the sink's answer still arrives.
out=$("$PXTOOL" send --proxy "127.0.0.1:$PX_PORT" \
    --target "echo.test:$SINK_PORT" --bytes 300000 2>&1)
sent=$(printf '%s\n' "$out" | sed -n 's/^sent [0-9]* sha256 \([0-9a-f]*\).*/\1/p')
got=$(printf '%s\n' "$out" | sed -n 's/^sink bytes 300000 sha256 \([0-9a-f]*\)$/\1/p')
if [ -n "$sent" ] && [ "$sent" = "$got" ]; then
	ok "half-closed tunnel: 300000 bytes up, sink's checksum back down"
else
	not_ok "half-closed tunnel: $out"
fi
check_log "close record counts the bytes up" event=close host=echo.test \
    port="$SINK_PORT" bytes_up=300000

# Every line of the access log is JSON with the fixed fields.
if "$PY" - "$PX_LOG" <<'EOF'
import json, re, sys
ts_re = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$")
need = {"ts", "event", "conn", "proto", "client", "host", "port",
        "decision", "reason"}
close_need = {"bytes_up", "bytes_down", "ms"}
bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    miss = need - set(r)
    if r.get("event") == "close":
        miss |= close_need - set(r)
    if miss or r["event"] not in ("decision", "close") or \
            r["proto"] not in ("connect", "http", "socks5") or \
            not ts_re.match(str(r["ts"])):
        print("# bad record %s (missing %s)" % (line.strip(), sorted(miss)))
        bad += 1
sys.exit(1 if bad else 0)
EOF
then
	ok "every access-log record has the documented fields"
else
	not_ok "access-log records miss documented fields"
fi
check "proxy still running" px_alive
px_done
