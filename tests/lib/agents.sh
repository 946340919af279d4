# Helpers for the agent scenarios (tests/integration/agent-*.sh): the real
# agents from the npm registry, installed once into a cache under the
# build folder, and a scripted model on 127.0.0.1 that plays the model for
# them.  Source after common.sh:
#   . "$(dirname "$0")/../lib/common.sh"
#   . "$PISBX_TOP/tests/lib/agents.sh"
# Gives: agent_install NAME (claude or pi; sets CLAUDE_BIN or PI_BIN, skips
# with exit 77 only when the registry cannot be reached), model_start
# (the scripted model; MODEL_URL, MODEL_REC), model_result STEP (what the
# model was sent back for step STEP), agent_env (a throwaway HOME $AHOME
# and the variables that keep the agents off every other network).

# Pinned: how the agents call a shell changes between releases.
CLAUDE_PKG=@anthropic-ai/claude-code
CLAUDE_VERSION=2.1.197
PI_PKG=@mariozechner/pi-coding-agent
PI_VERSION=0.73.1
# One cache for the plain and the sanitizer build (about 440 MB).
AGENTS_CACHE=${PISBX_AGENTS_CACHE:-$PISBX_TOP/build/agents}

# agent_install claude|pi: the pinned agent in $AGENTS_CACHE/NAME-VERSION,
# installed from the npm registry on first use.
agent_install() {
	case $1 in
	claude) _pkg=$CLAUDE_PKG _ver=$CLAUDE_VERSION ;;
	pi) _pkg=$PI_PKG _ver=$PI_VERSION ;;
	*) echo "agent_install: unknown agent $1" >&2; exit 2 ;;
	esac
	_dir=$AGENTS_CACHE/$1-$_ver
	mkdir -p "$AGENTS_CACHE"
	(
		flock 9
		[ -f "$_dir/.installed" ] && exit 0
		command -v npm >/dev/null 2>&1 || {
			echo "npm is not installed (./bootstrap --test installs it)"
			exit 3
		}
		# The registry unreachable is the one reason to skip.
		if ! timeout 60 npm view "$_pkg@$_ver" version \
		    >"$T/npm-view.log" 2>&1; then
			echo "the npm registry cannot be reached:" \
			    "$(tail -n 1 "$T/npm-view.log")"
			exit 77
		fi
		rm -rf "$_dir.tmp"
		mkdir -p "$_dir.tmp"
		# Exact versions, down to pi's own packages (its
		# dependencies say ^VERSION).
		"$PY" - "$_dir.tmp/package.json" "$_pkg" "$_ver" "$1" <<'EOF'
import json, sys
out, pkg, ver, name = sys.argv[1:]
p = {"name": "pisbx-test-agents", "private": True,
     "dependencies": {pkg: ver}}
if name == "pi":
    p["overrides"] = {"@mariozechner/pi-agent-core": ver,
                      "@mariozechner/pi-ai": ver,
                      "@mariozechner/pi-tui": ver}
json.dump(p, open(out, "w"))
EOF
		echo "installing $_pkg@$_ver into $_dir (once)" >&2
		if ! timeout 600 npm install --prefix "$_dir.tmp" --no-audit \
		    --no-fund --no-update-notifier \
		    --cache "$AGENTS_CACHE/.npm-cache" >"$T/npm.log" 2>&1; then
			cat "$T/npm.log"
			echo "npm install $_pkg@$_ver failed"
			exit 3
		fi
		touch "$_dir.tmp/.installed"
		rm -rf "$_dir"
		mv "$_dir.tmp" "$_dir"
	) 9>"$AGENTS_CACHE/.lock" >"$T/install.out"
	_rc=$?
	if [ $_rc -eq 77 ]; then
		skip "$(tail -n 1 "$T/install.out")"
	elif [ $_rc -ne 0 ]; then
		cat "$T/install.out"
		not_ok "install $_pkg@$_ver"
		exit 1
	fi
	case $1 in
	claude)
		# The platform package's native binary: no wrapper, no postinstall.
		CLAUDE_BIN=$_dir/node_modules/@anthropic-ai/claude-code-linux-x64/claude
		[ -x "$CLAUDE_BIN" ] ||
		    CLAUDE_BIN=$_dir/node_modules/.bin/claude
		;;
	pi)
		PI_BIN=$_dir/node_modules/.bin/pi
		# Debian 12's own nodejs is 18: say so rather than fail inside pi.
		_nv=$(node -p 'process.versions.node.split(".").map(Number)
		    .reduce((a, v, i) => a + v * [1e6, 1e3, 1][i], 0)' 2>/dev/null)
		[ "${_nv:-0}" -ge 20006000 ] ||
		    skip "pi $PI_VERSION needs Node >= 20.6; node here: $(node --version 2>&1)"
		;;
	esac
}

# model_start SCRIPT.json: the scripted model on an ephemeral port of
# 127.0.0.1; MODEL_URL its base URL, MODEL_REC the tool results it got.
model_start() {
	MODEL_REC=$T/model.rec
	rm -f "$T/model.port" "$MODEL_REC"
	spawn "$PY" "$PISBX_TOP/tests/lib/model.py" --script "$1" \
	    --port-file "$T/model.port" --record "$MODEL_REC" \
	    --requests "$T/model.requests"
	MODEL_PID=$LAST_PID
	wait_file "$T/model.port" || { not_ok "scripted model started"; exit 1; }
	MODEL_URL=http://127.0.0.1:$(cat "$T/model.port")
}

# model_stop: stop the model (a test that runs an agent twice restarts it).
model_stop() {
	kill "$MODEL_PID" 2>/dev/null
	wait "$MODEL_PID" 2>/dev/null
}

# model_script FILE CMD...: a script that runs each CMD, then says "done".
model_script() {
	_f=$1; shift
	"$PY" - "$_f" "$@" <<'EOF'
import json, sys
json.dump({"commands": sys.argv[2:], "final": "done"}, open(sys.argv[1], "w"))
EOF
}

# model_result STEP: the tool result the model was sent for step STEP.
model_result() {
	"$PY" - "$MODEL_REC" "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["step"] == int(sys.argv[2]):
        sys.stdout.write(r["text"])
        break
EOF
}

# model_steps: how many tool results the model got.
model_steps() {
	wc -l <"$MODEL_REC" | tr -d ' '
}

# agent_env [HOME]: a throwaway home $AHOME (default $T/ahome) and an
# environment in which neither agent phones anywhere but the scripted
# model (the network outside loopback is closed here anyway; this keeps
# the runs from waiting on it).
agent_env() {
	AHOME=${1:-$T/ahome}
	mkdir -p "$AHOME"
	export HOME="$AHOME"
	unset XDG_CONFIG_HOME PISBX_CONFIG PISBX_WORKSPACE CLAUDE_CONFIG_DIR \
	    CLAUDE_CODE_TMPDIR CLAUDE_CODE_SHELL_PREFIX PI_CODING_AGENT_DIR \
	    ANTHROPIC_AUTH_TOKEN ANTHROPIC_OAUTH_TOKEN
	unset HTTP_PROXY HTTPS_PROXY ALL_PROXY http_proxy https_proxy all_proxy
	export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
	    DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
	    DISABLE_BUG_COMMAND=1 PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 \
	    PI_TELEMETRY=0 NO_COLOR=1
	export SHELL=/bin/bash
}
