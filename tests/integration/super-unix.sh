#!/bin/sh
# Unix sockets in supervisor mode: the trusted config's
# network.allowUnixSockets still apply (the refusal of another socket
# names that list in that file, where it works); allowAllUnixSockets is
# not honoured, and pisbx-run says so; a list that leads to the
# supervisor's own socket (by name or through a link) is refused before
# anything runs.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME \
    PISBX_SUPERVISOR_SOCKET PISBX_SUPERVISOR_CAPABILITY
UP=$PISBX_BUILD/tests/helpers/unixprobe
[ -x "$UP" ] || { not_ok "unixprobe not built ($UP)"; done_testing; }
WS=$T/ws
S=$T/srv
mkdir -p "$WS" "$T/home" "$S"
chmod 755 "$S"
export HOME=$T/home
spawn "$UP" serve "$S" >"$T/serve.out" 2>&1
wait_file "$T/serve.out" || { not_ok "socket servers did not start"; done_testing; }

NET='{"allowedDomains":[],"deniedDomains":[]}'
# conf FILE NETWORK-KEYS: a config with those network keys.
conf() {
	printf '{"network": {"allowedDomains": [], "deniedDomains": []%s}}\n' \
	    "$2" >"$1"
	chmod 644 "$1"
}
# srun CONFIG CMD...: pisbx-run in supervisor mode, output in $T/out.
srun() {
	_c=$1; shift
	(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock \
	    PISBX_SUPERVISOR_CAPABILITY=$CAP PISBX_SUPERVISOR_TIMEOUT_MS=3000 \
	    exec "$RUN" --config "$_c" "$@") >"$T/out" 2>&1
}

tsup --network "$NET"

# 1. The config's allowUnixSockets: the listed socket is reachable, another
#    refused, the refusal naming the list in the config file.
conf "$T/list.json" ", \"allowUnixSockets\": [\"$S/allowed.sock\"]"
srun "$T/list.json" "$UP" connect "$S/allowed.sock"; rc=$?
eq "supervised, allowUnixSockets: the listed socket answers (exit)" "$rc" 0
contains "supervised, allowUnixSockets: the listed socket answers" \
    "$(cat "$T/out")" "connect ok allowed"
srun "$T/list.json" "$UP" connect "$S/blocked.sock"
contains "supervised: another socket is refused" "$(cat "$T/out")" \
    "connect EPERM"
contains "... and the refusal says where the list is" "$(cat "$T/out")" \
    "add \"$S/blocked.sock\" to network.allowUnixSockets in $T/list.json"
srun "$T/list.json" /usr/bin/python3 -c 'import socket,sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected")' "$T/sup.sock"
check "supervised, allowUnixSockets: the supervisor's socket stays out of reach" \
    sh -c "! grep -q '^connected' '$T/out' && grep -q 'Operation not permitted' '$T/out'"

# 2. allowAllUnixSockets: not honoured, and said.
conf "$T/all.json" ', "allowAllUnixSockets": true'
srun "$T/all.json" "$UP" connect "$S/blocked.sock"
contains "supervised, allowAllUnixSockets: a warning says it is not honoured" \
    "$(cat "$T/out")" \
    "pisbx: warning: supervisor mode: network.allowAllUnixSockets in $T/all.json is not honoured"
contains "supervised, allowAllUnixSockets: an unlisted socket is refused" \
    "$(cat "$T/out")" "connect EPERM"

# 3. A list that leads to the supervisor's socket: nothing runs.
conf "$T/self.json" ", \"allowUnixSockets\": [\"$S/allowed.sock\", \"$T/sup.sock\"]"
srun "$T/self.json" /bin/echo ran; rc=$?
eq "allowUnixSockets naming the supervisor's socket: exit 1" "$rc" 1
contains "... the error names the entry" "$(cat "$T/out")" \
    "network.allowUnixSockets[1] in $T/self.json, \"$T/sup.sock\", leads to the supervisor's own socket"
check "... and nothing ran" sh -c "! grep -qx ran '$T/out'"
ln -s "$T/sup.sock" "$T/sup-link.sock"
conf "$T/link.json" ", \"allowUnixSockets\": [\"$T/sup-link.sock\"]"
srun "$T/link.json" /bin/echo ran; rc=$?
eq "allowUnixSockets with a link to the supervisor's socket: exit 1" "$rc" 1
contains "... named too" "$(cat "$T/out")" "leads to the supervisor's own socket"

stop_tsup
done_testing
