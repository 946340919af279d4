#!/bin/sh
# pisbx-sh as agents call it, without an agent: as a shell path
# ("-c LINE"), as a one-word shell prefix ("LINE"; "PROG ARG..." for MCP
# servers), with its config and access log from the config; Claude Code's
# bookkeeping (snapshot read-only, cwd file written back, nothing else);
# a single writable file; and pisbx-run --hook claude-code.  The real
# agents: agent-claude.sh and agent-pi.sh.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

SH=$PISBX_BINDIR/pisbx-sh
[ -x "$SH" ] || { not_ok "pisbx-sh installed beside pisbx-run"; exit 1; }

srv_start http web
WEB=$SRV_PORT
HOSTS_NAMES="allowed.test denied.test" run_config --allow "allowed.test" \
    --proxy "{\"accessLog\": \"$T/alog\"}"
export PISBX_CONFIG="$CONF"

# A shell path: -c LINE through bash, whatever $SHELL is.
out=$(cd "$WS" && SHELL=/bin/dash "$SH" -c '[[ -n x ]] && echo "$0 $PISBX_SANDBOX"' 2>&1)
eq "-c LINE runs bash in the sandbox" "$out" "/bin/bash 1"
out=$(cd "$WS" && "$SH" -c 'echo "$0|$1|$2"' name 'a b' c 2>&1)
eq "-c LINE NAME ARGS: \$0 and the arguments" "$out" "name|a b|c"
out=$(cd "$WS" && "$SH" -lc 'echo login' 2>&1)
eq "-lc is taken (a login shell)" "$out" "login"
# A one-word prefix: the whole line as one argument (the Bash tool,
# hooks through /bin/sh -c), or a program and its arguments (MCP).
out=$(cd "$WS" && "$SH" 'x=1; echo "line $x $PISBX_SANDBOX"' 2>&1)
eq "LINE (one argument) runs through bash" "$out" "line 1 1"
out=$(cd "$WS" && "$SH" "'/usr/bin/printf' '%s-' 'a b'" 2>&1)
eq "a quoted program line (Claude Code's MCP form)" "$out" "a b-"
out=$(cd "$WS" && "$SH" /usr/bin/printf '%s|' 'a b' c 2>&1)
eq "PROG ARG... runs the program" "$out" "a b|c|"
(cd "$WS" && "$SH" --config "$CONF" -c true) >"$T/err" 2>&1
eq "options are refused (a prefix carries none)" "$?" 2
contains "the refusal says where options go" "$(cat "$T/err")" "config"
(cd "$WS" && "$SH") >/dev/null 2>&1
eq "no command is a usage error" "$?" 2
(cd "$WS" && "$SH" -c 'exit 7'); eq "the command's status" "$?" 7

# The config from PISBX_CONFIG, the access log from the config.
out=$(cd "$WS" && "$SH" -c "curl -sS http://allowed.test:$WEB/hello; echo; curl -sS http://denied.test:$WEB/" 2>&1)
contains "an allowed host is reached" "$out" '"path": "/hello"'
contains "a denied host is refused, and the refusal is in the output" \
    "$out" "request to denied.test:$WEB denied: no-reviewer"
check "the config's access log has the allowed request" \
    has_line "$T/alog" "\"host\":\"allowed.test\".*\"decision\":\"allow\""
check "and the denied one" \
    has_line "$T/alog" "\"host\":\"denied.test\".*\"decision\":\"deny\""
echo '{"proxy": {"accessLog": "alog"}}' >"$T/rel.json"
(cd "$WS" && PISBX_CONFIG="$T/rel.json" "$SH" -c true) >"$T/err" 2>&1
eq "a relative accessLog is a config error" "$?" 78
contains "it names the key" "$(cat "$T/err")" '$.proxy.accessLog'

# What pisbx prints reaches the caller with the command's own output (an
# agent sends both back to its model).
out=$(cd "$WS" && "$SH" -c 'touch .bashrc; echo done' 2>&1)
contains "the guard's refusal reaches the output" "$out" \
    "refused to create $WS/.bashrc"
check ".bashrc was not created" test ! -e "$WS/.bashrc"

