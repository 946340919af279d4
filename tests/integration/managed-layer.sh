#!/bin/sh
# The managed layer, /etc/pisbx/managed.json: a user config that tries to
# loosen it in every way is refused, each loosening named with both files
# and the key; an allow entry cannot open a managed deny and a reviewer
# cannot open what lies outside the managed ceiling (real curl inside
# pisbx-run gets 403, the access log names the managed file and layer);
# a relative allow entry into a managed denied path is refused once the
# project is known; SIGHUP reloads go through the managed file too; a
# managed file that cannot be trusted or parsed refuses every run;
# pisbx-run --check -v / --explain print the merged policy and the
# deciding rule with file and layer; a supervisor is refused when the
# managed file keeps reviews from it; a --control-fd line is held to
# the managed file like any config.
#
# The managed path is fixed, so the scenario runs as root in a private
# mount (and network) namespace with an overlay over /etc: what it writes
# to /etc/pisbx lands in a temporary directory, never in the machine's
# /etc.
PISBX_TOP=${PISBX_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
export PISBX_TOP
if [ "${PISBX_IN_MANAGED_NS:-}" != 1 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "skip: a root-owned /etc/pisbx/managed.json can only be" \
		    "staged as root (an overlay over /etc in a private mount" \
		    "namespace)"
		exit 77
	fi
	if ! unshare -m -n true 2>/dev/null; then
		echo "skip: cannot create a mount and network namespace" \
		    "(unshare -m -n)"
		exit 77
	fi
	_d=$(mktemp -d "${TMPDIR:-/tmp}/pisbx-etc.XXXXXX") || exit 1
	mkdir "$_d/up" "$_d/work"
	PISBX_IN_MANAGED_NS=1 PISBX_ETC_OVERLAY=$_d unshare -m -n sh "$0" "$@"
	_rc=$?
	rm -rf "$_d"
	exit $_rc
fi
if ! mount -t overlay overlay -o "lowerdir=/etc,upperdir=$PISBX_ETC_OVERLAY/up,workdir=$PISBX_ETC_OVERLAY/work" /etc 2>/dev/null; then
	echo "skip: cannot mount an overlay over /etc in a private mount namespace"
	exit 77
fi
ip link set lo up || exit 1

. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/review.sh"
. "$PISBX_TOP/tests/lib/super.sh"

MF=/etc/pisbx/managed.json
mkdir -m 755 /etc/pisbx

# managed JSON: write the managed file, root's, mode 644.
managed() {
	printf '%s\n' "$1" >"$MF.tmp" && chmod 644 "$MF.tmp" &&
	    mv "$MF.tmp" "$MF"
}
M_BASE='{"network": {"deniedDomains": ["secret.app.corp.test", "*:22"],
  "allowedDomainsCeiling": ["*.corp.test", "github.com"],
  "allowAllUnixSockets": false},
 "filesystem": {"denyRead": ["~/.ssh"], "denyWrite": ["'"$WS"'/locked"],
  "allowGitConfig": false},
 "review": {"modes": ["command"], "timeoutMs": 5000},
 "proxy": {"maxConnections": 50, "idleTimeoutMs": 60000},
 "hostIPC": {"mode": "off"}, "allowNestedUserNamespaces": false,
 "requireNamespaces": true}'
managed "$M_BASE"
mkdir -p "$WS/locked"

# --- A user config that loosens every rule: refused, each named. -------
U=$T/xdg/pisbx/config.json
mkdir -p "$T/xdg/pisbx"
cat >"$U" <<EOF
{"network": {"allowedDomains": ["secret.app.corp.test", "x.corp.test:22",
   "example.org", "ok.corp.test"], "allowAllUnixSockets": true},
 "filesystem": {"allowRead": ["~/.ssh/id_test"],
   "allowWrite": ["$WS/locked/sub"], "allowGitConfig": true},
 "review": {"mode": "tty", "timeoutMs": 20000},
 "proxy": {"maxConnections": 5000},
 "hostIPC": {"mode": "ask"}, "allowNestedUserNamespaces": true,
 "requireNamespaces": false}
EOF
(cd "$WS" && XDG_CONFIG_HOME=$T/xdg "$RUN" -- touch "$WS/ran") \
    >"$T/a.out" 2>"$T/a.err"
