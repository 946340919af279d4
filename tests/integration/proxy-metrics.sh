#!/bin/sh
# proxy.metrics: a real Prometheus server scrapes pisbx-proxy's /metrics
# while a known mix of traffic goes through it (allowed, denied by list,
# reviewed yes and no, a name that does not resolve, a port nobody
# listens on), and every figure it stores equals what was sent: decisions
# by reason class, connections, bytes (the access log's close records),
# the review histogram, DNS and connect errors (a 503 by its cause is
# read straight from /metrics).  The exposition passes promtool; anything
# but GET /metrics is 404 and a stuck scraper does not hold up the proxy.
# Then the same config under pisbx-run: the endpoint is served by the
# launcher's parent, in the host's network namespace.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
command -v curl >/dev/null || skip "curl missing"
command -v dnsmasq >/dev/null || skip "dnsmasq missing"
PROM=$(command -v prometheus) || skip "prometheus missing (Debian package prometheus)"
PROMTOOL=$(command -v promtool) || skip "promtool missing (Debian package prometheus)"

srv_start http web
WEB=$SRV_PORT
dns_start allowed.test=127.0.0.1 denied.test=127.0.0.1 \
    yes.review.test=127.0.0.1 no.review.test=127.0.0.1
CLOSED=$(free_port)		# nothing listens there: connect-error
MPORT=$(free_port)

# The reviewer: yes to yes.review.test, after 0.2 s; no to anything else.
cat >"$T/reviewer.py" <<'EOF'
import json, sys, time
req = json.loads(sys.stdin.readline())
time.sleep(0.2)
ok = req["hostname"] == "yes.review.test"
with open(sys.argv[1], "a") as f:
    f.write("%s %s\n" % (req["hostname"], "allow" if ok else "deny"))
print(json.dumps({"id": req["id"], "action": "allow" if ok else "deny"}))
EOF

# The reviewer's yes does not open a loopback address (only an exact
# allow entry does): yes.review.test ends non-public-address, as in
# reliability-supervisor.sh, after a review that said yes.
cat >"$T/conf.json" <<EOF
{
 "network": {
  "allowedDomains": ["allowed.test", "missing.test"],
  "deniedDomains": ["denied.test"]
 },
 "resolver": { "servers": ["127.0.0.1:$DNS_PORT"], "timeoutMs": 2000 },
 "review": { "command": ["$PY", "$T/reviewer.py", "$T/reviews"], "timeoutMs": 10000 },
 "proxy": { "metrics": { "listen": "127.0.0.1:$MPORT" } }
}
EOF

# Bad configs are refused, naming the key.
bad() {
	sed "s|\"metrics\": {[^}]*}|\"metrics\": $1|" "$T/conf.json" >"$T/bad.json"
	"$PROXY" --config "$T/bad.json" --check >"$T/bad.out" 2>&1 && return 1
	grep -q -- "$2" "$T/bad.out" || { sed 's/^/# /' "$T/bad.out"; return 1; }
}
check "a non-loopback address is refused without allowNonLoopback" \
    bad '{"listen": "0.0.0.0:9464"}' '\$\.proxy\.metrics\.listen: .*allowNonLoopback'
check "an address without a port is refused" \
    bad '{"listen": "127.0.0.1"}' '\$\.proxy\.metrics\.listen: invalid address'
check "a missing listen is refused" \
    bad '{}' '\$\.proxy\.metrics\.listen: missing'
check "an unknown key is refused" \
    bad '{"listen": "127.0.0.1:1", "path": "/x"}' '\$\.proxy\.metrics'
check "allowNonLoopback: true takes a wildcard address" \
    "$PROXY" --config "$(sed 's|"listen": "127.0.0.1:[0-9]*"|"listen": "0.0.0.0:9464", "allowNonLoopback": true|' \
    "$T/conf.json" >"$T/wide.json"; echo "$T/wide.json")" --check

px_start "$T/conf.json"

# Prometheus, its own config and data under $T, scraping every second.
PPORT=$(free_port)
cat >"$T/prom.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: pisbx
    static_configs:
      - targets: ["127.0.0.1:$MPORT"]
