#!/bin/sh
# Policy on the wire: allow, deny by pattern, deny by port ("*:22" and
# "host:port"), deny beating allow, wildcard vs apex, IPv4 literal
# spellings and IPv6 forms matched and logged canonically, the non-public
# address refusal for wildcard-allowed names, the proxy's own address,
# the hosts file resolver, and --explain/--check on the same config.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

srv_start echo echo
E=$SRV_PORT
srv_start echo echo2
E2=$SRV_PORT
srv_start echo echo6 --bind ::1
E6=$SRV_PORT
dns_start allowed.test=127.0.0.1 port.test=127.0.0.1 wild.test=127.0.0.1 \
    denied.test=127.0.0.1 v6.wild.test=::1 zero.wild.test=0.0.0.0 \
    mapped.wild.test=::ffff:127.0.0.1 six.test=::1 \
    both4.test=127.0.0.1,::1 both6.test=127.0.0.1,::1
hosts_file "$T/hosts" "127.0.0.1 hostsonly.test"
px_config "$T/conf.json" \
    --allow "allowed.test port.test:$E *.wild.test 127.0.0.1 [::1] denied.test hostsonly.test six.test both4.test both6.test" \
    --deny "*:22 allowed.test:$E2 denied.test 127.0.0.2" \
    --hosts "$T/hosts"
px_start "$T/conf.json"

# expect DESC TARGET STATUS [REASON]: CONNECT TARGET answered STATUS (and
# X-Pisbx-Reason REASON).
expect() {
	px_connect "$2"
	if [ "$STATUS" != "$3" ]; then
		not_ok "$1: $2 -> $STATUS, want $3 ($(printf '%s' "$RESP" | head -n 1))"
	elif [ -n "${4:-}" ] && [ "$REASON_HDR" != "$4" ]; then
		not_ok "$1: $2 -> reason '$REASON_HDR', want '$4'"
	else
		ok "$1: $2 -> $3${4:+ ($4)}"
	fi
}

expect "exact allow" "allowed.test:$E" 200
check_log "allow record" event=decision host=allowed.test port="$E" \
    decision=allow reason=allow-list:allowed.test
expect "host:port deny beats the host's allow" "allowed.test:$E2" 403 "deny-list:allowed.test:$E2"
expect "*:22 denies port 22 of an allowed host" "allowed.test:22" 403 "deny-list:*:22"
check_log "*:22 deny record" event=decision host=allowed.test port=22 \
    decision=deny reason="deny-list:*:22"
expect "deny list beats an identical allow entry" "denied.test:$E" 403 "deny-list:denied.test"
expect "allow with a port: that port" "port.test:$E" 200
expect "allow with a port: other port unlisted" "port.test:$E2" 403 "no-reviewer"
expect "upper case and trailing dot canonicalised" "ALLOWED.Test.:$E" 200
check_log "logged in canonical form" event=decision host=allowed.test port="$E" \
    decision=allow conn~.

# Wildcards: strict subdomains only; loopback answers refused.
expect "wildcard does not match the apex" "wild.test:$E" 403 "no-reviewer"
if dns_asked wild.test; then
	not_ok "apex of a wildcard sent to DNS without authorisation"
else
	ok "apex of a wildcard never reaches DNS"
fi
expect "wildcard-allowed name resolving to 127.0.0.1 refused" "a.wild.test:$E" 403 "non-public-address"
check_log "non-public-address record" event=decision host=a.wild.test \
    decision=deny reason=non-public-address
expect "deeper subdomain matched, then refused as non-public" "x.y.wild.test:$E" 403 "non-public-address"

expect "wildcard name answered with ::1 refused" "v6.wild.test:$E6" 403 "non-public-address"
expect "wildcard name answered with 0.0.0.0 refused" "zero.wild.test:$E" 403 "non-public-address"
expect "wildcard name answered with ::ffff:127.0.0.1 refused" "mapped.wild.test:$E" 403 "non-public-address"
expect "exact name answered with ::1 (AAAA only) connects" "six.test:$E6" 200
check_log "AAAA-only name dialled at ::1" event=decision host=six.test \
    decision=allow addr~'::1'

# A name with an A and an AAAA record, the server on only one of them:
# whichever the proxy tries first, it falls back to the other address.
expect "A+AAAA name, server on 127.0.0.1 only" "both4.test:$E" 200
expect "A+AAAA name, server on ::1 only" "both6.test:$E6" 200
check_log "fallback to the IPv4 address logged" event=decision host=both4.test \
    decision=allow addr="127.0.0.1:$E"
check_log "fallback to the IPv6 address logged" event=decision host=both6.test \
    decision=allow addr~"::1"

# IPv4 literal spellings become the dotted quad before matching.
for t in 127.1 0x7f.0.0.1 0177.0.0.1 2130706433 0x7f000001; do
	expect "IPv4 spelling allowed by the exact literal" "$t:$E" 200
done
n=$(log_count event=decision host=127.0.0.1 port="$E" decision=allow)
eq "each spelling logged as 127.0.0.1" "$n" 5
if grep -Eq '"host": ?"(127\.1|0x7f|0177|2130706433)' "$PX_LOG"; then
	not_ok "a non-canonical IPv4 spelling appears in the log"
else
	ok "no non-canonical IPv4 spelling in the log"
fi
expect "denied literal, decimal spelling" "2130706434:$E" 403 "deny-list:127.0.0.2"
check_log "denied literal logged canonically" event=decision host=127.0.0.2 \
    decision=deny reason=deny-list:127.0.0.2
expect "IPv4-mapped IPv6 unwrapped to the IPv4 entry" "[::ffff:127.0.0.1]:$E" 200
expect "IPv6 literal" "[::1]:$E6" 200
expect "IPv6 long form canonicalised" "[0:0:0:0:0:0:0:1]:$E6" 200
n=$(log_count event=decision host="[::1]" port="$E6" decision=allow)
eq "IPv6 spellings logged as [::1]" "$n" 2
expect "IPv6 zone ID rejected" "[fe80::1%%25lo]:$E" 400

# The proxy's own listening address is never a target.
expect "the proxy's own address refused" "127.0.0.1:$PX_PORT" 403

# A name only the hosts file knows.
expect "hostsFile resolves an allowed name" "hostsonly.test:$E" 200
check_log "hostsFile record" event=decision host=hostsonly.test decision=allow

# --explain agrees with the wire (no network needed).
out=$("$PROXY" --config "$T/conf.json" --explain "allowed.test:$E2")
explain() {
	printf '%s' "$1" | "$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
print("%s %s %s %s" % (d["host"], d["port"], d["decision"], d["reason"]))'
}
eq "--explain host:port deny" "$(explain "$out")" "allowed.test $E2 deny deny-list:allowed.test:$E2"
out=$("$PROXY" --config "$T/conf.json" --explain "0x7F.1:$E")
eq "--explain canonicalises a literal" "$(explain "$out")" "127.0.0.1 $E allow allow-list:127.0.0.1"
out=$("$PROXY" --config "$T/conf.json" --explain "nobody.test:443")
case $(explain "$out") in
"nobody.test 443 review "* | "nobody.test 443 deny no-reviewer") ok "--explain unlisted: review/no-reviewer" ;;
*) not_ok "--explain unlisted: $out" ;;
esac

check "proxy still running" px_alive
px_done