eq "loosening user config: pisbx-run exits 78" "$?" 78
check "... and the command did not run" test ! -e "$WS/ran"
# refused JPATH TEXT: one error line for the user file at JPATH that
# names TEXT and the managed file.
refused() {
	if grep -F "$U: $1: " "$T/a.err" | grep -F -- "$2" |
	    grep -Fq "$MF"; then
		ok "refused with both files named: $1 ($2)"
	else
		not_ok "refused with both files named: $1 ($2)"
		sed 's/^/# /' "$T/a.err"
	fi
}
refused '$.network.allowedDomains[0]' '"secret.app.corp.test" is refused by "secret.app.corp.test" in $.network.deniedDomains'
refused '$.network.allowedDomains[1]' '"x.corp.test:22" is refused by "*:22"'
refused '$.network.allowedDomains[2]' '"example.org" is outside $.network.allowedDomainsCeiling'
refused '$.network.allowAllUnixSockets' 'forbidden by $.network.allowAllUnixSockets false'
refused '$.filesystem.allowGitConfig' 'forbidden by $.filesystem.allowGitConfig false'
refused '$.allowNestedUserNamespaces' 'forbidden by $.allowNestedUserNamespaces false'
refused '$.hostIPC.mode' '"ask" is forbidden by $.hostIPC.mode "off"'
refused '$.review' 'reviews by tty are not allowed by $.review.modes'
refused '$.requireNamespaces' 'false is forbidden by $.requireNamespaces true'
refused '$.review.timeoutMs' '20000 is above 5000'
refused '$.proxy.maxConnections' '5000 is above 50'
refused '$.filesystem.allowRead' '"~/.ssh/id_test" would open "~/.ssh" of $.filesystem.denyRead'
refused '$.filesystem.allowWrite' "\"$WS/locked/sub\" would open \"$WS/locked\" of \$.filesystem.denyWrite"
eq "... 13 errors, no other" "$(grep -c "^pisbx-run: $U: " "$T/a.err")" 13
eq "... ok.corp.test, inside the ceiling, is not named" \
    "$(grep -c 'ok.corp.test' "$T/a.err")" 0
"$PROXY" --config "$U" --check >/dev/null 2>"$T/a.px"
eq "the same config: pisbx-proxy --check exits 78" "$?" 78
eq "... with the same 13 errors" "$(grep -c "^$U: .*$MF" "$T/a.px")" 13

# --- A relative entry into a managed denied path: refused at the run. --
run_config --fs '{"allowRead": ["../home/.ssh/id_test"]}'
"$RUN" --config "$CONF" --check >/dev/null 2>&1
eq "relative allowRead: --check cannot place it (exit 0)" "$?" 0
sbx -- touch "$WS/ran" >"$T/b.out" 2>"$T/b.err"
eq "relative allowRead into ~/.ssh: the run exits 78" "$?" 78
check "... and the command did not run" test ! -e "$WS/ran"
contains "... both files and the key named" "$(cat "$T/b.err")" \
    "$CONF: \$.filesystem.allowRead: \"../home/.ssh/id_test\" would open \"~/.ssh\" of \$.filesystem.denyRead in the managed file $MF"

# --- ".." after a symbolic link goes where the kernel goes. ----------
# hop -> ~/sub/dir: "hop/../../.ssh/id_test" is ~/.ssh/id_test to the
# kernel (and to the plan), though lexically it is $T/.ssh/id_test.
mkdir -p "$FAKEHOME/.ssh" "$FAKEHOME/sub/dir"
echo KEY >"$FAKEHOME/.ssh/id_test"
ln -s "$FAKEHOME/sub/dir" "$WS/hop"
run_config --fs "{\"allowRead\": [\"$WS/hop/../../.ssh/id_test\"]}"
sbx -- cat "$FAKEHOME/.ssh/id_test" >"$T/h.out" 2>"$T/h.err"
eq "allowRead through a link and ..: the run exits 78" "$?" 78
check "... and the key was not read" test ! -s "$T/h.out"
contains "... named as opening ~/.ssh" "$(cat "$T/h.err")" \
    "\"$WS/hop/../../.ssh/id_test\" would open \"~/.ssh\" of \$.filesystem.denyRead in the managed file $MF"
run_config --fs '{"allowRead": ["hop/../../.ssh"]}'
sbx -- cat "$FAKEHOME/.ssh/id_test" >"$T/h.out" 2>"$T/h.err"
eq "relative allowRead through a link and ..: the run exits 78" "$?" 78
check "... and the key was not read" test ! -s "$T/h.out"
rm -f "$WS/hop" "$FAKEHOME/.ssh/id_test"

