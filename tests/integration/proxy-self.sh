#!/bin/sh
# The proxy never connects to one of its own listeners, by any address
# that reaches it: the unspecified addresses (0.0.0.0, ::), IPv4-mapped
# IPv6, all of 127.0.0.0/8, the interfaces' addresses and every address
# of a local route for a wildcard listener -- dialled as literals or as
# names that resolve to them, over CONNECT, SOCKS5 and forwarding, each
# with an exact allow entry (which lets non-public addresses through).
# Each is refused once (non-public-address), never looped.
#
# Runs in a private network namespace: 11.0.0.1 on lo and the local
# route 11.0.1.0/24 (addresses the host answers to without an interface
# address for them).
. "$(dirname "$0")/../lib/netns.sh"
ip addr add 11.0.0.1/32 dev lo &&
    ip route add local 11.0.1.0/24 dev lo || exit 1

. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start echo echo
ECHO=$SRV_PORT
dns_start zero.test=0.0.0.0 anyip.test=11.0.1.5 lo9.test=127.0.0.9 \
    mapped.test=::ffff:127.0.0.1
px_config "$T/conf.json" --allow "0.0.0.0 [::] 127.0.0.1 127.0.0.9 \
    11.0.0.1 11.0.1.77 [::1] zero.test anyip.test lo9.test mapped.test"
px_start "$T/conf.json" --listen 0.0.0.0:0 --listen '[::]:0'
P=$PX_PORT
P4=$(sed -n 's/^pisbx-proxy: listening on 0\.0\.0\.0:\([0-9]*\)$/\1/p' "$PX_ERR")
P6=$(sed -n 's/^pisbx-proxy: listening on \[::\]:\([0-9]*\)$/\1/p' "$PX_ERR")
[ -n "$P4" ] && [ -n "$P6" ] || { not_ok "no wildcard listeners: $(cat "$PX_ERR")"; exit 1; }

# refused DESC TARGET: CONNECT TARGET is refused as the proxy's own
# listener with one decision record and no second connection.
refused() {
	: >"$PX_LOG"
	px_connect "$2"
	eq "$1 ($2): 403 non-public-address" "$STATUS/$REASON_HDR" \
	    403/non-public-address
	contains "$1 ($2): the answer says why" "$RESP" "proxy's own listener"
	sleep 0.2
	eq "$1 ($2): one connection, no loop" \
	    "$(log_count event=close)" 1
}

refused "unspecified address, 127.0.0.1 listener" "0.0.0.0:$P"
refused "IPv6 unspecified" "[::]:$P"
refused "IPv4-mapped unspecified" "[::ffff:0.0.0.0]:$P"
refused "the listener's own address" "127.0.0.1:$P"
refused "IPv4-mapped spelling" "[::ffff:127.0.0.1]:$P"
refused "a name resolving to 0.0.0.0" "zero.test:$P"
refused "a name with an IPv4-mapped IPv6 address" "mapped.test:$P"
refused "wildcard listener: 0.0.0.0" "0.0.0.0:$P4"
refused "wildcard listener: 127.0.0.9" "127.0.0.9:$P4"
refused "wildcard listener: a name for 127.0.0.9" "lo9.test:$P4"
refused "wildcard listener: an interface address" "11.0.0.1:$P4"
refused "wildcard listener: an address of a local route" "11.0.1.77:$P4"
refused "wildcard listener: a name in a local route" "anyip.test:$P4"
refused "IPv6 wildcard listener: ::" "[::]:$P6"
refused "IPv6 wildcard listener: ::1" "[::1]:$P6"

# SOCKS5 and forwarding go through the same check.
: >"$PX_LOG"
out=$(socks "$P" --target "0.0.0.0:$P")
contains "SOCKS5 to 0.0.0.0:own port: reply 0x02" "$out" "reply 0x02 full"
out=$(socks "$P" --atyp domain --target "anyip.test:$P4")
contains "SOCKS5 to a local-route name: reply 0x02" "$out" "reply 0x02 full"
px_req "GET http://0.0.0.0:$P/ HTTP/1.1\r\nHost: x\r\n\r\n"
eq "GET http://0.0.0.0:own port/: 403" "$STATUS/$REASON_HDR" \
    403/non-public-address
sleep 0.2
eq "three requests, three connections (no loop)" "$(log_count event=close)" 3

# No false positives: the same addresses on other ports are dialled, and
# an IPV6_V6ONLY wildcard listener is not reached over IPv4.
out=$(socks "$P" --target "0.0.0.0:$ECHO" --send hi)
contains "0.0.0.0 on another port is dialled (the echo server)" "$out" "echo ok"
out=$(socks "$P" --target "11.0.1.77:$ECHO")
contains "a local-route address on another port is dialled (refused there)" \
    "$out" "reply 0x05 full"
px_connect "127.0.0.1:$P6"
eq "127.0.0.1:<IPv6-only wildcard port> is not the proxy (connect-error)" \
    "$REASON_HDR" connect-error

check "proxy still running" px_alive
px_done
