#!/bin/sh
# The docs say what happens: their examples are run here as written, so
# the two cannot drift apart.
# - docs/supervisor.md's quick start, taken from the page: the first part
#   (start the supervisor, read its export line) run by sh and by bash,
#   with XDG_RUNTIME_DIR set and unset, must return, export the socket
#   (in XDG_RUNTIME_DIR, else a private mktemp -d directory) and a
#   capability that is in no file, write its file mode 0600, and leave
#   the supervisor running; the second part registers a pisbx-run and writes
#   the worker table to the log.  The block runs whole, as a new user
#   pastes it, in a fresh home with no config: it makes the workers'
#   config itself.  Its one substitution: `npm install` (which would need
#   the registry) becomes a local command.  With a bad config of the
#   user's own the first part returns too, keeps that file, exports
#   nothing and shows why.
# - docs/filesystem.md's refusal line is what pisbx-run prints.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

SUPERVISOR=$PISBX_BINDIR/pisbx-supervisor
[ -x "$SUPERVISOR" ] || skip "pisbx-supervisor not built ($SUPERVISOR)"

# The ```sh block under "## Quick start", cut at the second part.
awk '/^## Quick start/ { f = 1 } f && /^```sh$/ { g = 1; next }
    g && /^```$/ { exit } g' "$PISBX_TOP/docs/supervisor.md" >"$T/quick.sh"
sed -n '1,/^# every command the agent runs:/p' "$T/quick.sh" | sed '$d' \
    >"$T/part1.sh"
sed -n '/^# every command the agent runs:/,$p' "$T/quick.sh" >"$T/part2.sh"
check "the quick start has its two parts" \
    test -s "$T/part1.sh" -a "$(wc -l <"$T/part2.sh")" -ge 3
grep -q 'npm install' "$T/part2.sh" ||
    not_ok "the quick start no longer runs npm install: update this test"
sed -i "s|npm install|sh -c 'echo ran in the sandbox'|" "$T/part2.sh"

# quick SHELL NAME CONFIG-TEXT [unset]: run the block in a fresh HOME and
# XDG_RUNTIME_DIR (with "unset", none, and TMPDIR in $T) with SHELL:
# whole when CONFIG-TEXT is empty (no config: the block makes it), else
# part 1 alone with that text as the user's config; results in $T/NAME.*;
# the supervisor's PID is remembered for cleanup.
quick() {
	_sh=$1 _n=$2
	_h=$T/$_n.home _r=$T/$_n.run
	mkdir -p "$_h/project" "$_r"
	chmod 700 "$_r"
	if [ -n "$3" ]; then
		mkdir -p "$_h/.config/pisbx"
		printf '%s\n' "$3" >"$_h/.config/pisbx/agents.json"
	fi
	{
		cat "$T/part1.sh"
		echo 'echo "$supervisor_pid" >"$QS_OUT.pid"'
		echo 'echo "$env" >"$QS_OUT.file"'
		echo 'env | grep "^PISBX_SUPERVISOR_" | sort >"$QS_OUT.env"'
		[ -n "$3" ] || cat "$T/part2.sh"
	} >"$T/$_n.sh"
	if [ "${4:-}" = unset ]; then
		set -- -u XDG_RUNTIME_DIR TMPDIR="$_r"
	else
		set -- XDG_RUNTIME_DIR="$_r"
	fi
	(cd "$_h/project" && env -u PISBX_SUPERVISOR_SOCKET \
	    -u PISBX_SUPERVISOR_CAPABILITY "$@" HOME="$_h" \
	    QS_OUT="$T/$_n" PATH="$PISBX_BINDIR:$PATH" \
	    timeout 30 "$_sh" "$T/$_n.sh" >"$T/$_n.out" 2>"$T/$_n.err")
	QS_RC=$?
	QS_PID=$(cat "$T/$_n.pid" 2>/dev/null)
	[ -n "$QS_PID" ] && _pids="$_pids $QS_PID"
}

for sh in sh bash sh-unset bash-unset; do
	command -v "${sh%-unset}" >/dev/null 2>&1 || continue
	case $sh in
	*-unset)
		# Without a fallback it would write "/pisbx.sock": not tried.
		if ! grep -q 'XDG_RUNTIME_DIR:-' "$T/part1.sh"; then
			not_ok "$sh: the quick start has no place without XDG_RUNTIME_DIR"
			continue
		fi
		quick "${sh%-unset}" "$sh" "" unset
		where="a private mktemp -d directory (XDG_RUNTIME_DIR unset)"
		dir=$(sed -n 's|^PISBX_SUPERVISOR_SOCKET=\(.*\)/pisbx.sock$|\1|p' \
		    "$T/$sh.env")
		case $dir in
		"$T/$sh.run"/tmp.*) ;;
		*) not_ok "$sh: the socket's directory is $dir" ;;
		esac
		check "$sh: that directory is private (0700)" \
		    test "$(stat -c %a "$dir" 2>/dev/null)" = 700 ;;
	*)
		quick "$sh" "$sh" ""
		where="XDG_RUNTIME_DIR"
		dir=$T/$sh.run ;;
	esac
	[ "$QS_RC" -eq 124 ] && not_ok "$sh: the quick start hangs"
	eq "$sh: the quick start returns" "$QS_RC" 0
	check "$sh: it exports the socket in $where" \
	    grep -qx "PISBX_SUPERVISOR_SOCKET=$dir/pisbx.sock" "$T/$sh.env"
	check "$sh: and a 256-bit capability" \
	    grep -Eqx 'PISBX_SUPERVISOR_CAPABILITY=[0-9a-f]{64}' "$T/$sh.env"
	f=$(cat "$T/$sh.file")
	eq "$sh: the export file is $dir/pisbx-supervisor.env" "$f" \
	    "$dir/pisbx-supervisor.env"
	check "$sh: mode 0600" test "$(stat -c %a "$f" 2>/dev/null)" = 600
	cap=$(sed -n 's/^PISBX_SUPERVISOR_CAPABILITY=//p' "$T/$sh.env")
	check "$sh: the capability is in no file" \
	    sh -c "! grep -rqF '$cap' '$T/$sh.run' '$T/$sh.home'"
	check "$sh: the supervisor keeps running" alive "$QS_PID"
	check "$sh: the block made the workers' config" \
	    grep -q allowedDomains "$T/$sh.home/.config/pisbx/agents.json"
	check "$sh: nothing failed on the way" \
	    sh -c "! grep -Eq 'No such process|No such file|unknown key' '$T/$sh.err'"
	grep -Eq 'No such process|No such file|unknown key' "$T/$sh.err" &&
	    sed 's/^/# /' "$T/$sh.err"
	contains "$sh: pisbx-run ran the command" "$(cat "$T/$sh.out" "$T/$sh.err")" \
	    "ran in the sandbox"
	log=$T/$sh.home/pisbx-supervisor.log
	i=0
	while ! grep -q 'WORKER' "$log" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05; i=$((i + 1))
	done
	check "$sh: SIGUSR1 put the worker table, one exited worker, in the log" \
	    grep -Eq '^pisbx-supervisor: 1 workers, 0 running' "$log"
	kill "$QS_PID" 2>/dev/null
	wait_gone "$QS_PID"
done

quick sh bad '{"network": {"allowDomains": ["example.com"]}}'
eq "with a bad config the quick start returns" "$QS_RC" 0
check "and exports nothing" test ! -s "$T/bad.env"
check "and keeps the user's config" \
    grep -q allowDomains "$T/bad.home/.config/pisbx/agents.json"
contains "and shows why" "$(cat "$T/bad.err")" 'unknown key'

# docs/filesystem.md: the refusal line, with the page's path made ours.
line=$(grep -A 3 'names the path and who reads it:' \
    "$PISBX_TOP/docs/filesystem.md" | grep '^pisbx-run: refused')
check "docs/filesystem.md quotes a refusal line" test -n "$line"
run_config
sbx -- /bin/sh -c ': >.bashrc' >"$T/fs.out" 2>"$T/fs.err"
want=$(printf '%s\n' "$line" | sed "s|/work/proj|$WS|")
check "the refusal line is what pisbx-run prints" grep -qxF "$want" "$T/fs.err"
grep -q 'refused' "$T/fs.err" || sed 's/^/# /' "$T/fs.err"
done_testing