# --- Decisions inside pisbx-run: the managed deny, the ceiling. -------
srv_start http web
P=$SRV_PORT
HOSTS_NAMES="ok.corp.test secret.app.corp.test"
run_config --allow "ok.corp.test:$P *.app.corp.test" \
    --top "{\"review\": {\"command\": [\"$FIX/by-host.sh\", \"$T/rv\"]}}"
mkdir "$T/rv"
: >"$PX_LOG"
sbx -- /bin/sh -c '
for u in http://ok.corp.test:'"$P"'/ http://secret.app.corp.test:'"$P"'/ \
    http://allow.example.org/ http://allow.corp.test/; do
	curl -s -o /dev/null -w "%{http_code}\n" --max-time 20 "$u"
done' >"$T/c.out" 2>"$T/c.err"
eq "pisbx-run: exit 0" "$?" 0
eq "curl: ok 200, the managed deny 403 despite *.app.corp.test, outside the ceiling 403, a reviewed name inside it passes the policy (no DNS: 502)" \
    "$(tr '\n' ' ' <"$T/c.out")" "200 403 403 502 "
check_log "the allow names the run layer's entry" event=decision \
    host=ok.corp.test reason="allow-list:ok.corp.test:$P" \
    "source=$CONF: \$.network.allowedDomains[0]" layer=run
check_log "the managed deny names the managed file and layer" \
    event=decision host=secret.app.corp.test \
    reason=deny-list:secret.app.corp.test \
    "source=$MF: \$.network.deniedDomains[0]" layer=managed
check_log "outside the ceiling: managed-ceiling, the managed layer" \
    event=decision host=allow.example.org reason=managed-ceiling \
    "source=$MF: \$.network.allowedDomainsCeiling" layer=managed
check_log "inside the ceiling, unlisted: past the policy (DNS fails next)" \
    event=decision host=allow.corp.test reason=dns-error