EOF
spawn "$PROM" --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom-data" \
    --web.listen-address="127.0.0.1:$PPORT" >"$T/prom.log" 2>&1
PROM_PID=$LAST_PID
wait_port 127.0.0.1 "$PPORT" 300 || { not_ok "prometheus did not start: $(tail -5 "$T/prom.log")"; exit 1; }

# The traffic: N allowed (HTTP forward and CONNECT), M denied by the
# list, reviewed yes and no, one unresolvable, one unreachable.
N_HTTP=4 N_CONNECT=3 M=5
i=0; while [ $i -lt $N_HTTP ]; do
	curl -s -o /dev/null -x "http://127.0.0.1:$PX_PORT" "http://allowed.test:$WEB/h$i"
	i=$((i + 1))
done
i=0; while [ $i -lt $N_CONNECT ]; do
	curl -s -o /dev/null -p -x "http://127.0.0.1:$PX_PORT" "http://allowed.test:$WEB/c$i"
	i=$((i + 1))
done
i=0; while [ $i -lt $M ]; do
	curl -s -o /dev/null -x "http://127.0.0.1:$PX_PORT" "http://denied.test:$WEB/d$i"
	i=$((i + 1))
done
code_yes=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PX_PORT" "http://yes.review.test:$WEB/")
code_yes2=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PX_PORT" "http://yes.review.test:$WEB/")
code_no=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PX_PORT" "http://no.review.test:$WEB/")
code_dns=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PX_PORT" "http://missing.test:$WEB/")
code_conn=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PX_PORT" "http://allowed.test:$CLOSED/")
check "traffic answered as expected ($code_yes $code_yes2 $code_no $code_dns $code_conn)" \
    [ "$code_yes $code_yes2 $code_no $code_dns $code_conn" = "403 403 403 502 502" ]
eq "the reviewer said yes twice and no once" \
    "$(sort "$T/reviews" | uniq -c | tr -s ' ' | tr '\n' ';')" \
    " 1 no.review.test deny; 2 yes.review.test allow;"
TOTAL=$((N_HTTP + N_CONNECT + M + 5))
log_wait event=close host=allowed.test port="$CLOSED" >/dev/null

# The scrape, straight: format checked by promtool, figures read.
curl -s "http://127.0.0.1:$MPORT/metrics" >"$T/metrics.txt"
check "promtool check metrics accepts the exposition" \
    sh -c "$PROMTOOL check metrics <'$T/metrics.txt' >'$T/promtool.out' 2>&1"
sed 's/^/# /' "$T/promtool.out"
for l in '# TYPE pisbx_decisions_total counter' \
    '# TYPE pisbx_review_duration_seconds histogram' \
    'pisbx_review_duration_seconds_bucket{le="+Inf"} 3' \
    'pisbx_review_duration_seconds_count 3' \
    '# TYPE pisbx_tunnels_open gauge'; do
	check "exposition has: $l" grep -qxF "$l" "$T/metrics.txt"
