#!/bin/sh
# The access log on a full disk (docs/reliability.md): traffic is served
# as before; the log keeps whole records only (no half line for jq or a
# log shipper to choke on); standard error says once that records are
# being lost, once how many when writing works again, and the total when
# the proxy stops -- not a line per record.  The disk is a small tmpfs.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

FULL=$T/full
mkdir "$FULL"
mount -t tmpfs -o size=256k,mode=0755 pisbx-full "$FULL" 2>"$T/mount.err" ||
	skip "cannot mount a tmpfs for the full-disk log: $(cat "$T/mount.err") (needs root)"
# The proxy holds the log open: stop it before the mount goes.
trap 'for p in $_pids; do kill "$p" 2>/dev/null; done; sleep 0.3;
    umount -l "$FULL" 2>/dev/null; _cleanup' EXIT

hosts_file "$T/hosts" "127.0.0.1 unused.test"
px_config "$T/conf.json" --no-dns --hosts "$T/hosts" --deny "denied.test"
PX_LOG=$FULL/access.log
px_start "$T/conf.json"

# reqs N: N denied requests, each its own connection (a decision and a
# close record each); prints how many were answered 403.
reqs() {
	"$PY" - "$PX_PORT" "$1" <<'PYEOF'
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
good = 0
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), 5)
    s.settimeout(5)
    s.sendall(b"GET http://denied.test/%d HTTP/1.1\r\nHost: denied.test\r\n"
              b"Connection: close\r\n\r\n" % i)
    d = b""
    while True:
        x = s.recv(65536)
        if not x:
            break
        d += x
    s.close()
    good += d.startswith(b"HTTP/1.1 403")
print(good)
PYEOF
}

# wait_lines N: until the log has N lines (or 5 s).
wait_lines() {
	i=0
	while [ "$(wc -l <"$PX_LOG")" -lt "$1" ] && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
}

# valid_log: every line of the log is a whole JSON record.
valid_log() {
	"$PY" - "$PX_LOG" <<'PYEOF'
import json, sys
data = open(sys.argv[1], "rb").read()
if data and not data.endswith(b"\n"):
    sys.exit("the log ends inside a line: %r" % data[-80:])
for n, line in enumerate(data.split(b"\n")[:-1], 1):
    try:
        json.loads(line)
    except ValueError:
        sys.exit("line %d is not JSON: %r" % (n, line[:120]))
PYEOF
}

eq "before the disk fills: 5 requests answered 403" "$(reqs 5)" 5
wait_lines 10
before=$(wc -l <"$PX_LOG")
eq "before the disk fills: 10 records" "$before" 10

# Fill the disk: the log's last page keeps some room, then nothing.
dd if=/dev/zero of="$FULL/fill" bs=4096 2>/dev/null
dd if=/dev/zero of="$FULL/fill2" bs=1 2>/dev/null
N=300
eq "disk full: $N requests all answered 403" "$(reqs $N)" $N
check "disk full: the proxy is running" px_alive
sleep 0.2
full_lines=$(wc -l <"$PX_LOG")
if msg=$(valid_log 2>&1); then
	ok "disk full: the log holds whole JSON records only ($full_lines lines)"
else
	not_ok "disk full: $msg"
fi
warned=$(grep -c 'access log' "$PX_ERR")
eq "disk full: standard error said it once" "$warned" 1
grep 'access log' "$PX_ERR" | sed 's/^/# /'

# Room again: the next record says how many were lost.
rm -f "$FULL/fill" "$FULL/fill2"
eq "disk freed: 5 requests answered 403" "$(reqs 5)" 5
wait_lines $((full_lines + 10))
lost=$(sed -n 's/.*access log .*: \([0-9]*\) record(s) lost while the disk was full$/\1/p' "$PX_ERR")
if [ -n "$lost" ]; then
	ok "disk freed: standard error says $lost record(s) were lost"
	eq "written and lost records add up to all $((N * 2)) of the full time" \
	    "$((full_lines - before + lost))" $((N * 2))
else
	not_ok "disk freed: no count of lost records: $(tail -n 3 "$PX_ERR")"
fi
eq "disk freed: the 10 new records are written" "$(wc -l <"$PX_LOG")" \
    $((full_lines + 10))
if msg=$(valid_log 2>&1); then
	ok "disk freed: the log is whole JSON records"
else
	not_ok "disk freed: $msg"
fi
eq "standard error: two lines about the log in all" \
    "$(grep -c 'access log' "$PX_ERR")" 2

# The total, when the proxy stops.
px_stop
eq "proxy stopped cleanly" $? 0
if grep -q "access log .*: ${lost:-x} record(s) lost in all" "$PX_ERR"; then
	ok "at exit: the total of lost records is reported"
else
	not_ok "at exit: no total ($(tail -n 2 "$PX_ERR"))"
fi
done_testing
