#!/bin/sh
# proxy.accessLogSyslog: the access log's records also go to a real
# rsyslogd (imtcp on a free loopback port, RFC 5424 with RFC 6587 octet
# counting).  Every record of the file is found in rsyslog's output;
# when rsyslog is stopped mid-run the records wait in the proxy's queue
# and arrive once it is back on the same port; with a queue too small
# for the outage, the records missing from rsyslog are exactly the ones
# the proxy said it lost (stderr and pisbx_accesslog_lost_total).  A
# Unix datagram socket (as /dev/log) gets every record, unframed; and
# pisbx-run's records reach the collector too.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
command -v curl >/dev/null || skip "curl missing"
command -v dnsmasq >/dev/null || skip "dnsmasq missing"
RSYSLOGD=$(command -v rsyslogd || echo /usr/sbin/rsyslogd)
[ -x "$RSYSLOGD" ] || skip "rsyslogd missing (Debian package rsyslog)"

srv_start http web
WEB=$SRV_PORT
dns_start allowed.test=127.0.0.1 denied.test=127.0.0.1
RPORT=$(free_port)
mkdir -p "$T/rs-work"

# rsyslog: its own config, pid file, work directory and output; only
# imtcp on loopback, and only pisbx's messages, the MSG part alone.
cat >"$T/rsyslog.conf" <<EOF
global(workDirectory="$T/rs-work")
module(load="imtcp")
input(type="imtcp" port="$RPORT" address="127.0.0.1")
template(name="msgonly" type="string" string="%pri% %msgid% %msg%\\n")
if \$app-name == "pisbx-test" then {
	action(type="omfile" file="$T/rs.out" template="msgonly")
}
EOF
rs_start() {
	spawn "$RSYSLOGD" -n -f "$T/rsyslog.conf" -i "$T/rs.pid" \
	    >>"$T/rs.log" 2>&1
	RS_PID=$LAST_PID
	wait_port 127.0.0.1 "$RPORT" 200 ||
	    { not_ok "rsyslogd did not start: $(cat "$T/rs.log")"; exit 1; }
}
rs_stop() {
	kill -TERM "$RS_PID"
	wait "$RS_PID" 2>/dev/null
}

# cmp_records: how many of the file's records rsyslog has (as "N/M"),
# each record's JSON compared whole, PRI local3.info, MSGID its event.
cmp_records() {
	"$PY" - "$PX_LOG" "$T/rs.out" <<'PYEOF'
import json, sys
want = [l.rstrip("\n") for l in open(sys.argv[1])]
got = {}
try:
    for l in open(sys.argv[2]):
        pri, msgid, msg = l.rstrip("\n").split(" ", 2)
        msg = msg.lstrip(" ")
        # local3 (19) * 8 + info (6); MSGID the record's event
        if pri != "158" or json.loads(msg)["event"] != msgid:
            print("bad PRI or MSGID: " + l)
            sys.exit(0)
        got[msg] = got.get(msg, 0) + 1
except FileNotFoundError:
    pass
n = sum(1 for w in want if got.get(w, 0) > 0)
dups = sum(c - 1 for c in got.values())
extra = sum(1 for g in got if g not in want)
print("%d/%d%s" % (n, len(want), " dup%d extra%d" % (dups, extra)
      if dups or extra else ""))
PYEOF
}
# wait_records WANT: until cmp_records says WANT (20 s at most: the
# reconnect backs off up to 5 s, and rsyslogd takes a while to stop).
wait_records() {
	_i=0
	while [ "$(cmp_records)" != "$1" ] && [ $_i -lt 200 ]; do
		sleep 0.1; _i=$((_i + 1))
	done
	[ "$(cmp_records)" = "$1" ] && return 0
	sed 's/^/# proxy: /' "$PX_ERR"
	return 1
}
# traffic N: N allowed and N denied requests (4 N records).
traffic() {
	_n=0
	while [ $_n -lt "$1" ]; do
		curl -s -o /dev/null -x "http://127.0.0.1:$PX_PORT" "http://allowed.test:$WEB/$_n"
		curl -s -o /dev/null -x "http://127.0.0.1:$PX_PORT" "http://denied.test:$WEB/$_n"
		_n=$((_n + 1))
	done
}
nrec() { wc -l <"$PX_LOG" | tr -d ' '; }

conf() {
	px_config "$T/conf.json" --allow allowed.test --deny denied.test \
	    --proxy "{\"accessLogSyslog\": {\"address\": \"tcp:127.0.0.1:$RPORT\",
	    \"appName\": \"pisbx-test\", \"facility\": \"local3\"$1},
	    \"metrics\": {\"listen\": \"127.0.0.1:$MPORT\"}}"
}
MPORT=$(free_port)
lost_metric() {
	curl -s "http://127.0.0.1:$MPORT/metrics" |
	    sed -n 's/^pisbx_accesslog_lost_total //p'
}

# Bad configs name the key.
bad() {
	px_config "$T/bad.json" --proxy "{\"accessLogSyslog\": $1}"
	"$PROXY" --config "$T/bad.json" --check >"$T/bad.out" 2>&1 && return 1
	grep -q -- "$2" "$T/bad.out" || { sed 's/^/# /' "$T/bad.out"; return 1; }
}
check "bad address refused" bad '{"address": "udp:1.2.3.4:514"}' \
    '\$\.proxy\.accessLogSyslog\.address: invalid address'
check "relative unix path refused" bad '{"address": "unix:dev/log"}' \
    '\$\.proxy\.accessLogSyslog\.address'
