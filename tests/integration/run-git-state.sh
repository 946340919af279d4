#!/bin/sh
# A git operation's state in a repository older than the run: git pull
# --rebase, a rebase stopped on a conflict and continued by the next run,
# and git cherry-pick A B work inside; a planted todo with an exec line is
# allowed but named at exit (file, line, what to do), a clean stopped
# rebase is not, and nothing planted runs.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_EDITOR=true
UP="$T/up"
git init -q "$UP"
git -C "$UP" commit -q --allow-empty -m a
git clone -q "$UP" "$WS/w"
git -C "$UP" commit -q --allow-empty -m b
git -C "$WS/w" commit -q --allow-empty -m c
chmod -R a+rwX "$WS" "$UP"
run_config

# lacks DESC FILE TEXT: ok when FILE does not hold TEXT.
lacks() {
	if grep -qF "$3" "$2"; then
		not_ok "$1 ($(head -c 300 "$2"))"
	else
		ok "$1"
	fi
}

# git pull --rebase in a clone older than the run.
sbx -- git -C w pull -q --rebase >"$T/pull.out" 2>&1
eq "git pull --rebase exits 0" "$?" 0
eq "... and the history is rebased" \
    "$(git -C "$WS/w" log --format=%s | tr '\n' ' ')" "c b a "
lacks "... and nothing is said" "$T/pull.out" "pisbx-run"

# A rebase stopped on a conflict, continued by the next run.
R="$WS/w"
echo 1 >"$R/f" && git -C "$R" add f && git -C "$R" commit -q -m base
git -C "$R" checkout -q -b side
echo 2 >"$R/f" && git -C "$R" commit -q -am side
git -C "$R" checkout -q -
echo 3 >"$R/f" && git -C "$R" commit -q -am main
chmod -R a+rwX "$WS"
sbx -- git -C w rebase side >"$T/stop.out" 2>&1
eq "a conflicting rebase stops (exit 1)" "$?" 1
check "... with its state in the git directory" test -d "$R/.git/rebase-merge"
lacks "... and a clean stopped rebase is not warned about" \
    "$T/stop.out" "pisbx-run:"
echo 4 >"$R/f"
sbx -- sh -c 'cd w && git add f && git rebase --continue' \
    >"$T/cont.out" 2>&1
eq "git rebase --continue in the next run exits 0" "$?" 0
check "... and the rebase is done" test ! -e "$R/.git/rebase-merge"
eq "... on top of side" "$(git -C "$R" log -2 --format=%s | tr '\n' ' ')" \
    "main side "

# git cherry-pick A B (the sequencer's state).
git -C "$R" checkout -q -b pickhere side~1
echo 1 >"$R/g1" && git -C "$R" add g1 && git -C "$R" commit -q -m p1
echo 2 >"$R/g2" && git -C "$R" add g2 && git -C "$R" commit -q -m p2
P1=$(git -C "$R" rev-parse HEAD~1) P2=$(git -C "$R" rev-parse HEAD)
git -C "$R" checkout -q side
chmod -R a+rwX "$WS"
sbx -- git -C w cherry-pick "$P1" "$P2" >"$T/pick.out" 2>&1
eq "git cherry-pick A B exits 0" "$?" 0
eq "... both picked" "$(git -C "$R" log -2 --format=%s | tr '\n' ' ')" \
    "p2 p1 "

# A planted todo with an exec line: allowed, and named at exit.
git -C "$R" checkout -q side
chmod -R a+rwX "$WS"
sbx -- sh -c 'cd w && d=.git/rebase-merge; mkdir $d &&
    git rev-parse HEAD >$d/onto && git rev-parse HEAD >$d/orig-head &&
    echo refs/heads/side >$d/head-name && : >$d/interactive &&
    printf "pick %s\nexec touch '"$T"'/ran\n" $(git rev-parse HEAD) \
    >$d/git-rebase-todo' >"$T/plant.out" 2>&1
eq "planting the state of a rebase is allowed" "$?" 0
check "... it is there" test -f "$R/.git/rebase-merge/git-rebase-todo"
contains "... and named at exit, with the file, the line and what to do" \
    "$(cat "$T/plant.out" | tr '\n' ' ')" \
    "pisbx-run: the command left a git rebase in progress ($R/.git/rebase-merge) that would run more than git when continued: git-rebase-todo line 2 \"exec touch $T/ran\"; look at it, or run git rebase --abort in that repository"
case $(git -C "$R" status 2>&1) in
*rebase*) ok "git status on the host shows the rebase" ;;
*) not_ok "git status on the host shows the rebase" ;;
esac
git -C "$R" rebase --abort
check "git rebase --abort on the host removes it" \
    test ! -e "$R/.git/rebase-merge"

# Moved away with its repository, it is still named where it went.
chmod -R a+rwX "$WS"
sbx -- sh -c 'd=w/.git/sequencer; mkdir $d &&
    printf "[options]\n\tstrategy = evil\n" >$d/opts && mv w w2' \
    >"$T/move.out" 2>&1
contains "a state moved with its work tree is named where it is" \
    "$(cat "$T/move.out" | tr '\n' ' ')" \
    "cherry-pick or revert in progress ($WS/w2/.git/sequencer) that would run more than git when continued: opts line 2 \"evil\" (git runs git-merge-evil from PATH)"
check "nothing planted ran" test ! -e "$T/ran"
done_testing
