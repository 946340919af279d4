#!/bin/sh
# Files pisbx writes on the host at a path a sandboxed command could have
# prepared -- pisbx-run's --access-log and --report, pisbx-proxy's
# --access-log (also on SIGHUP) and pisbx-supervisor's -- are refused when
# the path holds a symbolic link (the file's own name or a directory's), a
# FIFO, a file with a second hard link, or another user's file in a sticky
# directory others can write to: exit 125 (pisbx-run), 78 (pisbx-proxy) or
# 1 (pisbx-supervisor), a message naming the path and what to do, nothing
# run, the target untouched, no hang.  An ordinary path still works, its
# directories made.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

run_config --deny "denied.test"
OUT=$T/outside
mkdir -p "$OUT"
echo "orig" >"$OUT/bashrc"
chmod -R a+rwX "$OUT" "$WS"

# refused DESC RC NEEDLE CMD...: CMD exits RC and says NEEDLE.
refused() {
	_d=$1 _rc=$2 _n=$3; shift 3
	"$@" >"$T/r.out" 2>&1
	eq "$_d: exit $_rc" "$?" "$_rc"
	contains "$_d: the message" "$(cat "$T/r.out")" "$_n"
}
# untouched DESC: $OUT holds bashrc, as it was, and nothing else.
untouched() {
	eq "$1: the target is untouched" \
	    "$(cat "$OUT/bashrc"; ls -A "$OUT" | tr '\n' ' ')" "orig
bashrc "
}
# run_in ARGS...: pisbx-run in $WS with $CONF, the command "echo ran",
# killed after 20 s (exit 124: it hung).
run_in() {
	(cd "$WS" && timeout -k 2 20 "$RUN" --config "$CONF" "$@" -- echo ran)
}

# 1. The access log's own name is a link to a file the user's shell runs.
ln -s "$OUT/bashrc" "$WS/alog.json"
refused "--access-log through a link" 125 \
    "$WS/alog.json is a symbolic link, and pisbx writes through none" \
    run_in --access-log "$WS/alog.json"
check "... the command did not run" sh -c "! grep -q '^ran' '$T/r.out'"
contains "... and the message says what to give" "$(cat "$T/r.out")" \
    "give the real path, as realpath(1) prints it; nothing was run"
untouched "--access-log through a link"
refused "a relative --access-log through a link" 125 \
    "$WS/alog.json is a symbolic link" run_in --access-log alog.json
refused "--report through a link" 125 \
    "--report: $WS/alog.json is a symbolic link" \
    run_in --access-log "$PX_LOG" --report alog.json
untouched "--report through a link"

# 2. A directory on the way is a link: nothing is made through it.
ln -s "$OUT" "$WS/logs"
refused "--access-log through a directory link" 125 \
    "$WS/logs is a symbolic link" \
    run_in --access-log "$WS/logs/new/a.log"
untouched "--access-log through a directory link"
refused "--report through a directory link" 125 \
    "--report: $WS/logs is a symbolic link" \
    run_in --access-log "$PX_LOG" --report logs/bashrc
untouched "--report through a directory link"
run_config --deny "denied.test" --proxy '{"accessLog": "'"$WS/logs/a.log"'"}'
refused "proxy.accessLog through a directory link" 125 \
    "access log (proxy.accessLog in $CONF): $WS/logs is a symbolic link" \
    run_in
untouched "proxy.accessLog through a directory link"
run_config --deny "denied.test"

# 3. A FIFO: refused at once, never waited on.
mkfifo "$WS/fifo"
refused "--access-log at a FIFO" 125 \
    "$WS/fifo is not a regular file" run_in --access-log "$WS/fifo"
refused "--report at a FIFO" 125 \
    "--report: $WS/fifo is not a regular file" \
    run_in --access-log "$PX_LOG" --report "$WS/fifo"

# 4. A second hard link to a file elsewhere.
ln "$OUT/bashrc" "$WS/hard.log"
refused "--access-log with a second hard link" 125 \
    "$WS/hard.log has 2 hard links" run_in --access-log "$WS/hard.log"
eq "... the target is untouched" "$(cat "$OUT/bashrc")" orig
rm -f "$WS/hard.log"