eq "the reviewer was asked about allow.corp.test only" \
    "$(sed -n 's/.*"hostname":"\([^"]*\)".*/\1/p' "$T/rv/requests")" \
    allow.corp.test

"$PROXY" --config "$CONF" --replay "$PX_LOG" --replay-format json \
    >"$T/rp.out" 2>"$T/rp.err"
eq "the run's log replayed under the same layers: exit 0" "$?" 0
contains "... every record readable (managed-ceiling, source, layer)" \
    "$(tail -n 1 "$T/rp.out")" '"changed":0,"not_itemised":0,"close_records":4,"unreadable":0}'

# --- --control-fd lines are the run layer, under the managed file. -----
mkfifo "$T/ctl"
cat >"$WS/wait.sh" <<EOF
i=0
while [ ! -e go ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done
curl -s -o /dev/null -w "%{http_code}" --max-time 20 \\
    http://secret.app.corp.test:$P/
EOF
(cd "$WS" && exec "$RUN" --config "$CONF" --access-log "$PX_LOG" \
    --control-fd 3 -- /bin/sh wait.sh 3<"$T/ctl") >"$T/cf.out" \
    2>"$T/cf.err" &
CF_PID=$!
_pids="$_pids $CF_PID"
exec 4<>"$T/ctl"
printf '%s\n' "{\"network\": {\"allowedDomains\": [\"secret.app.corp.test\"]}, \"resolver\": {\"hostsFile\": \"$T/hosts\"}}" >&4
printf '%s\n' "{\"network\": {\"allowedDomains\": [\"example.org\"]}, \"resolver\": {\"hostsFile\": \"$T/hosts\"}}" >&4
_i=0
while [ $_i -lt 200 ] && ! grep -q 'line 2: refused' "$T/cf.err"; do
	sleep 0.05; _i=$((_i + 1))
done
: >"$WS/go"
wait "$CF_PID"
exec 4>&-
eq "--control-fd: the command still meets the managed deny (403)" \
    "$(cat "$T/cf.out")" 403
contains "--control-fd line opening a managed deny: refused, both named" \
    "$(cat "$T/cf.err")" \
    "--control-fd 3, line 1: \$.network.allowedDomains[0]: \"secret.app.corp.test\" is refused by \"secret.app.corp.test\" in \$.network.deniedDomains of the managed file $MF"
contains "--control-fd line beyond the ceiling: refused, both named" \
    "$(cat "$T/cf.err")" \
    "--control-fd 3, line 2: \$.network.allowedDomains[0]: \"example.org\" is outside \$.network.allowedDomainsCeiling of the managed file $MF"
rm -f "$WS/go" "$WS/wait.sh"

# --- A working directory in a managed denied path: nothing runs. ------
mkdir -p "$WS/locked/proj" "$FAKEHOME/.ssh/proj"
cp "$CONF" "$T/conf.keep"
run_config
(cd "$WS/locked/proj" && "$RUN" --config "$CONF" -- touch ran) \
    >/dev/null 2>"$T/wd.err"
eq "cwd in a managed denyWrite path (the workspace would be writable): exit 78" "$?" 78
check "... nothing written" test ! -e "$WS/locked/proj/ran"
contains "... says why" "$(cat "$T/wd.err")" \
    "the working directory $WS/locked/proj (or its workspace) lies in a path the managed file $MF denies"
(cd "$FAKEHOME/.ssh/proj" && "$RUN" --config "$CONF" -- true) \
    >/dev/null 2>"$T/wd.err"
eq "cwd in a managed denyRead path (always readable): exit 78" "$?" 78
cp "$T/conf.keep" "$CONF"

# --- A toolchain pisbx-run would re-expose stays under a managed deny. --
mkdir -p "$FAKEHOME/.cargo/bin"
echo TOOL >"$FAKEHOME/.cargo/bin/tool"
chmod -R a+rX "$FAKEHOME/.cargo"
managed "$(echo "$M_BASE" | sed 's|"denyRead": \["~/.ssh"\]|"denyRead": ["~/.ssh", "~/.cargo"]|')"
sbx -- cat "$FAKEHOME/.cargo/bin/tool" >"$T/tc.out" 2>/dev/null
check "managed denyRead ~/.cargo: the cargo toolchain is not re-exposed" \
    test "$(cat "$T/tc.out")" != TOOL
managed "$M_BASE"
sbx -- cat "$FAKEHOME/.cargo/bin/tool" >"$T/tc.out" 2>/dev/null
eq "... without that entry it is (the toolchain default)" \
    "$(cat "$T/tc.out")" TOOL

# --- --check -v and --explain of pisbx-run. ----------------------------
out=$("$RUN" --config "$CONF" --check -v 2>/dev/null); rc=$?
eq "pisbx-run --check -v: exit 0" "$rc" 0
for line in "$CONF: configuration OK" \
    "deny secret.app.corp.test from $MF: \$.network.deniedDomains[0] (managed)" \
    "deny *:22 from $MF: \$.network.deniedDomains[1] (managed)" \
    "allow ok.corp.test:$P from $CONF: \$.network.allowedDomains[0] (run)" \
    "ceiling *.corp.test from $MF: \$.network.allowedDomainsCeiling[0] (managed)" \
    "denyRead ~/.ssh from $MF: \$.filesystem.denyRead (managed)" \
    "denyWrite $WS/locked from $MF: \$.filesystem.denyWrite (managed)" \
    "limit proxy.maxConnections at most 50 from $MF: \$.proxy.maxConnections (managed)" \
    "review.modes command from $MF: \$.review.modes (managed)" \
    "require requireNamespaces from $MF: \$.requireNamespaces (managed)" \
    "forbid hostIPC.mode ask from $MF: \$.hostIPC.mode (managed)"; do
	contains "--check -v lists: $line" "$out" "$line"
done
out=$("$RUN" --config "$CONF" --explain secret.app.corp.test --explain \
    example.org:80)
eq "pisbx-run --explain: the rule, its file and layer" "$out" \
"{\"host\":\"secret.app.corp.test\",\"port\":443,\"decision\":\"deny\",\"reason\":\"deny-list:secret.app.corp.test\",\"hint\":\"\\\"secret.app.corp.test\\\" in network.deniedDomains of the managed file $MF refuses it, whatever any config or reviewer says: ask its administrator\",\"source\":\"$MF: \$.network.deniedDomains[0]\",\"layer\":\"managed\"}
{\"host\":\"example.org\",\"port\":80,\"decision\":\"deny\",\"reason\":\"managed-ceiling\",\"hint\":\"it lies outside network.allowedDomainsCeiling of the managed file $MF, which no config or reviewer can widen: ask its administrator\",\"source\":\"$MF: \$.network.allowedDomainsCeiling\",\"layer\":\"managed\"}"
eq "pisbx-proxy --explain: the same line" \
    "$("$PROXY" --config "$CONF" --explain secret.app.corp.test)" \
    "$(echo "$out" | head -n 1)"
"$RUN" --check -- true >/dev/null 2>&1
eq "pisbx-run --check with a command: usage error" "$?" 2

# --- Managed request rules: first, tighten-only, named. --------------
# api.corp.test (inside the ceiling) behind TLS termination the managed
# file turns on: its managed rules refuse POST /admin/**, and refuse
# what they do not allow; the run's rules only add to them.
. "$PISBX_TOP/tests/lib/tlsca.sh"
cp "$CONF" "$T/conf.rr"
cp "$T/hosts" "$T/hosts.rr"
if command -v openssl >/dev/null 2>&1 &&
    [ -f "$PISBX_BINDIR/pisbx-tls.so" ]; then
TLSCA=$T/ca
tlsca_make "$TLSCA" && tlsca_leaf "$TLSCA" api.corp.test ||
    { not_ok "the test CA"; exit 1; }
chmod -R a+rX "$TLSCA"
tls_start echo api api.corp.test
AP=$SRV_PORT
M_RULES=$(echo "$M_BASE" | sed 's|"allowAllUnixSockets": false}|"allowAllUnixSockets": false, "tlsTerminate": {"extraCaCertPaths": ["'"$TLSCA"'/ca.pem"]}, "requestRules": [{"host": "api.corp.test", "deny": ["POST /admin/**"], "allow": ["GET /**", "POST /admin/**"], "unmatched": "deny"}]}|')
managed "$M_RULES"
HOSTS_NAMES="api.corp.test"
# The run's rules: an allow of what the managed file denies and of a
# method it leaves unmatched, and a deny of its own.
run_config --allow "api.corp.test:$AP" --net '{"requestRules": [
  {"host": "api.corp.test", "allow": ["POST /admin/**", "PUT /**"],
   "deny": ["GET /private/**"]}]}'
: >"$PX_LOG"
sbx -- /bin/sh -c 'for r in "GET /ok" "POST /admin/x" "PUT /doc" \
    "GET /private/k"; do
	curl -s -o /dev/null -w "%{http_code}\n" --max-time 20 \
	    -X "${r%% *}" "https://api.corp.test:'"$AP"'${r#* }"
done' >"$T/rr.out" 2>"$T/rr.err"
eq "managed rules: pisbx-run exit 0 (no tlsTerminate of the run's own)" "$?" 0
eq "GET /ok 200; the managed deny over the run's allow 403; PUT, unmatched by the managed entry, 403; the run's own deny 403" \
    "$(tr '\n' ' ' <"$T/rr.out")" "200 403 403 403 "
check_log "the managed deny: source the managed file, layer managed" \
    event=request method=POST path=/admin/x status=403 reason=request-rule \
    "rule=POST /admin/**" "source=$MF: \$.network.requestRules[0].deny[0]" \
    layer=managed
check_log "the managed unmatched deny: its entry, layer managed" \
    event=request method=PUT path=/doc status=403 reason=request-rule \
    rule=unmatched "source=$MF: \$.network.requestRules[0]" layer=managed
check_log "the run's deny: its own file, layer run" \
    event=request method=GET path=/private/k status=403 \
    "source=$CONF: \$.network.requestRules[0].deny[0]" layer=run
check "POST /admin/x never reached the server" \
    sh -c "! grep -q '/admin/x' '$T/api.reqs'"
out=$("$RUN" --config "$CONF" --check -v 2>/dev/null)
for line in \
    "tlsTerminate from $MF: \$.network.tlsTerminate (managed)" \
    "requestRules api.corp.test deny POST /admin/** from $MF: \$.network.requestRules[0].deny[0] (managed)" \
    "requestRules api.corp.test unmatched deny from $MF: \$.network.requestRules[0] (managed)" \
    "requestRules api.corp.test deny GET /private/** from $CONF: \$.network.requestRules[0].deny[0] (run)"; do
	contains "--check -v lists: $line" "$out" "$line"
done
# The managed rules come first.
eq "--check -v: the managed rule before the run's" \
    "$(echo "$out" | grep '^requestRules' | head -n 1)" \
    "requestRules api.corp.test deny POST /admin/** from $MF: \$.network.requestRules[0].deny[0] (managed)"

# A recipe by name in the managed file: named through the managed item.
managed "$(echo "$M_BASE" | sed 's|"allowAllUnixSockets": false}|"allowAllUnixSockets": false, "tlsTerminate": {}, "requestRules": ["git-readonly"]}|')"
run_config --allow "github.com"
out=$("$RUN" --config "$CONF" --check -v 2>&1)
contains "a managed recipe by name: --check -v names the managed item and the recipe" \
    "$out" "requestRules github.com deny POST /**/git-receive-pack from $MF: \$.network.requestRules[0], recipe "

# The run cannot exclude a managed rule host, nor sign with another CA.
managed "$M_RULES"
run_config --allow "api.corp.test:$AP" --net '{"tlsTerminate":
  {"excludeDomains": ["*.corp.test"], "caCertPath": "'"$TLSCA"'/ca.pem",
   "caKeyPath": "'"$TLSCA"'/ca.key"}}'
sbx -- true >/dev/null 2>"$T/rx.err"
eq "excludeDomains over a managed rule host: exit 78" "$?" 78
contains "... names the entry, both files and the managed rule" \
    "$(cat "$T/rx.err")" \
    "$CONF: \$.network.tlsTerminate.excludeDomains[0]: \"*.corp.test\" excludes api.corp.test, which request rules of the managed file $MF (managed layer) name ($MF: \$.network.requestRules[0])"
run_config --allow "api.corp.test:$AP" --net '{"tlsTerminate":
  {"excludeDomains": ["other.corp.test"]}}'
