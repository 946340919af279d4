#!/bin/sh
# pisbx-supervisor --interactive in a tmux pane, as a person runs it next
# to an agent: two agents' commands (pisbx-sh and pisbx-run, no supervisor
# variables in their environment) find it through
# $XDG_RUNTIME_DIR/pisbx/supervisor.env, register, and ask about unlisted
# hosts at once.  The pane shows one question at a time, with the command
# line, target, port, protocol, the other question waiting and a
# countdown; "y" allows one, "n" denies the other, "s" allows a host for
# every later command of the session, no answer in time denies, and the
# access log records each.  Stopped, the supervisor unpublishes itself
# and a command's refusal from the config's tty reviewer says why.
#
# Reviewed destinations must be public to be dialled, so the scenario runs
# in a private network namespace where 11.0.0.1 sits on lo.
. "$(dirname "$0")/../lib/netns.sh"
ip addr add 11.0.0.1/32 dev lo || exit 1

. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
FIX=$PISBX_TOP/tests/fixtures/reviewers
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$SUPERVISOR" ] || skip "no $SUPERVISOR"
[ -x "$RUN" ] || skip "no $RUN"
command -v tmux >/dev/null 2>&1 || skip "no tmux"

spawn $PY "$FIX/origin.py" 11.0.0.1 "$T/origin.port"
wait_file "$T/origin.port" 200 || { not_ok "origin did not start"; exit 1; }
O=$(cat "$T/origin.port")
dns_start test=11.0.0.1

mkdir -p "$T/ws" "$T/home" "$T/xdg"
chmod 700 "$T/xdg"
export HOME=$T/home XDG_RUNTIME_DIR=$T/xdg
unset PISBX_SANDBOX PISBX_DEPTH XDG_CONFIG_HOME PISBX_SUPERVISOR_SOCKET \
    PISBX_SUPERVISOR_CAPABILITY TMUX
cat >"$T/conf.json" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": []},
 "resolver": {"servers": ["127.0.0.1:$DNS_PORT"], "timeoutMs": 2000},
 "review": {"mode": "tty", "timeoutMs": 60000}}
EOF
chmod 644 "$T/conf.json"
export PISBX_CONFIG=$T/conf.json
ENVF=$T/xdg/pisbx/supervisor.env
TM="tmux -S $T/tmux.sock"

# The supervisor's pane: its PID is the pane's (exec).
$TM new-session -d -x 200 -y 60 "exec '$SUPERVISOR' --interactive \
    --access-log '$T/sup.log' 2>'$T/sup.err'"
SP=$($TM display-message -p -t 0 '#{pane_pid}')
_pids="$_pids $SP"
stop_tmux() { kill "$SP" 2>/dev/null; $TM kill-server 2>/dev/null; }
wait_file "$ENVF" 200
check "the supervisor publishes itself in the runtime directory" [ -s "$ENVF" ]
check "... mode 0600" [ "$(stat -c %a "$ENVF")" = 600 ]
cap=$(sed -n 's/^PISBX_SUPERVISOR_CAPABILITY=//p' "$ENVF")

screen() { $TM capture-pane -p -J -t 0 -S -200; }
# until_screen REGEX [TRIES]: until the pane shows a line matching it.
until_screen() {
	_i=0
	while ! screen | grep -Eq -- "$1" && [ $_i -lt "${2:-200}" ]; do
		sleep 0.1; _i=$((_i + 1))
	done
	screen | grep -Eq -- "$1"
}
# questions: how many questions the pane has shown so far.
questions() { screen | grep -c 'wants a connection no list allows'; }
# answer KEY: type it at the question shown now.
answer() { $TM send-keys -t 0 "$1" Enter; }
# run_bg NAME CMD...: a command in the workspace, in the background;
# $T/NAME.out, .err and .rc when it ends.
run_bg() {
	_n=$1; shift
	(cd "$T/ws" && "$@" >"$T/$_n.out" 2>"$T/$_n.err"; echo $? >"$T/$_n.rc") &
	_pids="$_pids $!"
}
wait_rc() { wait_file "$T/$1.rc" "${2:-300}"; cat "$T/$1.rc" 2>/dev/null; }
until_screen 'asking here for the commands' 100
check "the pane says where commands find it" \
    sh -c "$TM capture-pane -p -J -t 0 | grep -qF '$ENVF'"

# 1. Two agents' commands at once: one question, the other waiting.
run_bg a "$PISBX_BINDIR/pisbx-sh" -c \
    "curl -sf -o /dev/null -w '%{http_code}' http://alpha.test:$O/a"
until_screen 'target +alpha.test'
run_bg b "$RUN" -- curl -sf -o /dev/null -w '%{http_code}' \
    "http://beta.test:$O/b"
until_screen 'waiting +1 more; next: beta.test, [0-9]+ s left'
check "two commands asked at once: one question, one waiting" \
    [ "$(questions)" -eq 1 ]
screen >"$T/q1.txt"
check "the question shows the command line" \
    grep -q "command  curl -sf -o /dev/null -w '%{http_code}' http://alpha.test:$O/a" "$T/q1.txt"
check "... target, port, protocol" sh -c "grep -q 'target   alpha.test' '$T/q1.txt' &&
    grep -q 'port     $O' '$T/q1.txt' && grep -q 'protocol http' '$T/q1.txt'"