check "unknown facility refused" bad '{"address": "unix:/dev/log", "facility": "local9"}' \
    '\$\.proxy\.accessLogSyslog\.facility: unknown facility'
check "appName with a space refused" bad '{"address": "unix:/dev/log", "appName": "a b"}' \
    '\$\.proxy\.accessLogSyslog\.appName'
check "missing address refused" bad '{"appName": "x"}' \
    '\$\.proxy\.accessLogSyslog\.address: missing'

# 1. Everything arrives; rsyslog restarted mid-run: nothing lost.
rs_start
conf ""
px_start "$T/conf.json"
traffic 5
check "every record is in rsyslog ($(cmp_records))" wait_records "$(nrec)/$(nrec)"
rs_stop
traffic 3		# queued while rsyslog is down
check "the proxy said the collector was unreachable" \
    grep -q "access log tcp:127.0.0.1:$RPORT: .*records are queued" "$PX_ERR"
rs_start
traffic 2
check "after the restart every record is in rsyslog ($(cmp_records))" \
    wait_records "$(nrec)/$(nrec)"
check "the proxy said nothing was lost" \
    grep -q "the collector is back; no record lost" "$PX_ERR"
eq "pisbx_accesslog_lost_total is 0" "$(lost_metric)" 0
px_stop
rs_stop

# 2. A queue of 3 for an outage of 12 records: 9 lost, counted, said.
rm -f "$T/rs.out" "$PX_LOG"
rs_start
conf ', "queueMax": 3'
px_start "$T/conf.json"
traffic 2
check "small queue: every record while rsyslog is up" wait_records "8/8"
rs_stop
traffic 3
check "loss said once when it started" \
    sh -c "[ \$(grep -c 'the queue is full' '$PX_ERR') -eq 1 ]"
eq "pisbx_accesslog_lost_total counts them" "$(lost_metric)" 9
rs_start
check "the 3 queued arrive once rsyslog is back ($(cmp_records))" \
    wait_records "11/20"
traffic 1
check "rsyslog has all but the 9 lost ($(cmp_records))" wait_records "15/24"
check "the count was said when delivery resumed" \
    grep -q "access log tcp:127.0.0.1:$RPORT: 9 record(s) lost while the collector was unreachable" "$PX_ERR"
px_stop
check "the total is said at exit" \
    grep -q "access log tcp:127.0.0.1:$RPORT: 9 record(s) lost in all" "$PX_ERR"
rs_stop

# 2b. unix:PATH, a datagram socket as /dev/log is: one message per
# datagram, no framing.  The receiver writes each as "PRI MSGID MSG".
rm -f "$PX_LOG"
"$PY" - "$T/log.sock" "$T/dgram.out" <<'EOF' &
import os, re, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
with open(sys.argv[2], "w") as out:
    try:
        while True:
            d = s.recv(65536).decode()
            m = re.match(r"<(\d+)>1 \S+ \S+ pisbx-test \d+ (\S+) - (.*)$", d, re.S)
            out.write("%s %s %s\n" % m.groups() if m else "unparsed " + d + "\n")
            out.flush()
    except socket.timeout:
        pass
EOF
DG_PID=$!
_pids="$_pids $DG_PID"
i=0
while [ ! -S "$T/log.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
px_config "$T/conf.json" --allow allowed.test --deny denied.test \
    --proxy "{\"accessLogSyslog\": {\"address\": \"unix:$T/log.sock\",
    \"appName\": \"pisbx-test\", \"facility\": \"local3\"}}"
px_start "$T/conf.json"
traffic 2
check "unix datagram socket: every record arrives" sh -c '
	i=0
	while [ $i -lt 100 ]; do
		[ "$(wc -l <"$1")" -ge 8 ] && break
		sleep 0.1; i=$((i + 1))
	done' sh "$T/dgram.out"
cp "$T/dgram.out" "$T/rs.out"		# what cmp_records reads
eq "unix datagram socket: the records, whole ($(cmp_records))" "$(cmp_records)" "8/8"
px_stop
kill "$DG_PID" 2>/dev/null
wait "$DG_PID" 2>/dev/null

# 3. pisbx-run sends its records too, from its parent on the host side.
if [ -x "$RUN" ] && { [ "$(id -u)" -eq 0 ] || unshare -U -r -n true 2>/dev/null; }; then
	rm -f "$T/rs.out" "$PX_LOG"
	rs_start
	printf '127.0.0.1 allowed.test\n' >"$T/run-hosts"
	cat >"$T/run.json" <<EOF
{
 "network": { "allowedDomains": ["allowed.test"] },
 "resolver": { "hostsFile": "$T/run-hosts", "timeoutMs": 2000 },
 "proxy": { "accessLogSyslog": { "address": "tcp:127.0.0.1:$RPORT",
   "appName": "pisbx-test", "facility": "local3" } }
}
EOF
	mkdir -p "$T/ws"
	(cd "$T/ws" && "$RUN" --config "$T/run.json" --access-log "$PX_LOG" \
	    -- /bin/sh -c "curl -s -o /dev/null http://allowed.test:$WEB/r1 &&
	    curl -s -o /dev/null http://denied.test:$WEB/r2; exit 0") \
	    >"$T/run.out" 2>&1
	check "pisbx-run: exit 0" [ $? -eq 0 ]
	check "pisbx-run: its 4 records are in rsyslog ($(cmp_records))" \
	    wait_records "4/4"
	rs_stop
else
	echo "# pisbx-run part skipped: no namespaces for $(id -un)"
fi
px_done