sbx -- true >/dev/null 2>"$T/rx.err"
eq "excludeDomains of another host: the run goes ahead" "$?" 0
# An address excluded: the server at it may serve the rules host.
run_config --allow "api.corp.test:$AP" --net '{"tlsTerminate":
  {"excludeDomains": ["127.0.0.1"]}}'
sbx -- true >/dev/null 2>"$T/rx.err"
eq "excludeDomains of an address under managed rules: exit 78" "$?" 78
contains "... names the entry and says why" "$(cat "$T/rx.err")" \
    "$CONF: \$.network.tlsTerminate.excludeDomains[0]: \"127.0.0.1\" is an address: while the managed file $MF has request rules, no address may be excluded"
managed "$(echo "$M_RULES" | sed 's|"tlsTerminate": {|"tlsTerminate": {"caCertPath": "'"$TLSCA"'/ca.pem", "caKeyPath": "'"$TLSCA"'/ca.key", |')"
run_config --allow "api.corp.test:$AP" --net '{"tlsTerminate":
  {"caCertPath": "'"$TLSCA"'/api.corp.test.pem",
   "caKeyPath": "'"$TLSCA"'/api.corp.test.key"}}'
sbx -- true >/dev/null 2>"$T/rx.err"
eq "another CA than the managed one: exit 78" "$?" 78
contains "... names both" "$(cat "$T/rx.err")" \
    "$CONF: \$.network.tlsTerminate.caCertPath: $TLSCA/api.corp.test.pem is not the CA of $MF: \$.network.tlsTerminate (managed layer)"

