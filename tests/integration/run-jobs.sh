#!/bin/sh
# pisbx-run and process groups: the command runs in a process group of its
# own, so "kill 0" inside reaches nothing of the caller's even without
# Landlock's signal scoping; at a terminal it is the foreground job, as a
# shell would make it: one ^C is one SIGINT, a command that stops itself
# (^Z in vim) stops pisbx-run too and "fg" continues both, and the
# terminal comes back to the caller.  Signals from outside (an agent
# cancelling) reach the command exactly once.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

run_config
NOLANDLOCK=$PISBX_BUILD/tests/helpers/nolandlock
JOBSHELL=$PISBX_TOP/tests/lib/jobshell.py

SIGCOUNT=$PISBX_BUILD/tests/helpers/sigcount	# the command

# jobs NAME KEY MODE: sigcount MODE under pisbx-run, a job of jobshell.py in
# a pty, KEY typed once sigcount is ready; its events in $T/NAME.
jobs() {
	rm -f "$WS/ready" "$WS/result"
	(cd "$WS" && "$PY" "$JOBSHELL" "$T/$1" --key "$2" --when "$WS/ready" \
	    -- "$RUN" --config "$CONF" -- "$SIGCOUNT" "$3") \
	    </dev/null >/dev/null 2>&1
}

# 1. "kill -TERM 0" inside, on a kernel without Landlock (landlock_* fail
# with ENOSYS): the caller's process group -- here a shell that stands for
# the agent -- gets nothing.
if "$NOLANDLOCK" /bin/true 2>/dev/null; then
	(cd "$WS" && setsid /bin/sh -c '
		trap "echo caller-got-TERM >>\"$1\"" TERM
		"$2" "$3" --config "$4" -- /bin/sh -c \
		    "trap \"\" TERM; kill -TERM 0; echo sent"
		echo "exit $?" >>"$1"' sh "$T/pg.out" "$NOLANDLOCK" "$RUN" \
	    "$CONF") >"$T/pg.cmd" 2>&1
	eq "kill 0 inside ran (no Landlock)" "$(cat "$T/pg.cmd")" sent
	eq "kill 0 inside reaches nothing of the caller's group" \
	    "$(cat "$T/pg.out")" "exit 0"
else
	not_ok "nolandlock helper does not run"
fi

# The command's process group is its own, the reaper's too.
out=$(sbx -- /bin/sh -c 'ps -o pid=,pgid= -p 1,$$' 2>&1)
eq "reaper and command lead their own process groups" \
    "$(echo "$out" | awk '{print ($1 == $2)}' | tr -d '\n')" 11

# 2. One ^C at the terminal: one SIGINT; 130.
jobs int.out '\x03' int
eq "^C: the command got SIGINT once" "$(cat "$WS/result" 2>&1)" "INT 1 CONT 0"
eq "^C: exit 130, terminal back" "$(cat "$T/int.out")" "exit 130
terminal caller"

# 3. A command that stops itself (vim, less on ^Z): pisbx-run stops too
# (the shell sees it), "fg" continues it, and the command finishes.
jobs stop-self.out '' stop-self
eq "self-stop: pisbx-run stopped, continued, exit 0, terminal back" \
    "$(cat "$T/stop-self.out")" "stopped SIGTSTP
exit 0
terminal caller"
eq "self-stop: the command was continued once" \
    "$(cat "$WS/result" 2>&1)" "INT 0 CONT 1"

# ^Z typed at the terminal stops the job the same way.
jobs stop-key.out '\x1a' stop-key
eq "^Z: pisbx-run stopped, continued, exit 0" \
    "$(cat "$T/stop-key.out")" "stopped SIGTSTP
exit 0
terminal caller"
eq "^Z: the command was continued once" "$(cat "$WS/result" 2>&1)" \
    "INT 0 CONT 1"

# 4. An agent whose interface holds the terminal runs pisbx-run with
# pipes: the command may not take the terminal (stopping the agent's
# interface when it reads) nor leave pisbx-run stopped; its read fails.
rm -f "$WS/result"
(cd "$WS" && "$PY" "$JOBSHELL" "$T/agent.out" --null -- "$RUN" --config \
    "$CONF" -- /bin/sh -c 'read x </dev/tty; echo "read $?" >result') \
    </dev/null >/dev/null 2>&1
eq "stdio not the terminal: no stop, exit 0" "$(cat "$T/agent.out")" \
    "exit 0
terminal caller"
eq "stdio not the terminal: reading the terminal fails" \
    "$(cat "$WS/result" 2>&1)" "read 1"

# 5. SIGINT from outside, no terminal: to pisbx-run alone, or to its whole
# process group (an agent killing the job's group): once either way.
for how in pid group; do
	rm -f "$WS/ready" "$WS/result"
	(cd "$WS" && "$PY" - "$RUN" "$CONF" "$SIGCOUNT" "$how" <<'PYEOF'
import os, signal, subprocess, sys, time
run, conf, sigcount, how = sys.argv[1:]
p = subprocess.Popen([run, "--config", conf, "--", sigcount, "int"],
                     process_group=0, stdin=subprocess.DEVNULL)
end = time.monotonic() + 30
while not os.path.exists("ready") and time.monotonic() < end:
    time.sleep(0.02)
if how == "pid":
    os.kill(p.pid, signal.SIGINT)
else:
    os.killpg(p.pid, signal.SIGINT)
print(p.wait(timeout=60))
PYEOF
	) >"$T/out" 2>&1
	eq "SIGINT to the $how from outside: exit 130" "$(cat "$T/out")" 130
	eq "SIGINT to the $how from outside: delivered once" \
	    "$(cat "$WS/result" 2>&1)" "INT 1 CONT 0"
done
rm -f "$WS/ready" "$WS/result"
done_testing
