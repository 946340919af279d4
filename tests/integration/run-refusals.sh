#!/bin/sh
# Every refusal says what was refused and how to allow it: a refused
# .git/config names filesystem.allowGitConfig and the config file; a
# configured path that does not exist is a warning under -v (and silence
# without it); at exit a summary of what was refused (deduplicated, with
# the entry that would allow each), --quiet, --report FILE.
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
# 3. The summary at exit: destinations (deduplicated, with the entry that
#    would allow them) and file creations, on stderr; --quiet drops it;
#    --report FILE writes every refusal as JSON.
srv_start http web
WEB=$SRV_PORT
run_config --allow "allowed.test" --deny "denied.test"
SCRIPT="for i in 1 2 3; do curl -s -o /dev/null http://other.test:$WEB/; done
curl -s -o /dev/null http://denied.test:$WEB/
curl -s -o /dev/null http://allowed.test:$WEB/
echo x >.bashrc 2>/dev/null
echo x >.bashrc 2>/dev/null
echo ran"
sbx --report "$T/report.json" -- sh -c "$SCRIPT" >"$T/s.out" 2>"$T/s.err"
eq "the command ran" "$(cat "$T/s.out")" ran
contains "the summary starts, saying the command exited 0" \
    "$(cat "$T/s.err")" \
    "pisbx-run: the command exited 0; refused on the way (allow these only if something is missing; --quiet hides this):"
contains "a refused destination once, counted, with its entry and file" \
    "$(cat "$T/s.err")" \
    "  http other.test:$WEB (no-reviewer, 3 times): to allow it, add \"other.test:$WEB\" to network.allowedDomains in $CONF"
contains "a deny-list refusal names its entry" "$(cat "$T/s.err")" \
    "  http denied.test:$WEB (deny-list:denied.test): \"denied.test\" in network.deniedDomains of $CONF refuses it"
contains "a refused creation, counted" "$(cat "$T/s.err")" \
    "  create $WS/.bashrc (2 times): protected path, read by bash outside the sandbox"
check "the allowed destination is not in it" \
    sh -c "! grep -q 'allowed.test' '$T/s.err'"
eq "each destination is listed once" \
    "$(grep -c "other.test:$WEB" "$T/s.err")" 1
"$PY" - "$T/report.json" "$WEB" "$WS" >"$T/report.check" 2>&1 <<'EOF2'
import json, sys
path, web, ws = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = open(path).read()
r = json.loads(text)
assert text.count("\n") == len(r) + 2, "one object per line"
net = [o for o in r if o["kind"] == "network"]
files = [o for o in r if o["kind"] == "file"]
o = [o for o in net if o["host"] == "other.test"][0]
assert o["port"] == web and o["reason"] == "no-reviewer", o
assert o["count"] == 3 and o["proto"] == "http", o
assert "network.allowedDomains" in o["hint"], o
assert [o for o in net if o["reason"] == "deny-list:denied.test"], net
assert files == [{"kind": "file", "op": "create", "path": ws + "/.bashrc",
    "count": 2, "why": files[0]["why"]}], files
assert "read by bash" in files[0]["why"], files
print("report ok")
EOF2
eq "--report: every refusal as JSON, one object per line" \
    "$(cat "$T/report.check")" "report ok"
sbx --quiet -- sh -c "$SCRIPT" >"$T/q.out" 2>"$T/q.err"
check "--quiet: no summary" sh -c "! grep -q 'refused during this run' '$T/q.err'"
contains "--quiet: the guard's own line stays" "$(cat "$T/q.err")" \
    "refused to create $WS/.bashrc"
sbx -- curl -s -o /dev/null "http://allowed.test:$WEB/" >"$T/n.out" 2>"$T/n.err"
eq "nothing refused: nothing said" "$(cat "$T/n.err")" ""

# A command that failed: the plain heading; its exit status unchanged.
sbx -- sh -c "curl -s -o /dev/null http://other.test:$WEB/; exit 3" \
    >/dev/null 2>"$T/f.err"
eq "a failed command keeps its exit status" "$?" 3
contains "... and the summary says what was refused" "$(cat "$T/f.err")" \
    "pisbx-run: refused during this run (--quiet hides this):"
check "... without the exit-0 heading" \
    sh -c "! grep -q 'the command exited 0' '$T/f.err'"
sbx -- sh -c "curl -s -o /dev/null http://other.test:$WEB/; true" \
    >/dev/null 2>/dev/null
eq "a command that succeeded despite a refusal still exits 0" "$?" 0

# Allowed, but not reachable: a name that does not resolve, a port
# nothing listens on.  An HTTPS client sees "502" and no more; the
# summary says what failed, and --report has it.
DOWN=$(free_port)
run_config --allow "allowed.test nowhere.test host.pisbx.internal:$DOWN"
sbx --report "$T/un.json" -- sh -c "for i in 1 2; do
curl -s -o /dev/null https://nowhere.test/; done
curl -s -o /dev/null http://host.pisbx.internal:$DOWN/; exit 7" \
    >/dev/null 2>"$T/un.err"
