#!/bin/sh
# Filesystem escapes: a denied home (~/.ssh), writes outside allowWrite,
# every name of the mandatory write-deny set (existing and not yet
# existing, directly and through symlinks, renames and links), the trusted
# config, the pisbx executables, a git worktree's main repository; the
# config's denyRead/allowRead/denyWrite; running from the home directory
# or /; the files the config names (reviewer, hosts file, access log)
# inside the workspace (also proxy.accessLog, for pisbx-run and
# pisbx-sh); a relative PISBX_CONFIG; and nothing left in the
# workspace afterwards -- also when pisbx-run is killed with SIGKILL.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

MANDATORY=".gitconfig .gitmodules .bashrc .bash_profile .zshrc .zprofile
.profile .ripgreprc .mcp.json .vscode .idea .claude/commands .claude/agents
.pi/settings.json .pi/sandbox.json .pi/pi-auto-review.json .git/hooks
.git/config .git/commondir .git/config.worktree .zshenv .zlogin .zlogout
.bash_login .bash_logout .bash_aliases .claude/settings.json
.claude/settings.local.json .claude/hooks .claude/skills .config/git
.config/fish .ssh .ssh/authorized_keys .cursor .codex .pi/agent/models.json
.gemini .config/systemd/user .config/autostart .local/bin .inputrc .npmrc
.cargo/config.toml .gnupg .kube .docker .aws"

run_config
mkdir -p "$T/outside"
chmod 777 "$T/outside"

# 1. The home directory is hidden.
sbx -- /bin/cat "$FAKEHOME/.ssh/id_test" >"$T/out" 2>&1
check "~/.ssh/id_test unreadable inside" sh -c "! grep -q 'PRIVATE KEY' '$T/out'"
# Empty but for the tool caches (filesystem.caches, ~/.cache/pisbx).
eq "the home directory looks empty" "$(sbx -- /bin/ls -A "$FAKEHOME")" ".cache"
eq "... ~/.cache holds only pisbx's" "$(sbx -- /bin/ls -A "$FAKEHOME/.cache")" \
    "pisbx"
sbx_sh "cd '$WS' && cat ../home/.ssh/id_test"
check "not through a relative path from the workspace" sh -c "! grep -q 'PRIVATE' '$T/out'"

# 2. Writes outside allowWrite.
sbx_sh "echo x >'$T/outside/f'"
check "write outside allowWrite fails" test ! -e "$T/outside/f"
sbx_sh "echo x >'$FAKEHOME/f'; mkdir '$FAKEHOME/d'"
check "write into the hidden home fails" test ! -e "$FAKEHOME/f" -a ! -e "$FAKEHOME/d"
sbx_sh "echo x >/etc/pisbx-test"
check "write to /etc fails" test ! -e /etc/pisbx-test
# Writing a sysctl (its own current value, so a failure of this test
# changes nothing): uid 0 needs no capability for that outside.
sbx_sh 'v=$(cat /proc/sys/kernel/printk_ratelimit) && echo "$v" >/proc/sys/kernel/printk_ratelimit && echo WROTE'
check "sysctls are not writable" sh -c "! grep -q WROTE '$T/out'"
sbx_sh "ls /dev/vda /dev/sda /dev/nvme0n1 /dev/mem /dev/kmsg 2>/dev/null | wc -l"
eq "no disks or kernel memory in /dev" "$(cat "$T/out")" 0
sbx_sh "echo ok >'$WS/inside' && echo done"
check "write inside the workspace works" grep -qx ok "$WS/inside"
rm -f "$WS/inside"

# 3. Every mandatory name, none existing yet: creation fails, nothing stays.
ws_snapshot
cat >"$T/mandatory.sh" <<'EOF'
fails=0
for n in $MANDATORY; do
	d=$(dirname "$n")
	[ "$d" = . ] || mkdir -p "$d" 2>/dev/null
	if ( : >"$n" ) 2>/dev/null; then echo "CREATED file $n"; fails=1; fi
	if mkdir "$n" 2>/dev/null; then echo "CREATED dir $n"; fails=1; fi
	if ln -s /etc/passwd "$n" 2>/dev/null; then echo "CREATED link $n"; fails=1; fi
	echo x >tmpfile
	if mv tmpfile "$n" 2>/dev/null; then echo "RENAMED onto $n"; fails=1; fi
	if ln tmpfile "$n" 2>/dev/null; then echo "LINKED $n"; fails=1; fi
	rm -f tmpfile
