# Helpers for the supervisor-mode and host-IPC scenarios (source after
# common.sh).
#   SUPPY                      the scriptable test supervisor
#   SUPERVISOR                 bin/pisbx-supervisor
#   tsup MODE... [-- ARGS]     (re)start the test supervisor on $T/sup.sock,
#                              capability $CAP, record $T/sup.rec; extra
#                              ARGS go to "serve" (--register deny, ...)
#   stop_tsup                  stop it
#   send SOCK LINE             one request line, the reply on stdout
#   rec_types                  the types recorded so far, one per line
#   rec_count TYPE             how many requests of TYPE were recorded
#   wait_rec TYPE [N]          until N (1) requests of TYPE are recorded
SUPPY=$PISBX_TOP/tests/lib/supervisor.py
SUPERVISOR=$PISBX_BINDIR/pisbx-supervisor
CAP=cap-$$-test
_tsup_pid=""

tsup() {
	stop_tsup
	rm -f "$T/sup.sock"
	spawn $PY "$SUPPY" serve --socket "$T/sup.sock" --capability "$CAP" \
	    --record "$T/sup.rec" "$@"
	_tsup_pid=$LAST_PID
	_i=0
	while [ ! -S "$T/sup.sock" ] && [ $_i -lt 200 ]; do
		sleep 0.05; _i=$((_i + 1))
	done
}

stop_tsup() {
	if [ -n "$_tsup_pid" ]; then
		kill "$_tsup_pid" 2>/dev/null
		wait "$_tsup_pid" 2>/dev/null
		_tsup_pid=""
	fi
	rm -f "$T/sup.rec"
}

send() {
	$PY "$SUPPY" send --socket "$1" "$2"
}

rec_types() {
	[ -f "$T/sup.rec" ] || return 0
	$PY -c 'import json,sys
for l in open(sys.argv[1]):
    print(json.loads(l).get("type"))' "$T/sup.rec"
}

rec_count() {
	rec_types | grep -cx -- "$1"
}

wait_rec() {
	_i=0
	while [ "$(rec_count "$1")" -lt "${2:-1}" ] && [ $_i -lt 200 ]; do
		sleep 0.05; _i=$((_i + 1))
	done
	[ "$(rec_count "$1")" -ge "${2:-1}" ]
}
