#!/bin/sh
# The user's private files outside the home (redteam #7).  Hidden by
# default: the runtime directory ($XDG_RUNTIME_DIR: podman's
# containers/auth.json, a supervisor's pisbx-supervisor.env), and each
# entry of /tmp owned by the user and closed to group and others (a
# Kerberos ticket cache, a private directory), and a ticket cache named by
# KRB5CCNAME.  Still there: a world-readable /tmp file, a socket of the
# runtime directory listed in allowUnixSockets, a private directory of
# sockets only (the guard refuses them, saying so), a project in a private
# mktemp -d directory in /tmp (the working directory: read and written),
# a private directory named in allowRead.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

UP=$PISBX_BUILD/tests/helpers/unixprobe
[ -x "$UP" ] || { not_ok "unixprobe not built ($UP)"; done_testing; }

# Entries directly in /tmp, each made by mktemp (unique) and removed at
# exit with $T.
KRB=$(mktemp /tmp/pisbx-t-krb5cc.XXXXXX) &&
    PRIV=$(mktemp -d /tmp/pisbx-t-priv.XXXXXX) &&
    WORLD=$(mktemp /tmp/pisbx-t-world.XXXXXX) &&
    PROJ=$(mktemp -d /tmp/pisbx-t-proj.XXXXXX) &&
    SOCKD=$(mktemp -d /tmp/pisbx-t-sock.XXXXXX) ||
    { not_ok "mktemp in /tmp"; done_testing; }
trap '_cleanup; rm -rf "$KRB" "$PRIV" "$WORLD" "$PROJ" "$SOCKD"' EXIT
echo "TICKET CACHE" >"$KRB"
echo "PRIVATE DIR FILE" >"$PRIV/f"
echo "WORLD READABLE" >"$WORLD"
chmod 644 "$WORLD"
echo "PROJECT INPUT" >"$PROJ/in"
# A private directory holding a socket only, like tmux-<uid> or ssh-XXXX.
"$PY" -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCKD/default"

# A runtime directory laid out like /run/user/<uid>, private (0700).
X=$T/xdg
mkdir -p "$X/containers" "$X/sock"
echo '{"auths": {"quay.io": {"auth": "U0VDUkVU"}}}' >"$X/containers/auth.json"
echo "PISBX_SUPERVISOR_CAPABILITY=SECRETCAP" >"$X/pisbx-supervisor.env"
chmod 700 "$X"
spawn "$UP" serve "$X/sock" >"$T/serve.out" 2>&1
wait_file "$T/serve.out" || { not_ok "socket servers did not start"; done_testing; }
export XDG_RUNTIME_DIR="$X"

# A ticket cache KRB5CCNAME names, readable by all (not private).
echo "ENV TICKET CACHE" >"$T/krb5cc_env"
chmod 644 "$T/krb5cc_env"
export KRB5CCNAME="FILE:$T/krb5cc_env"

run_config --net "{\"allowUnixSockets\": [\"$X/sock/allowed.sock\"]}"

# readable DESC FILE: sbx reads FILE (no: prints "hidden").
readable() {
	sbx -- sh -c 'cat "$1" 2>/dev/null || echo hidden' sh "$2" 2>"$T/err"
}

# 1. Hidden: the secrets outside the home.
for f in "$X/containers/auth.json" "$X/pisbx-supervisor.env" "$KRB" \
    "$PRIV/f" "$T/krb5cc_env"; do
	out=$(readable "$f" "$f")
	case $out in
	""|hidden) ok "not readable inside: $f" ;;
	*) not_ok "readable inside: $f: $out" ;;
	esac
done
eq "the runtime directory shows only the way to the listed socket" \
    "$(sbx -- ls -A "$X" "$X/sock" 2>&1)" "$X:
sock

$X/sock:
allowed.sock"

# 2. Still there: a world-readable /tmp file, a listed socket in the
#    runtime directory.
eq "a world-readable /tmp file is readable" \
    "$(readable world "$WORLD")" "WORLD READABLE"
eq "the listed socket in the runtime directory connects" \
    "$(sbx -- "$UP" connect "$X/sock/allowed.sock" 2>"$T/err")" \
    "connect ok allowed"
eq "... and another socket there is not there" \
    "$(sbx -- "$UP" connect "$X/sock/blocked.sock" 2>"$T/err")" \
    "connect ENOENT"

eq "a private directory of sockets only stays (tmux-<uid>, ssh-XXXX)" \
    "$(sbx -- ls "$SOCKD" 2>&1)" default
eq "... and the guard refuses its socket, saying why" \
    "$(sbx -- "$UP" connect "$SOCKD/default" 2>"$T/err")" "connect EPERM"