done
# A symlink to a protected name, then a write through it.
ln -s .zshrc via-link
if ( echo x >via-link ) 2>/dev/null; then echo "CREATED through symlink"; fails=1; fi
rm -f via-link
# A symlink through the command's own /proc entries.
ln -s /proc/self/cwd/.profile via-proc
if ( echo x >via-proc ) 2>/dev/null; then echo "CREATED through /proc/self/cwd"; fails=1; fi
rm -f via-proc
if ( echo x >/proc/self/cwd/.zprofile ) 2>/dev/null; then echo "CREATED /proc/self/cwd/.zprofile"; fails=1; fi
# A prepared tree moved into place.
mkdir -p prep/hooks && echo evil >prep/hooks/pre-commit
if mv prep .vscode 2>/dev/null; then echo "MOVED prep to .vscode"; fails=1; fi
rm -rf prep
# The same set holds in the private TMPDIR.
if ( : >"$TMPDIR/.bashrc" ) 2>/dev/null; then echo "CREATED TMPDIR/.bashrc"; fails=1; fi
if ln -s /x "$TMPDIR/.git" 2>/dev/null; then echo "CREATED TMPDIR/.git link"; fails=1; fi
rmdir .claude .pi .git .cargo .config/systemd .config .local 2>/dev/null
exit $fails
EOF
chmod 644 "$T/mandatory.sh"
MANDATORY=$MANDATORY sbx -- /bin/sh "$T/mandatory.sh" >"$T/out" 2>&1
# The workspace has no repository: a .git at the project directory is the
# command's new one (git init), read at exit and moved aside when it holds
# more than git init makes -- as these files make it.
eq "no mandatory name could be created" "$(grep -E '^(CREATED|RENAMED|LINKED|MOVED)' "$T/out" | grep -v ' \.git/' | tr '\n' ' ')" ""
contains "refusals are explained" "$(cat "$T/out")" "protected path"
check "the project's new .git with those names is not left as .git" \
    test ! -e "$WS/.git"
contains "... it was moved aside, and said" "$(cat "$T/out")" \
    "made a git repository at the project directory $WS with more than git init makes"
rm -rf "$WS"/.git.pisbx-held-*
ws_same "workspace unchanged after the mandatory-name attempts"
# At the top of another writable root, git's names stay refused.
mkdir -p "$T/other"
chmod 777 "$T/other"
run_config --fs "{\"allowWrite\": [\".\", \"$T/other\"]}"
(cd "$T/other" && find . | sort) >"$T/other.before"
sbx -- /bin/sh -c "cd '$T/other' && MANDATORY='.git/hooks .git/config
    .git/commondir .git/config.worktree .bashrc' /bin/sh '$T/mandatory.sh'" \
    >"$T/out" 2>&1
eq "another writable root: no .git name could be created" "$(grep -E '^(CREATED|RENAMED|LINKED|MOVED)' "$T/out" | tr '\n' ' ')" ""
check "another writable root: unchanged" \
    sh -c "cd '$T/other' && find . | sort | cmp -s - '$T/other.before'"
run_config

# 4. Existing protected files stay as they are.
mkdir -p "$WS/.git/hooks" "$WS/.vscode"
echo "original rc" >"$WS/.bashrc"
printf '[core]\n\tbare = false\n' >"$WS/.git/config"
echo '{}' >"$WS/.vscode/settings.json"
chmod -R a+rwX "$WS"
ws_snapshot
sbx_sh 'echo evil >>.bashrc; echo evil >.vscode/settings.json; rm -f .bashrc;
    mv .bashrc x; echo "[alias]" >>.git/config; : >.git/hooks/pre-commit;
    mv .git/hooks hooks2; rm -rf .vscode; true'
eq ".bashrc unchanged" "$(cat "$WS/.bashrc")" "original rc"
eq ".vscode/settings.json unchanged" "$(cat "$WS/.vscode/settings.json")" "{}"
check ".git/config unchanged" sh -c "! grep -q alias '$WS/.git/config'"
check "no hook created" test ! -e "$WS/.git/hooks/pre-commit"
ws_same "workspace unchanged after writes to existing protected files"
# filesystem.allowGitConfig lifts the .git/config rule only.
run_config --fs '{"allowGitConfig": true}'
sbx_sh 'echo "[alias]" >>.git/config; : >.git/hooks/pre-commit'
check "allowGitConfig: .git/config writable" grep -q alias "$WS/.git/config"
check "allowGitConfig: hooks still protected" test ! -e "$WS/.git/hooks/pre-commit"
rm -rf "$WS/.git" "$WS/.vscode" "$WS/.bashrc"