# --control-fd: a line without rules keeps the managed ones.
managed "$M_RULES"
run_config --allow "api.corp.test:$AP"
cat >"$WS/wait.sh" <<EOF
i=0
while [ ! -e go ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done
curl -s -o /dev/null -w "%{http_code}" --max-time 20 -X POST \\
    https://api.corp.test:$AP/admin/y
EOF
rm -f "$T/ctl"
mkfifo "$T/ctl"
(cd "$WS" && exec "$RUN" --config "$CONF" --access-log "$PX_LOG" \
    --control-fd 3 -- /bin/sh wait.sh 3<"$T/ctl") >"$T/rf.out" \
    2>"$T/rf.err" &
CF_PID=$!
_pids="$_pids $CF_PID"
exec 4<>"$T/ctl"
printf '%s\n' "{\"network\": {\"allowedDomains\": [\"api.corp.test:$AP\", \"x.corp.test\"]}, \"resolver\": {\"hostsFile\": \"$T/hosts\"}}" >&4
_i=0
while [ $_i -lt 200 ] && ! grep -q 'line 1' "$T/rf.err"; do
	sleep 0.05; _i=$((_i + 1))
done
: >"$WS/go"
wait "$CF_PID"
exec 4>&-
eq "--control-fd line without rules: the managed deny still 403" \
    "$(cat "$T/rf.out")" 403
rm -f "$WS/go" "$WS/wait.sh"
kill "$SRV_PID" 2>/dev/null
fi

# A managed file that excludes, or holds credentials: refused by name.
for m in '"tlsTerminate": {"excludeDomains": ["a.corp.test"]}|$.network.tlsTerminate.excludeDomains: not a managed key' \
    '"requestRules": [{"host": "a.corp.test", "deny": ["* /**"]}]|$.network.requestRules[0]: request rules for a.corp.test need network.tlsTerminate'; do
	managed "{\"network\": {${m%%|*}}}"
	sbx -- true >/dev/null 2>"$T/mx.err"
	eq "managed ${m%%:*}...: every run refused (78)" "$?" 78
	contains "... says why, in the managed file" "$(cat "$T/mx.err")" \
	    "$MF: ${m#*|}"
done
managed '{"credentials": {"envVars": [{"name": "X", "mode": "deny"}]}}'
sbx -- true >/dev/null 2>"$T/mx.err"
eq "managed credentials: every run refused (78)" "$?" 78
contains "... named, not an unknown key" "$(cat "$T/mx.err")" \
    "$MF: \$.credentials: not a managed key yet"
managed "$M_BASE"
HOSTS_NAMES="ok.corp.test secret.app.corp.test"
cp "$T/conf.rr" "$CONF"
cp "$T/hosts.rr" "$T/hosts"

# --- A supervisor when the managed file keeps reviews from it. --------
(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock \
    PISBX_SUPERVISOR_CAPABILITY=0123456789abcdef0123456789abcdef \
    "$RUN" --config "$CONF" -- touch "$WS/ran") >/dev/null 2>"$T/s.err"
eq "supervisor mode, review.modes without supervisor: exit 1" "$?" 1
check "... and the command did not run" test ! -e "$WS/ran"
contains "... says why" "$(cat "$T/s.err")" \
    "reviews by supervisor are not allowed by \$.review.modes of the managed file $MF"

# --- A supervisor's policy is the run layer, under the managed file. --
managed "$(echo "$M_BASE" | sed 's/"modes": \["command"\]/"modes": ["command", "supervisor"]/')"
ssrun() {
	(cd "$WS" && PISBX_SUPERVISOR_SOCKET=$T/sup.sock \
	    PISBX_SUPERVISOR_CAPABILITY=$CAP PISBX_SUPERVISOR_TIMEOUT_MS=3000 \
	    "$RUN" --config "$CONF" --access-log "$PX_LOG" "$@")
}
tsup --network "{\"allowedDomains\":[\"ok.corp.test:$P\",\"*.app.corp.test\"],\"deniedDomains\":[]}"
: >"$PX_LOG"
ssrun -- /bin/sh -c '
for u in http://ok.corp.test:'"$P"'/ http://secret.app.corp.test:'"$P"'/; do
	curl -s -o /dev/null -w "%{http_code}\n" --max-time 20 "$u"
done' >"$T/sv.out" 2>"$T/sv.err"
eq "supervisor's policy: ok 200, the managed deny 403" \
    "$(tr '\n' ' ' <"$T/sv.out")" "200 403 "
check_log "... the supervisor's entry is the run layer" event=decision \
    host=ok.corp.test "source=supervisor registration reply: \$.network.allowedDomains[0]" \
    layer=run
check_log "... the managed deny holds over it" event=decision \
    host=secret.app.corp.test "source=$MF: \$.network.deniedDomains[0]" \
    layer=managed
tsup --network "{\"allowedDomains\":[\"ok.corp.test:$P\",\"example.org\"],\"deniedDomains\":[]}"
: >"$PX_LOG"
ssrun -- curl -s -o /dev/null -w "%{http_code}" --max-time 20 \
    "http://ok.corp.test:$P/" >"$T/sv.out" 2>"$T/sv.err"
eq "a supervisor's policy beyond the ceiling: every destination denied" \
    "$(cat "$T/sv.out")" 403
contains "... and said, naming the managed file" "$(cat "$T/sv.err")" \
    "\"example.org\" is outside \$.network.allowedDomainsCeiling of the managed file $MF"
stop_tsup
managed "$M_BASE"

# --- Reload (SIGHUP): the managed file is read again, and holds. ------
hosts_file "$T/hosts" "127.0.0.1 ok.corp.test" \
    "127.0.0.1 secret.app.corp.test" "127.0.0.1 other.app.corp.test"
cat >"$T/px.json" <<EOF
{"network": {"allowedDomains": ["ok.corp.test:$P", "*.app.corp.test"]},
 "resolver": {"hostsFile": "$T/hosts"}}
EOF
PX_LOG=$T/px.log
px_start "$T/px.json"
code() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 20 \
	    -x "http://127.0.0.1:$PX_PORT" "$1"
}
eq "standalone: ok.corp.test 200" "$(code "http://ok.corp.test:$P/")" 200
eq "standalone: secret.app.corp.test 403" \
    "$(code "http://secret.app.corp.test:$P/")" 403