contains "... naming the key" "$(cat "$T/err")" \
    "refused to connect to $SOCKD/default"

# 3. A project in a private mktemp -d directory in /tmp: the working
#    directory, read and written.
out=$(cd "$PROJ" && "$RUN" --config "$CONF" --access-log "$PX_LOG" -- \
    sh -c 'cat in && echo built >out && ls' 2>&1)
eq "a project in a private /tmp directory: read, written, listed" \
    "$out" "PROJECT INPUT
in
out"
eq "... its output is there after the run" "$(cat "$PROJ/out" 2>&1)" built

# 4. The one config line to show a private directory again: allowRead.
run_config --fs "{\"allowRead\": [\"$PRIV\"]}"
eq "allowRead shows a private /tmp directory again" \
    "$(readable priv "$PRIV/f")" "PRIVATE DIR FILE"
out=$(readable krb "$KRB")
case $out in
""|hidden) ok "... and nothing else: the ticket cache stays hidden" ;;
*) not_ok "the ticket cache is readable with allowRead of another: $out" ;;
esac

# 5. Private directories of the same mode and of others: each shows empty
#    with its own mode, and nothing can be made in it (several share one
#    read-only file system inside).
P2=$(mktemp -d /tmp/pisbx-t-priv2.XXXXXX) && P3=$(mktemp -d /tmp/pisbx-t-priv3.XXXXXX) ||
    { not_ok "mktemp -d in /tmp"; done_testing; }
trap '_cleanup; rm -rf "$KRB" "$PRIV" "$WORLD" "$PROJ" "$SOCKD" "$P2" "$P3"' EXIT
echo "SECOND" >"$P2/f"
mkdir "$P3/sub"
chmod 500 "$P3"
run_config
sbx -- sh -c 'for d; do printf "%s %s [%s] " "$(basename "$d")" \
    "$(stat -c %a "$d")" "$(ls -A "$d" | tr "\n" " ")"
    if mkdir "$d/new" 2>/dev/null; then echo made; else echo refused; fi
    done' sh "$PRIV" "$P2" "$P3" >"$T/out" 2>"$T/err"
for want in "$(basename "$PRIV") 700 [] refused" \
    "$(basename "$P2") 700 [] refused" "$(basename "$P3") 500 [] refused"; do
	check "hidden, empty, its mode, read-only: $want" \
	    grep -qxF "$want" "$T/out"
done
check "... nothing made on the host" test ! -e "$PRIV/new" -a ! -e "$P2/new"
# Every hidden entry's mount read-only (the first bind made so, the
# others cloned from it): private files too, not only directories.
F2=$(mktemp /tmp/pisbx-t-priv4.XXXXXX) || { not_ok "mktemp"; done_testing; }
trap '_cleanup; rm -rf "$KRB" "$PRIV" "$WORLD" "$PROJ" "$SOCKD" "$P2" "$P3" "$F2"' EXIT
echo "SECOND FILE" >"$F2"
sbx -- sh -c 'for p; do awk -v p="$p" '"'"'$5 == p {
    split($6, o, ","); print p, o[1] }'"'"' /proc/self/mountinfo; done' sh \
    "$KRB" "$F2" "$PRIV" "$P2" "$P3" >"$T/out" 2>"$T/err"
for p in "$KRB" "$F2" "$PRIV" "$P2" "$P3"; do
	check "hidden $p: its mount read-only" grep -qxF "$p ro" "$T/out"
done
# Where fsopen is refused (a container's seccomp profile), each hidden
# directory gets a tmpfs of its own: hidden all the same.
NOFS=$PISBX_BUILD/tests/helpers/nofsopen
out=$("$NOFS" "$RUN" --config "$CONF" --access-log "$PX_LOG" -- sh -c \
    'for d; do printf "%s %s [%s]\n" "$(basename "$d")" \
    "$(stat -c %a "$d")" "$(ls -A "$d" | tr "\n" " ")"; done' sh \
    "$PRIV" "$P2" "$P3" 2>"$T/err")
eq "fsopen refused: the private directories hidden with their modes" \
    "$out" "$(basename "$PRIV") 700 []
$(basename "$P2") 700 []
$(basename "$P3") 500 []"
chmod 700 "$P3"

# 6. The runtime directory shown (allowRead): its known stores stay hidden.
run_config --fs "{\"allowRead\": [\"$X\"]}"
out=$(readable auth "$X/containers/auth.json")
case $out in
""|hidden) ok "runtime directory in allowRead: containers/auth.json stays hidden" ;;
*) not_ok "runtime directory in allowRead: containers/auth.json readable: $out" ;;
esac
done_testing