# 5. The trusted config, even inside the workspace, and the executables.
run_config
cp "$CONF" "$WS/pisbx.json"
chmod 666 "$WS/pisbx.json"
mkdir -p "$T/bin"
cp "$RUN" "$T/bin/pisbx-run"
cp "$T/bin/pisbx-run" "$T/run.orig"
chmod -R a+rwX "$T/bin"
"$PY" - "$CONF" "$T/wide.json" "$T" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["filesystem"] = {"allowWrite": [sys.argv[3]]}
json.dump(c, open(sys.argv[2], "w"))
EOF
chmod 644 "$T/wide.json"
(cd "$WS" && "$T/bin/pisbx-run" --config "$WS/pisbx.json" -- /bin/sh -c \
    "echo '{}' >pisbx.json; rm -f pisbx.json; mv pisbx.json x") >/dev/null 2>&1
check "trusted config in the workspace unchanged" cmp -s "$CONF" "$WS/pisbx.json"
(cd "$WS" && "$T/bin/pisbx-run" --config "$T/wide.json" -- /bin/sh -c \
    "echo evil >'$T/bin/pisbx-run'; : >'$T/bin/pisbx-proxy'; echo x >'$T/wide.json'") \
    >"$T/out" 2>&1
check "the executables' directory stays read-only (allowWrite above it)" \
    cmp -s "$T/bin/pisbx-run" "$T/run.orig"
check "no new file next to the executables" test ! -e "$T/bin/pisbx-proxy"
check "trusted config stays read-only (allowWrite above it)" grep -q allowWrite "$T/wide.json"
rm -f "$WS/pisbx.json"

# 6. The config's own lists: denyRead, allowRead inside it, denyWrite,
# relative paths and symlinks.
mkdir -p "$T/secret/pub" "$WS/locked" "$T/real"
echo key >"$T/secret/key"
echo readme >"$T/secret/pub/readme"
ln -s "$T/real" "$T/link"
chmod -R a+rwX "$T/secret" "$T/real" "$WS/locked"
run_config --fs "{\"denyRead\": [\"$T/secret\"], \"allowRead\": [\"$T/secret/pub\"],
    \"allowWrite\": [\".\", \"$T/link\"], \"denyWrite\": [\"locked\"]}"
sbx_sh "cat '$T/secret/key'"
check "denyRead hides a file" sh -c "! grep -qx key '$T/out'"
eq "allowRead re-exposes inside a denied tree" "$(sbx -- /bin/cat "$T/secret/pub/readme")" readme
sbx_sh "echo x >'$T/secret/pub/readme'"
eq "allowRead is read-only" "$(cat "$T/secret/pub/readme")" readme
sbx_sh "echo x >locked/f; echo y >free"
check "denyWrite (relative) wins over allowWrite" test ! -e "$WS/locked/f"
check "allowWrite '.' still writable" test -e "$WS/free"
sbx_sh "echo z >'$T/link/f'"
check "allowWrite through a symlink writes the real directory" grep -qx z "$T/real/f"
echo "not a secret" >"$FAKEHOME/notes.txt"
chmod 644 "$FAKEHOME/notes.txt"
eq "the default home rule is replaced by denyRead" \
    "$(sbx -- /bin/cat "$FAKEHOME/notes.txt")" "not a secret"
sbx_sh "cat '$FAKEHOME/.ssh/id_test'"
check "... while a secret store stays hidden" \
    sh -c "! grep -q 'PRIVATE KEY' '$T/out'"
rm -f "$FAKEHOME/notes.txt"
rm -rf "$WS/free" "$WS/locked"

# 7. A git worktree: the main repository is readable, not writable.
run_config --fs "{\"allowWrite\": [\"$T\"]}"
git init -q "$T/main"
echo hi >"$T/main/f"
git -C "$T/main" add f
git -C "$T/main" -c user.name=t -c user.email=t@example.invalid commit -qm one
git -C "$T/main" worktree add -q "$T/wt2" 2>/dev/null
chmod -R a+rwX "$T/main" "$T/wt2"
(cd "$T/wt2" && GIT_CONFIG_NOSYSTEM=1 "$RUN" --config "$CONF" -- \
    git -c safe.directory='*' log --format=%s) >"$T/out" 2>&1
