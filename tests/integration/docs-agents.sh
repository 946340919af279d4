#!/bin/sh
# docs/agents.md and the README's agent setup, run as written in a fresh
# home: the config block with its access log (whose directory does not
# exist yet: made, private, and the command runs); an access log that
# cannot be made stops every command with a message naming the path and
# the key; files beside the project are not there, and the allowRead
# line shows them read-only; pi's settings line from both pages makes the
# file, or sets shellPath in an existing one and keeps its other settings.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

SH=$PISBX_BINDIR/pisbx-sh
AGENTS=$PISBX_TOP/docs/agents.md

# The ```json block that sets proxy.accessLog, with the page's home ours.
awk '/^```json$/ { f = 1; b = ""; next } f && /^```$/ { if (b ~ /accessLog/) { printf "%s", b; exit } f = 0; next }
    f { b = b $0 "\n" }' "$AGENTS" | sed "s|/home/you|$FAKEHOME|g" \
    >"$T/agents.json"
contains "agents.md has a config with proxy.accessLog" "$(cat "$T/agents.json")" \
    '"accessLog": "'"$FAKEHOME"'/.local/state/pisbx/access.log"'
mkdir -p "$FAKEHOME/.config/pisbx"
cp "$T/agents.json" "$FAKEHOME/.config/pisbx/config.json"
check "the access log's directory does not exist yet" \
    test ! -e "$FAKEHOME/.local"
out=$(cd "$WS" && "$SH" -c 'echo ran' 2>&1)
eq "pisbx-sh with that config runs the command" "$out" ran
LOG=$FAKEHOME/.local/state/pisbx/access.log
check "the access log was made" test -f "$LOG"
eq "its directory is private" "$(stat -c %a "$FAKEHOME/.local/state/pisbx")" 700
eq "and so are the ones made above it" \
    "$(stat -c %a "$FAKEHOME/.local/state") $(stat -c %a "$FAKEHOME/.local")" \
    "700 700"
(cd "$WS" && "$SH" -c 'curl -s -o /dev/null http://denied.test/') \
    >/dev/null 2>&1
check "the decisions are logged there" has_line "$LOG" '"host":"denied.test"'

# A directory that cannot be made: nothing runs, and the message says
# which path, why, and which key in which file.
: >"$T/file"
echo '{"proxy": {"accessLog": "'"$T/file/sub/access.log"'"}}' >"$T/bad.json"
out=$(cd "$WS" && PISBX_CONFIG=$T/bad.json "$SH" -c 'echo ran' 2>&1)
eq "an access log whose directory cannot be made: exit 125" "$?" 125
eq "with the path, the reason and the key to change" "$out" \
    "pisbx-sh: access log (proxy.accessLog in $T/bad.json): $T/file is not a directory; nothing was run"
out=$(cd "$WS" && "$RUN" --access-log "$T/file/x.log" -- true 2>&1)
eq "--access-log: the option is named" "$out" \
    "pisbx-run: access log (--access-log): $T/file is not a directory; nothing was run"

# Files next to the project: hidden (ENOENT), and shown read-only by the
# allowRead line agents.md gives.
mkdir -p "$FAKEHOME/src/proj" "$FAKEHOME/src/shared" "$FAKEHOME/pkgs"
echo shared >"$FAKEHOME/src/shared/f"
echo wheel >"$FAKEHOME/pkgs/w.whl"
git init -q "$FAKEHOME/src/proj"
chmod -R a+rwX "$FAKEHOME/src" "$FAKEHOME/pkgs"
awk '/^```json$/ { f = 1; b = ""; next } f && /^```$/ { if (b ~ /allowRead/) { printf "%s", b; exit } f = 0; next }
    f { b = b $0 "\n" }' "$AGENTS" >"$T/beside.json"
contains "agents.md has the allowRead line" "$(cat "$T/beside.json")" \
    '"allowRead": ["~/src/shared", "~/pkgs"]'
beside='cat ../shared/f ~/pkgs/w.whl; echo x >../shared/g'
echo '{}' >"$T/none.json"
out=$(cd "$FAKEHOME/src/proj" && PISBX_CONFIG=$T/none.json "$SH" -c \
    "$beside" 2>&1)
contains "without it, a sibling is not there" "$out" \
    "../shared/f: No such file or directory"
out=$(cd "$FAKEHOME/src/proj" && PISBX_CONFIG=$T/beside.json "$SH" -c \
    "$beside" 2>&1)
contains "with it, the sibling and ~/pkgs are read" "$out" "shared
wheel"
contains "and stay read-only" "$out" "Read-only file system"

# pi's settings line, from the README and from agents.md.
awk '/^# pi: / { n = 2; next } n > 0 { print; n-- }' "$PISBX_TOP/README.md" \
    >"$T/pi-readme.sh"
awk '/^To set it from a shell/ { f = 1 } f && /^```sh$/ { g = 1; next }
    g && /^```$/ { exit } g' "$AGENTS" >"$T/pi-agents.sh"
for page in readme agents; do
	check "$page: pi's settings line is there" grep -q shellPath "$T/pi-$page.sh"
	H=$T/pi-$page.home
	mkdir -p "$H"
	(HOME=$H sh "$T/pi-$page.sh") >"$T/pi.out" 2>&1
	eq "$page: with no ~/.pi it makes the file" \
	    "$(jq -c . "$H/.pi/agent/settings.json" 2>&1)" \
	    '{"shellPath":"/usr/local/bin/pisbx-sh"}'
	echo '{"defaultModel": "m", "shellPath": "/bin/bash", "theme": {"a": 1}}' \
	    >"$H/.pi/agent/settings.json"
	(HOME=$H sh "$T/pi-$page.sh") >"$T/pi.out" 2>&1
	eq "$page: an existing file keeps its other settings" \
	    "$(jq -cS . "$H/.pi/agent/settings.json" 2>&1)" \
	    '{"defaultModel":"m","shellPath":"/usr/local/bin/pisbx-sh","theme":{"a":1}}'
	check "$page: and nothing is left beside it" \
	    test "$(ls "$H/.pi/agent")" = settings.json
done
done_testing
