#!/bin/sh
# git init in the project directory (a workspace without a repository):
# allowed, and the repository is read at exit like any made during the
# run.  A plain one (git init, commits, a remote) is kept and not
# mentioned; one with a planted hook, core.fsmonitor or a .git file is
# moved aside to .git.pisbx-held-XXXXXX and said, so that the host's git
# commit afterwards runs nothing planted (marker files the planted
# programs would write; moving it back shows the same commit would have
# run them).  A prepared .git moved into place is refused.  From the
# next run on the repository is an existing one: its hooks are
# protected.  A .git in an existing subdirectory stays refused.  One
# whose index takes in a nested repository with a planted config (a
# gitlink: git status runs git there) is held aside too.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v git >/dev/null 2>&1 || skip "git not installed"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
run_config
MARK=$T/marks
mkdir -p "$MARK"
chmod 777 "$MARK"

# newws NAME: a fresh project directory without a repository, as $WS.
newws() {
	WS=$T/$1
	mkdir -p "$WS"
	chmod 777 "$WS"
}
# case NAME SCRIPT: run SCRIPT in the sandbox in $WS; stderr in NAME.err.
case_run() {
	sbx -- /bin/sh -c "$2" >"$T/$1.out" 2>"$T/$1.err"
	_rc=$?
	sed 's/^/# /' "$T/$1.err"
	return $_rc
}
held() { ls -d "$WS"/.git.pisbx-held-* 2>/dev/null | head -n 1; }

# A plain git init: works, kept, nothing said.
newws plain
case_run plain 'git init -q && echo a >a && git add a &&
	git commit -q -m one && git remote add origin https://example.invalid/r.git &&
	git checkout -q -b topic && git commit -q --allow-empty -m two'
check "plain: git init and commits in the project directory succeed" test $? -eq 0
check "plain: the repository is there after the run" test -d "$WS/.git"
eq "plain: the host sees both commits" \
    "$(git -C "$WS" log --format=%s topic | tr '\n' ' ')" "two one "
eq "plain: nothing said about it" \
    "$(grep -c 'git repository' "$T/plain.err")" 0
eq "plain: nothing held aside" "$(held)" ""

# The next run: the repository existed before, its hooks are protected.
case_run again "printf '#!/bin/sh\ntouch $MARK/again\n' >.git/hooks/post-commit"
check "again: a hook in the now existing repository is refused" test $? -ne 0
check "again: the refusal names it" \
    grep -q "refused to create $WS/.git/hooks/post-commit" "$T/again.err"
check "again: no hook file" test ! -e "$WS/.git/hooks/post-commit"

# Planted: a hook and core.fsmonitor after git init.
newws planted
case_run planted "git init -q && git commit -q --allow-empty -m one &&
	git config core.fsmonitor 'touch $MARK/fsmonitor; true' &&
	printf '#!/bin/sh\ntouch $MARK/hook\n' >.git/hooks/post-commit &&
	chmod +x .git/hooks/post-commit && git commit -q --allow-empty -m two"
check "planted: the command itself succeeded" test $? -eq 0
check "planted: the message names the hook and the key" grep -q \
    "project directory $WS with more than git init makes.*core.fsmonitor.*hooks/post-commit" \
    "$T/planted.err"
H=$(held)
check "planted: .git is gone from the project directory" test ! -e "$WS/.git"
check "planted: it was moved aside, hook and all" test -f "$H/hooks/post-commit"
check "planted: the message says where" grep -q "moved to $H " "$T/planted.err"
rm -f "$MARK"/*
(cd "$WS" && git status >/dev/null 2>&1; git commit -q --allow-empty -m host \
    >/dev/null 2>&1)
check "planted: the host's git status and commit run no hook" test ! -e "$MARK/hook"
check "planted: ... and no fsmonitor" test ! -e "$MARK/fsmonitor"
# The control: put it back, and the same commit runs both.
mv "$H" "$WS/.git"
(cd "$WS" && git commit -q --allow-empty -m host >/dev/null 2>&1)
check "control: moved back, git commit runs the planted hook" test -e "$MARK/hook"
check "control: ... and the planted fsmonitor" test -e "$MARK/fsmonitor"

# A repository made elsewhere cannot be moved into place as .git: a
# prepared tree is refused like any rename onto a protected name.
newws moved
case_run moved "mkdir x && git init -q x &&
	git -C x config core.fsmonitor 'touch $MARK/moved' && mv x/.git .git"
check "moved: moving a prepared .git into place fails" test $? -ne 0
check "moved: the refusal names it" grep -q "refused to replace $WS/.git" "$T/moved.err"
check "moved: no .git at the project directory" test ! -e "$WS/.git"

# A .git file naming a git directory elsewhere.
newws gitfile
case_run gitfile "mkdir -p $T/nothere 2>/dev/null; echo 'gitdir: /tmp/elsewhere' >.git"
check "gitfile: the command succeeded" test $? -eq 0
check "gitfile: the .git file was held aside" test -f "$(held)"
check "gitfile: the message names it" grep -q "a file naming another git directory" \
    "$T/gitfile.err"

# An existing subdirectory of the project is not the project directory.
newws sub
mkdir "$WS/lib"
chmod 777 "$WS/lib"
case_run sub 'git init -q lib'
check "sub: git init in an existing subdirectory is refused" test $? -ne 0
check "sub: the refusal names it" grep -q "refused to create $WS/lib/.git" "$T/sub.err"
check "sub: no repository there" test ! -e "$WS/lib/.git"

# A submodule: a nested repository made in the run whose config runs a
# marker, taken into the new repository's index as a gitlink.  The
# host's git status at the project directory would run its config: the
# project's repository is held aside (the nested one is named too).
newws gitlink
case_run gitlink "git init -q && mkdir sub && git -C sub init -q &&
	echo x >sub/f && git -C sub add f && git -C sub commit -qm x &&
	git -C sub config core.fsmonitor 'touch $MARK/gitlink; false' &&
	git add sub 2>/dev/null && git commit -qm top && echo ok"
check "gitlink: the plant was made" grep -q '^ok$' "$T/gitlink.out"
H=$(held)
check "gitlink: the repository was held aside" test -n "$H"
check "gitlink: ... saying why" grep -q "sub (a submodule: .git/config core.fsmonitor)" \
    "$T/gitlink.err"
git -C "$WS" status >/dev/null 2>&1
check "gitlink: the host's git status runs nothing" test ! -e "$MARK/gitlink"
if [ -n "$H" ]; then
	mv "$H" "$WS/.git"
	git -C "$WS" status >/dev/null 2>&1
	check "gitlink: control: moved back, git status runs it" \
	    test -e "$MARK/gitlink"
fi
rm -f "$MARK"/*

done_testing