eq "git log works in a worktree" "$(cat "$T/out")" "one"
(cd "$T/wt2" && "$RUN" --config "$CONF" -- /bin/sh -c \
    "echo x >>'$T/main/.git/config'; : >'$T/main/.git/hooks/post-checkout'; : >'$T/main/.git/evil'") \
    >/dev/null 2>&1
check "main repository's config unchanged" sh -c "! grep -qx x '$T/main/.git/config'"
check "main repository gets no hook" test ! -e "$T/main/.git/hooks/post-checkout"
check "main repository's git dir not writable" test ! -e "$T/main/.git/evil"

# 8. Running from the home directory, or /: no sound policy; refused
# with the reason and the fix, nothing runs.
run_config
(cd "$FAKEHOME" && "$RUN" --config "$CONF" -- /bin/sh -c \
    "cat .ssh/id_test; touch '$T/ran-home'") >"$T/out" 2>&1
eq "cwd = the hidden home: exit 125" "$?" 125
check "nothing ran, no key shown" sh -c "! grep -q PRIVATE '$T/out' && test ! -e '$T/ran-home'"
contains "the refusal says why and what to do" "$(cat "$T/out")" \
    "refusing to run in $FAKEHOME: the policy hides it"
(cd / && "$RUN" --config "$CONF" -- /bin/sh -c "touch '$T/ran-root'") \
    >"$T/out" 2>&1
