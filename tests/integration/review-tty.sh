#!/bin/sh
# The tty transport, with a pseudo-terminal playing the person
# (pty-answer.py): y/yes allow once, anything else, EOF, a timeout or no
# terminal deny; one question at a time; the terminal's foreground taken
# from a command that holds it and handed back; typed-ahead input never
# answers a question.
. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/review.sh"

H="example.com 443 connect"
# pty NAME ANSWER... -- DRIVER-ARGS...: transcript in $T/NAME.out
pty() {
	_n=$1; shift
	$PY "$FIX/pty-answer.py" --run "$DRIVER" "$@" >"$T/$_n.out" 2>&1
}

pty yes y -- -t 20000 -w sbx-3 -d /home/u/proj tty registry.example 8443 http
check_case yes review:allow 'allowed at the terminal$'
check "yes: the question names the target" has_line "$T/yes.out" '^  host:     registry.example$'
check "yes: ... the port" has_line "$T/yes.out" '^  port:     8443$'
check "yes: ... the protocol" has_line "$T/yes.out" '^  protocol: http$'
check "yes: ... the cwd" has_line "$T/yes.out" '^  cwd:      /home/u/proj$'
check "yes: ... the worker" has_line "$T/yes.out" '^pisbx: sbx-3 wants a network connection$'

# A host past an egress budget: the question says which, and what was used.
pty budget r -- -t 20000 -b connectionsPerHost:200:200 tty $H
check_case budget review:allow 'allowed at the terminal'
check "budget: the question names the budget and what was used" has_line \
    "$T/budget.out" '^  budget:   past network\.budget\.connectionsPerHost \(200, used 200\): y allows one budget more, r lifts it'
check "budget: none without one" sh -c "! grep -q 'budget:' '$T/yes.out'"

# No worker (a standalone pisbx-proxy without --label): the question
# names the client's address, else this proxy.
pty anon y -- -t 20000 -w '' -c 127.0.0.1:40123 tty $H
check "no worker: the question names the client's address" has_line \
    "$T/anon.out" '^pisbx: the client at 127\.0\.0\.1:40123 wants a network connection$'
pty anon2 y -- -t 20000 -w '' tty $H
check "no worker, no address: it names this proxy" has_line \
    "$T/anon2.out" '^pisbx: a client of this proxy \(pid [0-9]+\) wants a network connection$'

pty no n -- -t 20000 tty $H
check_case no review:deny 'denied at the terminal$'

pty other sure -- -t 20000 tty $H
check_case other review:deny 'denied at the terminal$'

pty empty '' -- -t 20000 tty $H
check_case empty review:deny 'denied at the terminal$'

pty eof EOF -- -t 20000 tty $H
check_case eof review:error 'end of input at the terminal$'

pty timeout NONE -- -t 1000 tty $H
check_case timeout review:timeout 'no answer within 1000 ms$'
check "timeout: the person is told" has_line "$T/timeout.out" 'question withdrawn; not allowed'

setsid -w "$DRIVER" -t 20000 tty $H </dev/null >"$T/notty.out" 2>&1
check_case notty review:error 'no terminal: '

# One question at a time, in order; case and blanks do not matter.
pty queue YES n ' yes ' -- -n 3 -t 20000 tty $H
check "queue: first allowed" expect queue 0 review:allow 'allowed at the terminal$'
check "queue: second denied" expect queue 1 review:deny 'denied at the terminal$'
check "queue: third allowed" expect queue 2 review:allow 'allowed at the terminal$'
check "queue: three questions" [ "$(grep -c 'Allow this connection once' "$T/queue.out")" -eq 3 ]
check "queue: clean" clean queue

# The waiting questions count toward the cap.
pty cap y y y -- -n 4 -M 2 -t 20000 tty $H
check "cap: two busy" [ "$(count cap review:busy)" -eq 2 ]
check "cap: two allowed" [ "$(count cap review:allow)" -eq 2 ]

# Cancel the question being asked and the one waiting.
pty cancel NONE -- -n 2 -x 500 -t 60000 tty $H
check "cancel: both cancelled" [ "$(grep -c '^cancelled ' "$T/cancel.out")" -eq 2 ]
check "cancel: no callback" sh -c "! grep -q '^review ' '$T/cancel.out'"
check "cancel: one question shown" [ "$(grep -c 'Allow this connection once' "$T/cancel.out")" -eq 1 ]
check "cancel: clean" clean cancel

# A command holding the terminal's foreground: the question takes it and
# gives it back.
pty fg y -- -g -t 20000 tty $H
check "fg: the command held the foreground" has_line "$T/fg.out" '^fg-before child$'
check_case fg review:allow 'allowed at the terminal$'
check "fg: handed back" has_line "$T/fg.out" '^fg-after child$'

# "y" typed before the question was asked does not answer it.
$PY "$FIX/pty-answer.py" --typeahead y --run "$DRIVER" n -- -s -t 20000 tty $H >"$T/ahead.out" 2>&1
check_case ahead review:deny 'denied at the terminal$'

# Control bytes in the cwd or worker id cannot draw on the terminal.
esc=$(printf '\033')
pty ctl y -- -t 20000 -w "w${esc}[2J" -d "/tmp/${esc}]0;pwned" tty $H
check_case ctl review:allow 'allowed at the terminal$'
check "ctl: no escape byte reached the terminal" sh -c "! grep -q '$esc' '$T/ctl.out'"
check "ctl: masked" has_line "$T/ctl.out" '^  cwd:      /tmp/\?\]0;pwned$'

done_testing