done
ctype=$(curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$MPORT/metrics")
eq "Content-Type is the 0.0.4 text format" "$ctype" "text/plain; version=0.0.4; charset=utf-8"

# query PROMQL: the value Prometheus holds (one series, or the sum).
query() {
	curl -s --get "http://127.0.0.1:$PPORT/api/v1/query" \
	    --data-urlencode "query=sum($1)" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(int(float(r[0]["value"][1])) if r else "none")'
}
# Wait for a scrape that saw all the traffic.
i=0
while [ "$(query pisbx_connections_accepted_total)" != "$TOTAL" ] && [ $i -lt 100 ]; do
	sleep 0.2; i=$((i + 1))
done
# logsum FIELD: the sum of a field over the log's close records.
logsum() {
	"$PY" -c 'import json, sys
print(sum(r.get(sys.argv[2], 0) for r in map(json.loads, open(sys.argv[1]))
    if r["event"] == "close"))' "$PX_LOG" "$1"
}
pq() {
	eq "prometheus: $1" "$(query "$1")" "$2"
}
pq pisbx_connections_accepted_total "$TOTAL"
pq 'pisbx_decisions_total{decision="allow",reason="allow-list",proto="http"}' "$N_HTTP"
pq 'pisbx_decisions_total{decision="allow",reason="allow-list",proto="connect"}' "$N_CONNECT"
pq 'pisbx_decisions_total{decision="deny",reason="deny-list"}' "$M"
pq 'pisbx_decisions_total{decision="deny",reason="non-public-address"}' 2
pq 'pisbx_decisions_total{decision="deny",reason="review:deny"}' 1
pq 'pisbx_decisions_total{reason="dns-error"}' 1
pq 'pisbx_decisions_total{reason="connect-error"}' 1
pq 'pisbx_decisions_total' "$(log_count event=decision)"
pq pisbx_dns_errors_total 1
pq 'pisbx_upstream_errors_total{kind="connect"}' 1
pq 'pisbx_connections_closed_total{proto="connect"}' "$N_CONNECT"
pq pisbx_connections_closed_total "$TOTAL"
pq pisbx_connections_open 0
pq pisbx_tunnels_open 0
pq pisbx_review_duration_seconds_count 3
pq 'pisbx_review_duration_seconds_bucket{le="0.1"}' 0
pq 'pisbx_review_duration_seconds_bucket{le="10"}' 3
pq pisbx_accesslog_lost_total 0
pq pisbx_busy_refusals_total 0
up=$(logsum bytes_up)
down=$(logsum bytes_down)
check "bytes were relayed ($up up, $down down)" \
    sh -c "[ '$up' -gt 0 ] && [ '$down' -gt 0 ]"
pq 'pisbx_bytes_total{direction="up"}' "$up"
pq 'pisbx_bytes_total{direction="down"}' "$down"
rsum=$(curl -s --get "http://127.0.0.1:$PPORT/api/v1/query" \
    --data-urlencode 'query=pisbx_review_duration_seconds_sum' | "$PY" -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "none")')
check "review latency sum covers three 0.2 s reviews ($rsum)" \
    "$PY" -c "import sys; sys.exit(not 0.6 <= float('$rsum') < 10)"

# No host ever becomes a label.
check "no host name in the exposition" sh -c "! grep -q 'allowed\.test\|review\.test' '$T/metrics.txt'"

# A tunnel held open shows in the gauge while it lasts.
"$PY" - "$PX_PORT" "$WEB" "$T/tunnel.up" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"CONNECT allowed.test:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[2].encode())
d = b""
while b"\r\n\r\n" not in d:
    d += s.recv(4096)
open(sys.argv[3], "w").write("up\n")
time.sleep(3)
s.close()
EOF
TUN_PID=$!
wait_file "$T/tunnel.up" 100
g=$(curl -s "http://127.0.0.1:$MPORT/metrics" | sed -n 's/^pisbx_tunnels_open //p')
eq "an open tunnel counts in pisbx_tunnels_open" "$g" 1
wait "$TUN_PID"

# Anything but GET /metrics: 404; a stuck and an oversized client do not
# hold anything up.
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/")
eq "GET / is 404" "$code" 404
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$MPORT/metrics")
eq "POST /metrics is 404" "$code" 404
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/metrics/x")
eq "GET /metrics/x is 404" "$code" 404
"$PY" - "$MPORT" "$T/stuck.up" >"$T/stuck.out" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")	# never finished
open(sys.argv[2], "w").write("up\n")
t0 = time.time()
s.settimeout(20)
try:
    while s.recv(4096):
        pass
except OSError:
    pass
print("%d" % (time.time() - t0))
EOF
STUCK_PID=$!
wait_file "$T/stuck.up" 100
code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/metrics")
eq "a scrape while another client is stuck" "$code" 200
big=$("$PY" -c 'print("a" * 20000)')
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "X-Big: $big" "http://127.0.0.1:$MPORT/metrics")
check "an oversized request head is refused ($code)" [ "$code" != 200 ]
body=$(curl -s -x "http://127.0.0.1:$PX_PORT" "http://allowed.test:$WEB/after")
contains "the proxy serves on meanwhile" "$body" '"path": "/after"'
wait "$STUCK_PID"
stuck=$(cat "$T/stuck.out")
check "the stuck client was cut off by the timeout (${stuck} s)" \
    sh -c "[ '${stuck:-99}' -ge 4 ] && [ '${stuck:-99}' -le 8 ]"
