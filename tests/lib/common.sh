# Shared helpers for integration scenarios: source it first.
#   . "$PISBX_TOP/tests/lib/common.sh"
# Gives: $T (a private temp dir, removed at exit), $PROXY and $RUN (the
# binaries), ok/not_ok/check/skip reporting, spawn (background a process
# and remember its PID for cleanup), wait_port, wait_file.
set -u
PISBX_TOP=${PISBX_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
PISBX_BINDIR=${PISBX_BINDIR:-$PISBX_TOP/bin}
PISBX_BUILD=${PISBX_BUILD:-$PISBX_TOP/build}
PROXY=$PISBX_BINDIR/pisbx-proxy
RUN=$PISBX_BINDIR/pisbx-run
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/pisbx-t.XXXXXX")
chmod 755 "$T"
_pids=""
_nfail=0

_cleanup() {
	for p in $_pids; do kill "$p" 2>/dev/null; done
	for p in $_pids; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.05; i=$((i + 1))
		done
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; _nfail=$((_nfail + 1)); }

# nothing_in LOG DESC: a listener that logs what reaches it into LOG
# logged nothing since LOG was last emptied (half a second allowed for
# it to arrive); a failure shows what came and empties LOG again.
nothing_in() {
	sleep 0.5
	if [ -s "$1" ]; then
		not_ok "$2 (reached: $(tr '\n' ' ' <"$1"))"
		: >"$1"
	else
		ok "$2"
	fi
}
skip() { echo "skip: $*"; exit 77; }
# check DESC COMMAND...: ok when the command succeeds.
check() {
	d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# Exit status for the scenario: call last.
done_testing() { [ $_nfail -eq 0 ]; exit $?; }

# spawn CMD...: run in the background, output to $T/<n>.log, PID kept.
spawn() {
	"$@" &
	_pids="$_pids $!"
	LAST_PID=$!
}

# wait_port HOST PORT [TRIES]: until a TCP connect succeeds.
wait_port() {
	i=0
	while [ $i -lt "${3:-100}" ]; do
		if $PY -c "import socket,sys; socket.create_connection(('$1',$2),0.2).close()" 2>/dev/null; then
			return 0
		fi
		sleep 0.05; i=$((i + 1))
	done
	return 1
}

# wait_file FILE [TRIES]: until FILE exists and is not empty.
wait_file() {
	i=0
	while [ $i -lt "${2:-100}" ]; do
		[ -s "$1" ] && return 0
		sleep 0.05; i=$((i + 1))
	done
	return 1
}

# free_port: a TCP port free on 127.0.0.1 right now.
free_port() {
	$PY -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1]); s.close()"
}

# has_line FILE REGEX: a line of FILE matches (grep -E).
has_line() { grep -Eq -- "$2" "$1"; }

# A file as the program wrote it, without the warning an ASan build
# prints when a process switches stacks (clone, exec failure): three
# lines of the sanitizer's, none of ours.
no_asan() {
	sed '/^==[0-9]*==WARNING: ASan is ignoring requested __asan_handle_no_return/,/^For details see .*sanitizers\/issues\/189$/d' "$1"
}
