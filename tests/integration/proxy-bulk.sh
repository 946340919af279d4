#!/bin/sh
# Bulk data: 1 GiB through a CONNECT tunnel with its sha256 computed by
# the sender and by the receiving sink and compared (the sink's answer
# comes back through the half-closed tunnel), 200 MB down through HTTP
# forwarding checked against the origin's pattern, and the byte counts in
# the close records.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

GIB=1073741824
srv_start sink sink
SINK_PORT=$SRV_PORT
srv_start http web
WEB_PORT=$SRV_PORT
dns_start bulk.test=127.0.0.1
px_config "$T/conf.json" --allow "bulk.test"
px_start "$T/conf.json"

"$PXTOOL" send --proxy "127.0.0.1:$PX_PORT" --target "bulk.test:$SINK_PORT" \
    --bytes "$GIB" >"$T/send.out" 2>&1
rc=$?
sed 's/^/# /' "$T/send.out"
eq "sender finished" "$rc" 0
sent=$(sed -n "s/^sent $GIB sha256 \([0-9a-f]\{64\}\) .*/\1/p" "$T/send.out")
back=$(sed -n "s/^sink bytes $GIB sha256 \([0-9a-f]\{64\}\)$/\1/p" "$T/send.out")
i=0
while ! has_line "$T/sink.out" "^bytes " && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
at_sink=$(sed -n "s/^bytes $GIB sha256 \([0-9a-f]\{64\}\)$/\1/p" "$T/sink.out")
if [ -n "$sent" ] && [ "$sent" = "$at_sink" ]; then
	ok "1 GiB through the tunnel: sink's sha256 equals the sender's"
else
	not_ok "1 GiB: sender '$sent', sink '$(cat "$T/sink.out")'"
fi
eq "the sink's answer came back through the half-closed tunnel" "$back" "$sent"
check_log "close record: bytes_up is 1 GiB" event=close proto=connect \
    host=bulk.test bytes_up="$GIB" bytes_down~'^[1-9]'

want=$("$PY" "$SERVERS" sha 200000000)
got=$(curl -sS --max-time 60 -x "http://127.0.0.1:$PX_PORT" \
    "http://bulk.test:$WEB_PORT/bytes/200000000" | sha256sum | cut -d' ' -f1)
eq "200 MB through HTTP forwarding intact" "$got" "$want"
check_log "close record of the HTTP forward counts the body" event=close \
    proto=http host=bulk.test bytes_down~'^20000[0-9]{4}$'
check "proxy still running" px_alive
px_done