# Claude Code's line: its snapshot (in the hidden home) is sourced and
# its cwd file (in a read-only temp dir) written back; nothing else is.
CTMP=$T/ctmp
CCFG=$FAKEHOME/.claude
mkdir -p "$CTMP" "$CCFG/shell-snapshots" "$WS/sub"
chmod 700 "$CTMP"
SNAP=$CCFG/shell-snapshots/snapshot-bash-1796051827154-txpytb.sh
echo 'pisbx_probe() { echo probe-ok; }' >"$SNAP"
echo 'secret' >"$CCFG/shell-snapshots/other.txt"
echo 'secret' >"$CCFG/credentials.json"
claude_line() {	# claude_line CMD CWDFILE: Claude Code 2.1.197's line
	_q=$(printf '%s' "$1" | sed "s/'/'\"'\"'/g")
	printf "source %s 2>/dev/null || true && { shopt -u extglob || setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL; } >/dev/null 2>&1 || true && eval '%s' < /dev/null && pwd -P >| %s" \
	    "$SNAP" "$_q" "$2"
}
csh() {		# csh DIR LINE: pisbx-sh as Claude Code calls it
	(cd "$1" && CLAUDE_CONFIG_DIR="$CCFG" CLAUDE_CODE_TMPDIR="$CTMP" \
	    "$SH" "$2")
}
out=$(csh "$WS" "$(claude_line 'pisbx_probe; cd sub' "$CTMP/claude-a771-cwd")" 2>&1)
eq "the snapshot's functions are there" "$out" "probe-ok"
eq "the cwd file is written back (cd followed)" \
    "$(cat "$CTMP/claude-a771-cwd" 2>&1)" "$WS/sub"
out=$(csh "$WS" "$(claude_line "cat $CCFG/shell-snapshots/other.txt $CCFG/credentials.json" "$CTMP/claude-a772-cwd")" 2>&1)
case $out in
*secret*) not_ok "only the snapshot itself is readable ($out)" ;;
*) ok "only the snapshot itself is readable" ;;
esac
out=$(csh "$WS" "$(claude_line "echo x >$CTMP/claude-a773-cwd.x; echo x >$CTMP/other" "$CTMP/claude-a773-cwd")" 2>&1)
check "nothing else in the temp dir is writable" \
    test ! -e "$CTMP/other" -a ! -e "$CTMP/claude-a773-cwd.x"
out=$(csh "$WS" "$(claude_line 'true' "$CTMP/claude-zzzz-cwd")" 2>&1)
check "a name off Claude Code's pattern is not written" \
    test ! -e "$CTMP/claude-zzzz-cwd"
out=$(csh "$WS" "$(claude_line 'true' "$T/claude-a774-cwd")" 2>&1)
check "a cwd file outside the temp dir is not written" \
    test ! -e "$T/claude-a774-cwd"
csh "$WS" "$(claude_line 'false' "$CTMP/claude-a775-cwd")" >/dev/null 2>&1
check "a cwd file the command never wrote is not left behind" \
    test ! -e "$CTMP/claude-a775-cwd"
ln -s "$FAKEHOME/.ssh/id_test" "$CTMP/claude-a776-cwd"
out=$(csh "$WS" "$(claude_line 'true' "$CTMP/claude-a776-cwd")" 2>&1)
eq "a symlink in the cwd file's place is refused" \
    "$(cat "$FAKEHOME/.ssh/id_test")" "PRIVATE KEY MATERIAL"
contains "and the refusal says why" "$out" "not letting the command write"
# The grant opens the mount and Landlock to that one file; the creation
# guard still checks every write by name.  A temp dir among an existing
# repository's hooks: the cwd file there is never written.
mkdir -p "$WS/nested"
git -C "$WS/nested" init -q
out=$(cd "$WS" && CLAUDE_CONFIG_DIR="$CCFG" \
    CLAUDE_CODE_TMPDIR="$WS/nested/.git/hooks" \
    "$SH" "$(claude_line 'true' "$WS/nested/.git/hooks/claude-a777-cwd")" 2>&1)
contains "a cwd file among a repository's hooks: the guard refuses it" "$out" \
    "refused to write $WS/nested/.git/hooks/claude-a777-cwd"
check "and nothing is left there" test ! -e "$WS/nested/.git/hooks/claude-a777-cwd"
rm -rf "$WS/nested"

# The workspace is the project: the top of the git work tree holding the
# working directory, never the home directory or a tree holding a hidden
# path; PISBX_WORKSPACE names it.
run_config
export PISBX_CONFIG="$CONF"
mkdir -p "$T/proj/src/deep" "$T/plain/sub" "$T/other"
git -C "$T/proj" init -q
(cd "$T/proj/src/deep" && "$SH" -c 'echo top >../../top.txt && pwd') >"$T/out" 2>&1
eq "from a subdirectory, the git work tree's top is writable" \
    "$(cat "$T/proj/top.txt" 2>&1)" "top"
