#!/bin/sh
# Git runs code the sandbox planted?  Every way a later, unsandboxed git
# reads configuration or hooks, tried from inside against repositories
# that exist when the run starts: .git/commondir pointing at a copy with
# core.fsmonitor, .git renamed away and replaced by a file, swapped in by
# RENAME_EXCHANGE, config.worktree, worktrees/*/ and modules/**/ config
# and hooks (a new worktree entry's commondir is git's own "../.."), a nested repository at depth (config written, truncated,
# hard-linked, reopened through /proc/self/fd), a submodule's .git file,
# a bare repository, core.hooksPath, a new .git in an existing
# directory.  Afterwards git runs on the host in each repository and
# nothing the sandbox wrote may run.  A repository made during the run
# (in a new directory) stays usable, and pisbx-run names it at exit.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
PWN=$T/pwned
mkdir -p "$PWN"
chmod 777 "$PWN"

commit() { git -C "$1" commit -q --allow-empty -m "$2"; }

# The repositories, made outside the sandbox.
git init -q "$WS"
commit "$WS" top
git init -q "$WS/lib/deep/nested"
commit "$WS/lib/deep/nested" nested
git init -q "$T/subsrc"
commit "$T/subsrc" sub
git -C "$WS" -c protocol.file.allow=always submodule add -q "$T/subsrc" mod \
    >/dev/null 2>&1
git -C "$WS" commit -q -m "add mod"
git init -q --bare "$WS/store.git"
git init -q "$WS/hooked"
git -C "$WS/hooked" config core.hooksPath githooks
mkdir -p "$WS/hooked/githooks"
commit "$WS/hooked" hooked
test -f "$WS/mod/.git" || { not_ok "the submodule's .git is a file"; done_testing; }
chmod -R a+rwX "$WS"
snap() {
	for f in .git/config lib/deep/nested/.git/config mod/.git \
	    .git/modules/mod/config store.git/config hooked/.git/config; do
		cksum <"$WS/$f"
	done
}
snap >"$T/before"

run_config --fs "{\"allowWrite\": [\"$WS\"]}"
cat >"$T/attack.sh" <<'EOF'
W=$1 P=$2
evil="touch $P/\$(basename \$(pwd))-ran; false"
try() { ( "$@" ) >/dev/null 2>&1 && echo "PASSED: $*"; }
# plant FILE: append core.fsmonitor to a git config; hook FILE: a script.
plant() { try sh -c "printf '[core]\\n\\tfsmonitor = \"%s\"\\n' '$evil' >>'$1'"; }
hook() { try sh -c "printf '#!/bin/sh\\n%s\\n' '$evil' >'$1' && chmod +x '$1'"; }
# A copy of .git with core.fsmonitor, then commondir pointing at it.
cp -r "$W/.git" "$W/evil"
git config -f "$W/evil/config" core.fsmonitor "$evil"
try sh -c "echo ../evil >'$W/.git/commondir'"
# Rename .git away, put a .git file (or the copy) in its place.
try mv "$W/.git" "$W/.git.old"
try sh -c "echo 'gitdir: evil' >'$W/.git'"
try mv -T "$W/evil" "$W/.git"
try /usr/bin/python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, b'$W/evil', -100, b'$W/.git', 2) != 0:
    raise OSError(ctypes.get_errno(), 'renameat2')"
# config.worktree, worktrees/*/, modules/**/ of the top repository.
try sh -c "echo '[core] fsmonitor = x' >'$W/.git/config.worktree'"
try mkdir -p "$W/.git/worktrees/w/hooks"
# A new entry's commondir is git's "../..", whatever the command writes.
sh -c "echo '$W/evil' >'$W/.git/worktrees/w/commondir'" >/dev/null 2>&1
plant "$W/.git/modules/mod/config"
hook "$W/.git/modules/mod/hooks/post-checkout"
try mkdir -p "$W/.git/modules/new/hooks"
try mv "$W/.git/modules/mod" "$W/.git/modules/mod2"
# A repository at depth: config and hooks, every way of writing.
N=$W/lib/deep/nested/.git
plant "$N/config"
try truncate -s 0 "$N/config"
try ln "$N/config" "$W/cfg-link"
try sh -c "exec 3<'$N/config'; echo '[core] fsmonitor = x' >>/proc/self/fd/3"
hook "$N/hooks/pre-commit"
try mv "$N" "$W/lib/deep/nested/git-away"
# The submodule's .git file, a bare repository, core.hooksPath.
try sh -c "echo 'gitdir: ../evil' >'$W/mod/.git'"
plant "$W/store.git/config"
hook "$W/store.git/hooks/post-update"
hook "$W/hooked/githooks/pre-commit"
try mkdir -p "$W/hooked/.husky"
try mv "$W/hooked/githooks" "$W/hooked/githooks.old"
# A new .git in a directory that existed before the run.
try git init -q "$W/lib"
try sh -c "echo 'gitdir: $W/evil' >'$W/lib/deep/.git'"
# A repository in a new directory: usable.
git init -q "$W/fresh" && git -C "$W/fresh" commit -q --allow-empty -m fresh &&
    git -C "$W/fresh" config user.name changed && echo "FRESH OK"
EOF
chmod 644 "$T/attack.sh"
sbx -- /bin/sh "$T/attack.sh" "$WS" "$PWN" >"$T/out" 2>"$T/err"
eq "no attempt on an existing repository passed" \
    "$(grep '^PASSED' "$T/out")" ""
contains "a repository in a new directory works" "$(cat "$T/out")" "FRESH OK"
snap >"$T/after"
check "configs, .git files and hooks unchanged" cmp -s "$T/before" "$T/after"
check "no hook planted" test ! -e "$WS/lib/deep/nested/.git/hooks/pre-commit" \
    -a ! -e "$WS/store.git/hooks/post-update" \
    -a ! -e "$WS/hooked/githooks/pre-commit"
check "a worktree entry's commondir, if made, names its own repository" \
    sh -c "test ! -e '$WS/.git/worktrees/w/commondir' ||
    test \"\$(cat '$WS/.git/worktrees/w/commondir')\" = ../.."
check "no new .git in an existing directory" \
    test ! -e "$WS/lib/.git" -a ! -e "$WS/lib/deep/.git"
contains "refusals explained" "$(cat "$T/err")" \
    "refused to write $WS/lib/deep/nested/.git/config: protected path"
contains "pisbx-run names the repository made during the run, and its key" \
    "$(cat "$T/err")" "made a git repository at $WS/fresh with more than a fresh clone has, which git may run: .git/config user.name;"
contains "and the copy of .git (a bare repository to git)" \
    "$(cat "$T/err")" "made a git repository at $WS/evil with more than a fresh clone has, which git may run: config core.fsmonitor"
grep "made a git" "$T/err" | sed "s/^/# /"
check "and no other" test "$(grep -c 'made a git repository' "$T/err")" -eq 2

# Git on the host, in every repository: nothing the sandbox wrote runs.
for d in "$WS" "$WS/lib/deep/nested" "$WS/mod" "$WS/hooked"; do
	git -C "$d" status >/dev/null 2>&1
done
git -C "$WS/store.git" log >/dev/null 2>&1
git -C "$WS/hooked" commit -q --allow-empty -m after >/dev/null 2>&1
eq "git on the host ran nothing from the sandbox" "$(ls "$PWN")" ""
eq "git still works in the top repository" \
    "$(git -C "$WS" log -1 --format=%s)" "add mod"
done_testing