check "... the working directory" grep -q "in       $T/ws" "$T/q1.txt"
check "... a countdown" grep -Eq 'time     [0-9]+ s to answer \(no answer: no\)' "$T/q1.txt"
check "... the keys, session included" grep -qF '[y/r/s/N]' "$T/q1.txt"
t1=$(sed -n 's/.*time     \([0-9]*\) s to answer.*/\1/p' "$T/q1.txt" | tail -n 1)
sleep 2.2
t2=$(screen | sed -n 's/.*time     \([0-9]*\) s to answer.*/\1/p' | tail -n 1)
check "the countdown counts down in place ($t1 -> $t2)" [ "${t2:-99}" -lt "${t1:-0}" ]

answer y
until_screen 'target +beta.test'
screen >"$T/q2.txt"
check "then the waiting question, with its command line" \
    grep -q "command  curl -sf -o /dev/null -w '%{http_code}' http://beta.test:$O/b" "$T/q2.txt"
check "... and nothing more waiting" grep -q 'waiting  no other question' "$T/q2.txt"
answer n
eq "y: pisbx-sh's command exits 0" "$(wait_rc a)" 0
eq "... its connection went through" "$(cat "$T/a.out")" 200
eq "n: pisbx-run's curl fails on the 403 (exit 22)" "$(wait_rc b)" 22
check "... and its summary names the refusal" grep -q 'beta.test' "$T/b.err"

# The access log: a record for each answer, with the command line.
log_has() {
	$PY - "$T/sup.log" "$@" <<'EOF'
import json, sys
want = dict(a.split("=", 1) for a in sys.argv[2:])
for line in open(sys.argv[1]):
    r = json.loads(line)
    if all(str(r.get(k)) == v for k, v in want.items()):
        sys.exit(0)
sys.exit(1)
EOF
}
check "access log: alpha.test allowed at the terminal" log_has type=network \
    hostname=alpha.test decision=allow reason=review:allow protocol=http \
    "command=curl -sf -o /dev/null -w '%{http_code}' http://alpha.test:$O/a"
check "access log: beta.test denied" log_has type=network hostname=beta.test \
    decision=deny reason=review:deny
check "access log: both registered and unregistered" sh -c \
    "[ \$(grep -c '\"registered\"' '$T/sup.log') -eq 2 ] &&
     [ \$(grep -c '\"unregistered\"' '$T/sup.log') -eq 2 ]"

# 2. "s": this session -- a later command is not asked.
n=$(questions)
run_bg c "$RUN" -- curl -sf -o /dev/null -w '%{http_code}' \
    "http://gamma.test:$O/c"
until_screen 'target +gamma.test'
answer s
eq "s: the command's connection goes through" "$(wait_rc c)$(cat "$T/c.out")" 0200
run_bg d "$PISBX_BINDIR/pisbx-sh" -c \
    "curl -sf -o /dev/null -w '%{http_code}' http://gamma.test:$O/d"
eq "... a later command reaches the same host" "$(wait_rc d)$(cat "$T/d.out")" 0200
eq "... without a question" "$(questions)" $((n + 1))
check "... the access log says it was the session's approval" log_has \
    type=network hostname=gamma.test decision=allow reason=review:session
run_bg e "$RUN" -- curl -sf -o /dev/null "http://delta.test:$O/e"
until_screen 'target +delta.test'
answer ''
eq "another host is still asked, and Enter alone denies" "$(wait_rc e)" 22

check "the capability is never on the screen" sh -c \
    "[ -n '$cap' ] && ! $TM capture-pane -p -J -t 0 -S -500 | grep -qF '$cap'"

# 3. Stopped, it unpublishes itself; commands run on the config again.
kill "$SP"
i=0
while [ -e "$ENVF" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "stopped: the file is gone" [ ! -e "$ENVF" ]
check "... and the supervisor reported no fault" sh -c \
    "! grep -Eq 'Sanitizer|runtime error' '$T/sup.err'"
(cd "$T/ws" && "$RUN" --report "$T/z.json" -- curl -s \
    "http://alpha.test:$O/z") >"$T/z.out" 2>"$T/z.err" </dev/null
eq "... and a command runs on the config's reviewer (no terminal: denied)" "$?" 0
# Without a terminal the tty reviewer asks nobody: the refusal says so
# and names both ways out, in the 403, the summary and the report.
way="the terminal reviewer got no answer (review.mode \"tty\" in $T/conf.json: a command without a terminal, as an agent's are, cannot be asked); to allow it, add \"alpha.test:$O\" to network.allowedDomains in $T/conf.json, or run pisbx-supervisor --interactive in a terminal of yours to be asked there"
check "the 403 says nobody could be asked, and both ways out" \
    grep -qF "$way" "$T/z.out"
check "... the summary too" grep -qF "$way" "$T/z.err"
check "... and --report" $PY -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert any(i.get("kind") == "network" and i.get("reason") == "review:error"
           and sys.argv[2] == i.get("hint") for i in r), r' "$T/z.json" "$way"
check "... no access log is mentioned where there is none" \
    sh -c "! grep -q 'access log says why' '$T/z.out' '$T/z.err'"
stop_tmux

# 4. No answer in time is a deny: the question is withdrawn.
$TM new-session -d -x 200 -y 60 "exec '$SUPERVISOR' --interactive \
    --review-timeout 3000 --access-log '$T/sup.log' 2>'$T/sup2.err'"
SP=$($TM display-message -p -t 0 '#{pane_pid}')
_pids="$_pids $SP"
wait_file "$ENVF" 200
run_bg f "$RUN" -- curl -sf -o /dev/null "http://eta.test:$O/f"
until_screen 'target +eta.test'
eq "unanswered: the command's connection is refused" "$(wait_rc f)" 22
check "... the pane says the question was withdrawn" \
    until_screen 'question withdrawn; not allowed' 50
check "... the access log says review:timeout" log_has type=network \
    hostname=eta.test decision=deny reason=review:timeout
stop_tmux
done_testing
