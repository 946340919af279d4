#!/bin/sh
# --replay: real traffic through pisbx-proxy (HTTP forwarding, CONNECT,
# SOCKS5 with curl; list decisions and a command reviewer) writes a real
# access log, which is then replayed under configs with known
# differences: the exact change lines, the summary and the exit status,
# as text and as JSON (--replay-format json);
# the same config reports no change; corrupt, text-format and overlong
# lines are named by line number and make the exit status 2.
#
# A reviewed destination must be public to be dialled, so the scenario
# runs in a private network namespace where 11.0.0.1 sits on lo.
. "$(dirname "$0")/../lib/netns.sh"
ip addr add 11.0.0.1/32 dev lo || exit 1

. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/review.sh"

spawn $PY "$FIX/origin.py" 11.0.0.1 "$T/origin.port"
wait_file "$T/origin.port" 200 || { not_ok "origin did not start"; exit 1; }
O=$(cat "$T/origin.port")
dns_start test=11.0.0.1
mkdir "$T/rv"

# conf FILE REVIEW-JSON|null ALLOW DENY: a config.
conf() {
	$PY - "$DNS_PORT" "$@" <<'PYEOF'
import json, sys
dns, out, review = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
conf = {"network": {"allowedDomains": sys.argv[4].split(),
                    "deniedDomains": sys.argv[5].split()},
        "resolver": {"servers": ["127.0.0.1:" + dns], "timeoutMs": 2000}}
if review is not None:
    conf["review"] = review
with open(out, "w") as f:
    json.dump(conf, f)
PYEOF
}
RV="{\"command\": [\"$FIX/by-host.sh\", \"$T/rv\"], \"timeoutMs\": 20000}"
conf "$T/old.json" "$RV" "keep.test moved.test port.test" "blocked.test"
# moved.test to the deny list, added.test to the allow list, port.test
# narrowed to one port, the reviewer removed.
conf "$T/new.json" null "keep.test added.test port.test:$O" \
    "blocked.test moved.test"
# keep.test no longer listed, the same reviewer.
conf "$T/rev.json" "$RV" "moved.test port.test" "blocked.test"

# get URL CURL-ARGS...: curl through the proxy; CODE is the status (of
# the CONNECT when it was refused).
get() {
	_u=$1; shift
	CODE=$(curl -sS -o /dev/null --max-time 30 \
	    -w '%{http_code} %{http_connect}' "$@" "$_u" 2>/dev/null)
	case $CODE in
	"000 "*) CODE=${CODE#000 } ;;
	*) CODE=${CODE%% *} ;;
	esac
}

px_start "$T/old.json"
HX="-x http://127.0.0.1:$PX_PORT"
get "http://keep.test:$O/a" $HX
eq "http keep.test allowed" "$CODE" 200
get "http://moved.test:$O/b" -p $HX
eq "CONNECT moved.test allowed" "$CODE" 200
get "http://allow1.test:$O/c" --socks5-hostname "127.0.0.1:$PX_PORT"
eq "SOCKS5 allow1.test allowed by the reviewer" "$CODE" 200
get "http://deny1.test:$O/d" $HX
eq "http deny1.test refused by the reviewer" "$CODE" 403
get "http://blocked.test:$O/e" $HX
eq "http blocked.test refused by the deny list" "$CODE" 403
get "http://port.test:$O/f" $HX
eq "http port.test allowed" "$CODE" 200
get "http://added.test:$O/g" -p $HX
eq "CONNECT added.test refused by the reviewer" "$CODE" 403
# Every connection's close record, so the log is complete.
_i=0
while [ "$(log_count event=close)" != 7 ] && [ $_i -lt 200 ]; do
	sleep 0.05; _i=$((_i + 1))
done
eq "7 close records" "$(log_count event=close)" 7
eq "7 decision records" "$(log_count event=decision)" 7
check_log "the SOCKS5 review:allow record" event=decision host=allow1.test \
    proto=socks5 reason=review:allow
px_stop