check_log "... by the managed deny" event=decision \
    host=secret.app.corp.test "source=$MF: \$.network.deniedDomains[0]" \
    layer=managed
eq "standalone: other.app.corp.test 403" \
    "$(code "http://other.app.corp.test:$P/")" 403
check_log "... allowed by the policy, refused as a loopback address" \
    event=decision host=other.app.corp.test reason=non-public-address \
    layer=run
managed "$(echo "$M_BASE" | sed 's/"secret.app.corp.test"/"secret.app.corp.test", "other.app.corp.test"/')"
kill -HUP "$PX_PID"
sleep 0.5
eq "SIGHUP after a new managed deny: other.app.corp.test 403" \
    "$(code "http://other.app.corp.test:$P/")" 403
check_log "... by the new managed entry" event=decision \
    host=other.app.corp.test reason=deny-list:other.app.corp.test \
    "source=$MF: \$.network.deniedDomains[1]" layer=managed
cat >"$T/px.json" <<EOF
{"network": {"allowedDomains": ["ok.corp.test:$P", "secret.app.corp.test"]},
 "resolver": {"hostsFile": "$T/hosts"}}
EOF
kill -HUP "$PX_PID"
sleep 0.5
contains "SIGHUP with a config that loosens it: refused, old kept" \
    "$(cat "$PX_ERR")" \
    "\$.network.allowedDomains[1]: \"secret.app.corp.test\" is refused by \"secret.app.corp.test\" in \$.network.deniedDomains of the managed file $MF"