eq "cwd = /: exit 125" "$?" 125
check "nothing ran from /" test ! -e "$T/ran-root"
# With the secrets named instead, the home works as a workspace; the
# mandatory set and the hidden paths hold inside it.
run_config --fs '{"denyRead": ["~/.ssh"]}'
mkdir -p "$FAKEHOME/.config" "$FAKEHOME/.local"
chmod -R a+rwX "$FAKEHOME/.config" "$FAKEHOME/.local"
chmod a+rwx "$FAKEHOME"
(cd "$FAKEHOME" && "$RUN" --config "$CONF" -- /bin/sh -c '
    cat .ssh/id_test; echo x >.ssh/authorized_keys; echo x >.zshenv;
    mkdir -p .config/systemd/user && echo x >.config/systemd/user/a.service;
    mkdir -p .local/bin && echo x >.local/bin/ls; echo ok >notes.txt') \
    >"$T/out" 2>&1
check "~/.ssh stays hidden in a home workspace" sh -c "! grep -q PRIVATE '$T/out'"
check "no ~/.zshenv, systemd unit or ~/.local/bin/ls planted" \
    test ! -e "$FAKEHOME/.zshenv" -a ! -e "$FAKEHOME/.config/systemd/user/a.service" \
    -a ! -e "$FAKEHOME/.local/bin/ls" -a ! -e "$FAKEHOME/.ssh/authorized_keys"
check "an ordinary file in the home workspace is written" grep -qx ok "$FAKEHOME/notes.txt"
rm -rf "$FAKEHOME/notes.txt" "$FAKEHOME/.config" "$FAKEHOME/.local"
chmod 755 "$FAKEHOME"

# 9. The files the config names, inside the workspace.  A reviewer there
# is refused (it runs on the host); the hosts file and the access log
# are protected like the config.
printf '#!/bin/sh\necho "{\\"decision\\": \\"deny\\"}"\n' >"$WS/review.sh"
chmod 755 "$WS/review.sh"
"$PY" - "$CONF" "$WS/review.sh" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["review"] = {"command": [sys.argv[2]]}
json.dump(c, open(sys.argv[1], "w"))
EOF
sbx -- /bin/sh -c "touch '$T/ran-review'" >"$T/out" 2>&1
eq "a reviewer inside the workspace: exit 78" "$?" 78
check "nothing ran" test ! -e "$T/ran-review"
contains "the refusal names the key and the file" "$(cat "$T/out")" \
    "review.command[0] names $WS/review.sh, inside the writable directory $WS"
rm -f "$WS/review.sh"
run_config
cp "$T/hosts" "$WS/hosts"
"$PY" - "$CONF" "$WS/hosts" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["resolver"]["hostsFile"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"))
EOF
chmod 666 "$WS/hosts"
cp "$WS/hosts" "$T/hosts.orig"
(cd "$WS" && "$RUN" --config "$CONF" --access-log "$WS/access.log" -- \
    /bin/sh -c 'echo "127.0.0.1 evil.test" >>hosts; (echo x >hosts);
    (: >access.log); echo "{\"forged\": 1}" >>access.log; rm -f access.log;
    mv access.log x; true') >"$T/out" 2>&1
check "the hosts file in the workspace is unchanged" cmp -s "$T/hosts.orig" "$WS/hosts"
check "the access log in the workspace is neither removed nor forged" \
    sh -c "test -f '$WS/access.log' && ! grep -q forged '$WS/access.log'"
rm -f "$WS/hosts" "$WS/access.log" "$WS/x"
# The same access log named by the config (proxy.accessLog), as pisbx-sh
# uses it: protected the same way, whichever program reads the config.
run_config --proxy "{\"accessLog\": \"$WS/access.log\"}"
for prog in pisbx-run pisbx-sh; do
	printf '{"kept": 1}\n' >"$WS/access.log"
	chmod 666 "$WS/access.log"
	(cd "$WS" && PISBX_CONFIG=$CONF "$PISBX_BINDIR/$prog" /bin/sh -c \
	    '(: >access.log); echo "{\"forged\": 1}" >>access.log;
	    rm -f access.log; mv access.log x; true') >"$T/out" 2>&1
	check "$prog: proxy.accessLog in the workspace is neither removed, truncated nor forged" \
	    sh -c "grep -q kept '$WS/access.log' && ! grep -q forged '$WS/access.log'"
	contains "$prog: the refusal names the access log" "$(cat "$T/out")" \
	    "$WS/access.log: protected path, read by the proxy (the access log)"
	rm -f "$WS/access.log" "$WS/x"
done

# 10. A relative PISBX_CONFIG would name a file in each run's directory,
# which an earlier run could have planted: refused.
run_config
mkdir -p "$WS/sub"
"$PY" - "$CONF" "$WS/sub/rel.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["filesystem"] = {"denyRead": [], "allowWrite": ["/tmp"]}
c["network"]["allowAllUnixSockets"] = True
json.dump(c, open(sys.argv[2], "w"))
EOF
chmod -R a+rwX "$WS/sub"
(cd "$WS/sub" && PISBX_CONFIG=rel.json "$RUN" -- /bin/sh -c \
    "touch '$T/ran-rel'") >"$T/out" 2>&1
eq "a relative PISBX_CONFIG: exit 78" "$?" 78
check "nothing ran under it" test ! -e "$T/ran-rel"
contains "the refusal says to make it absolute" "$(cat "$T/out")" \
    "PISBX_CONFIG=rel.json: not an absolute path"
rm -rf "$WS/sub"

# 11. SIGKILL of pisbx-run: the whole tree dies, nothing is left behind.
run_config
ws_snapshot
MARK=$((300 + $$ % 500))
(cd "$WS" && exec "$RUN" --config "$CONF" -- /bin/sh -c \
    "/bin/sleep $MARK.5 & (setsid /bin/sleep $MARK.5 &); echo up >&2; /bin/sleep $MARK.5") \
    2>"$T/kill.err" &
rpid=$!
wait_file "$T/kill.err" 100
i=0
while [ "$(pgrep -c -u "$(id -u)" -f "^/bin/sleep $MARK.5\$")" -lt 3 ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
eq "three sandboxed sleepers running" "$(pgrep -c -u "$(id -u)" -f "^/bin/sleep $MARK.5\$")" 3
kill -KILL "$rpid"
wait "$rpid" 2>/dev/null
i=0
while pgrep -u "$(id -u)" -f "^/bin/sleep $MARK.5\$" >/dev/null && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
check "SIGKILL of pisbx-run killed the whole sandbox" \
    sh -c "! pgrep -u $(id -u) -f '^/bin/sleep $MARK.5\$' >/dev/null"
ws_same "nothing left in the workspace after SIGKILL"
# Its private directory (outside the workspace) stays until the next run
# sweeps it -- which may be a concurrent run of another test.
stale=$(rundirs | grep "/pisbx-run\.$rpid\.")
echo "# stale private directory: ${stale:-(already swept)}"
sbx -- /bin/true
check "the next run removes it" sh -c "! ls -d ${TMPDIR:-/tmp}/pisbx-$(id -u)/pisbx-run.$rpid.* 2>/dev/null"
done_testing
