#!/bin/sh
# SOCKS5 (RFC 1928/1929): curl --socks5-hostname and --socks5, no-auth and
# username/password (the user name logged in its own field, never as the
# client), domain, IPv4 and IPv6 targets; reply codes for deny
# (0x02), DNS failure (0x04), refused (0x05), timeout (0x06), BIND and
# UDP ASSOCIATE (0x07) with full replies; SOCKS4 refused with an 8-byte
# SOCKS4 reject; the access-log records.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start http web
WEB_PORT=$SRV_PORT
srv_start echo echo
ECHO_PORT=$SRV_PORT
srv_start echo echo6 --bind ::1
ECHO6_PORT=$SRV_PORT
srv_start synhole syn
SYN_PORT=$SRV_PORT
REFUSED_PORT=$(free_port)
dns_start sock.test=127.0.0.1 blocked.test=127.0.0.1 unlisted.test=127.0.0.1
px_config "$T/conf.json" \
    --allow "sock.test missing.test 127.0.0.1 [::1]" --deny "blocked.test" \
    --proxy '{"connectTimeoutMs": 1000}'
px_start "$T/conf.json"

# curl, name resolved by the proxy.
out=$(curl -sS --max-time 10 --socks5-hostname "127.0.0.1:$PX_PORT" \
    "http://sock.test:$WEB_PORT/h" 2>&1)
contains "curl --socks5-hostname reaches the origin" "$out" '"path": "/h"'
check_log "socks5 allow record (domain)" event=decision proto=socks5 \
    host=sock.test port="$WEB_PORT" decision=allow reason=allow-list:sock.test
check_log "socks5 close record" event=close proto=socks5 host=sock.test \
    bytes_down~'^[1-9]'

# curl --socks5 resolves locally: an IP literal target, exact literal entry.
out=$(curl -sS --max-time 10 --socks5 "127.0.0.1:$PX_PORT" \
    "http://127.0.0.1:$WEB_PORT/l" 2>&1)
contains "curl --socks5 (IPv4 target) reaches the origin" "$out" '"path": "/l"'
check_log "socks5 allow record (IPv4 literal)" event=decision proto=socks5 \
    host=127.0.0.1 port="$WEB_PORT" decision=allow reason=allow-list:127.0.0.1

# Username/password: accepted; the user name is logged in its own field,
# never in place of the client.
out=$(curl -sS --max-time 10 -x "socks5h://alice:secret@127.0.0.1:$PX_PORT" \
    "http://sock.test:$WEB_PORT/auth" 2>&1)
contains "curl socks5h with user/password" "$out" '"path": "/auth"'
out=$(socks "$PX_PORT" --auth bob:pw --target "sock.test:$ECHO_PORT" --send hi)
contains "RFC 1929: method 0x02 chosen" "$out" "method 0x02"
contains "RFC 1929: auth accepted" "$out" "auth 0x00"
contains "RFC 1929: CONNECT succeeds, data relayed" "$out" "echo ok"
check_log "SOCKS5 user name in its own field, client is the peer" \
    event=decision proto=socks5 port="$ECHO_PORT" user=bob \
    client~'^127\.0\.0\.1:[0-9]+$'
check_log "... on the close record too" event=close proto=socks5 \
    port="$ECHO_PORT" user=bob client~'^127\.0\.0\.1:[0-9]+$'
if grep -q 'pw' "$PX_LOG"; then
	not_ok "the SOCKS5 password reached the access log"
else
	ok "the SOCKS5 password is never logged"
fi

# Raw exchanges: each reply is a full RFC 1928 reply.
out=$(socks "$PX_PORT" --target "sock.test:$ECHO_PORT" --send ping)
contains "domain CONNECT: reply 0x00" "$out" "reply 0x00 full"
contains "domain CONNECT: data relayed" "$out" "echo ok"
out=$(socks "$PX_PORT" --target "127.0.0.1:$ECHO_PORT" --send ping)
contains "IPv4 CONNECT: reply 0x00, data relayed" "$out" "echo ok"
out=$(socks "$PX_PORT" --target "[::1]:$ECHO6_PORT" --send ping)
contains "IPv6 CONNECT: reply 0x00, data relayed" "$out" "echo ok"
check_log "IPv6 target logged in brackets" event=decision proto=socks5 \
    host="[::1]" port="$ECHO6_PORT" decision=allow