# The mandatory set still holds at the working directory (an agent or an
# editor started there reads its .claude, .vscode), and at the top.
(cd "$T/proj/src" && "$SH" -c 'mkdir -p .claude .vscode ../.vscode;
    echo x >.claude/settings.json; echo x >.vscode/tasks.json;
    echo x >.bashrc; echo x >../.vscode/tasks.json') >/dev/null 2>&1
check "no .claude, .vscode or .bashrc planted in the working directory" \
    test ! -e "$T/proj/src/.claude/settings.json" \
    -a ! -e "$T/proj/src/.vscode/tasks.json" -a ! -e "$T/proj/src/.bashrc"
check "nor at the workspace's top" test ! -e "$T/proj/.vscode/tasks.json"
(cd "$T/plain/sub" && "$SH" -c 'echo x >../above.txt') >/dev/null 2>&1
check "without git, only the working directory" test ! -e "$T/plain/above.txt"
(cd "$T/plain/sub" && "$SH" -c 'echo x >here.txt') >/dev/null 2>&1
check "which is writable" test -e "$T/plain/sub/here.txt"
git -C "$FAKEHOME" init -q
mkdir -p "$FAKEHOME/proj"
(cd "$FAKEHOME/proj" && "$SH" -c 'echo x >in-proj; echo x >../in-home') >/dev/null 2>&1
check "a home that is a git work tree does not become the workspace" \
    test ! -e "$FAKEHOME/in-home"
check "the working directory in it does" test -e "$FAKEHOME/proj/in-proj"
(cd "$FAKEHOME" && "$SH" -c 'echo x >in-home') >"$T/err" 2>&1
eq "run in that home itself: refused (the home is hidden)" "$?" 125
contains "saying why" "$(cat "$T/err")" "refusing to run in $FAKEHOME"
check "nothing written" test ! -e "$FAKEHOME/in-home"
rm -rf "$FAKEHOME/.git" "$FAKEHOME/proj"
mkdir -p "$T/proj/secret"
run_config --fs "{\"denyRead\": [\"$T/proj/secret\"]}"
(cd "$T/proj/src" && "$SH" -c 'echo x >../hid.txt; echo x >here.txt') >/dev/null 2>&1
check "a work tree holding a hidden path does not become the workspace" \
    test ! -e "$T/proj/hid.txt"
check "the working directory does" test -e "$T/proj/src/here.txt"
run_config
(cd "$T/plain/sub" && PISBX_WORKSPACE="$T/other" "$SH" -c 'echo x >'"$T/other/ws.txt") >/dev/null 2>&1
check "PISBX_WORKSPACE names the workspace" test -e "$T/other/ws.txt"
(cd "$T/plain/sub" && PISBX_WORKSPACE=other "$SH" -c true) >"$T/err" 2>&1
eq "a relative PISBX_WORKSPACE is refused" "$?" 125
contains "saying why" "$(cat "$T/err")" "PISBX_WORKSPACE=other: not an absolute path"
(cd "$T/plain/sub" && PISBX_WORKSPACE="$FAKEHOME" "$SH" -c true) >"$T/err" 2>&1
eq "PISBX_WORKSPACE=\$HOME is refused" "$?" 125
contains "saying why" "$(cat "$T/err")" "cannot be the workspace"
(cd "$T/plain/sub" && PISBX_WORKSPACE=/ "$SH" -c "echo x >$T/slash.txt") >"$T/err" 2>&1
eq "PISBX_WORKSPACE=/ is refused" "$?" 125
contains "saying why" "$(cat "$T/err")" "refusing to run with / as a writable directory"
check "nothing written" test ! -e "$T/slash.txt"
# Like the home as working directory: with only the secrets hidden, the
# home can be the workspace; they stay hidden, its mandatory set holds.
run_config --fs '{"denyRead": ["~/.ssh"]}'
(cd "$T/plain/sub" && PISBX_WORKSPACE="$FAKEHOME" "$SH" -c \
    'echo x >"$HOME/notes.txt"; echo x >"$HOME/.bashrc"; cat "$HOME/.ssh/id_test"') \
    >"$T/out" 2>&1
check "PISBX_WORKSPACE=\$HOME with denyRead [~/.ssh]: the home is written" \
    test -e "$FAKEHOME/notes.txt"
check "its .bashrc is not" test ! -e "$FAKEHOME/.bashrc"
check "~/.ssh stays hidden" sh -c "! grep -q PRIVATE '$T/out'"
rm -f "$FAKEHOME/notes.txt"
run_config
(cd "$T/proj/src" && "$RUN" -v -- true) >"$T/err" 2>&1
contains "-v names the workspace" "$(cat "$T/err")" "fs: workspace $T/proj"

# allowWrite naming a single file: writable (Landlock gives files the
# file rights), its neighbours not.
echo old >"$T/one-file"
run_config --fs "{\"allowWrite\": [\".\", \"$T/one-file\"]}"
out=$(cd "$WS" && "$RUN" --config "$CONF" -v -- /bin/sh -c "echo new >$T/one-file && cat $T/one-file; echo x >$T/neighbour" 2>&1)
eq "a single allowWrite file is written" "$(cat "$T/one-file")" "new"
check "its neighbour is not" test ! -e "$T/neighbour"
contains "-v lists it writable" "$out" "writable  $T/one-file"
# A single file is held to the mandatory set and $PATH like a directory's
# contents: naming one is a config error, not a way around the set.
mkdir -p "$T/bin"
for f in "$FAKEHOME/.npmrc" "$T/bin/tool" "$WS/.bashrc"; do
	echo keep >"$f"
	run_config --fs "{\"allowWrite\": [\".\", \"$f\"]}"
	(cd "$T/plain/sub" && PATH="$T/bin:$PATH" "$RUN" --config "$CONF" -- \
	    /bin/sh -c "echo evil >$f") >"$T/err" 2>&1
	eq "allowWrite naming $f: a config error" "$?" 78
	contains "naming the file" "$(cat "$T/err")" \
	    "filesystem.allowWrite names $f, which is protected"
	eq "which is unchanged" "$(cat "$f")" keep
	rm -f "$f"
done
run_config

# --hook claude-code: the Bash command comes back wrapped in pisbx-sh,
# every other field kept; the wrapped line runs the command unchanged.
cmd='echo "it'"'"'s $PISBX_SANDBOX" && touch hooked'
"$PY" - "$cmd" >"$T/hook.in" <<'EOF'
import json, sys
json.dump({"session_id": "s", "cwd": "/", "hook_event_name": "PreToolUse",
           "tool_name": "Bash", "tool_use_id": "toolu_1",
           "tool_input": {"command": sys.argv[1], "description": "d",
                          "timeout": 5000}}, sys.stdout)
EOF
"$RUN" --hook claude-code <"$T/hook.in" >"$T/hook.out" 2>"$T/hook.err"
eq "--hook claude-code exits 0" "$?" 0
wrapped=$("$PY" - "$T/hook.out" <<'EOF'
import json, sys
o = json.load(open(sys.argv[1]))["hookSpecificOutput"]
assert o["hookEventName"] == "PreToolUse", o
assert o["permissionDecision"] == "allow", o
u = o["updatedInput"]
assert u["description"] == "d" and u["timeout"] == 5000, u
print(u["command"])
EOF
)
contains "the command is wrapped in pisbx-sh -c" "$wrapped" "/pisbx-sh' -c '"
out=$(cd "$WS" && /bin/sh -c "$wrapped" 2>&1)
eq "the wrapped command runs unchanged, in the sandbox" "$out" "it's 1"
check "and its file is in the workspace" test -e "$WS/hooked"
echo '{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}' |
    "$RUN" --hook claude-code >"$T/hook.out" 2>"$T/hook.err"
eq "no command to wrap: exit 2 (blocks the call)" "$?" 2
contains "with the reason on stderr" "$(cat "$T/hook.err")" "not run"
eq "and nothing on stdout" "$(cat "$T/hook.out")" ""
printf '{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "a\\u0000b"}}' |
    "$RUN" --hook codex >/dev/null 2>&1
eq "a NUL in the command: exit 2" "$?" 2
echo 'not json' | "$RUN" --hook claude-code >/dev/null 2>&1
eq "garbage: exit 2" "$?" 2
echo '{"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_input": {"file_path": "/x"}}' |
    "$RUN" --hook claude-code >"$T/hook.out" 2>/dev/null
eq "another tool: left alone (exit 0)" "$?" 0
eq "with no answer" "$(cat "$T/hook.out")" ""
"$RUN" --hook vim </dev/null >/dev/null 2>&1
eq "an unknown agent is a usage error" "$?" 2

done_testing
