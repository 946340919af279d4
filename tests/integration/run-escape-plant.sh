#!/bin/sh
# More that a later program on the host runs without being asked: pdb's
# .pdbrc, asdf's and mise's .tool-versions ("python path:/dir"), mise's
# configs (hooks, [env] _.source), and in a repository older than the
# run a config.lock that makes the user's next "git config" fail: each
# is refused inside, and said.  The state "git rebase --continue" runs
# (a todo's exec line) is allowed and named at exit (run-git-state.sh).
# Ordinary files and git commit still work; afterwards git on the host
# writes its config.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
git init -q "$WS"
git -C "$WS" commit -q --allow-empty -m top
mkdir -p "$WS/src"
chmod -R a+rwX "$WS"
run_config

NAMES=".pdbrc .tool-versions mise.toml .mise.toml mise.local.toml
.mise.local.toml .mise/config.toml .config/mise.toml .config/mise/config.toml"
sbx -- sh -c "for n in $(echo $NAMES); do mkdir -p \"\$(dirname \$n)\";
    echo 'import os; os.system(\"touch $T/ran\")' >\$n; done;
    echo notes >notes.toml" >"$T/plant.out" 2>&1
for n in $NAMES; do
	check "$n: refused" test ! -e "$WS/$n"
done
contains "... and said, with the program that reads it" \
    "$(cat "$T/plant.out")" "refused to create $WS/.pdbrc: protected path, read by python -m pdb"
check "an ordinary file is made" test -f "$WS/notes.toml"

# The state of a rebase, allowed and named at exit; a lock, refused.
sbx -- sh -c 'mkdir -p .git/rebase-merge &&
    printf "exec touch '"$T"'/ran\n" >.git/rebase-merge/git-rebase-todo;
    : >.git/config.lock; : >.git/config.worktree.lock' >"$T/state.out" 2>&1
check ".git/rebase-merge: allowed" test -f "$WS/.git/rebase-merge/git-rebase-todo"
contains "... and its exec line named at exit" "$(cat "$T/state.out")" \
    "git-rebase-todo line 1 \"exec touch $T/ran\"; look at it, or run git rebase --abort"
for n in config.lock config.worktree.lock; do
	check ".git/$n: refused" test ! -e "$WS/.git/$n"
done
contains "... and said" "$(cat "$T/state.out")" \
    "refused to create $WS/.git/config.lock: protected path"
rm -r "$WS/.git/rebase-merge"
echo hi >"$WS/f" && chmod 666 "$WS/f"
sbx -- sh -c 'git add f && git commit -q -m inside' >"$T/commit.out" 2>&1
eq "git commit still works inside" "$(git -C "$WS" log -1 --format=%s)" inside

# On the host: no rebase in progress, git config works, nothing ran.
case $(git -C "$WS" status 2>&1) in
*rebase*) not_ok "git status on the host shows a rebase in progress" ;;
*) ok "git status on the host shows no rebase" ;;
esac
check "git config on the host writes its config" \
    git -C "$WS" config pisbx.test yes
check "nothing planted ran" test ! -e "$T/ran"
done_testing