# replay NAME CONFIG LOG: run it; RC, $T/NAME.out, $T/NAME.err.
replay() {
	"$PROXY" --config "$2" --replay "$3" >"$T/$1.out" 2>"$T/$1.err"
	RC=$?
}
summary() {
	printf '%-22s %s\n' "records read" "$1" "unchanged" "$2" \
	    "newly refused" "$3" "newly allowed" "$4" "now reviewed" "$5" \
	    "no longer reviewed" "$6" "other rule" "$7" \
	    "not policy decisions" "$8" "close records" "$9" \
	    "unreadable" "${10}"
}

replay same "$T/old.json" "$PX_LOG"
eq "same config: exit 0" "$RC" 0
eq "same config: only the summary" "$(cat "$T/same.out")" \
    "$(summary 14 7 0 0 0 0 0 0 7 0)"
eq "same config: nothing on stderr" "$(cat "$T/same.err")" ""

replay new "$T/new.json" "$PX_LOG"
eq "new config: exit 1" "$RC" 1
eq "new config: the changes and the summary" "$(cat "$T/new.out")" \
"newly refused: allow1.test:$O socks5: allow review:allow -> deny no-reviewer (1 record)
newly refused: moved.test:$O connect: allow allow-list:moved.test -> deny deny-list:moved.test (1 record)
newly allowed: added.test:$O connect: deny review:deny -> allow allow-list:added.test (1 record)
no longer reviewed: deny1.test:$O http: deny review:deny -> deny no-reviewer (1 record)
other rule: port.test:$O http: allow allow-list:port.test -> allow allow-list:port.test:$O (1 record)
$(summary 14 2 2 1 0 1 1 0 7 0)"

# The same replay as JSON: one object per change, then the summary.
"$PROXY" --config "$T/new.json" --replay "$PX_LOG" --replay-format json \
    >"$T/json.out" 2>"$T/json.err"
eq "--replay-format json: exit 1, as in text" "$?" 1
eq "--replay-format json: the changes and the summary object" \
    "$(cat "$T/json.out")" \
