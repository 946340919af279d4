#!/bin/sh
# The start's look through the shared temporary directory (/tmp) costs a
# system call per file or directory, not per entry: the sockets, links
# and fifos other tools leave there (hundreds on a busy machine) are
# known from readdir and never looked at one by one.  What is hidden does
# not change: a private file and a private directory among them stay
# hidden, a world-readable file stays readable.  Counted with strace:
# no system call of the run names one of the 300 sockets.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v strace >/dev/null || skip "strace not installed (./bootstrap --test)"
strace -f -o /dev/null true 2>/dev/null ||
    skip "strace cannot trace here (ptrace refused)"

# Entries directly in /tmp, named after $T's unique suffix, removed at
# exit: 300 sockets, 20 links, 20 fifos, and a private file, a private
# directory and a world-readable file among them.
TAG=pisbx-tw-${T##*.}
PRIV=/tmp/$TAG-priv
PRIVD=/tmp/$TAG-privd
WORLD=/tmp/$TAG-world
trap '_cleanup; rm -rf /tmp/$TAG-*' EXIT
"$PY" - "/tmp/$TAG" <<'EOF' || { not_ok "sockets in /tmp"; done_testing; }
import os, socket, sys
base = sys.argv[1]
for i in range(300):
    s = socket.socket(socket.AF_UNIX)
    s.bind("%s-s%d" % (base, i))
    s.close()
for i in range(20):
    os.symlink("/nonexistent", "%s-l%d" % (base, i))
    os.mkfifo("%s-f%d" % (base, i), 0o600)
EOF
(umask 077 && echo "PRIVATE FILE" >"$PRIV" && mkdir "$PRIVD" &&
    echo "PRIVATE DIR FILE" >"$PRIVD/f") ||
    { not_ok "private entries in /tmp"; done_testing; }
echo "WORLD READABLE" >"$WORLD"
chmod 644 "$WORLD"

run_config

# LeakSanitizer cannot run under ptrace: an ASan build's leak check
# is off for this one traced run (make check SANITIZE=1).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -o "$T/trace" "$RUN" --config "$CONF" -- true \
    >"$T/out" 2>&1
eq "pisbx-run -- true under strace exits 0" "$?" 0
n=$(grep -c "$TAG-s[0-9]" "$T/trace")
eq "no system call names one of the 300 sockets in /tmp" "$n" 0
n=$(grep -Ec "$TAG-[lf][0-9]" "$T/trace")
eq "nor one of the links and fifos" "$n" 0
check "the private file is looked at (and hidden)" \
    grep -q "\"$TAG-priv\"" "$T/trace"

# What the sandbox sees is unchanged.
# hidden DESC FILE: FILE's text does not reach the sandbox (a hidden
# file reads empty, a hidden directory is not there).
hidden() {
	sbx -- sh -c 'cat "$1" 2>/dev/null' sh "$2" >"$T/o" 2>&1
	if grep -q PRIVATE "$T/o"; then not_ok "$1"; else ok "$1"; fi
}
hidden "a private file in /tmp stays hidden" "$PRIV"
hidden "a private directory in /tmp stays hidden" "$PRIVD/f"
sbx -- cat "$WORLD" >"$T/o3" 2>&1
check "a world-readable file in /tmp stays readable" \
    grep -qx "WORLD READABLE" "$T/o3"
sbx -- sh -c "test -S /tmp/$TAG-s7 && echo socket" >"$T/o4" 2>&1
check "the sockets are still there, as sockets" grep -qx socket "$T/o4"
done_testing
