#!/bin/sh
# Every refusal says what was refused and how to allow it: a refused
# .git/config names filesystem.allowGitConfig and the config file; a
# configured path that does not exist is a warning under -v (and silence
# without it); the proxy's 403 names the file and the entry.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

# 1. .git/config of a repository older than the run.
git init -q "$WS"
chmod -R a+rwX "$WS"
run_config --allow "allowed.test"
sbx -- git config user.name sandboxed >"$T/gc.out" 2>&1
check "git config in an existing repository is refused" test $? -ne 0
contains "the refusal names filesystem.allowGitConfig and the file" \
    "$(cat "$T/gc.out")" \
    "set filesystem.allowGitConfig to true in $CONF"
git init -q "$WS/sub/inner"
chmod -R a+rwX "$WS/sub"
sbx -- git -C sub/inner config user.name sandboxed >"$T/gc3.out" 2>&1
contains "... at any depth too" "$(cat "$T/gc3.out")" \
    "set filesystem.allowGitConfig to true in $CONF"
sbx -- sh -c 'echo x >.git/hooks/pre-commit' >"$T/hook.out" 2>&1
check "a hook is refused" test $? -ne 0
check "... and its refusal does not offer allowGitConfig" \
    sh -c "! grep -q allowGitConfig '$T/hook.out'"
run_config --allow "allowed.test" --fs '{"allowGitConfig": true}'
sbx -- git config user.name sandboxed >"$T/gc2.out" 2>&1
check "with allowGitConfig the same command works" test $? -eq 0
eq "... and wrote the config" "$(git -C "$WS" config user.name)" sandboxed
rm -rf "$WS/.git" "$WS/sub"

# 2. Paths the config names that do not exist: said under -v only.
run_config --allow "allowed.test" --fs '{"allowWrite": [".", "~/.npm"],
    "allowRead": ["/nonexistent/pisbx"]}'
sbx -v -- true >"$T/v.out" 2>&1
contains "-v: a missing allowWrite path is a warning" "$(cat "$T/v.out")" \
    "warning: filesystem.allowWrite[1]: ~/.npm ($FAKEHOME/.npm) does not exist: nothing is made writable"
contains "-v: a missing allowRead path too" "$(cat "$T/v.out")" \
    "warning: filesystem.allowRead[0]: /nonexistent/pisbx (/nonexistent/pisbx) does not exist"
sbx -- true >"$T/q.out" 2>&1
eq "without -v: nothing" "$(cat "$T/q.out")" ""
check "... and the home directory was not changed" test ! -e "$FAKEHOME/.npm"
done_testing
