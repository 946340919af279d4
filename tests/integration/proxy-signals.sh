#!/bin/sh
# SIGHUP in standalone mode: a good new config replaces the policy (and
# says so in one line, without -v), a bad
# one keeps the old policy and says why, the access log is reopened after
# a rename (logrotate); SIGTERM closes open tunnels with close records and
# exits 0; --log-format text writes lines for people.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start echo echo
E=$SRV_PORT
dns_start a.test=127.0.0.1 b.test=127.0.0.1
px_config "$T/conf.json" --allow "a.test"
px_start "$T/conf.json"

px_connect "a.test:$E"; eq "before reload: a.test allowed" "$STATUS" 200
px_connect "b.test:$E"; eq "before reload: b.test denied" "$STATUS" 403

# wait_status TARGET WANT: poll until CONNECT TARGET answers WANT (5 s).
wait_status() {
	_i=0
	while [ $_i -lt 50 ]; do
		px_connect "$1"
		[ "$STATUS" = "$2" ] && return 0
		sleep 0.1; _i=$((_i + 1))
	done
	return 1
}

# A good new config.
px_config "$T/conf.json" --allow "b.test"
kill -HUP "$PX_PID"
if wait_status "b.test:$E" 200; then
	ok "after a good reload: b.test allowed"
else
	not_ok "after a good reload: b.test still $STATUS"
fi
px_connect "a.test:$E"; eq "after a good reload: a.test denied" "$STATUS" 403
# Without -v, a reload that took is still said, once.
eq "a good reload is said in one line on stderr (no -v)" \
    "$(grep -c "^pisbx-proxy: configuration reloaded from $T/conf.json: [0-9]* open connections\{0,1\} decided again, [0-9]* closed\$" "$PX_ERR")" 1

# A bad new config: the old policy stays, stderr says why.
echo '{"network": {"allowedDomains": ["a.test"]}, "bogusKey": 1}' >"$T/conf.json"
errlen=$(wc -c <"$PX_ERR")
kill -HUP "$PX_PID"
i=0
while [ "$(wc -c <"$PX_ERR")" -eq "$errlen" ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
tail -c +$((errlen + 1)) "$PX_ERR" | sed 's/^/# stderr: /'
if tail -c +$((errlen + 1)) "$PX_ERR" | grep -q bogusKey; then
	ok "bad reload: stderr names the offending key"
else
	not_ok "bad reload: no message naming bogusKey"
fi
check "bad reload: proxy still running" px_alive
px_connect "b.test:$E"; eq "bad reload: old policy kept (b.test allowed)" "$STATUS" 200
px_connect "a.test:$E"; eq "bad reload: bad config not applied (a.test denied)" "$STATUS" 403

# Log reopen.
mv "$PX_LOG" "$T/access.log.1"
kill -HUP "$PX_PID"
i=0
while [ ! -e "$PX_LOG" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
px_connect "b.test:$E"
check_log "reopened log gets new records" event=decision host=b.test decision=allow
n=$(logq count "$T/access.log.1" event=decision)
sleep 0.2
px_connect "b.test:$E"
eq "rotated file gets no new records" "$(logq count "$T/access.log.1" event=decision)" "$n"

# SIGTERM with an open tunnel: close record, exit 0.
"$PXTOOL" idle --proxy "127.0.0.1:$PX_PORT" --target "b.test:$E" --count 1 \
    --ready-file "$T/ready" --hold-seconds 30 >/dev/null 2>&1 &
IDLE=$!
_pids="$_pids $IDLE"
wait_file "$T/ready" 200
c0=$(log_count event=close)
px_stop
eq "SIGTERM: exit status 0" "$?" 0
c1=$(log_count event=close)
if [ "$c1" -gt "$c0" ]; then
	ok "SIGTERM: the open tunnel got its close record"
else
	not_ok "SIGTERM: no close record for the open tunnel"
fi
kill "$IDLE" 2>/dev/null

# Text format for people.
px_config "$T/text.json" --allow "a.test"
PX_LOG=$T/text.log
px_start "$T/text.json" --log-format text
px_connect "a.test:$E"
px_connect "b.test:$E"
i=0
while ! grep -q b.test "$PX_LOG" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sed 's/^/# text: /' "$PX_LOG"
if grep -q "a.test" "$PX_LOG" && grep "b.test" "$PX_LOG" | grep -q "no-reviewer" &&
    ! grep -q '^{' "$PX_LOG"; then
	ok "--log-format text: readable lines with host and reason"
else
	not_ok "--log-format text"
fi
kill -INT "$PX_PID"
wait "$PX_PID"
eq "SIGINT: exit status 0" "$?" 0
px_done