eq "the command's status stays" "$?" 7
contains "a part for what could not be reached" "$(cat "$T/un.err")" \
    "pisbx-run: allowed, but could not be reached (--quiet hides this):"
contains "... a name that did not resolve, counted, with the error" \
    "$(cat "$T/un.err")" "  connect nowhere.test:443 (dns-error, 2 times): nowhere.test: "
contains "... a port nothing listens on" "$(cat "$T/un.err")" \
    "  http host.pisbx.internal:$DOWN (connect-error): connect to "
check "... with the error" grep -q "host.pisbx.internal:$DOWN (connect-error): connect to .*:$DOWN: Connection refused" "$T/un.err"
check "... and no refusal part" \
    sh -c "! grep -q 'refused during this run' '$T/un.err'"
"$PY" - "$T/un.json" <<'EOF2' >"$T/un.check" 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
u = [o for o in r if o["kind"] == "unreachable"]
assert [o["reason"] for o in u] == ["dns-error", "connect-error"], r
assert u[0]["host"] == "nowhere.test" and u[0]["count"] == 2, u
print("report ok")
EOF2
eq "--report: kind unreachable" "$(cat "$T/un.check")" "report ok"
sbx --quiet -- curl -s -o /dev/null https://nowhere.test/ >/dev/null \
    2>"$T/unq.err"
eq "--quiet: not said" "$(cat "$T/unq.err")" ""

# A path the command chose cannot write pisbx-run's lines: the guard's
# and the summary's are masked as the access log masks.
git init -q "$WS"
chmod -R a+rwX "$WS"
run_config --allow "allowed.test"
sbx -- sh -c 'touch "$(printf ".git/hooks/x\n\033[31mpisbx-run: all clear")"' \
    >/dev/null 2>"$T/esc.err"
check "no escape byte reaches the terminal" \
    sh -c "! grep -q \"\$(printf '\033')\" '$T/esc.err'"
check "... and no line of ours begins with the command's words" \
    sh -c "! grep -q '^pisbx-run: all clear' '$T/esc.err'"
contains "... the guard's own line shows the path masked" "$(cat "$T/esc.err")" \
    "pisbx-run: refused to create $WS/.git/hooks/x??[31mpisbx-run: all clear: protected path"
contains "... the path is shown masked in the summary" "$(cat "$T/esc.err")" \
    "  create $WS/.git/hooks/x??[31mpisbx-run: all clear"
rm -rf "$WS/.git"

# 4. A report file in the workspace is the command's to read, not to
#    change or replace: pisbx-run writes the file it opened first.
echo "the user's" >"$T/victim"
chmod 644 "$T/victim"
sbx --report report.json -- sh -c "curl -s -o /dev/null http://other.test:$WEB/
rm -f report.json; ln -s '$T/victim' report.json
echo forged >report.json" >"$T/r.out" 2>&1
eq "the report's victim is untouched" "$(cat "$T/victim")" "the user's"
check "the report is still the real one" grep -q '"host":"other.test"' \
    "$WS/report.json"
check "... a regular file, not the planted link" test ! -L "$WS/report.json"
rm -f "$WS/report.json"

# 5. A git worktree: read-only main repository by default; with the main
#    repository in allowWrite a commit in the worktree works, while its
#    config, hooks and commondir stay protected.
M=$T/main
git init -q "$M"
git -C "$M" -c user.name=t -c user.email=t@t commit -q --allow-empty -m init
git -C "$M" worktree add -q "$T/wtree" 2>/dev/null
chmod -R a+rwX "$M" "$T/wtree"
wt_run() {
	(cd "$T/wtree" && "$RUN" --config "$CONF" -- sh -c "$1") \
	    >"$T/wt.out" 2>&1
}
run_config --allow "allowed.test"
wt_run 'git -c user.name=a -c user.email=a@a commit -q --allow-empty -m x'
check "worktree commit, main repository not allowed: refused" test $? -ne 0
run_config --allow "allowed.test" \
    --fs "{\"allowWrite\": [\"$T/wtree\", \"$M\"]}"
wt_run 'git -c user.name=a -c user.email=a@a commit -q --allow-empty -m wt-commit'
check "with the main repository in allowWrite: the commit works" \
    test $? -eq 0
eq "... and is in the main repository" \
    "$(git -C "$M" log -1 --format=%s wtree)" wt-commit
wt_run 'git config user.name sandboxed'
contains "... its config stays protected, and says which key" \
    "$(cat "$T/wt.out")" "set filesystem.allowGitConfig to true"
wt_run "echo x >'$M/.git/hooks/pre-commit'"
check "... its hooks stay protected" test ! -e "$M/.git/hooks/pre-commit"
wt_run "echo /elsewhere >'$M/.git/worktrees/wtree/commondir'"
check "... the worktree's commondir too" \
    sh -c "! grep -q elsewhere '$M/.git/worktrees/wtree/commondir'"
wt_run "echo x >'$M/.git/worktrees/wtree/config.worktree'"
check "... and its config.worktree" \
    test ! -e "$M/.git/worktrees/wtree/config.worktree"
done_testing
