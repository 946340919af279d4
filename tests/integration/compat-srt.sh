#!/bin/sh
# srt settings files and pi-sandbox configs as users bring them: srt's
# README example passes --check and -v names every key that has no effect
# here; a pi-sandbox config with every key passes; a deniedDomains reason
# shows in --explain, the 403 and the access log; ~/.srt-settings.json is
# the last fallback, for pisbx-proxy and pisbx-run alike, and a sandboxed
# command cannot plant one; a pattern in denyRead hides the matching
# secret and refuses a new one (taken as a path that does not exist, it
# left the secret readable).
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

# 1. srt's README, "Complete Configuration Example", as it is.
cat >"$T/srt.json" <<'J'
{
  "network": {
    "allowedDomains": [
      "github.com",
      "*.github.com",
      "lfs.github.com",
      "api.github.com",
      "npmjs.org",
      "*.npmjs.org"
    ],
    "deniedDomains": ["malicious.com"],
    "allowUnixSockets": ["/var/run/docker.sock"],
    "allowLocalBinding": false
  },
  "filesystem": {
    "denyRead": ["~/.ssh"],
    "allowRead": [],
    "allowWrite": [".", "src/", "test/", "/tmp"],
    "denyWrite": [".env", "config/production.json"]
  },
  "ignoreViolations": {
    "*": ["/usr/bin", "/System"],
    "git push": ["/usr/bin/nc"],
    "npm": ["/private/tmp"]
  },
  "enableWeakerNestedSandbox": false,
  "enableWeakerNetworkIsolation": false,
  "allowAppleEvents": false
}
J
out=$("$PROXY" --config "$T/srt.json" --check 2>&1); rc=$?
eq "srt README example: --check exits 0" "$rc" 0
contains "srt README example: configuration OK" "$out" "configuration OK"
contains "without -v: says there are notes" "$out" \
    "4 notes on keys accepted without effect here: --check -v shows them"
out=$("$PROXY" --config "$T/srt.json" --check -v 2>&1)
for k in network.allowLocalBinding ignoreViolations \
    enableWeakerNetworkIsolation allowAppleEvents; do
	contains "--check -v: \$.$k has no effect here" "$out" \
	    "$T/srt.json: \$.$k: no effect here"
done
out=$("$PROXY" --config "$T/srt.json" --explain api.github.com)
contains "the srt policy decides" "$out" '"decision":"allow"'

# 2. A pi-sandbox config with every key.
cat >"$T/pi.json" <<'J'
{
  "subagents": {"provider": "pi-subagents", "externalWorkerIsolation": "off"},
  "filesystem": {"additionalAllowRead": ["/home/user/.local/bin/rtk"]},
  "network": {
    "allowedDomains": ["github.com", "*.github.com", "registry.npmjs.org:443"],
    "deniedDomains": ["uploads.github.com", "*:22"]
  },
  "hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["tmux"],
    "retryOnUnixSocketError": true}
}
J
out=$("$PROXY" --config "$T/pi.json" --check -v 2>&1); rc=$?
eq "pi-sandbox config: --check exits 0" "$rc" 0
contains "pi-sandbox: subagents.provider noted" "$out" \
    "\$.subagents.provider: no effect here"

# 3. A deniedDomains reason, shown with the refusal it explains.
cat >"$T/reason.json" <<'J'
{"network": {"deniedDomains": ["github.com:22"],
  "deniedDomainReasons": {"GitHub.com:22": "SSH pushes to GitHub are blocked; use an https:// remote"}}}
J
out=$("$PROXY" --config "$T/reason.json" --explain github.com:22)
contains "--explain carries the reason" "$out" \
    '"message":"SSH pushes to GitHub are blocked; use an https:// remote"'
px_start "$T/reason.json"
px_connect "github.com:22"
eq "the deny entry refuses: 403" "$STATUS" 403
contains "the 403 says why, in the entry's words" "$RESP" \
    "denied: deny-list:github.com:22 (SSH pushes to GitHub are blocked; use an https:// remote)"
check_log "the access log records the reason" event=decision \
    host=github.com decision=deny reason=deny-list:github.com:22 \
    "error=SSH pushes to GitHub are blocked; use an https:// remote"
px_stop