# 5. A sticky directory others write to (as /tmp): another user's file,
# or another user's link to a file only root may write, is refused.
mkdir "$T/sticky"
chmod 1777 "$T/sticky"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	echo "root only" >"$T/rootonly"
	chmod 600 "$T/rootonly"
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
	    "echo theirs >'$T/sticky/a.log' && ln -s '$T/rootonly' '$T/sticky/l.log'"
	refused "another user's file in a sticky directory" 125 \
	    "$T/sticky/a.log belongs to uid 65534, in a sticky directory" \
	    run_in --access-log "$T/sticky/a.log"
	eq "... it is untouched" "$(cat "$T/sticky/a.log")" theirs
	refused "another user's link in a sticky directory" 125 \
	    "$T/sticky/l.log is a symbolic link" \
	    run_in --access-log "$T/sticky/l.log"
	refused "--report: another user's file in a sticky directory" 125 \
	    "$T/sticky/a.log belongs to uid 65534" \
	    run_in --access-log "$PX_LOG" --report "$T/sticky/a.log"
	eq "... not truncated" "$(cat "$T/sticky/a.log")" theirs
	eq "the root-only file is untouched" "$(cat "$T/rootonly")" "root only"
fi

# 6. Ordinary paths work: the missing directories made, the caller's own
# file in a sticky directory, the report written.
out=$(run_in --access-log "$WS/state/logs/a.log" 2>&1)
eq "a new access log's directories are made" "$out" ran
check "... and the log exists" test -f "$WS/state/logs/a.log"
out=$(run_in --access-log "$T/sticky/mine.log" --report "$WS/r.json" 2>&1)
eq "the caller's own file in a sticky directory" "$out" ran
check "... and the report is written" test -s "$WS/r.json"

# 7. pisbx-proxy: the same refusals, exit 78, before listening.
cat >"$T/px.json" <<'J'
{"network": {"allowedDomains": [], "deniedDomains": ["denied.test"]}}
J
pxrun() {
	timeout -k 2 20 "$PROXY" --config "$T/px.json" --listen 127.0.0.1:0 --access-log "$@"
}
refused "pisbx-proxy --access-log through a link" 78 \
    "access log: $WS/alog.json is a symbolic link" pxrun "$WS/alog.json"
refused "pisbx-proxy --access-log through a directory link" 78 \
    "access log: $WS/logs is a symbolic link" pxrun "$WS/logs/p.log"
refused "pisbx-proxy --access-log at a FIFO" 78 \
    "access log: $WS/fifo is not a regular file" pxrun "$WS/fifo"
untouched "pisbx-proxy"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	refused "pisbx-proxy: another user's file in a sticky directory" 78 \
	    "$T/sticky/a.log belongs to uid 65534" pxrun "$T/sticky/a.log"
	eq "... it is untouched" "$(cat "$T/sticky/a.log")" theirs
fi

# 8. pisbx-supervisor's access log: the same rules (exit 1 before serving).
SUP=$PISBX_BINDIR/pisbx-supervisor
supervise() {
	timeout -k 2 20 "$SUP" --config "$T/px.json" --socket "$T/s.sock" \
	    --access-log "$@"
}
refused "pisbx-supervisor --access-log through a link" 1 \
    "$WS/alog.json is a symbolic link" supervise "$WS/alog.json"
refused "pisbx-supervisor --access-log at a FIFO" 1 \
    "$WS/fifo is not a regular file" supervise "$WS/fifo"
untouched "pisbx-supervisor"

# 9. SIGHUP reopens by name: a link put there since is refused, and the
# proxy keeps writing the file it had.
mkdir "$T/plog"
PX_LOG=$T/plog/a.log
px_start "$T/px.json"
mv "$PX_LOG" "$T/plog/a.log.1"
ln -s "$OUT/bashrc" "$PX_LOG"
kill -HUP "$PX_PID"
_i=0
while ! grep -q "is a symbolic link" "$PX_ERR" && [ $_i -lt 100 ]; do
	sleep 0.05; _i=$((_i + 1))
done
contains "SIGHUP: a link at the log's name is refused" "$(cat "$PX_ERR")" \
    "access log: $PX_LOG is a symbolic link"
px_req 'GET http://denied.test/ HTTP/1.1\r\nHost: denied.test\r\n\r\n'
eq "... the proxy still answers" "$STATUS" 403
check "... and logs to the file it had" \
    logq wait "$T/plog/a.log.1" host=denied.test
untouched "SIGHUP"
px_done
