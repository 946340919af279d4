#!/bin/sh
# The folders' layering (README, Layout): scripts/includes.sh --check
# passes on the tree, and fails, naming the file and the rule, on a copy
# of the tree with one offending include added -- a lower layer reaching
# up, the old approval <-> proxy cycle, supervisor/ using proxy/, a bare
# name found through -I, a header that does not exist, a folder missing
# from the table.
. "$(dirname "$0")/../lib/common.sh"

CHECK="$PISBX_TOP/scripts/includes.sh"

out=$(sh "$CHECK" --check "$PISBX_TOP" 2>&1); rc=$?
if [ $rc -eq 0 ]; then
	ok "the tree keeps the layering"
else
	not_ok "the tree breaks the layering (exit $rc)"
	printf '%s\n' "$out" | sed 's/^/# /'
fi
check "the check says so" test "$out" = "includes: layering OK"

out=$(sh "$CHECK" "$PISBX_TOP")
check "the graph has approval -> policy" \
    sh -c 'printf "%s\n" "$1" | grep -q "^approval -> policy  ([0-9]*)$"' _ "$out"
check "the graph has no approval -> proxy edge" \
    sh -c '! printf "%s\n" "$1" | grep -q "^approval -> proxy "' _ "$out"

# A copy of the sources with LINE added to FILE (created if missing).
tree_with() {
	dst=$(mktemp -d "$T/tree.XXXXXX")
	(cd "$PISBX_TOP" && find common policy approval proxy supervisor \
	    launcher tests bench \( -name '*.c' -o -name '*.h' \) -type f \
	    -exec cp --parents {} "$dst" \;)
	mkdir -p "$dst/$(dirname "$1")"
	printf '%s\n' "$2" >>"$dst/$1"
	echo "$dst"
}

# refused FILE LINE MESSAGE: the check fails and says MESSAGE.
refused() {
	dir=$(tree_with "$1" "$2")
	out=$(sh "$CHECK" --check "$dir" 2>&1); rc=$?
	if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -qF -- "$3"; then
		ok "refused: $1: $2"
	else
		not_ok "not refused: $1: $2 (exit $rc)"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

# allowed FILE LINE: the check still passes.
allowed() {
	dir=$(tree_with "$1" "$2")
	if out=$(sh "$CHECK" --check "$dir" 2>&1); then
		ok "allowed: $1: $2"
	else
		not_ok "refused: $1: $2"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

refused policy/canon.c '#include "common/log.h"' \
    'policy/canon.c: #include "common/log.h": policy/ may not include common/'
refused common/log.c '#include "policy/policy.h"' \
    'common/ may not include policy/'
refused approval/review.c '#include "proxy/proxy.h"' \
    'approval/review.c: #include "proxy/proxy.h": approval/ may not include proxy/'
refused approval/approval.h '#include "launcher/launcher.h"' \
    'approval/ may not include launcher/'
refused supervisor/main.c '#include "proxy/proxy.h"' \
    'supervisor/ may not include proxy/'
refused proxy/http.c '#include "launcher/launcher.h"' \
    'proxy/ may not include launcher/'
refused proxy/http.c '#include "supervisor/supervisor.h"' \
    'proxy/ may not include supervisor/'
refused proxy/dns.c '#include "policy.h"' \
    'proxy/dns.c: #include "policy.h" does not name its folder'
refused proxy/dns.c '#  include "log.h"' \
    'does not name its folder'
refused proxy/dns.c '#include "common/nosuch.h"' \
    'proxy/dns.c: #include "common/nosuch.h": no such file from the top'
refused newdir/x.c '#include "common/log.h"' \
    'folder newdir/ is not in the layering table'

allowed proxy/dns.c '#include "approval/approval.h"'
allowed supervisor/main.c '#include "approval/approval.h"'
allowed launcher/env.c '#include "proxy/proxy.h"'
allowed launcher/env.c '#include "supervisor/supervisor.h"'
allowed tests/unit/test_pattern.c '#include "proxy/proxy_int.h"'
allowed proxy/dns.c '#include <sys/types.h>'

done_testing
