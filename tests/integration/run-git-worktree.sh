#!/bin/sh
# git worktree add in a repository that existed before the run, the new
# worktree inside the workspace: git worktree add wt -b feature (and the
# DWIM form, and --detach) works, a commit in the worktree works, the
# host's git lists the worktree, and nothing is said at exit.  What a
# command could plant there runs nothing afterwards: config.worktree with
# core.fsmonitor is refused, the commondir of an entry made during the
# run is git's own "../.." whatever the command writes into it (one
# naming a copy of the repository with core.fsmonitor in its config is
# what the host's git would run: the control shows it does), and an
# older entry's commondir cannot be made again.  A git worktree add that
# cannot succeed -- outside the workspace, onto a directory with files --
# leaves no branch behind.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v git >/dev/null 2>&1 || skip "git not installed"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
MARK=$T/marks
mkdir -p "$MARK"
chmod 777 "$MARK"

git init -q "$WS"
echo one >"$WS/f"
git -C "$WS" add f
git -C "$WS" commit -q -m one
git -C "$WS" worktree add -q "$WS/old" -b old
mkdir "$WS/full"
echo x >"$WS/full/x"
chmod -R a+rwX "$WS"
run_config

# case NAME SCRIPT: run SCRIPT in the sandbox in $WS; stderr in NAME.err.
case_run() {
	sbx -- /bin/sh -c "$2" >"$T/$1.out" 2>"$T/$1.err"
	_rc=$?
	sed 's/^/# /' "$T/$1.err"
	return $_rc
}

# 1. The common forms.
case_run add 'git worktree add -q wt -b feature && cd wt && echo two >f &&
	git commit -q -am two && cd .. && git worktree add -q dwim &&
	git worktree add -q --detach det'
check "add: git worktree add wt -b feature, a commit there, DWIM, --detach" \
    test $? -eq 0
L=$(git -C "$WS" worktree list)
contains "add: the host lists wt on feature" "$L" "$WS/wt "
contains "add: ... and dwim" "$L" "$WS/dwim "
contains "add: ... and det" "$L" "$WS/det "
eq "add: the host sees the worktree's commit on feature" \
    "$(git -C "$WS" log -1 --format=%s feature)" "two"
eq "add: wt's commondir is git's own" "$(cat "$WS/.git/worktrees/wt/commondir")" "../.."
eq "add: nothing said about a repository" \
    "$(grep -c 'git repository' "$T/add.err")" 0
eq "add: nothing refused" "$(grep -c 'refused' "$T/add.err")" 0

# 2. Plants.  evil: a copy of the repository whose config runs a marker.
case_run plant "mkdir evil && cp -r .git/objects .git/refs .git/HEAD evil/ &&
	printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch $MARK/evil; false\"\\n' >evil/config;
	printf '[core]\\n\\tfsmonitor = \"touch $MARK/cw; false\"\\n' >.git/worktrees/wt/config.worktree;
	echo cw=\$?;
	git worktree add -q wt2 -b f2 && rm .git/worktrees/wt2/commondir &&
	echo '$WS/evil' >.git/worktrees/wt2/commondir; echo new=\$?;
	rm -f .git/worktrees/old/commondir;
	echo '$WS/evil' >.git/worktrees/old/commondir; echo old=\$?"
grep -v '^#' "$T/plant.out" | sed 's/^/# /'
check "plant: config.worktree is refused" grep -q '^cw=[1-9]' "$T/plant.out"
check "plant: ... and said" grep -q \
    "refused to create $WS/.git/worktrees/wt/config.worktree" "$T/plant.err"
check "plant: no config.worktree" test ! -e "$WS/.git/worktrees/wt/config.worktree"
eq "plant: a new entry's commondir holds ../.., not what was written" \
    "$(cat "$WS/.git/worktrees/wt2/commondir")" "../.."
check "plant: an older entry's commondir cannot be made again" \
    grep -q '^old=[1-9]' "$T/plant.out"
check "plant: ... and nothing names evil there" \
    sh -c "! grep -qs evil '$WS/.git/worktrees/old/commondir'"
rm -f "$MARK"/*
for d in wt wt2 old; do
	(cd "$WS/$d" && git status >/dev/null 2>&1 &&
	    git commit -q --allow-empty -m host >/dev/null 2>&1)
done
eq "plant: the host's git status and commit in each worktree run nothing" \
    "$(ls "$MARK")" ""
# The control: the commondir the command wrote is one git would follow.
echo "$WS/evil" >"$WS/.git/worktrees/wt2/commondir"
(cd "$WS/wt2" && git status >/dev/null 2>&1)
check "control: with the written commondir, git status runs evil's fsmonitor" \
    test -e "$MARK/evil"
printf '../..\n' >"$WS/.git/worktrees/wt2/commondir"

# 3. A git worktree add that cannot succeed leaves no branch.
case_run fail 'git worktree add ../outside -b lost; echo a=$?;
	git worktree add ../lost2; echo b=$?;
	git worktree add full -b lost3; echo c=$?'
check "fail: outside the workspace, -b: fails" grep -q '^a=[1-9]' "$T/fail.out"
check "fail: ... refused before git makes the branch, said" grep -q \
    "refused to create $WS/.git/refs/heads/lost.lock: the branch of a git worktree add that cannot succeed" \
    "$T/fail.err"
check "fail: ... no branch lost" \
    sh -c "! git -C '$WS' rev-parse -q --verify refs/heads/lost >/dev/null"
check "fail: outside, the DWIM branch: fails" grep -q '^b=[1-9]' "$T/fail.out"
check "fail: ... no branch lost2" \
    sh -c "! git -C '$WS' rev-parse -q --verify refs/heads/lost2 >/dev/null"
check "fail: onto a directory with files: fails" grep -q '^c=[1-9]' "$T/fail.out"
check "fail: ... no branch lost3" \
    sh -c "! git -C '$WS' rev-parse -q --verify refs/heads/lost3 >/dev/null"
check "fail: ... the directory is untouched" test ! -e "$WS/full/.git"
check "fail: no worktree entry left" \
    test ! -e "$WS/.git/worktrees/outside" -a ! -e "$WS/.git/worktrees/full"

done_testing
