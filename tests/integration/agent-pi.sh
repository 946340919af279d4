#!/bin/sh
# The real pi (pinned, from the npm registry) with pisbx wired in as
# docs/agents.md says: "shellPath": "<bindir>/pisbx-sh" in
# ~/.pi/agent/settings.json and the config in PISBX_CONFIG.  A scripted
# model (a provider in ~/.pi/agent/models.json) asks for bash commands;
# checked from outside: pi's bash tool gets bash even when $SHELL is
# dash, an allowed host is reached, a denied one refused with the reason
# in the tool result, ~/.bashrc untouched, the workspace writable, and,
# started in a subdirectory, the top of the git work tree writable.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/agents.sh"

agent_install pi

srv_start http web
WEB=$SRV_PORT
HOSTS_NAMES="allowed.test denied.test" run_config --allow "allowed.test"

git -C "$WS" init -q
mkdir -p "$WS/sub"
echo '# the user' >"$FAKEHOME/.bashrc"
cp "$FAKEHOME/.bashrc" "$T/bashrc.before"

model_script "$T/script.json" \
    "[[ -n \$BASH_VERSION ]] && echo bash-ok; curl -sS http://allowed.test:$WEB/from-pi" \
    "curl -sS http://denied.test:$WEB/secret" \
    'echo evil >>~/.bashrc; echo written >in-sub.txt' \
    'pwd; echo root >../at-root.txt'
model_start "$T/script.json"

agent_env "$FAKEHOME"
mkdir -p "$FAKEHOME/.pi/agent"
"$PY" - "$FAKEHOME/.pi/agent" "$MODEL_URL" "$PISBX_BINDIR/pisbx-sh" <<'EOF'
import json, sys
d, url, sh = sys.argv[1:]
json.dump({"providers": {"scripted": {
    "baseUrl": url, "api": "anthropic-messages", "apiKey": "sk-scripted",
    "models": [{"id": "scripted-model"}]}}},
    open(d + "/models.json", "w"))
json.dump({"shellPath": sh}, open(d + "/settings.json", "w"))
EOF
export PISBX_CONFIG="$CONF"
(cd "$WS/sub" && SHELL=/bin/dash timeout 180 "$PI_BIN" --provider scripted \
    --model scripted-model --mode json -p --no-session --offline \
    "run the scripted commands") >"$T/pi.json" 2>"$T/pi.err"
rc=$?
eq "pi -p exits 0" "$rc" 0
[ $rc -eq 0 ] || { cat "$T/pi.err"; tail -c 2000 "$T/pi.json"; }
eq "the model got every tool result" "$(model_steps)" 4

r=$(model_result 0)
contains "pi's bash tool gets bash (SHELL=/bin/dash)" "$r" "bash-ok"
contains "an allowed host is reached" "$r" '"path": "/from-pi"'
r=$(model_result 1)
contains "a denied host is refused, the reason in the tool result" "$r" \
    "request to denied.test:$WEB denied: no-reviewer"
r=$(model_result 2)
check "~/.bashrc cannot be written" cmp -s "$T/bashrc.before" "$FAKEHOME/.bashrc"
contains "and the model is told" "$r" "bashrc"
eq "a file written in the working directory is there" \
    "$(cat "$WS/sub/in-sub.txt" 2>&1)" "written"
r=$(model_result 3)
contains "the command runs in pi's directory" "$r" "$WS/sub"
eq "the top of the git work tree is writable" \
    "$(cat "$WS/at-root.txt" 2>&1)" "root"

done_testing
