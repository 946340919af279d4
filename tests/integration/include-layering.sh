#!/bin/sh
# The folders' layering (README, Layout): scripts/includes.sh --check
# passes on the tree, and fails, naming the file and the rule, on a copy
# of the tree with one offending include added -- a lower layer reaching
# up, the old approval <-> proxy cycle, supervisor/ using proxy/, a bare
# name found through -I, a header that does not exist, a folder missing
# from the table; and among launcher/'s subfolders, a layer reaching up.
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

# The C sources once; each case gets a copy with LINE added to FILE
# (created if missing).
mkdir "$T/base"
(cd "$PISBX_TOP" && find . \( -name build -o -name 'build-*' -o -name bin \
    -o -name .git \) -prune -o \( -name '*.c' -o -name '*.h' \) -type f \
    -print0 | xargs -0 cp --parents -t "$T/base")
tree_with() {
	dst=$(mktemp -d "$T/tree.XXXXXX")
	cp -a "$T/base/." "$dst"
	mkdir -p "$dst/$(dirname "$1")"
	printf '%s\n' "$2" >>"$dst/$1"
	echo "$dst"
}

# expect EXIT FILE LINE [MESSAGE]: the check on a copy with LINE added
# to FILE exits EXIT (0 passes, 1 refuses) and says MESSAGE.
expect() {
	dir=$(tree_with "$2" "$3")
	out=$(sh "$CHECK" --check "$dir" 2>&1); rc=$?
	what=$([ "$1" -eq 0 ] && echo allowed || echo refused)
	if [ $rc -eq "$1" ] &&
	    printf '%s\n' "$out" | grep -qF -- "${4:-layering OK}"; then
		ok "$what: $2: $3"
	else
		not_ok "not $what: $2: $3 (exit $rc)"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}
refused() { expect 1 "$@"; }
allowed() { expect 0 "$@"; }

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
allowed launcher/main.c '#include "proxy/proxy.h"'
allowed launcher/main.c '#include "supervisor/supervisor.h"'
allowed tests/unit/test_pattern.c '#include "proxy/proxy_int.h"'
allowed proxy/dns.c '#include <sys/types.h>'

# The TLS module (pisbx-tls.so): common/ and its interface, nothing of
# the proxy that links libevent; and the proxy does not reach into it.
refused proxy/tls/conn.c '#include "proxy/proxy.h"' \
    'proxy/tls/conn.c: #include "proxy/proxy.h": proxy/tls/ may not include proxy/'
refused proxy/tls/ca.c '#include "policy/policy.h"' \
    'proxy/tls/ may not include policy/'
refused proxy/relay.c '#include "proxy/tls/tls.h"' \
    'proxy/relay.c: #include "proxy/tls/tls.h": proxy/ may not include proxy/tls/'
allowed proxy/tls/ca.c '#include "common/secmem.h"'
allowed proxy/tls/ca.c '#include "proxy/tlsmod.h"'

# launcher/'s layers (docs/internals.md).
refused launcher/launcher.h '#include "policy/policy.h"' \
    'launcher/launcher.h: #include "policy/policy.h": launcher/launcher.h may not include policy/'
refused launcher/launcher.h '#include "launcher/fs/fs.h"' \
    'launcher/launcher.h may not include launcher/fs/'
refused launcher/newsub/x.c '#include "common/log.h"' \
    'folder launcher/newsub/ is not in the layering table'
refused launcher/git/gitnew.c '#include "launcher/run/run.h"' \
    'launcher/git/gitnew.c: #include "launcher/run/run.h": launcher/git/ may not include launcher/run/'
refused launcher/git/gitnew.c '#include "launcher/fs/fs.h"' \
    'launcher/git/ may not include launcher/fs/'
refused launcher/agent/hook.c '#include "launcher/git/git.h"' \
    'launcher/agent/ may not include launcher/git/'
refused launcher/fs/fspolicy.c '#include "launcher/sandbox/sandbox.h"' \
    'launcher/fs/ may not include launcher/sandbox/'
refused launcher/sandbox/mount.c '#include "launcher/git/git.h"' \
    'launcher/sandbox/ may not include launcher/git/'
refused launcher/sandbox/reaper.c '#include "launcher/run/run.h"' \
    'launcher/sandbox/ may not include launcher/run/'
refused launcher/sandbox/reaper.c '#include "launcher/guard/guard_int.h"' \
    'launcher/sandbox/ may not include launcher/guard/'
refused launcher/guard/gitwork.c '#include "launcher/agent/agent.h"' \
    'launcher/guard/ may not include launcher/agent/'
refused launcher/guard/guard.c '#include "launcher/sandbox/sandbox.h"' \
    'launcher/guard/ may not include launcher/sandbox/'
refused launcher/guard/guard.c '#include "launcher/run/run.h"' \
    'launcher/guard/ may not include launcher/run/'
refused launcher/run/env.c '#include "supervisor/supervisor.h"' \
    'launcher/run/ may not include supervisor/'
allowed launcher/git/gitnew.c '#include "launcher/launcher.h"'
allowed launcher/fs/fspolicy.c '#include "launcher/git/git.h"'
allowed launcher/run/env.c '#include "proxy/proxy.h"'
allowed launcher/run/env.c '#include "launcher/sandbox/sandbox.h"'
allowed launcher/sandbox/reaper.c '#include "launcher/guard/guard.h"'

done_testing
