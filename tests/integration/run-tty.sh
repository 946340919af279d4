#!/bin/sh
# The caller's terminal keeps its name inside pisbx-run (newuser C10): the
# sandbox has a devpts of its own, so /dev/pts/N, the name
# /proc/self/fd/0 gives, was not there, and `tty`, ttyname(),
# GPG_TTY=$(tty) and `script` failed.  Now that name is the inherited
# terminal, no pty the command makes gets its number, the command's own
# ptys have names ttyname() finds, and every other terminal of the
# caller's stays out of reach.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

PTYRUN=$PISBX_TOP/tests/lib/ptyrun.py

run_config
chmod -R a+rwX "$WS"

# What the command checks, on the caller's terminal.
cat >"$WS/inner.sh" <<'SH'
tty; echo "tty-exit $?"
python3 -c 'import os; print("ttyname", os.ttyname(0))'
echo by-name >"$(tty)"
[ -e "$PTYRUN_OTHER" ] && echo other-visible || echo other-absent
(echo leak >"$PTYRUN_OTHER") 2>/dev/null && echo other-written ||
    echo other-refused
python3 inner.py
script -qec tty /dev/null | tr -d '\r' | sed 's/^/script /'
SH
# The command's own ptys, more than the caller's terminal's number: none
# is the inherited terminal, each has a name that leads back to it.
cat >"$WS/inner.py" <<'PY'
import ctypes, os
libc = ctypes.CDLL(None)
libc.ptsname.restype = ctypes.c_char_p
mine = os.ttyname(0)
n = int(mine.rsplit("/", 1)[1]) + 2
bad, seen = [], set()
for _ in range(n):
    m, s = os.openpty()
    name = os.ttyname(s)
    pts = libc.ptsname(m).decode()
    st = os.stat(name)
    if (name == mine or name != pts or name in seen or
            (st.st_dev, st.st_ino) != (os.fstat(s).st_dev, os.fstat(s).st_ino)):
        bad.append(name + "/" + pts)
    seen.add(name)
print("own-ptys", n, "bad", " ".join(bad) or "none")
PY

(cd "$WS" && "$PY" "$PTYRUN" "$T/tty.out" -- "$RUN" --config "$CONF" \
    -- /bin/sh inner.sh) </dev/null >"$T/tty.err" 2>&1
out=$T/tty.out
mine=$(sed -n 's/^mine //p' "$out")
check "the driver ran (mine=$mine)" has_line "$out" '^exit '
check "tty prints the caller's terminal name" has_line "$out" "^$mine\$"
check "tty exits 0" has_line "$out" '^tty-exit 0$'
check "os.ttyname(0) is that name" has_line "$out" "^ttyname $mine\$"
check "writing to that name reaches the terminal" has_line "$out" '^by-name$'
check "another terminal of the caller's is not there" \
    has_line "$out" '^other-absent$'
check "... nor opened for writing" has_line "$out" '^other-refused$'
check "... and nothing reached it" has_line "$out" '^other-got 0$'
check "the command's own ptys are distinct and named" \
    has_line "$out" '^own-ptys [0-9]+ bad none$'
check "script's pty has a name of its own" \
    has_line "$out" '^script /dev/pts/[0-9]+$'
check "... not the caller's" sh -c "! grep -qx 'script $mine' '$out'"
check "the command exits 0" has_line "$out" '^exit 0$'
[ $_nfail -eq 0 ] || sed 's/^/# /' "$out" "$T/tty.err"

# Without a terminal nothing is named: tty says so.
sbx -- tty </dev/null >"$T/notty.out" 2>&1
check "no terminal: tty exits 1" [ $? -eq 1 ]
check "no terminal: not a tty" has_line "$T/notty.out" '^not a tty$'
check "no terminal: no host pty in /dev/pts" sh -c \
    "(cd '$WS' && '$RUN' --config '$CONF' -- ls /dev/pts) | tr '\n' ' ' |
    grep -qx 'ptmx '"

done_testing
