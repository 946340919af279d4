#!/bin/sh
# The real Claude Code (pinned, from the npm registry) with pisbx wired in
# as docs/agents.md says: CLAUDE_CODE_SHELL_PREFIX=<bindir>/pisbx-sh and
# the config in PISBX_CONFIG.  A scripted model asks for Bash commands;
# what the model was sent back, and what is on disk, is checked from
# outside: an allowed host reached, a denied one refused with the reason
# in the tool result, ~/.bashrc untouched, the workspace writable, the
# snapshot's functions there, "cd sub" followed by the next command, the
# project root still writable from sub, a hook and a stdio MCP server
# run in the sandbox; then
# the PreToolUse hook (pisbx-run --hook claude-code) instead of the prefix.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/agents.sh"

agent_install claude

srv_start http web
WEB=$SRV_PORT
HOSTS_NAMES="allowed.test denied.test" run_config --allow "allowed.test" \
    --proxy "{\"accessLog\": \"$T/alog\"}"

# The project: a git work tree; the user's home with a shell function
# (Claude Code snapshots it) and a PostToolUse hook.
git -C "$WS" init -q
echo 'pisbx_probe() { echo probe-ok; }' >"$FAKEHOME/.bashrc"
cp "$FAKEHOME/.bashrc" "$T/bashrc.before"
mkdir -p "$FAKEHOME/.claude" "$T/ctmp"
chmod 700 "$T/ctmp"
cat >"$FAKEHOME/.claude/settings.json" <<'EOF'
{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "command", "command": "echo hook-sandboxed=$PISBX_SANDBOX >>hook.log"}]}]}}
EOF

model_script "$T/script.json" \
    "pisbx_probe; curl -sS http://allowed.test:$WEB/from-claude" \
    "curl -sS http://denied.test:$WEB/secret" \
    'echo evil >>~/.bashrc; echo written >in-workspace.txt' \
    'mkdir -p sub && cd sub' \
    'pwd; echo root >../at-root.txt'
# Step 5: the tool of a stdio MCP server (started through the prefix).
"$PY" - "$T/script.json" "$T/mcp.json" "$PY" \
    "$PISBX_TOP/tests/lib/mcp_probe.py" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
s["commands"].append({"tool": "mcp__probe__probe", "input": {}})
json.dump(s, open(sys.argv[1], "w"))
json.dump({"mcpServers": {"probe": {"command": sys.argv[3],
                                    "args": [sys.argv[4]]}}},
          open(sys.argv[2], "w"))
EOF
model_start "$T/script.json"

agent_env "$FAKEHOME"
export PISBX_CONFIG="$CONF" CLAUDE_CODE_TMPDIR="$T/ctmp"
(cd "$WS" && ANTHROPIC_BASE_URL="$MODEL_URL" ANTHROPIC_API_KEY=sk-scripted \
    IS_SANDBOX=1 CLAUDE_CODE_SHELL_PREFIX="$PISBX_BINDIR/pisbx-sh" \
    timeout 180 "$CLAUDE_BIN" -p "run the scripted commands" \
    --output-format json --dangerously-skip-permissions \
    --mcp-config "$T/mcp.json") >"$T/claude.json" 2>"$T/claude.err"
rc=$?
eq "claude -p exits 0" "$rc" 0
[ $rc -eq 0 ] || { cat "$T/claude.err"; head -c 2000 "$T/claude.json"; }
contains "claude finished the script" "$(cat "$T/claude.json")" '"result":"done"'
eq "the model got every tool result" "$(model_steps)" 6

r=$(model_result 0)
contains "the snapshot's functions are there" "$r" "probe-ok"
contains "an allowed host is reached" "$r" '"path": "/from-claude"'
r=$(model_result 1)
contains "a denied host is refused, the reason in the tool result" "$r" \
    "request to denied.test:$WEB denied: no-reviewer"
check "the access log names it" has_line "$T/alog" \
    "\"host\":\"denied.test\".*\"decision\":\"deny\""
r=$(model_result 2)
check "~/.bashrc cannot be written" cmp -s "$T/bashrc.before" "$FAKEHOME/.bashrc"
contains "and the model is told" "$r" "bashrc"
eq "a file written in the workspace is there" \
    "$(cat "$WS/in-workspace.txt" 2>&1)" "written"
r=$(model_result 4)
contains "after cd sub, the next command runs in sub" "$r" "$WS/sub"
eq "and the project root is still writable" \
    "$(cat "$WS/at-root.txt" 2>&1)" "root"
check "the hook ran in the sandbox" has_line "$WS/hook.log" \
    "^hook-sandboxed=1$"
contains "a stdio MCP server runs in the sandbox" "$(model_result 5)" \
    "sandboxed=1"
check "no cwd file is left in the temp dir" \
    sh -c "! ls '$T/ctmp' | grep -q '^claude-....-cwd$'"

# The hook instead of the prefix: only the model's commands sandboxed.
model_stop
cat >"$FAKEHOME/.claude/settings.json" <<EOF
{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "command", "command": "$RUN --hook claude-code"}]}]}}
EOF
model_script "$T/script2.json" \
    'echo "sandboxed=$PISBX_SANDBOX"; curl -sS http://denied.test:'"$WEB"'/ 2>&1'
model_start "$T/script2.json"
(cd "$WS" && ANTHROPIC_BASE_URL="$MODEL_URL" ANTHROPIC_API_KEY=sk-scripted \
    IS_SANDBOX=1 timeout 180 "$CLAUDE_BIN" -p "run the scripted commands" \
    --output-format json --dangerously-skip-permissions) \
    >"$T/claude2.json" 2>"$T/claude2.err"
eq "claude -p with the hook exits 0" "$?" 0
r=$(model_result 0)
contains "--hook claude-code: the command ran in the sandbox" "$r" "sandboxed=1"
contains "and its refusal reached the model" "$r" "denied: no-reviewer"

done_testing
