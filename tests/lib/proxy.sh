# Helpers for the proxy scenarios (tests/integration/proxy-*.sh).  Source
# after common.sh:
#   . "$PISBX_TOP/tests/lib/common.sh"
#   . "$PISBX_TOP/tests/lib/proxy.sh"
# Gives: srv_start (loopback test servers from servers.py), dns_start
# (dnsmasq on a free loopback port), hosts_file, px_config (write a config),
# px_start/px_stop/px_hup (pisbx-proxy with its port read from stderr),
# log_wait/log_count/log_field (query the JSON access log), and pxtool.
SERVERS=$PISBX_TOP/tests/lib/servers.py
PXTOOL=$PISBX_BUILD/tests/helpers/pxtool
PX_LOG=$T/access.log
DNS_PORT=
_px_all=""

[ -x "$PROXY" ] || skip "pisbx-proxy not built ($PROXY)"

# Clients must reach the proxy only as the test tells them to.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy \
    NO_PROXY no_proxy
export HOME="$T" GIT_CONFIG_NOSYSTEM=1

# srv_start KIND NAME [ARGS...]: start a servers.py server (or, for KIND
# "sink"/"fast-echo", a pxtool server); sets SRV_PORT and SRV_PID.
srv_start() {
	_kind=$1 _name=$2
	shift 2
	rm -f "$T/$_name.port"
	case $_kind in
	sink | fast-echo)
		[ -x "$PXTOOL" ] || { not_ok "pxtool not built ($PXTOOL)"; exit 1; }
		_m=$_kind
		[ "$_m" = fast-echo ] && _m="echo"
		spawn "$PXTOOL" serve --mode "$_m" --port-file "$T/$_name.port" "$@" \
		    >"$T/$_name.out" 2>"$T/$_name.err"
		;;
	*)
		spawn "$PY" "$SERVERS" "$_kind" --port-file "$T/$_name.port" "$@" \
		    >"$T/$_name.out" 2>"$T/$_name.err"
		;;
	esac
	SRV_PID=$LAST_PID
	if ! wait_file "$T/$_name.port" 200; then
		not_ok "server $_name ($_kind) did not start: $(cat "$T/$_name.err")"
		exit 1
	fi
	SRV_PORT=$(cat "$T/$_name.port")
}

# dns_start NAME=ADDR...: dnsmasq on a free loopback port answering each
# NAME (and its subdomains) with ADDR and NXDOMAIN for everything else;
# NAME=V4,V6 answers that name (only) with both addresses.  Sets DNS_PORT.
# Nothing is forwarded anywhere (--no-resolv).
dns_start() {
	_args=""
	for _m in "$@"; do
		case ${_m#*=} in
		*,*) _args="$_args --host-record=${_m%%=*},${_m#*=}" ;;
		*) _args="$_args --address=/${_m%%=*}/${_m#*=}" ;;
		esac
	done
	_try=0
	while [ $_try -lt 5 ]; do
		DNS_PORT=$($PY "$SERVERS" dnsport)
		# shellcheck disable=SC2086
		spawn dnsmasq --keep-in-foreground --no-resolv --no-hosts \
		    --bind-interfaces --listen-address=127.0.0.1 --port="$DNS_PORT" \
		    --user=root --pid-file= --log-facility=- --log-queries \
		    $_args --address=/#/ \
		    >"$T/dnsmasq.log" 2>&1
		DNS_PID=$LAST_PID
		if wait_port 127.0.0.1 "$DNS_PORT" 60; then
			return 0
		fi
		_try=$((_try + 1))
	done
	not_ok "dnsmasq did not start: $(cat "$T/dnsmasq.log")"
	exit 1
}

# hosts_file FILE "ADDR NAME"...: write a hosts file.
hosts_file() {
	_f=$1; shift
	: >"$_f"
	for _l in "$@"; do echo "$_l" >>"$_f"; done
}

