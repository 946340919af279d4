#!/bin/sh
# One client of pisbx-supervisor cannot lock out the others: with 300
# idle connections held open on its socket (256 at most are kept), a
# pisbx-run registered through it still works at once -- the oldest idle
# connections are closed to make room -- and so does one while the 256
# each hold half a request.
. "$PISBX_TOP/tests/lib/common.sh"
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"
SUPERVISOR=$PISBX_BINDIR/pisbx-supervisor
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY
mkdir -p "$T/ws"
export HOME=$T
eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi; }

echo '{"network": {"allowedDomains": []}}' >"$T/sup.json"
echo '{"network": {"allowedDomains": []}}' >"$T/run.json"
chmod 644 "$T/sup.json" "$T/run.json"
spawn "$SUPERVISOR" --config "$T/sup.json" --socket "$T/s.sock" \
    >"$T/sup.out" 2>"$T/sup.err"
SUP=$LAST_PID
wait_file "$T/sup.out" || { not_ok "pisbx-supervisor did not start"; exit 1; }
CAPV=$(sed -n 's/.*PISBX_SUPERVISOR_CAPABILITY=//p' "$T/sup.out")

# hold N BYTES: N connections, each sends BYTES (may be empty) and then
# nothing; "ready" in $T/hold.ready; at the end (SIGTERM) how many the
# supervisor closed, in $T/hold.closed.
cat >"$T/hold.py" <<'EOF2'
import os, select, signal, socket, sys, time
path, n, data, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
socks = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    if data:
        s.send(data.encode())
    socks.append(s)
open(out + ".ready", "w").write("ready\n")
def done(*a):
    closed = 0
    for s in socks:
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            continue
        # Closed with our bytes unread, the peer's kernel resets it.
        try:
            if s.recv(1) == b"":
                closed += 1
        except ConnectionResetError:
            closed += 1
    open(out + ".closed", "w").write("%d\n" % closed)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    time.sleep(1)
EOF2

# run_timed: pisbx-run through the supervisor; its exit status in $RC,
# the seconds it took in $SECS.
run_timed() {
	_s=$(date +%s%N)
	(cd "$T/ws" && env PISBX_SUPERVISOR_SOCKET="$T/s.sock" \
	    PISBX_SUPERVISOR_CAPABILITY="$CAPV" "$RUN" --config "$T/run.json" \
	    -- /bin/echo through) >"$T/run.out" 2>&1
	RC=$?
	SECS=$(( ($(date +%s%N) - _s) / 1000000000 ))
}

for data in "" '{"version":1'; do
	what=${data:+"half-sent "}
	rm -f "$T/hold.ready" "$T/hold.closed"
	spawn $PY "$T/hold.py" "$T/s.sock" 300 "$data" "$T/hold"
	H=$LAST_PID
	wait_file "$T/hold.ready" 200 || { not_ok "holder did not start"; exit 1; }
	run_timed
	eq "300 ${what}connections held: pisbx-run works" "$RC" 0
	check "... at once ($SECS s)" [ "$SECS" -lt 5 ]
	check "... and its command ran" grep -qx through "$T/run.out"
	kill -TERM "$H"
	wait "$H"
	n=$(cat "$T/hold.closed" 2>/dev/null || echo 0)
	check "... the oldest ${what}connections were closed ($n)" [ "$n" -ge 45 ]
done
check "pisbx-supervisor still running" kill -0 "$SUP"
done_testing
