#!/bin/sh
# Where each list entry comes from: --check -v lists every effective
# allowedDomains / deniedDomains entry in the order of the file with its
# file (named absolutely, also when given relatively), JSON path and
# layer (--config: run; the per-user file: user), a duplicate only
# once; --explain names the deciding entry's source and layer, and none
# when no entry decided.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

mkdir "$T/d"
cat >"$T/d/p.json" <<'J'
{"network": {"allowedDomains": ["github.com", "*.github.com", "GitHub.COM.", "x.org:8080"],
             "deniedDomains": ["uploads.github.com", "*:22"]}}
J
F=$T/d/p.json
out=$(cd "$T" && "$PROXY" --config d/p.json --check -v 2>"$T/check.err"); rc=$?
eq "--check -v: exit 0" "$rc" 0
eq "--check -v: every entry with its source, in file order" "$out" \
"$F: configuration OK
allow github.com from $F: \$.network.allowedDomains[0] (run)
allow *.github.com from $F: \$.network.allowedDomains[1] (run)
allow x.org:8080 from $F: \$.network.allowedDomains[3] (run)
deny uploads.github.com from $F: \$.network.deniedDomains[0] (run)
deny *:22 from $F: \$.network.deniedDomains[1] (run)"
eq "--check -v: nothing on stderr" "$(cat "$T/check.err")" ""
out=$("$PROXY" --config "$F" --check)
eq "--check without -v: the OK line only" "$out" "$F: configuration OK"

out=$("$PROXY" --config "$F" --explain api.github.com --explain x.org:8080 \
    --explain github.com:22 --explain example.com)
eq "--explain: the deciding entry's source" "$out" \
"{\"host\":\"api.github.com\",\"port\":443,\"decision\":\"allow\",\"reason\":\"allow-list:*.github.com\",\"source\":\"$F: \$.network.allowedDomains[1]\",\"layer\":\"run\"}
{\"host\":\"x.org\",\"port\":8080,\"decision\":\"allow\",\"reason\":\"allow-list:x.org:8080\",\"source\":\"$F: \$.network.allowedDomains[3]\",\"layer\":\"run\"}
{\"host\":\"github.com\",\"port\":22,\"decision\":\"deny\",\"reason\":\"deny-list:*:22\",\"hint\":\"\\\"*:22\\\" in network.deniedDomains of $F refuses it, whatever network.allowedDomains says\",\"source\":\"$F: \$.network.deniedDomains[1]\",\"layer\":\"run\"}
{\"host\":\"example.com\",\"port\":443,\"decision\":\"deny\",\"reason\":\"no-reviewer\",\"hint\":\"to allow it, add \\\"example.com\\\" to network.allowedDomains in $F\"}"

# The per-user file is the user layer.
mkdir -p "$T/xdg/pisbx"
cp "$F" "$T/xdg/pisbx/config.json"
out=$(env -u PISBX_CONFIG XDG_CONFIG_HOME="$T/xdg" "$PROXY" --check -v | sed -n 2p)
eq "--check -v, the per-user file: layer user" "$out" \
    "allow github.com from $T/xdg/pisbx/config.json: \$.network.allowedDomains[0] (user)"

# The embedded default has no entries: nothing listed.
out=$(env -u PISBX_CONFIG XDG_CONFIG_HOME="$T/none" HOME="$T/none" \
    "$PROXY" --check -v 2>/dev/null)
eq "--check -v, embedded default: no entries" "$out" \
    "(embedded default): configuration OK"
done_testing