# px_config FILE [--allow "A B"] [--deny "C D"] [--proxy JSON] [--hosts F]
#     [--no-dns]: write a config.  The resolver always points at the test
# dnsmasq (DNS_PORT) so that no lookup ever leaves the machine.
px_config() {
	_f=$1; shift
	"$PY" - "$_f" "$DNS_PORT" "$@" <<'EOF'
import json, sys
out, dns = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
conf = {"network": {"allowedDomains": [], "deniedDomains": []}}
res = {"timeoutMs": 2000}
if dns:
    res["servers"] = ["127.0.0.1:" + dns]
i = 0
while i < len(args):
    a = args[i]
    if a == "--no-dns":
        res.pop("servers", None)
        i += 1
        continue
    v = args[i + 1]
    i += 2
    if a == "--allow":
        conf["network"]["allowedDomains"] = v.split()
    elif a == "--deny":
        conf["network"]["deniedDomains"] = v.split()
    elif a == "--proxy":
        conf["proxy"] = json.loads(v)
    elif a == "--hosts":
        res["hostsFile"] = v
    else:
        sys.exit("px_config: unknown option " + a)
if "servers" not in res and "hostsFile" not in res:
    sys.exit("px_config: no resolver: start dns_start first")
conf["resolver"] = res
with open(out, "w") as f:
    json.dump(conf, f, indent=1)
EOF
}

# px_start CONFIG [ARGS...]: start pisbx-proxy on 127.0.0.1:0 with the
# access log in $PX_LOG; sets PX_PORT, PX_PID and PX_ERR.
px_start() {
	_conf=$1; shift
	PX_ERR=$T/proxy.err
	: >"$PX_ERR"
	spawn "$PROXY" --config "$_conf" --listen 127.0.0.1:0 \
	    --access-log "$PX_LOG" "$@" 2>"$PX_ERR"
	PX_PID=$LAST_PID
	_px_all="$_px_all $PX_PID:$PX_ERR"
	PX_PORT=
	_i=0
	while [ $_i -lt 200 ]; do
		PX_PORT=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
		    "$PX_ERR" | head -n 1)
		[ -n "$PX_PORT" ] && return 0
		kill -0 "$PX_PID" 2>/dev/null || break
		sleep 0.05; _i=$((_i + 1))
	done
	not_ok "pisbx-proxy did not start: $(cat "$PX_ERR")"
	exit 1
}

