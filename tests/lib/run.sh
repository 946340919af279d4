# Helpers for the pisbx-run scenarios (tests/integration/run-*.sh).  Source
# after common.sh and proxy.sh:
#   . "$(dirname "$0")/../lib/common.sh"
#   . "$PISBX_TOP/tests/lib/proxy.sh"
#   . "$PISBX_TOP/tests/lib/run.sh"
# Gives: a workspace $WS (the command's working directory), a fake home
# $FAKEHOME with ~/.ssh/id_test, a config $CONF (run_config writes it),
# sbx (pisbx-run in $WS with that home and config), ws_snapshot/ws_same
# (nothing left behind), and pid helpers.  Everything in $T is readable by
# every user, so the same scenario runs as root and as nobody.
[ -x "$RUN" ] || skip "pisbx-run not built ($RUN)"

WS=$T/ws
FAKEHOME=$T/home
CONF=$T/run.json
mkdir -p "$WS" "$FAKEHOME/.ssh"
echo "PRIVATE KEY MATERIAL" >"$FAKEHOME/.ssh/id_test"
chmod 700 "$FAKEHOME/.ssh"
chmod 600 "$FAKEHOME/.ssh/id_test"
export HOME="$FAKEHOME"
unset PISBX_SANDBOX PISBX_DEPTH PISBX_CONFIG XDG_CONFIG_HOME

# Namespaces must work here; say clearly when they do not.
if ! unshare -U -r -n true 2>/dev/null && [ "$(id -u)" -ne 0 ]; then
	skip "user namespaces are not available to $(id -un)"
fi

# run_config [--allow "A B"] [--deny "C"] [--fs JSON] [--net JSON]
# [--proxy JSON] [--top JSON]: write
# $CONF: a hosts file (names in $HOSTS_NAMES map to 127.0.0.1), the lists,
# an optional "filesystem" object, and other top-level keys (--top).
run_config() {
	: >"$T/hosts"
	for _n in ${HOSTS_NAMES:-allowed.test denied.test}; do
		echo "127.0.0.1 $_n" >>"$T/hosts"
	done
	"$PY" - "$CONF" "$T/hosts" "$@" <<'EOF'
import json, sys
out, hosts = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
conf = {"network": {"allowedDomains": [], "deniedDomains": []},
        "resolver": {"hostsFile": hosts, "timeoutMs": 2000}}
i = 0
while i < len(args):
    a, v = args[i], args[i + 1]
    i += 2
    if a == "--allow":
        conf["network"]["allowedDomains"] = v.split()
    elif a == "--deny":
        conf["network"]["deniedDomains"] = v.split()
    elif a == "--fs":
        conf["filesystem"] = json.loads(v)
    elif a == "--net":
        conf["network"].update(json.loads(v))
    elif a == "--proxy":
        conf["proxy"] = json.loads(v)
    elif a == "--top":
        conf.update(json.loads(v))
    else:
        sys.exit("run_config: unknown option " + a)
with open(out, "w") as f:
    json.dump(conf, f, indent=1)
EOF
	chmod 644 "$CONF" "$T/hosts"
}

# sbx [pisbx-run options] -- CMD...: run in $WS with $CONF, access log
# $PX_LOG (JSON).  Output goes where the caller sends it.  With
# PISBX_RUN_WRAP set (a program and its words, such as the container
# helper: run-container.sh), pisbx-run runs under it.
sbx() {
	# shellcheck disable=SC2086
	(cd "$WS" && ${PISBX_RUN_WRAP:-} "$RUN" --config "$CONF" \
	    --access-log "$PX_LOG" "$@")
}

# sbx_sh 'SCRIPT': sbx through /bin/sh -c, stdout+stderr in $T/out.
sbx_sh() {
	sbx -- /bin/sh -c "$1" >"$T/out" 2>&1
}

# ws_snapshot / ws_same DESC: the workspace's listing before and after.
ws_snapshot() {
	(cd "$WS" && find . -printf '%p %y %s\n' | sort) >"$T/ws.before"
}
ws_same() {
	(cd "$WS" && find . -printf '%p %y %s\n' | sort) >"$T/ws.after"
	if cmp -s "$T/ws.before" "$T/ws.after"; then
		ok "$1"
	else
		not_ok "$1: $(diff "$T/ws.before" "$T/ws.after" | tr '\n' ' ')"
	fi
}

# alive PID: the process exists (and is not a zombie).
alive() {
	[ -e "/proc/$1" ] || return 1
	_st=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$_st" ] && [ "$_st" != Z ]
}

# wait_gone PID [TRIES]: until the process is gone.
wait_gone() {
	_i=0
	while alive "$1" && [ $_i -lt "${2:-100}" ]; do
		sleep 0.05; _i=$((_i + 1))
	done
	! alive "$1"
}

# rundirs: the private per-run directories of this user that exist now.
rundirs() {
	find "${TMPDIR:-/tmp}/pisbx-$(id -u)" -maxdepth 1 -name 'pisbx-run.*' \
	    2>/dev/null | sort
}

# sshd_start: an sshd on a free loopback port with a host key of its own
# in $T/ssh, no login possible (as nobody when root: privilege separation
# would want /run/sshd); sets SSHD and SSH_PORT.  Returns 1 with the
# reason on stdout when there is no sshd or it did not start.
sshd_start() {
	SSHD=/usr/sbin/sshd
	if [ ! -x "$SSHD" ] || ! command -v ssh-keygen >/dev/null; then
		echo "sshd not installed (openssh-server)"
		return 1
	fi
	mkdir -p "$T/ssh"
	ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/hostkey" >/dev/null
	SSH_PORT=$(free_port)
	cat >"$T/ssh/sshd_config" <<EOF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $T/ssh/hostkey
PidFile none
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
AuthorizedKeysFile none
EOF
	if [ "$(id -u)" -eq 0 ]; then
		chown -R 65534:65534 "$T/ssh"
		spawn setpriv --reuid=65534 --regid=65534 --clear-groups \
		    "$SSHD" -D -e -f "$T/ssh/sshd_config" 2>"$T/sshd.log"
	else
		spawn "$SSHD" -D -e -f "$T/ssh/sshd_config" 2>"$T/sshd.log"
	fi
	if ! wait_port 127.0.0.1 "$SSH_PORT" 100; then
		echo "sshd did not start: $(head -c 300 "$T/sshd.log")"
		return 1
	fi
}
