#!/bin/sh
# A .git file exactly as git worktree add writes it ("gitdir:
# COMMON/worktrees/W", commondir "../..") is trusted at exit only for
# what COMMON's config and hooks are: the user's repository, older than
# the run.  A command that makes its own COMMON (a copy with
# core.fsmonitor, or one hidden where the guard does not report it: a
# directory moved out of a .git) and points a .git file at it -- at the
# project directory after git init, or in a subdirectory -- has that
# .git named, and the project directory's moved aside: the host's git
# status there runs nothing (the marker the planted fsmonitor would
# write stays absent; pointing the host's git at it shows it would).  A
# worktree of the user's own repository (its config keys and hooks older
# than the run) is not named.  And a .git file made by the command's
# last open before it exits is told to the parent all the same.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v git >/dev/null 2>&1 || skip "git not installed"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
# The user's repository, older than the run: its own config keys and a
# hook (the user's) do not make a worktree of it named.
OLD=$T/old
git init -q "$OLD"
git -C "$OLD" config user.name someone
git -C "$OLD" config alias.st status
printf '#!/bin/sh\n:\n' >"$OLD/.git/hooks/post-commit"
chmod +x "$OLD/.git/hooks/post-commit"
echo one >"$OLD/f"
git -C "$OLD" add f
git -C "$OLD" commit -q -m one
chmod -R a+rwX "$OLD"
run_config
MARK=$T/marks
mkdir -p "$MARK"
chmod 777 "$MARK"

newws() {
	WS=$T/$1
	mkdir -p "$WS"
	chmod 777 "$WS"
}
case_run() {
	sbx -- /bin/sh -c "$2" >"$T/$1.out" 2>"$T/$1.err"
	_rc=$?
	sed 's/^/# /' "$T/$1.err"
	return $_rc
}
held() { ls -d "$WS"/.git.pisbx-held-* 2>/dev/null | head -n 1; }

# plant DIR: a git directory at DIR (made in the sandbox) whose config
# runs a marker, with a worktree entry W as git writes it.
PLANT='plant() { mkdir -p "$1/objects" "$1/refs/heads" "$1/worktrees/W" &&
	echo "ref: refs/heads/main" >"$1/HEAD" &&
	printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch $2; false\"\n" >"$1/config" &&
	echo "ref: refs/heads/main" >"$1/worktrees/W/HEAD" &&
	echo "../.." >"$1/worktrees/W/commondir" &&
	echo "$3/.git" >"$1/worktrees/W/gitdir"; }'

# 1. The project directory: git init, a planted common dir hidden by
# moving it out of the .git, then the .git replaced by a worktree file.
newws top
case_run top "$PLANT
	git init -q && mkdir -p .git/box && plant \$PWD/.git/box/evil $MARK/top \$PWD &&
	mv .git/box box && rm -rf .git &&
	echo \"gitdir: \$PWD/box/evil/worktrees/W\" >.git && echo ok"
check "top: the plant was made" grep -q '^ok$' "$T/top.out"
H=$(held)
check "top: the .git file was moved aside" test -n "$H"
check "top: ... and said" grep -q 'worktree' "$T/top.err"
git -C "$WS" status >/dev/null 2>&1
check "top: the host's git status runs nothing" test ! -e "$MARK/top"
if [ -n "$H" ]; then
	git --git-dir="$(sed 's/^gitdir: //' "$H")" --work-tree="$WS" \
	    status >/dev/null 2>&1
	check "top: control: git there would have run it" test -e "$MARK/top"
fi
rm -f "$MARK"/*

# 2. A subdirectory made during the run, its .git file naming a copy
# made in the sandbox: named at exit.
newws sub
case_run sub "$PLANT
	mkdir s && plant \$PWD/c $MARK/sub \$PWD/s &&
	echo \"gitdir: \$PWD/c/worktrees/W\" >s/.git && echo ok"
check "sub: the plant was made" grep -q '^ok$' "$T/sub.out"
check "sub: s/.git is named" grep -q "repository at $WS/s .*\.git" "$T/sub.err"

# 3. A worktree of the user's repository: nothing named.
WS=$OLD
case_run old 'git worktree add -q wt -b feature && echo ok'
check "old: git worktree add works" grep -q '^ok$' "$T/old.out"
eq "old: nothing said about a repository" \
    "$(grep -c 'git repository' "$T/old.err")" 0

# 4. The control for 2: the host's git in s runs c's config.
git -C "$T/sub/s" status >/dev/null 2>&1
check "sub: control: git in s runs what c names" test -e "$MARK/sub"

# 5. A .git file that is the command's last act (the process exits as
# soon as its open returns): the guard tells the parent before it
# answers, so the repository is read at exit every time.
n=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	newws last$i
	sbx -- "$PY" -c 'import os
os.mkdir("s")
fd = os.open("s/.git", os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b"gitdir: /nonexistent/elsewhere\n")
os._exit(0)' >/dev/null 2>"$T/last.err"
	grep -q "repository at $WS/s " "$T/last.err" && n=$((n + 1))
done
eq "last: a .git made by the last open is named in every run" "$n" 10

done_testing
