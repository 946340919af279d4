#!/bin/sh
# srt's current schema (sandbox-runtime 0.0.83, and allowNestedUserNamespaces
# from its sources): the README's complete example loads as it is; with
# allowNestedUserNamespaces the command may make a user namespace, without
# it the kernel refuses; the keys pisbx cannot honour are refused naming
# the key (deniedResolvedAddresses, credentials, tlsTerminate); and "~" in
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
bad "srt credentials" \
    '{"credentials": {"envVars": [{"name": "GITHUB_TOKEN", "mode": "mask"}]}}' \
    '$.credentials: not supported: pisbx does not mask or inject'
bad "srt tlsTerminate" \
    '{"network": {"tlsTerminate": {"caCertPath": "/etc/ca.pem"}}}' \
    '$.network.tlsTerminate: not supported: pisbx never terminates TLS'
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