# 4. Keys pisbx cannot honour are errors that say what to do instead.
bad() {
	printf '%s\n' "$2" >"$T/bad.json"
	out=$("$PROXY" --config "$T/bad.json" --check 2>&1); rc=$?
	eq "$1: exit 78" "$rc" 78
	contains "$1: names the key and the pisbx way" "$out" "$3"
}
bad "srt httpProxyPort" '{"network": {"httpProxyPort": 8080}}' \
    '$.network.httpProxyPort: not supported: pisbx-run always sends'
bad "srt tlsTerminate: a key without its certificate" \
    '{"network": {"tlsTerminate": {"caKeyPath": "/etc/ca.key"}}}' \
    'caCertPath and caKeyPath must be provided together'
bad "srt credentials: masked, nothing terminated" \
    '{"credentials": {"envVars": [{"name": "TOKEN", "mode": "mask"}]}}' \
    '$.credentials: masking requires network.tlsTerminate'
bad "srt ambiguousRequestTarget asSpelled" \
    '{"network": {"ambiguousRequestTarget": "asSpelled"}}' \
    '"asSpelled" is not supported'
bad "srt filesystem.disabled" '{"filesystem": {"disabled": true}}' \
    'widen the policy instead'

# 5. A pattern in denyRead, as srt users write it: the secret below the
#    working directory stays unread (srt blocks it too; taken as a path
#    that does not exist it was printed), and a new one cannot be made.
mkdir -p "$WS/sub"
echo "SECRET-IN-DOTENV" >"$WS/sub/.env"
run_config --fs '{"denyRead": ["**/.env"]}'
sbx -- /bin/sh -c 'cat sub/.env; echo made >new.env; echo x >.env' \
    >"$T/out" 2>&1
check "denyRead [\"**/.env\"]: the secret is not printed" \
    sh -c "! grep -q SECRET-IN-DOTENV '$T/out'"
contains "denyRead [\"**/.env\"]: a new .env is refused, with the pattern" \
    "$(cat "$T/out")" "refused to create $WS/.env: the name matches filesystem.denyRead pattern $WS/**/.env"
eq "denyRead [\"**/.env\"]: other files are written" "$(cat "$WS/new.env")" made
eq "denyRead [\"**/.env\"]: the secret is intact on disk" \
    "$(cat "$WS/sub/.env")" SECRET-IN-DOTENV
rm -rf "$WS/sub" "$WS/new.env"

# 6. ~/.srt-settings.json: read when no pisbx config exists.
printf '%s\n' '{"filesystem": {"disabled": true}}' >"$FAKEHOME/.srt-settings.json"
out=$("$PROXY" --check 2>&1); rc=$?
eq "~/.srt-settings.json read by pisbx-proxy: its error, exit 78" "$rc" 78
contains "pisbx-proxy names ~/.srt-settings.json" "$out" \
    "$FAKEHOME/.srt-settings.json: \$.filesystem.disabled"
out=$(cd "$WS" && "$RUN" -- /bin/true 2>&1); rc=$?
eq "~/.srt-settings.json read by pisbx-run: exit 78" "$rc" 78
contains "pisbx-run names ~/.srt-settings.json" "$out" \
    "$FAKEHOME/.srt-settings.json: \$.filesystem.disabled"
printf '%s\n' '{"network": {"deniedDomains": ["*.evil.test"]}}' \
    >"$FAKEHOME/.srt-settings.json"
out=$("$PROXY" --explain x.evil.test)
contains "its policy is the one in force" "$out" \
    '"reason":"deny-list:*.evil.test"'
mkdir -p "$FAKEHOME/.config/pisbx"
printf '%s\n' '{}' >"$FAKEHOME/.config/pisbx/config.json"
out=$("$PROXY" --explain x.evil.test)
contains "pisbx's own config comes first" "$out" '"reason":"no-reviewer"'
rm -rf "$FAKEHOME/.config" "$FAKEHOME/.srt-settings.json"

# 7. A command that may write the home directory cannot plant one.
run_config --fs "{\"denyRead\": [], \"allowWrite\": [\".\", \"$FAKEHOME\"]}"
sbx_sh "echo '{\"filesystem\": {\"denyRead\": []}}' >'$FAKEHOME/.srt-settings.json'; echo x >'$FAKEHOME/other'"
check "the home directory is writable" test -f "$FAKEHOME/other"
check "~/.srt-settings.json cannot be created from inside" \
    test ! -e "$FAKEHOME/.srt-settings.json"
contains "the refusal names it" "$(cat "$T/out")" ".srt-settings.json"
rm -f "$FAKEHOME/other"

done_testing
