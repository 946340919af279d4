#!/bin/sh
# make bench: pisbx-proxy against direct loopback, all figures measured in
# this one run so that the ratios compare like with like.
#   1. CONNECT throughput: one 1 GiB transfer through pisbx vs direct.
#   2. 1,000 sequential short exchanges, a new connection each, through
#      pisbx (IP literal target, and a name resolved by a loopback dnsmasq)
#      vs direct: microseconds added per connection.
#   3. RSS of the proxy with 1,000 idle CONNECT tunnels open.
#   4. build/bench/bench_policy (policy evaluation), if built.
#   5. bench/launcher.sh: pisbx-run -- true against unshare -n, bwrap and
#      Anthropic's srt (BENCH_NO_SRT=1 skips srt's npm install).
# For context, the same transfers through socat (a plain forking TCP relay
# without CONNECT or policy) when socat is installed.
# The proxy's own CPU time (from /proc/PID/stat) is printed as well: it
# depends far less on what else the machine is doing than wall time does.
# Everything binds and dials 127.0.0.1 only.  Aims (issue 3): >= 90% of
# direct throughput, < 100 us added per connection, < 20 KiB per tunnel.
#   BENCH_RUNS=N (default 3): repetitions of 1 and 2; the median is kept.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
BINDIR=${BINDIR:-bin}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
case $BINDIR in /*) ;; *) BINDIR=$top/$BINDIR ;; esac
PROXY=$BINDIR/pisbx-proxy
PXTOOL=$BUILD/tests/helpers/pxtool
POLICY_BENCH=$BUILD/bench/bench_policy
RUNS=${BENCH_RUNS:-3}
GIB=1073741824
NREQ=1000
NIDLE=1000

for f in "$PROXY" "$PXTOOL"; do
	if [ ! -x "$f" ]; then
		echo "bench: $f not built (run make first)" >&2
		exit 1
	fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/pisbx-bench.XXXXXX")
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() { echo "bench: $*" >&2; exit 1; }

# wait_file FILE: until FILE is non-empty (10 s).
wait_file() {
	i=0
	while [ ! -s "$1" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	[ -s "$1" ]
}

# cpu_ms: CPU time (user + system) the proxy has used so far, in ms.
cpu_ms() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' \
	    "/proc/$PX_PID/stat"
}

# median: the middle of the numbers on stdin.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# Servers: a sink for the throughput runs, an echo for the others.
"$PXTOOL" serve --mode sink --no-hash --port-file "$T/sink.port" >/dev/null &
pids="$pids $!"
"$PXTOOL" serve --mode echo --port-file "$T/echo.port" &
pids="$pids $!"
wait_file "$T/sink.port" && wait_file "$T/echo.port" || die "servers did not start"
SINK=$(cat "$T/sink.port")
ECHO=$(cat "$T/echo.port")

# A loopback dnsmasq so that no lookup leaves the machine.
DNS=$(/usr/bin/python3 "$top/tests/lib/servers.py" dnsport)
dnsmasq --keep-in-foreground --no-resolv --no-hosts --bind-interfaces \
    --listen-address=127.0.0.1 --port="$DNS" --user=root --pid-file= \
    --address=/bench.test/127.0.0.1 --address=/#/ 2>"$T/dnsmasq.err" &
pids="$pids $!"

cat >"$T/conf.json" <<EOF
{
 "network": {"allowedDomains": ["bench.test", "127.0.0.1"], "deniedDomains": []},
 "proxy": {"maxConnections": 4096},
 "resolver": {"servers": ["127.0.0.1:$DNS"], "timeoutMs": 2000}
}
EOF
: >"$T/proxy.err"
"$PROXY" --config "$T/conf.json" --listen 127.0.0.1:0 \
    --access-log "$T/access.log" 2>"$T/proxy.err" &
PX_PID=$!
pids="$pids $PX_PID"
i=0
PX=
while [ -z "$PX" ] && [ $i -lt 200 ]; do
	PX=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/proxy.err")
	sleep 0.05; i=$((i + 1))
done
[ -n "$PX" ] || die "pisbx-proxy did not start: $(cat "$T/proxy.err")"

# A plain user-space relay for context: socat forwarding to the same
# servers (no CONNECT, no policy, a fork per connection).
SOCAT_SINK='' SOCAT_ECHO=''
if command -v socat >/dev/null 2>&1; then
	for which in SINK ECHO; do
		port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
		eval "dst=\$$which"
		socat "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork,backlog=512" \
		    "TCP:127.0.0.1:$dst" 2>/dev/null &
		pids="$pids $!"
		eval "SOCAT_$which=$port"
	done
	i=0
	until /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1',$SOCAT_ECHO),1).close()" 2>/dev/null ||
	    [ $i -ge 50 ]; do sleep 0.05; i=$((i + 1)); done
fi

echo "pisbx bench: $(nproc) CPUs, $(uname -r), $RUNS runs each (median kept)"

# 1. Throughput.
echo "1. CONNECT throughput, 1 GiB per transfer"
: >"$T/tp.direct"; : >"$T/tp.proxy"; : >"$T/tp.socat"; : >"$T/cpu.tp"
r=0
while [ $r -lt "$RUNS" ]; do
	"$PXTOOL" send --target "127.0.0.1:$SINK" --bytes $GIB --no-hash \
	    >"$T/out" || die "direct transfer failed"
	sed -n 's/^sent .* MBps \([0-9.]*\)$/\1/p' "$T/out" >>"$T/tp.direct"
	c0=$(cpu_ms)
	"$PXTOOL" send --proxy "127.0.0.1:$PX" --target "bench.test:$SINK" \
	    --bytes $GIB --no-hash >"$T/out" || die "proxied transfer failed"
	echo $(( $(cpu_ms) - c0 )) >>"$T/cpu.tp"
	grep -q "^sink bytes $GIB " "$T/out" || die "proxied transfer short: $(cat "$T/out")"
	sed -n 's/^sent .* MBps \([0-9.]*\)$/\1/p' "$T/out" >>"$T/tp.proxy"
	if [ -n "$SOCAT_SINK" ]; then
		"$PXTOOL" send --target "127.0.0.1:$SOCAT_SINK" --bytes $GIB \
		    --no-hash >"$T/out" || die "socat transfer failed"
		sed -n 's/^sent .* MBps \([0-9.]*\)$/\1/p' "$T/out" >>"$T/tp.socat"
	fi
	r=$((r + 1))
done
TP_DIRECT=$(median <"$T/tp.direct")
TP_PROXY=$(median <"$T/tp.proxy")
echo "   direct: $(tr '\n' ' ' <"$T/tp.direct")MB/s"
echo "   pisbx:  $(tr '\n' ' ' <"$T/tp.proxy")MB/s"
[ -s "$T/tp.socat" ] && echo "   socat:  $(tr '\n' ' ' <"$T/tp.socat")MB/s (plain relay)"
TP_SOCAT=$(median <"$T/tp.socat")
CPU_TP=$(median <"$T/cpu.tp")
# Ratios pair each proxied run with the direct run just before it, so
# that a busy moment on the machine weighs on both sides alike.
TP_RATIO=$(paste "$T/tp.proxy" "$T/tp.direct" | awk '{ print $1 / $2 * 100 }' | median)
echo "   pisbx CPU per GiB: $(tr '\n' ' ' <"$T/cpu.tp")ms"

# 2. Per-connection cost.
echo "2. $NREQ sequential short exchanges, a new connection each"
: >"$T/rq.direct"; : >"$T/rq.lit"; : >"$T/rq.name"; : >"$T/rq.socat"; : >"$T/cpu.rq"
r=0
while [ $r -lt "$RUNS" ]; do
	"$PXTOOL" reqs --target "127.0.0.1:$ECHO" --count $NREQ >"$T/out" ||
	    die "direct requests failed"
	sed -n 's/.* us_per_conn \([0-9.]*\)$/\1/p' "$T/out" >>"$T/rq.direct"
	c0=$(cpu_ms)
	"$PXTOOL" reqs --proxy "127.0.0.1:$PX" --target "127.0.0.1:$ECHO" \
	    --count $NREQ >"$T/out" || die "proxied requests (literal) failed"
	echo $(( $(cpu_ms) - c0 )) >>"$T/cpu.rq"
	sed -n 's/.* us_per_conn \([0-9.]*\)$/\1/p' "$T/out" >>"$T/rq.lit"
	"$PXTOOL" reqs --proxy "127.0.0.1:$PX" --target "bench.test:$ECHO" \
	    --count $NREQ >"$T/out" || die "proxied requests (name) failed"
	sed -n 's/.* us_per_conn \([0-9.]*\)$/\1/p' "$T/out" >>"$T/rq.name"
	if [ -n "$SOCAT_ECHO" ]; then
		"$PXTOOL" reqs --target "127.0.0.1:$SOCAT_ECHO" --count $NREQ \
		    >"$T/out" || die "socat requests failed"
		sed -n 's/.* us_per_conn \([0-9.]*\)$/\1/p' "$T/out" >>"$T/rq.socat"
	fi
	r=$((r + 1))
done
RQ_DIRECT=$(median <"$T/rq.direct")
RQ_LIT=$(median <"$T/rq.lit")
RQ_NAME=$(median <"$T/rq.name")
echo "   direct:          $(tr '\n' ' ' <"$T/rq.direct")us/conn"
echo "   pisbx (literal): $(tr '\n' ' ' <"$T/rq.lit")us/conn"
echo "   pisbx (name):    $(tr '\n' ' ' <"$T/rq.name")us/conn"
[ -s "$T/rq.socat" ] && echo "   socat relay:     $(tr '\n' ' ' <"$T/rq.socat")us/conn"
RQ_SOCAT=$(median <"$T/rq.socat")
CPU_RQ=$(median <"$T/cpu.rq")
ADD_LIT=$(paste "$T/rq.lit" "$T/rq.direct" | awk '{ print $1 - $2 }' | median)
ADD_NAME=$(paste "$T/rq.name" "$T/rq.direct" | awk '{ print $1 - $2 }' | median)
echo "   pisbx CPU per $NREQ connections (literal): $(tr '\n' ' ' <"$T/cpu.rq")ms"

# 3. Idle tunnels.
echo "3. RSS with $NIDLE idle CONNECT tunnels"
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$PX_PID/status"; }
RSS0=$(rss)
"$PXTOOL" idle --proxy "127.0.0.1:$PX" --target "bench.test:$ECHO" \
    --count $NIDLE --ready-file "$T/ready" --hold-seconds 60 2>"$T/idle.err" &
IDLE=$!
pids="$pids $IDLE"
wait_file "$T/ready" || { sleep 5; wait_file "$T/ready"; } ||
    die "idle tunnels did not open: $(cat "$T/idle.err")"
sleep 0.5
RSS1=$(rss)
kill "$IDLE"
echo "   proxy VmRSS: $RSS0 KiB before, $RSS1 KiB with $NIDLE tunnels"

# 4. Policy evaluation.
if [ -x "$POLICY_BENCH" ]; then
	echo "4. policy evaluation ($POLICY_BENCH)"
	"$POLICY_BENCH" | sed 's/^/   /'
else
	echo "4. policy evaluation: $POLICY_BENCH not built, skipped"
fi

echo
awk -v tpd="$TP_DIRECT" -v tpp="$TP_PROXY" -v rqd="$RQ_DIRECT" \
    -v rql="$RQ_LIT" -v rqn="$RQ_NAME" -v r0="$RSS0" -v r1="$RSS1" \
    -v n="$NIDLE" -v tps="${TP_SOCAT:-}" -v rqs="${RQ_SOCAT:-}" \
    -v cput="$CPU_TP" -v cpur="$CPU_RQ" -v nreq="$NREQ" \
    -v ratio="$TP_RATIO" -v addl="$ADD_LIT" -v addn="$ADD_NAME" 'BEGIN {
	kib = (r1 - r0) / n
	printf "%-44s %12s %12s %10s %6s\n", "summary", "pisbx", "direct", "aim", "met"
	printf "%-44s %12.0f %12.0f %10s %6s\n", "1 GiB CONNECT throughput (MB/s)", tpp, tpd, "", ""
	printf "%-44s %11.1f%% %12s %10s %6s\n", "  throughput vs direct (median of pairs)", ratio, "100%", ">= 90%", (ratio >= 90 ? "yes" : "no")
	printf "%-44s %12.1f %12.1f %10s %6s\n", "us per connection (IP literal target)", rql, rqd, "", ""
	printf "%-44s %12.1f %12s %10s %6s\n", "  us added per connection (literal, pairs)", addl, "", "< 100", (addl < 100 ? "yes" : "no")
	printf "%-44s %12.1f %12.1f %10s %6s\n", "us per connection (name, dnsmasq)", rqn, rqd, "", ""
	printf "%-44s %12.1f %12s %10s %6s\n", "  us added per connection (name, pairs)", addn, "", "< 100", (addn < 100 ? "yes" : "no")
	printf "%-44s %12.0f %12s %10s %6s\n", "  proxy CPU ms per GiB relayed", cput, "", "", ""
	printf "%-44s %12.1f %12s %10s %6s\n", "  proxy CPU us per connection (literal)", cpur * 1000 / nreq, "", "", ""
	printf "%-44s %12.1f %12s %10s %6s\n", "KiB RSS per idle tunnel", kib, "", "< 20", (kib < 20 ? "yes" : "no")
	if (tps != "")
		printf "%-44s %12.0f %12s %10s %6s\n", "socat relay throughput (MB/s), for context", tps, "", "", ""
	if (rqs != "")
		printf "%-44s %12.1f %12s %10s %6s\n", "socat relay us per connection, for context", rqs, "", "", ""
}'

# 5. What a sandbox costs per command (pisbx-run vs unshare, bwrap, srt).
echo
sh "$top/bench/launcher.sh"
