#!/bin/sh
# --check -v names each allow entry that names nothing on this machine
# (allowWrite ["~/.npm"] on a fresh machine), with its key and index, and
# still exits 0; entries that exist, patterns and relative entries (which
# depend on the run) are not named; without -v the count is given.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

H=$T/home
mkdir -p "$H/.cache" "$T/there"
cat >"$T/c.json" <<J
{"filesystem": {
  "allowWrite": [".", "~/.cache", "~/.npm", "$T/gone/x", "$T/there"],
  "allowRead": ["~/.config/*/x", "$T/missing-read"],
  "additionalAllowRead": ["~/pi-extra"],
  "denyRead": ["~/not-there-either"]}}
J
out=$(HOME=$H "$PROXY" --config "$T/c.json" --check -v 2>&1); rc=$?
eq "--check -v with missing paths: exit 0" "$rc" 0
contains "--check -v: configuration OK" "$out" "$T/c.json: configuration OK"
contains "allowWrite[2] ~/.npm named, expanded" "$out" \
    "$T/c.json: \$.filesystem.allowWrite[2]: warning: $H/.npm does not exist: the entry allows nothing until it does"
contains "allowWrite[3] an absolute path named" "$out" \
    "\$.filesystem.allowWrite[3]: warning: $T/gone/x does not exist"
contains "allowRead[1] named" "$out" \
    "\$.filesystem.allowRead[1]: warning: $T/missing-read does not exist"
contains "additionalAllowRead[0] named" "$out" \
    "\$.filesystem.additionalAllowRead[0]: warning: $H/pi-extra does not exist"
eq "one line per missing entry, nothing else (exist, pattern, relative, deny)" \
    "$(printf '%s\n' "$out" | grep -c 'does not exist')" 4
out=$(HOME=$H "$PROXY" --config "$T/c.json" --check 2>&1); rc=$?
eq "--check without -v: exit 0" "$rc" 0
contains "--check without -v: the count" "$out" \
    "4 notes on keys accepted without effect here: --check -v shows them"
mkdir -p "$H/.npm"
out=$(HOME=$H "$PROXY" --config "$T/c.json" --check -v 2>&1)
eq "once ~/.npm exists it is not named" \
    "$(printf '%s\n' "$out" | grep -c 'allowWrite\[2\]')" 0

done_testing
