#!/bin/sh
# srt's current schema (sandbox-runtime 0.0.83, and allowNestedUserNamespaces
# from its sources): the README's complete example loads as it is; with
# allowNestedUserNamespaces the command may make a user namespace, without
# it the kernel refuses; the keys pisbx cannot honour are refused naming
# the key (deniedResolvedAddresses, JWT decoding and SigV4 re-signing in
# credentials); srt's credentials and tlsTerminate load; and "~" in
# pi-sandbox's additionalAllowRead is the home directory, as srt reads it.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

# 1. srt 0.0.83's README, "Complete Configuration Example" (the fixture
#    says where it comes from).
fx=$PISBX_TOP/tests/fixtures/srt/complete-example.json
out=$("$PROXY" --config "$fx" --check 2>&1); rc=$?
eq "srt 0.0.83 complete example: --check exits 0" "$rc" 0
contains "srt 0.0.83 complete example: configuration OK" "$out" \
    "configuration OK"

# 2. allowNestedUserNamespaces: true lets the command make a user
#    namespace; without it (and with false) clone/unshare refuse it.
run_config --top '{"allowNestedUserNamespaces": true}'
sbx -- unshare -U /bin/sh -c 'echo in-new-userns' >"$T/out" 2>&1; rc=$?
eq "allowNestedUserNamespaces true: unshare -U exits 0" "$rc" 0
contains "allowNestedUserNamespaces true: the command ran in it" \
    "$(cat "$T/out")" in-new-userns
sbx -- unshare -Um --propagation unchanged true >"$T/out" 2>&1; rc=$?
eq "allowNestedUserNamespaces true: a mount namespace in it too" "$rc" 0
sbx -- unshare -Um --propagation unchanged /bin/mount -t tmpfs none /tmp \
    >"$T/out" 2>&1; rc=$?
check "allowNestedUserNamespaces true: mount(2) still refused" \
    test "$rc" -ne 0
for v in absent false; do
	if [ $v = absent ]; then run_config
	else run_config --top '{"allowNestedUserNamespaces": false}'; fi
	sbx -- unshare -U true >"$T/out" 2>&1; rc=$?
	check "allowNestedUserNamespaces $v: unshare -U fails" test "$rc" -ne 0
	contains "allowNestedUserNamespaces $v: refused by the kernel" \
	    "$(cat "$T/out")" "Operation not permitted"
done

# 3. Keys of srt's schema pisbx cannot honour: refused, naming the key.
bad() {
	printf '%s\n' "$2" >"$T/bad.json"
	out=$("$PROXY" --config "$T/bad.json" --check 2>&1); rc=$?
	eq "$1: exit 78" "$rc" 78
	contains "$1: names the key and says why" "$out" "$3"
}
bad "srt deniedResolvedAddresses" \
    '{"network": {"deniedResolvedAddresses": ["10.0.0.0/8", "fc00::/7"]}}' \
    '$.network.deniedResolvedAddresses: not supported: pisbx keeps no list'
bad "srt credentials: decode" \
    '{"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "GITHUB_TOKEN", "mode": "mask", "decode": "jwt"}]}}' \
    '$.credentials.envVars[0].decode: not supported: pisbx does not decode JWTs'
bad "srt credentials: awsPairs" \
    '{"credentials": {"awsPairs": [{"accessKeyIdVar": "A", "secretAccessKeyVar": "B"}]}}' \
    '$.credentials.awsPairs: not supported: pisbx does not re-sign AWS SigV4'
bad "srt credentials: a masked AWS secret" \
    '{"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask"}]}}' \
    'use mode "deny"'
bad "srt tlsTerminate: a certificate without its key" \
    '{"network": {"tlsTerminate": {"caCertPath": "/etc/ca.pem"}}}' \
    '$.network.tlsTerminate: caCertPath and caKeyPath must be provided together'

# 3b. srt's credentials and tlsTerminate, as srt's README writes them,
#     load (pisbx honours them).  pisbx-run checks them: a CA made for
#     the run ("tlsTerminate": {}) is pisbx-run's alone.
good() {
	printf '%s\n' "$2" >"$T/good.json"
	out=$("$RUN" --config "$T/good.json" --check 2>&1); rc=$?
	eq "$1: --check exits 0" "$rc" 0
	contains "$1: configuration OK" "$out" "configuration OK"
}
good "srt tlsTerminate with excludeDomains and extraCaCertPaths" \
    '{"network": {"allowedDomains": ["*.example.com", "internal-mtls.example.net"], "deniedDomains": [], "tlsTerminate": {"excludeDomains": ["internal-mtls.example.net"], "extraCaCertPaths": ["/etc/internal-mtls-roots.pem"]}}}'
good "srt credentials: a masked token for api.github.com" \
    '{"network": {"allowedDomains": ["github.com", "*.github.com"], "tlsTerminate": {}}, "credentials": {"envVars": [{"name": "GITHUB_TOKEN", "mode": "mask", "injectHosts": ["api.github.com"]}, {"name": "AWS_SECRET_ACCESS_KEY", "mode": "deny"}], "files": [{"path": "~/.netrc", "mode": "mask", "extract": "password (\\S+)", "onExtractNoMatch": "warn"}, {"path": "~/.aws", "mode": "deny"}]}}'
good "pisbx requestRules with the shipped git-readonly recipe" \
    '{"network": {"allowedDomains": ["github.com"], "tlsTerminate": {}, "requestRules": ["git-readonly", {"host": "api.github.com", "deny": ["DELETE /repos/**"]}]}}'
bad "srt allowNestedUserNamespaces, not a boolean" \
    '{"allowNestedUserNamespaces": "yes"}' \
    '$.allowNestedUserNamespaces: expected true or false'

# 4. pi-sandbox's additionalAllowRead: "~/x" is below the home directory.
mkdir -p "$FAKEHOME/pi-extra"
echo "PI-EXTRA-VISIBLE" >"$FAKEHOME/pi-extra/f"
echo "HOME-HIDDEN" >"$FAKEHOME/other"
run_config --fs '{"denyRead": ["~"], "additionalAllowRead": ["~/pi-extra"]}'
out=$("$PROXY" --config "$CONF" --check 2>&1); rc=$?
eq "additionalAllowRead [\"~/pi-extra\"]: --check exits 0" "$rc" 0
sbx_sh "cat '$FAKEHOME/pi-extra/f'; cat '$FAKEHOME/other'"
contains "additionalAllowRead ~/pi-extra: readable inside" \
    "$(cat "$T/out")" PI-EXTRA-VISIBLE
check "additionalAllowRead ~/pi-extra: the rest of the home stays hidden" \
    sh -c "! grep -q HOME-HIDDEN '$T/out'"
run_config --fs '{"additionalAllowRead": ["pi-extra"]}'
out=$("$PROXY" --config "$CONF" --check 2>&1); rc=$?
eq "additionalAllowRead relative: exit 78" "$rc" 78
contains "additionalAllowRead relative: refused" "$out" \
    "expected an absolute path"

done_testing