eq "... secret.app.corp.test still 403" \
    "$(code "http://secret.app.corp.test:$P/")" 403
chmod 664 "$MF"
kill -HUP "$PX_PID"
sleep 0.5
contains "SIGHUP with a group-writable managed file: refused, old kept" \
    "$(cat "$PX_ERR")" "$MF is writable by its group (mode 0664)"
eq "... ok.corp.test still 200" "$(code "http://ok.corp.test:$P/")" 200
px_stop >/dev/null

# --- A managed file that cannot be trusted or read refuses every run. -
run_config --allow "ok.corp.test:$P"
# bad DESC TEXT SETUP...: after SETUP, pisbx-run and pisbx-proxy --check
# refuse (78), the command does not run, stderr says TEXT.
bad() {
	_desc=$1 _text=$2
	shift 2
	managed "$M_BASE"
	chmod 755 /etc/pisbx
	"$@"
	sbx -- touch "$WS/ran" >/dev/null 2>"$T/e.err"
	eq "$_desc: pisbx-run exits 78" "$?" 78
	check "... the command did not run" test ! -e "$WS/ran"
	contains "... says what to change" "$(cat "$T/e.err")" "$_text"
	"$PROXY" --config "$CONF" --check >/dev/null 2>&1
	eq "... pisbx-proxy --check exits 78" "$?" 78
}
bad "unparseable" "$MF: line 1, column 3: invalid JSON" \
    eval 'echo "{ x" >"$MF"'
bad "an unknown key" "$MF: \$.network.allowedDomains: unknown key" \
    eval 'echo "{\"network\": {\"allowedDomains\": [\"a.test\"]}}" >"$MF"'
bad "a relative denied path" "$MF: \$.filesystem.denyRead[0]: \"secrets\": a managed path is absolute" \
    eval 'echo "{\"filesystem\": {\"denyRead\": [\"secrets\"]}}" >"$MF"'
bad "not root's" "$MF belongs to uid 65534, not root" chown 65534 "$MF"
bad "group-writable" "$MF is writable by its group (mode 0664)" \
    chmod 664 "$MF"
bad "writable by others" "$MF is writable by others (mode 0646)" \
    chmod 646 "$MF"
bad "its directory group-writable" "/etc/pisbx is writable by its group (mode 0775)" \
    chmod 775 /etc/pisbx
bad "a symbolic link" "(a symbolic link: the managed file must be a regular file)" \
    eval 'cp "$MF" /etc/pisbx/real.json && ln -sf real.json "$MF"'
rm -f /etc/pisbx/real.json

# Without a managed file: unmanaged, the same config runs.
rm -f "$MF"
sbx -- touch "$WS/ran" >/dev/null 2>&1
eq "no managed file: the run goes ahead" "$?" 0
check "... the command ran" test -e "$WS/ran"
rm -f "$WS/ran"
out=$("$RUN" --config "$CONF" --check -v 2>/dev/null)
eq "no managed file: --check -v lists the run layer only" "$out" \
"$CONF: configuration OK
allow ok.corp.test:$P from $CONF: \$.network.allowedDomains[0] (run)"
px_done