# px_done: stop every proxy px_start started (SIGTERM), each must exit 0
# without a sanitizer report; then done_testing.
px_done() {
	for _e in $_px_all; do
		_p=${_e%%:*} _f=${_e#*:}
		if ! kill -0 "$_p" 2>/dev/null; then
			wait "$_p" 2>/dev/null
			continue	# stopped by the scenario itself
		fi
		kill -TERM "$_p"
		wait "$_p"
		_rc=$?
		if [ $_rc -eq 0 ] && ! grep -q 'Sanitizer' "$_f"; then
			ok "pisbx-proxy $_p: SIGTERM, clean exit"
		else
			not_ok "pisbx-proxy $_p: exit $_rc on SIGTERM"
			grep -A 12 'Sanitizer' "$_f" | sed 's/^/# /'
		fi
	done
	done_testing
}

# px_alive: the proxy process is still running.
px_alive() { kill -0 "$PX_PID" 2>/dev/null; }

# px_stop: SIGTERM the proxy and wait for it; returns its exit status.
px_stop() {
	kill -TERM "$PX_PID" 2>/dev/null
	wait "$PX_PID"
}

# logq MODE FILE [FIELD] FILTER...: the access-log query behind log_wait,
# log_count and log_field.  A FILTER is key=value (exact, compared as
# text) or key~regex.  Bad JSON lines are reported and fail the query.
logq() {
	"$PY" - "$@" <<'EOF'
import json, re, sys, time
mode, path = sys.argv[1], sys.argv[2]
rest = sys.argv[3:]
field = None
if mode == "field":
    field, rest = rest[0], rest[1:]
filters = []
for f in rest:
    m = re.match(r"^([a-z_]+)([=~])(.*)$", f, re.S)
    if not m:
        sys.exit("logq: bad filter " + f)
    filters.append(m.groups())

def text(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)

def match(rec):
    for k, op, v in filters:
        if k not in rec:
            return False
        t = text(rec[k])
        if op == "=" and t != v:
            return False
        if op == "~" and not re.search(v, t):
            return False
    return True

def records():
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.endswith("\n"):
                    break  # a record still being written
                try:
                    out.append(json.loads(line))
                except ValueError:
                    print("access log line %d is not JSON: %r" % (n, line),
                          file=sys.stderr)
                    sys.exit(2)
    except FileNotFoundError:
        pass
    return out

deadline = time.time() + (5.0 if mode == "wait" else 0)
while True:
    got = [r for r in records() if match(r)]
    if mode == "count":
        print(len(got))
        sys.exit(0)
    if got:
        if mode == "field":
            print(text(got[-1].get(field)))
        sys.exit(0)
    if time.time() >= deadline:
        sys.exit(1)
    time.sleep(0.05)
EOF
}

# log_wait FILTER...: a record of $PX_LOG matches, waiting up to 5 s.
log_wait() { logq wait "$PX_LOG" "$@"; }
# log_count FILTER...: how many records of $PX_LOG match now.
log_count() { logq count "$PX_LOG" "$@"; }
# log_field FIELD FILTER...: FIELD of the last matching record (waits).
log_field() { logq field "$PX_LOG" "$@"; }
# log_show FILTER...: matching records, for a failure's context.
log_show() { grep -F "$1" "$PX_LOG" | sed 's/^/# /'; }

# check_log DESC FILTER...: ok when a matching record appears.
check_log() {
	_d=$1; shift
	if log_wait "$@"; then
		ok "$_d"
	else
		not_ok "$_d (no record with: $*)"
		sed 's/^/# log: /' "$PX_LOG" | tail -n 5
	fi
}

# raw PORT [--timeout S] [--no-shut] < request: send stdin to the proxy,
# print what comes back until EOF or the timeout.
raw() { "$PY" "$SERVERS" client --port "$@"; }

# socks PORT ARGS...: one SOCKS5 exchange (servers.py socks5), prints
# "reply 0xNN ..." lines.
socks() { "$PY" "$SERVERS" socks5 --port "$@"; }

# dns_asked NAME: dnsmasq was asked about NAME (needs dns_start).
dns_asked() { grep -Eq "query\[[A-Z]+\] $1 from" "$T/dnsmasq.log"; }

# px_req [--port P] TEXT: send TEXT (printf escapes interpreted) to the
# proxy, read one HTTP response; sets RESP, STATUS (the code, or "none")
# and REASON_HDR (X-Pisbx-Reason, or "").
px_req() {
	_p=${PX_PORT:-}
	if [ "$1" = --port ]; then _p=$2; shift 2; fi
	RESP=$(printf "$1" | raw "$_p" --http --timeout "${REQ_TIMEOUT:-5}" | tr -d '\r')
	STATUS=$(printf '%s\n' "$RESP" | sed -n '1s/^HTTP\/1\.[01] \([0-9][0-9][0-9]\).*/\1/p')
	[ -n "$STATUS" ] || STATUS=none
	REASON_HDR=$(printf '%s\n' "$RESP" | sed -n 's/^[Xx]-[Pp]isbx-[Rr]eason: *//p' | head -n 1)
}

# px_connect TARGET: CONNECT TARGET with a Host header; as px_req.
px_connect() {
	px_req "CONNECT $1 HTTP/1.1\r\nHost: $1\r\n\r\n"
}

# eq DESC GOT WANT: ok when the two strings are equal.
eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1 (got '$2', want '$3')"
	fi
}

# contains DESC HAYSTACK NEEDLE: ok when NEEDLE is a substring.
contains() {
	case $2 in
	*"$3"*) ok "$1" ;;
	*) not_ok "$1 ('$3' not in: $(printf '%s' "$2" | head -c 300))" ;;
	esac
}