"{\"change\":\"newly-refused\",\"target\":\"allow1.test:$O socks5\",\"from\":\"allow review:allow\",\"to\":\"deny no-reviewer\",\"records\":1}
{\"change\":\"newly-refused\",\"target\":\"moved.test:$O connect\",\"from\":\"allow allow-list:moved.test\",\"to\":\"deny deny-list:moved.test\",\"records\":1}
{\"change\":\"newly-allowed\",\"target\":\"added.test:$O connect\",\"from\":\"deny review:deny\",\"to\":\"allow allow-list:added.test\",\"records\":1}
{\"change\":\"no-longer-reviewed\",\"target\":\"deny1.test:$O http\",\"from\":\"deny review:deny\",\"to\":\"deny no-reviewer\",\"records\":1}
{\"change\":\"other-rule\",\"target\":\"port.test:$O http\",\"from\":\"allow allow-list:port.test\",\"to\":\"allow allow-list:port.test:$O\",\"records\":1}
{\"summary\":true,\"records\":14,\"classes\":{\"unchanged\":2,\"newly-refused\":2,\"newly-allowed\":1,\"now-reviewed\":0,\"no-longer-reviewed\":1,\"other-rule\":1,\"not-policy-decisions\":0},\"changed\":5,\"not_itemised\":0,\"close_records\":7,\"unreadable\":0}"
eq "--replay-format json: nothing on stderr" "$(cat "$T/json.err")" ""
check "--replay-format json: every line a JSON object" $PY -c '
import json, sys
for l in open(sys.argv[1]):
    assert isinstance(json.loads(l), dict)' "$T/json.out"
"$PROXY" --config "$T/old.json" --replay "$PX_LOG" --replay-format json \
    >"$T/jsame.out" 2>&1
eq "--replay-format json, same config: exit 0" "$?" 0
eq "... the summary object only" "$(cat "$T/jsame.out")" \
"{\"summary\":true,\"records\":14,\"classes\":{\"unchanged\":7,\"newly-refused\":0,\"newly-allowed\":0,\"now-reviewed\":0,\"no-longer-reviewed\":0,\"other-rule\":0,\"not-policy-decisions\":0},\"changed\":0,\"not_itemised\":0,\"close_records\":7,\"unreadable\":0}"
"$PROXY" --config "$T/old.json" --replay "$PX_LOG" --replay-format xml \
    >/dev/null 2>&1
eq "--replay-format xml: usage error" "$?" 64
"$PROXY" --config "$T/old.json" --replay-format json --check >/dev/null 2>&1
eq "--replay-format without --replay: usage error" "$?" 64
# The decision records name the deciding entry (source, layer): the
# replay reads them like any other field.
check_log "an allow-list record names its source and layer" \
    event=decision host=keep.test "source=$T/old.json: \$.network.allowedDomains[0]" \
    layer=run

replay rev "$T/rev.json" "$PX_LOG"
eq "reviewer kept, keep.test unlisted: exit 1" "$RC" 1
eq "... keep.test now reviewed, the reviewed ones unchanged" \
    "$(cat "$T/rev.out")" \
"now reviewed: keep.test:$O http: allow allow-list:keep.test -> review (command) (1 record)
$(summary 14 6 0 0 1 0 0 0 7 0)"

# Two records for one target: counted on one line.  Standard input.
grep '"host":"moved.test"' "$PX_LOG" | grep '"event":"decision"' >"$T/two.log"
grep '"host":"moved.test"' "$PX_LOG" | grep '"event":"decision"' >>"$T/two.log"
"$PROXY" --config "$T/new.json" --replay - <"$T/two.log" >"$T/stdin.out" 2>&1
eq "stdin: exit 1" "$?" 1
eq "stdin: one line for two records" "$(head -n 1 "$T/stdin.out")" \
    "newly refused: moved.test:$O connect: allow allow-list:moved.test -> deny deny-list:moved.test (2 records)"

# Corrupt lines: each named with its line number, exit 2, the rest replayed.
cp "$PX_LOG" "$T/bad.log"
echo '{"event":"decision","proto":"http","host":"x.test","port":80,' >>"$T/bad.log"
echo '2026-11-30T03:12:00.123Z conn=7 decision connect 127.0.0.1:40112 -> x.test:443 allow allow-list:x.test' >>"$T/bad.log"
$PY -c 'print("{" + "x" * 70000 + "}")' >>"$T/bad.log"
echo '{"event":"decision","proto":"http","host":"X.test","port":80,"decision":"deny","reason":"no-reviewer"}' >>"$T/bad.log"
echo '{"event":"decision","proto":"http","host":"x.test","port":80,"decision":"deny","reason":"made-up"}' >>"$T/bad.log"
echo '{"event":"decision","proto":"http","host":"x.test","port":80,"decision":"allow","reason":"no-reviewer"}' >>"$T/bad.log"
echo '{"event":"decision","proto":"http","host":"x.test","port":80,"decision":"deny","reason":"no-reviewer"}' >>"$T/bad.log"
replay bad "$T/old.json" "$T/bad.log"
eq "corrupt lines: exit 2" "$RC" 2
eq "corrupt lines: each named with its line" "$(cat "$T/bad.err")" \
"pisbx-proxy: $T/bad.log:15: not a JSON object
pisbx-proxy: $T/bad.log:16: not a JSON record (replay reads --log-format json logs)
pisbx-proxy: $T/bad.log:17: line over 65536 octets
pisbx-proxy: $T/bad.log:18: host is not a canonical host
pisbx-proxy: $T/bad.log:19: unknown reason
pisbx-proxy: $T/bad.log:20: the decision does not go with the reason"
# The good last line (no-reviewer, now under a config with a reviewer).
eq "corrupt lines: the good ones replayed, 6 unreadable" \
    "$(cat "$T/bad.out")" \
"now reviewed: x.test:80 http: deny no-reviewer -> review (command) (1 record)
$(summary 21 7 0 0 1 0 0 0 7 6)"

replay missing "$T/old.json" "$T/no-such.log"
eq "a missing log: exit 2" "$RC" 2
contains "... named" "$(cat "$T/missing.err")" "$T/no-such.log"
"$PROXY" --config "$T/old.json" --replay "$PX_LOG" --check >/dev/null 2>&1
eq "--replay with --check: usage error" "$?" 64
echo '{' >"$T/broken.json"
replay broken "$T/broken.json" "$PX_LOG"
eq "an invalid config: exit 78" "$RC" 78
px_done
