#!/bin/sh
# Overload that says so (docs/reliability.md): at the open-file limit a
# client waiting to be accepted is answered 503 at once (the spare
# descriptor), an upstream socket that cannot be made is a 503
# out-of-descriptors (not a 502 blaming the destination), the start
# warns when maxConnections cannot fit the limit (after raising the soft
# limit to the hard one), and clients closed without an answer over a
# connection limit are all counted on standard error, a burst's end too.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start echo echo
ECHO=$SRV_PORT
hosts_file "$T/hosts" "127.0.0.1 unused.test"
px_config "$T/conf.json" --no-dns --hosts "$T/hosts" --allow "127.0.0.1"

# The proxy with a low open-file limit: soft 40, hard 100.
REAL_PROXY=$PROXY
cat >"$T/lowfd" <<EOF
#!/bin/sh
ulimit -Sn 40 && ulimit -Hn 100 || exit 99
exec "$REAL_PROXY" "\$@"
EOF
chmod 755 "$T/lowfd"
PROXY=$T/lowfd px_start "$T/conf.json"
soft=$(awk '/^Max open files/ {print $4}' "/proc/$PX_PID/limits")
eq "the soft open-file limit is raised to the hard one" "$soft" 100
check "the start warns that maxConnections does not fit the limit" grep -q \
    'proxy.maxConnections (1024) needs about .* the open-file limit is 100' \
    "$PX_ERR"

# hold.py: hold N silent connections; answer lines on stdin:
#   count        how many have been answered (bytes or closed) so far
#   close K      close K of the unanswered ones
#   connect      one CONNECT to the echo server: its status and reason
#   quit
cat >"$T/hold.py" <<'EOF'
import select, socket, sys, time
port, echo, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
held = []
for i in range(n):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (2 + i % 8), 0))
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    held.append(s)
answered = {}
def poll(wait):
    end = time.time() + wait
    while True:
        live = [s for s in held if s not in answered]
        r = select.select(live, [], [], 0.05)[0] if live else []
        for s in r:
            try:
                answered[s] = s.recv(4096)
            except OSError:
                answered[s] = b""
        if time.time() >= end:
            return
def connect():
    s = socket.create_connection(("127.0.0.1", port), 5)
    s.settimeout(5)
    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n" % echo)
    d = b""
    try:
        while b"\r\n\r\n" not in d:
            x = s.recv(4096)
            if not x:
                break
            d += x
    except socket.timeout:
        return "timeout"
    s.close()
    st = d.split(b" ")[1].decode() if d.startswith(b"HTTP/") else "none"
    why = "-"
    for line in d.split(b"\r\n"):
        if line.lower().startswith(b"x-pisbx-reason:"):
            why = line.split(b":", 1)[1].strip().decode()
    return st + " " + why
for line in sys.stdin:
    w = line.split()
    if w[0] == "count":
        poll(1.0)
        got = [d for d in answered.values()]
        print(len(got), sum(1 for d in got if b"503" in d and
              b"out-of-descriptors" in d), flush=True)
    elif w[0] == "close":
        live = [s for s in held if s not in answered]
        for s in live[:int(w[1])]:
            s.close()
            answered[s] = b"closed"
        print("closed", flush=True)
    elif w[0] == "connect":
        print(connect(), flush=True)
    elif w[0] == "quit":
        break
EOF
mkfifo "$T/in"
"$PY" "$T/hold.py" "$PX_PORT" "$ECHO" 150 <"$T/in" >"$T/hold.out" 2>&1 &
HPID=$!
_pids="$_pids $HPID"
exec 3>"$T/in"
# ask CMD: one command to hold.py, its answer (waits up to 10 s).
ask() {
	before=$(wc -l <"$T/hold.out")
	echo "$1" >&3
	i=0
	while [ "$(wc -l <"$T/hold.out")" -le "$before" ] && [ $i -lt 200 ]; do
		sleep 0.05; i=$((i + 1))
	done
	tail -n 1 "$T/hold.out"
}
set -- $(ask count)
answered=${1:-0} told=${2:-0}
if [ "$answered" -gt 0 ] && [ "$answered" = "$told" ]; then
	ok "150 silent clients at limit 100: the $told past it were answered 503 out-of-descriptors at once"
else
	not_ok "past the limit: $answered answered, $told with 503 out-of-descriptors ($(tail -n 3 "$T/hold.out"))"
fi
eq "a new client at the limit: 503 out-of-descriptors, at once" \
    "$(ask connect)" "503 out-of-descriptors"
# One descriptor comes free: the client is accepted, its upstream socket
# cannot be made.
ask "close 1" >/dev/null
log_wait event=close end=client-eof >/dev/null
eq "no descriptor for the upstream: 503 out-of-descriptors, not a 502" \
    "$(ask connect)" "503 out-of-descriptors"
check_log "its decision record says out-of-descriptors" event=decision \
    reason=out-of-descriptors host=127.0.0.1 error~'out of file descriptors'
eq "no connect-error was logged" "$(log_count reason=connect-error)" 0
ask "close 200" >/dev/null
sleep 0.5
eq "once the clients are gone, a tunnel is served" "$(ask connect)" "200 -"
echo quit >&3
exec 3>&-
wait "$HPID"
n503=$(sed -n 's/.*out of file descriptors: \([0-9]*\) client(s) answered 503 at once.*/\1/p' "$PX_ERR" |
    awk '{s += $1} END {print s + 0}')
eq "standard error counts every client answered 503 at once" "$n503" $((told + 1))
check "the proxy is running" px_alive

# A burst over maxConnections 4 with 64 held to be refused: every client
# closed without an answer is counted on standard error.
px_config "$T/burst.json" --no-dns --hosts "$T/hosts" --allow "127.0.0.1" \
    --proxy '{"maxConnections": 4, "maxClientConnections": 4}'
PX_LOG=$T/burst.log
px_start "$T/burst.json"
"$PY" - "$PX_PORT" "$ECHO" >"$T/burst.out" 2>&1 <<'EOF'
import select, socket, sys, time
port, echo = int(sys.argv[1]), int(sys.argv[2])
hold = [socket.create_connection(("127.0.0.1", port), 5) for _ in range(4)]
time.sleep(0.3)
burst = []
for i in range(300):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (2 + i % 8), 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n" % echo)
    burst.append(s)
got = {}
end = time.time() + 8
while len(got) < len(burst) and time.time() < end:
    live = [s for s in burst if s not in got]
    for s in select.select(live, [], [], 0.1)[0]:
        try:
            got[s] = s.recv(4096)
        except OSError:
            got[s] = b""
print("silent", sum(1 for d in got.values() if d == b""))
print("refused", sum(1 for d in got.values() if d.startswith(b"HTTP/1.1 503")))
print("unanswered", len(burst) - len(got))
EOF
silent=$(sed -n 's/^silent //p' "$T/burst.out")
sleep 1.5
said=$(sed -n 's/.*-connections: \([0-9]*\) connection(s) \(on [^ ]* \)\{0,1\}closed without an answer (.*/\1/p' "$PX_ERR" |
    awk '{s += $1} END {print s + 0}')
if [ -n "$silent" ] && [ "$silent" -gt 0 ]; then
	eq "all $silent clients closed without an answer are counted on stderr" "$said" "$silent"
else
	not_ok "the burst closed no client without an answer: $(cat "$T/burst.out")"
fi
px_stop
check "at exit: the total closed without an answer" grep -q \
    "^pisbx-proxy: ${silent:-x} connection(s) closed without an answer in all" "$PX_ERR"
px_done