check "the proxy is still up" px_alive

kill "$PROM_PID" 2>/dev/null
wait "$PROM_PID" 2>/dev/null

# 503s by cause: a client over maxClientConnections, while its first
# connection holds a tunnel open.
BPORT=$(free_port)
sed -e "s|\"listen\": \"127.0.0.1:$MPORT\"|\"listen\": \"127.0.0.1:$BPORT\"|" \
    -e 's|"proxy": {|"proxy": { "maxClientConnections": 1,|' \
    "$T/conf.json" >"$T/busy.json"
MAIN_PX_PORT=$PX_PORT
px_start "$T/busy.json"
"$PY" - "$PX_PORT" "$WEB" "$T/busy.up" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"CONNECT allowed.test:%s HTTP/1.1\r\nHost: x\r\n\r\n" % sys.argv[2].encode())
d = b""
while b"\r\n\r\n" not in d:
    d += s.recv(4096)
open(sys.argv[3], "w").write("up\n")
time.sleep(2)
s.close()
EOF
HOLD_PID=$!
wait_file "$T/busy.up" 100
code=$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PX_PORT" "http://allowed.test:$WEB/")
eq "a second connection from the client is 503" "$code" 503
wait "$HOLD_PID"
curl -s "http://127.0.0.1:$BPORT/metrics" >"$T/busy.txt"
check "pisbx_busy_refusals_total counts it by cause" grep -qxF \
    'pisbx_busy_refusals_total{cause="max-client-connections"} 1' "$T/busy.txt"
check "and as a deny decision of that class" grep -qxF \
    'pisbx_decisions_total{proto="http",decision="deny",reason="max-client-connections"} 1' \
    "$T/busy.txt"
PX_PORT=$MAIN_PX_PORT

# The same endpoint served by pisbx-run's parent (host network namespace).
if [ -x "$RUN" ] && { [ "$(id -u)" -eq 0 ] || unshare -U -r -n true 2>/dev/null; }; then
	RPORT=$(free_port)
	printf '127.0.0.1 allowed.test\n' >"$T/run-hosts"
	cat >"$T/run.json" <<EOF
{
 "network": { "allowedDomains": ["allowed.test"] },
 "resolver": { "hostsFile": "$T/run-hosts", "timeoutMs": 2000 },
 "proxy": { "metrics": { "listen": "127.0.0.1:$RPORT" } }
}
EOF
	mkdir -p "$T/ws"
	(cd "$T/ws" && "$RUN" --config "$T/run.json" -- /bin/sh -c \
	    "curl -s -o /dev/null http://allowed.test:$WEB/r1 &&
	     curl -s -o /dev/null http://allowed.test:$WEB/r2 &&
	     echo done >run.done && sleep 5") >"$T/run.out" 2>&1 &
	RUN_PID=$!
	_pids="$_pids $RUN_PID"
	wait_file "$T/ws/run.done" 200
	curl -s -m 2 "http://127.0.0.1:$RPORT/metrics" >"$T/run-metrics.txt"
	check "pisbx-run: /metrics served on the host's loopback" \
	    grep -qxF 'pisbx_decisions_total{proto="http",decision="allow",reason="allow-list"} 2' \
	    "$T/run-metrics.txt"
	wait "$RUN_PID"
	rc=$?
	check "pisbx-run: the command's status is kept ($rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || sed 's/^/# /' "$T/run.out"
	check "pisbx-run: the endpoint goes with the run" \
	    sh -c "! curl -s -m 1 -o /dev/null http://127.0.0.1:$RPORT/metrics"
else
	echo "# pisbx-run part skipped: no namespaces for $(id -un)"
fi
px_done
