#!/bin/sh
# A reset ends a tunnel the way it began (docs/reliability.md): an
# upstream that sends bytes and resets is seen by the client as those
# bytes and then a reset, never a clean end of stream; an upload the
# upstream refuses with an answer and a reset delivers the answer first;
# a client's reset reaches the upstream as a reset after all the client
# sent.  CONNECT and SOCKS5, buffered (4 KiB) and spliced (3 MiB, past
# RELAY_SPLICE_AFTER).  The close records say which side reset.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

# RELIAB_ROUNDS: more rounds (make soak).
ROUNDS=${RELIAB_ROUNDS:-10}
dns_start reset.test=127.0.0.1
px_config "$T/conf.json" --allow "reset.test"
px_start "$T/conf.json"

"$PY" "$PISBX_TOP/tests/lib/resetpeer.py" "$PX_PORT" reset.test "$ROUNDS" \
    >"$T/reset.out" 2>"$T/reset.err"
grep -E '^(not )?ok ' "$T/reset.out"
_nfail=$((_nfail + $(grep -c '^not ok ' "$T/reset.out")))
conns=$(sed -n 's/^conns //p' "$T/reset.out")
if [ -z "$conns" ]; then
	not_ok "the reset driver did not finish: $(tail -n 5 "$T/reset.err")"
	conns=0
fi

# Each tunnel's close record names the side that reset.
i=0
while [ "$(log_count event=close host=reset.test)" -lt "$conns" ] &&
    [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
for proto in connect socks5; do
	up=$(log_count event=close proto=$proto end=upstream-reset)
	cl=$(log_count event=close proto=$proto end=client-reset)
	want_up=$((ROUNDS * 2 + 2))
	eq "$proto: close records end=upstream-reset" "$up" "$want_up"
	eq "$proto: close records end=client-reset" "$cl" 2
done
big=$(log_count event=close proto=connect end=client-reset \
    bytes_up~'^31457[0-9][0-9]$')
eq "the spliced client reset counts every byte (bytes_up)" "$big" 1
check "proxy still running" px_alive
px_done
