#!/bin/sh
# The creation guard acts on exactly what it checked.  Every handler --
# bind, connect, sendto, open with O_CREAT, creat, mkdir, mknod, symlink,
# link, rename, truncate, open for writing -- is raced, a relative path
# at a time, against another thread of the command that flips the
# process's working directory between an allowed directory and a
# protected one (a host directory with a host socket; a denyWrite
# directory), and against one that swaps a parent directory with a
# symlink to the protected one.  The call succeeds where it is allowed,
# and never lands where it is not: no host socket becomes reachable as
# one the command bound, no connect or datagram reaches it, no file
# appears in or is emptied in the protected directory.
# run.sh: alone (its races want both CPUs).
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

GR=$PISBX_BUILD/tests/helpers/guardrace
UP=$PISBX_BUILD/tests/helpers/unixprobe
[ -x "$GR" ] || { not_ok "guardrace not built ($GR)"; done_testing; }
[ -x "$UP" ] || { not_ok "unixprobe not built ($UP)"; done_testing; }

# The host's sockets: blocked.sock (stream, answers its name) and
# blocked-dgram.sock (datagrams logged to srv/log), never listed.
S=$T/srv
mkdir -p "$S"
chmod 755 "$S"
spawn "$UP" serve "$S" >"$T/serve.out" 2>&1
wait_file "$T/serve.out" || { not_ok "socket servers did not start"; done_testing; }
: >"$S/log"

# Datagram sockets allowed: the sendto races are the guard's to win
# (by default no such socket is made, and sends are the kernel's).
run_config --fs '{"denyWrite": ["vault/*"]}' \
    --net '{"allowUnixDatagramSockets": true}'
mkdir -p "$WS/free" "$WS/vault" "$WS/sub" "$WS/fsub"
ln -s "$S" "$WS/sub.alt"
ln -s "$WS/vault" "$WS/fsub.alt"
echo keep >"$WS/vault/t.txt"
echo keep >"$WS/free/t.txt"
echo keep >"$WS/fsub/t.txt"
chmod -R a+rwX "$WS"

# race DESC ARGS...: guardrace inside; every op line has ok>0 and won=0.
race() {
	_d=$1; shift
	sbx -- "$GR" "$@" >"$T/race.out" 2>"$T/race.err"
	_n=$(grep -c ' tries=' "$T/race.out")
	if [ "$_n" -ne $(($# - 7)) ]; then
		not_ok "$_d: guardrace ran $_n of $(($# - 7)) ops: $(tail -n 3 "$T/race.err" | tr '\n' ' ')"
		return
	fi
	while read -r _op _tries _ok _won; do
		case "$_ok $_won" in
		"ok=0 "*) not_ok "$_d: $_op never succeeded where allowed ($_tries $_ok $_won): $(grep -v '^  ' "$T/race.err" | sort -u | head -n 3 | tr '\n' ' ')" ;;
		*" won=0") ok "$_d: $_op acted where it checked ($_tries $_ok $_won)" ;;
		*) not_ok "$_d: $_op acted where it did not check ($_tries $_ok $_won)" ;;
		esac
	done <"$T/race.out"
}

# 1. The working directory flipped by another thread.
race "cwd flipped" 2 cd "$S" "$WS/free" "$WS/free" blocked.sock \
    "$S/blocked.sock" connect bind
race "cwd flipped" 1 cd "$S" "$WS/free" "$WS/free" blocked-dgram.sock \
    "$S/blocked-dgram.sock" sendto
race "cwd flipped" 1 cd "$WS/vault" "$WS/free" "$WS/free" new.f \
    "$WS/vault/new.f" create creat mkdir mknod symlink link rename
race "cwd flipped" 1 cd "$WS/vault" "$WS/free" "$WS/free" t.txt \
    "$WS/vault/t.txt" truncate write

# 2. A parent directory swapped with a symlink to the protected one.
race "parent swapped" 2 swap "$WS/sub" "$WS/sub.alt" "$WS/sub" \
    sub/blocked.sock "$S/blocked.sock" connect bind
race "parent swapped" 1 swap "$WS/sub" "$WS/sub.alt" "$WS/sub" \
    sub/blocked-dgram.sock "$S/blocked-dgram.sock" sendto
race "parent swapped" 1 swap "$WS/fsub" "$WS/fsub.alt" "$WS/fsub" \
    fsub/new.f "$WS/vault/new.f" create creat mkdir mknod symlink link \
    rename
race "parent swapped" 1 swap "$WS/fsub" "$WS/fsub.alt" "$WS/fsub" \
    fsub/t.txt "$WS/vault/t.txt" truncate write

# 3. What the host's side saw: no datagram, the protected files as they were.
if grep -q race "$S/log"; then
	not_ok "a datagram reached the host socket ($(grep -c race "$S/log") times)"
else
	ok "no datagram reached the host socket"
fi
check "the protected file is untouched" grep -qx keep "$WS/vault/t.txt"
left=$(ls -A "$WS/vault" | tr '\n' ' ')
check "nothing was made in the protected directory ($left)" \
    [ "$left" = "t.txt " ]
# The host socket is not the command's: refused after the races too.
eq "the host socket is still refused" \
    "$(sbx -- "$UP" connect "$S/blocked.sock" 2>/dev/null)" "connect EPERM"
done_testing
