#!/bin/sh
# ./bootstrap and another package manager: while a process holds apt's
# and dpkg's locks, bootstrap's apt-get names it and waits for it (at most
# PISBX_APT_LOCK_WAIT seconds) instead of stopping at once.
#
# The install path runs only when a package is missing, and nothing may
# be installed here; so the scenario sources bootstrap's apt_get (between
# its "bootstrap_lock" markers) and runs a real apt-get install that
# changes nothing (--no-upgrade of dpkg, always installed) but takes the
# locks like any install.  Root only.
# run.sh: alone (it holds apt's and dpkg's locks).
. "$PISBX_TOP/tests/lib/common.sh"
[ "$(id -u)" -eq 0 ] || skip "not root (apt-get's locks are root's)"
command -v apt-get >/dev/null 2>&1 || skip "no apt-get"
[ -e /var/lib/dpkg/lock-frontend ] || skip "no /var/lib/dpkg/lock-frontend"

sed -n '/^# bootstrap_lock: begin/,/^# bootstrap_lock: end/p' \
    "$PISBX_TOP/bootstrap" >"$T/lock.sh"
check "bootstrap has its lock functions" grep -q '^apt_get()' "$T/lock.sh"

# hold SECONDS: another package manager, played by python3 holding the
# locks apt-get takes; returns once they are held, its PID in HP.
cat >"$T/hold.py" <<'EOF'
import fcntl, sys, time
held = []
for p in ("/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock",
          "/var/lib/apt/lists/lock"):
    f = open(p, "a")
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    held.append(f)
open(sys.argv[2], "w").write("held\n")
time.sleep(float(sys.argv[1]))
EOF
hold() {
	rm -f "$T/held"
	spawn $PY "$T/hold.py" "$1" "$T/held"
	HP=$LAST_PID
	wait_file "$T/held" 200
}
# install: the sourced apt_get, timed; status in $T/rc, seconds in $T/secs.
install() {
	: >"$T/err"
	_s=$(date +%s)
	(. "$T/lock.sh" && apt_get install -y -qq --no-upgrade dpkg) \
	    >"$T/out" 2>"$T/err" </dev/null
	echo $? >"$T/rc"
	echo $(($(date +%s) - _s)) >"$T/secs"
}

# 1. Held for a few seconds: said, waited for, then done.
hold 4 || { not_ok "the locks were not taken"; done_testing; }
PISBX_APT_LOCK_WAIT=120 install
check "a held lock: it says who holds it and that it waits" grep -q \
    "^pisbx: the package manager is busy: python3 (pid $HP) holds /var/lib/dpkg/lock-frontend; waiting up to 120 s for it (PISBX_APT_LOCK_WAIT)$" \
    "$T/err"
check "... then apt-get runs once it is free (exit $(cat "$T/rc"))" \
    [ "$(cat "$T/rc")" -eq 0 ]
check "... having waited for it ($(cat "$T/secs") s)" [ "$(cat "$T/secs")" -ge 2 ]
check "... and apt-get did not give up on the lock" sh -c \
    "! grep -Eq 'Unable to acquire|Could not get lock' '$T/err'"
wait "$HP" 2>/dev/null

# 2. Held for longer than the wait: apt-get gives up, bounded.
hold 120 || { not_ok "the locks were not taken"; done_testing; }
PISBX_APT_LOCK_WAIT=1 install
check "bounded: past PISBX_APT_LOCK_WAIT apt-get fails" [ "$(cat "$T/rc")" -ne 0 ]
check "... apt-get saying the lock is held" grep -Eq \
    'Unable to acquire the dpkg frontend lock|Could not get lock' "$T/err"
check "... long before the holder lets go ($(cat "$T/secs") s)" \
    [ "$(cat "$T/secs")" -lt 60 ]
kill "$HP" 2>/dev/null
wait "$HP" 2>/dev/null

# 3. Nobody holds it: not a word about waiting.
install
check "free: apt-get runs (exit $(cat "$T/rc"))" [ "$(cat "$T/rc")" -eq 0 ]
check "... without a line about a busy package manager" sh -c \
    "! grep -q 'package manager is busy' '$T/err'"
done_testing