out=$(socks "$PX_PORT" --target "blocked.test:$ECHO_PORT")
contains "deny-listed: reply 0x02" "$out" "reply 0x02 full"
check_log "deny record" event=decision proto=socks5 host=blocked.test \
    decision=deny reason=deny-list:blocked.test
out=$(socks "$PX_PORT" --target "unlisted.test:$ECHO_PORT")
contains "unlisted, no reviewer: reply 0x02" "$out" "reply 0x02 full"
check_log "no-reviewer record" event=decision proto=socks5 host=unlisted.test \
    decision=deny reason=no-reviewer
out=$(socks "$PX_PORT" --target "missing.test:$ECHO_PORT")
contains "DNS failure: reply 0x04" "$out" "reply 0x04 full"
check_log "dns-error record" proto=socks5 host=missing.test reason=dns-error
out=$(socks "$PX_PORT" --target "127.0.0.1:$REFUSED_PORT")
contains "connection refused: reply 0x05" "$out" "reply 0x05 full"
check_log "connect-error record" proto=socks5 host=127.0.0.1 \
    port="$REFUSED_PORT" reason=connect-error
if [ "$SYN_PORT" = unsupported ]; then
	ok "# SKIP connect timeout: this kernel answers SYNs on a full backlog"
else
	out=$(socks "$PX_PORT" --target "127.0.0.1:$SYN_PORT" --timeout 10)
	contains "connect timeout: reply 0x06" "$out" "reply 0x06 full"
fi
out=$(socks "$PX_PORT" --cmd bind --target "127.0.0.1:$ECHO_PORT")
contains "BIND: reply 0x07" "$out" "reply 0x07 full"
out=$(socks "$PX_PORT" --cmd udp --target "127.0.0.1:$ECHO_PORT")
contains "UDP ASSOCIATE: reply 0x07" "$out" "reply 0x07 full"

# Domain targets are canonicalised like any other host.
out=$(socks "$PX_PORT" --atyp domain --target "127.1:$ECHO_PORT" --send ping)
contains "domain '127.1' is the literal 127.0.0.1" "$out" "echo ok"
out=$(socks "$PX_PORT" --atyp domain --target "bad!host.test:$ECHO_PORT")
contains "invalid domain: reply 0x02" "$out" "reply 0x02 full"
check_log "invalid domain logged" event=decision proto=socks5 decision=deny \
    reason=invalid-host

# SOCKS4 and SOCKS4a: an 8-byte reject, VN 0, CD 0x5B.
out=$(echo "04 01 $(printf '%04x' "$ECHO_PORT") 7f000001 00" | raw "$PX_PORT" --hex)
eq "SOCKS4 CONNECT rejected with 00 5b + 6 bytes" "$(printf '%s' "$out" | cut -c1-4)/${#out}" "005b/16"
out=$(echo "04 01 $(printf '%04x' "$ECHO_PORT") 00000001 00 $(printf 'sock.test' | od -An -tx1 | tr -d ' \n') 00" |
    raw "$PX_PORT" --hex)
eq "SOCKS4a CONNECT rejected with 00 5b + 6 bytes" "$(printf '%s' "$out" | cut -c1-4)/${#out}" "005b/16"

# A launcher-given label (--label) is fixed: a user name the client picks
# (with a control character, masked) goes in "user" and the label stays.
check "proxy still running" px_alive
MAIN_LOG=$PX_LOG MAIN_PORT=$PX_PORT
PX_LOG=$T/labelled.log
px_start "$T/conf.json" --label sandbox-7
out=$(socks "$PX_PORT" --auth "$(printf 'root\001x'):pw" \
    --target "sock.test:$ECHO_PORT" --send hi)
contains "labelled proxy: SOCKS5 with a user name relays" "$out" "echo ok"
check_log "labelled proxy: client stays the label, user masked" \
    event=decision proto=socks5 client=sandbox-7 'user=root?x'
check_log "labelled proxy: close record keeps the label" event=close \
    proto=socks5 client=sandbox-7 'user=root?x'
eq "labelled proxy: no record names another client" \
    "$(log_count client~'^(?!sandbox-7$)')" 0
PX_LOG=$MAIN_LOG PX_PORT=$MAIN_PORT
px_done
