#!/bin/sh
# Every program's --help (on stdout, exit 0) and manual page name the
# trusted config's places in docs/config.md's order -- $PISBX_CONFIG,
# $XDG_CONFIG_HOME/pisbx/config.json, ~/.config/pisbx/config.json, srt's
# ~/.srt-settings.json -- and --help and --version; --version answers.
# The two fallbacks are what pisbx-proxy --check then reads.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

VERSION=$(sed -n 's/^#define PISBX_VERSION "\(.*\)"$/\1/p' \
    "$PISBX_TOP/common/log.h")

# in_order DESC FILE STRING...: each string is in FILE, after the one
# before it.
in_order() {
	_d=$1 _f=$2
	shift 2
	if out=$("$PY" - "$_f" "$@" <<'EOF'
import sys
text, at = open(sys.argv[1]).read(), 0
for s in sys.argv[2:]:
    i = text.find(s, at)
    if i < 0:
        sys.exit("%r missing%s" % (s, " after the one before" if s in text else ""))
    at = i + len(s)
EOF
	); then ok "$_d"; else not_ok "$_d: $out"; fi
}

in_order "docs/config.md lists the places in this order" \
    "$PISBX_TOP/docs/config.md" '`--config FILE`' '`$PISBX_CONFIG`' \
    '`$XDG_CONFIG_HOME/pisbx/config.json`' '`$HOME/.config/pisbx/config.json`' \
    '`~/.srt-settings.json`' 'embedded default'

for p in pisbx-run pisbx-sh pisbx-proxy pisbx-supervisor; do
	"$PISBX_BINDIR/$p" --help >"$T/$p.help" 2>"$T/$p.err"
	eq "$p --help exits 0" "$?" 0
	eq "$p --help: nothing on stderr" "$(cat "$T/$p.err")" ""
	in_order "$p --help names the config's places in order" "$T/$p.help" \
	    '$PISBX_CONFIG' '$XDG_CONFIG_HOME/pisbx/config.json' \
	    '~/.config/pisbx/config.json' '~/.srt-settings.json' 'default'
	in_order "$p --help names --help and --version" "$T/$p.help" \
	    '--help' '--version'
	out=$("$PISBX_BINDIR/$p" --version 2>&1)
	eq "$p --version" "$out" "$p $VERSION"
	in_order "$p(1) names the config's places in order" \
	    "$PISBX_TOP/docs/$p.1" 'PISBX_CONFIG' \
	    'XDG_CONFIG_HOME/pisbx/config.json' '~/.config/pisbx/config.json' \
	    '~/.srt-settings.json' 'default'
done

# --explain takes one target and is repeated for more: the help says so,
# and two give two lines, in order.
check "pisbx-proxy --help: --explain is repeated, one target each" sh -c "
	grep -q -- '--explain HOST\[:PORT\]\$' '$T/pisbx-proxy.help' &&
	grep -q -- '\[--explain HOST\[:PORT\]\]\.\.\.' '$T/pisbx-proxy.help' &&
	! grep -q -- '--explain HOST\[:PORT\]\.\.\.' '$T/pisbx-proxy.help'"
echo '{"network": {"allowedDomains": ["a.example"]}}' >"$T/explain.json"
out=$("$PROXY" --config "$T/explain.json" --explain a.example:443 \
    --explain b.example:443 2>&1 | sed 's/.*"host":"\([^"]*\)".*/\1/')
eq "two --explain: two lines, in order" "$(echo $out)" "a.example b.example"

# What the pages promise: ~/.config without XDG_CONFIG_HOME, then
# ~/.srt-settings.json.
H=$T/home
mkdir -p "$H/.config/pisbx"
echo '{"network": {"allowedDomains": ["srt.example"]}}' >"$H/.srt-settings.json"
out=$(env -u PISBX_CONFIG -u XDG_CONFIG_HOME HOME="$H" \
    "$PROXY" --check 2>&1)
eq "without a pisbx config, ~/.srt-settings.json is read" "$out" \
    "$H/.srt-settings.json: configuration OK"
echo '{}' >"$H/.config/pisbx/config.json"
out=$(env -u PISBX_CONFIG -u XDG_CONFIG_HOME HOME="$H" \
    "$PROXY" --check 2>&1)
eq "~/.config/pisbx/config.json comes first" "$out" \
    "$H/.config/pisbx/config.json: configuration OK"
done_testing
