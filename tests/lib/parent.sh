# Upstream proxies for the parentProxy scenarios (proxy-parent.sh,
# run-parent.sh).  Source after common.sh and proxy.sh.  Gives:
#   tp_start NAME [--auth USER:PASS] [--allow "NAME..."] [--hosts FILE]
#       tinyproxy (Debian's) on 127.0.0.1 at a free port: Basic auth when
#       asked, a filter that refuses every host but the --allow ones (403),
#       and, with --hosts, that file as its /etc/hosts (a private mount
#       namespace), so it resolves names pisbx cannot.  Sets TP_PORT,
#       TP_PID, TP_LOG (its log: one "Request ..." line per request).
#   fake_parent NAME MODE: tests/lib/fakeparent.py; sets FP_PORT and
#       FP_HEADS (the request heads it got, JSON lines).
#   tp_saw LOG TEXT: the tinyproxy log has a request line with TEXT.
TINYPROXY=$(command -v tinyproxy || echo /usr/bin/tinyproxy)
[ -x "$TINYPROXY" ] || skip "tinyproxy is not installed (./bootstrap --test installs it)"
FAKEPARENT=$PISBX_TOP/tests/lib/fakeparent.py

# The way to give tinyproxy its own /etc/hosts: a mount namespace
# (as root), or one inside a user namespace; empty when neither works.
TP_MNTNS=
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	TP_MNTNS="unshare -m"
elif unshare -U -r -m true 2>/dev/null; then
	TP_MNTNS="unshare -U -r -m"
fi

tp_start() {
	_n=$1; shift
	_auth= _allow= _hosts=
	while [ $# -gt 0 ]; do
		case $1 in
		--auth) _auth=$2 ;;
		--allow) _allow=$2 ;;
		--hosts) _hosts=$2 ;;
		*) echo "tp_start: unknown option $1" >&2; exit 1 ;;
		esac
		shift 2
	done
	TP_LOG=$T/tp-$_n.log
	: >"$T/tp-$_n.filter"
	for _a in $_allow; do echo "$_a" >>"$T/tp-$_n.filter"; done
	_try=0
	while [ $_try -lt 5 ]; do
		TP_PORT=$(free_port)
		{
			echo "Port $TP_PORT"
			echo "Listen 127.0.0.1"
			echo "Timeout 20"
			echo "MaxClients 50"
			echo "LogLevel Info"
			echo "Filter \"$T/tp-$_n.filter\""
			echo "FilterType fnmatch"
			echo "FilterDefaultDeny Yes"
			if [ -n "$_auth" ]; then
				echo "BasicAuth ${_auth%%:*} ${_auth#*:}"
			fi
		} >"$T/tp-$_n.conf"
		: >"$TP_LOG"
		if [ -n "$_hosts" ]; then
			[ -n "$TP_MNTNS" ] || skip "no mount namespace for tinyproxy's hosts file"
			# shellcheck disable=SC2086
			spawn $TP_MNTNS sh -c 'mount --bind "$1" /etc/hosts &&
			    exec "$2" -d -c "$3"' sh "$_hosts" "$TINYPROXY" \
			    "$T/tp-$_n.conf" >>"$TP_LOG" 2>&1
		else
			spawn "$TINYPROXY" -d -c "$T/tp-$_n.conf" >>"$TP_LOG" 2>&1
		fi
		TP_PID=$LAST_PID
		if wait_port 127.0.0.1 "$TP_PORT" 100; then
			return 0
		fi
		kill "$TP_PID" 2>/dev/null
		_try=$((_try + 1))
	done
	not_ok "tinyproxy did not start: $(tail -n 5 "$TP_LOG")"
	exit 1
}

fake_parent() {
	FP_HEADS=$T/fp-$1.heads
	: >"$FP_HEADS"
	rm -f "$T/fp-$1.port"
	spawn "$PY" "$FAKEPARENT" --port-file "$T/fp-$1.port" \
	    --heads "$FP_HEADS" "$2" >"$T/fp-$1.err" 2>&1
	if ! wait_file "$T/fp-$1.port" 200; then
		not_ok "fake parent $1 did not start: $(cat "$T/fp-$1.err")"
		exit 1
	fi
	FP_PORT=$(cat "$T/fp-$1.port")
}

tp_saw() { grep -F "Request (file descriptor" "$1" | grep -qF -- "$2"; }

# parent_config FILE --allow "A B" [--deny "C"] [--parent JSON]
#     [--proxy JSON]: a pisbx-proxy config whose resolver is the test
# dnsmasq (DNS_PORT: names pisbx may resolve; its log tells which it
# asked) and whose network.parentProxy is JSON.
parent_config() {
	"$PY" - "$@" "$DNS_PORT" <<'PYEOF'
import json, sys
out, args, dns = sys.argv[1], sys.argv[2:-1], sys.argv[-1]
conf = {"network": {"allowedDomains": [], "deniedDomains": []},
        "resolver": {"servers": ["127.0.0.1:" + dns], "timeoutMs": 2000}}
for a, v in zip(args[0::2], args[1::2]):
    if a == "--allow":
        conf["network"]["allowedDomains"] = v.split()
    elif a == "--deny":
        conf["network"]["deniedDomains"] = v.split()
    elif a == "--parent":
        conf["network"]["parentProxy"] = json.loads(v)
    elif a == "--proxy":
        conf["proxy"] = json.loads(v)
    else:
        sys.exit("parent_config: unknown option " + a)
with open(out, "w") as f:
    json.dump(conf, f, indent=1)
PYEOF
}
