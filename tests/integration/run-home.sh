#!/bin/sh
# A project where most projects live: in the hidden home (~/src/proj),
# run from a subdirectory.  What the workspace lets a command write stays
# writable wherever the command runs in it (touch, make, a cargo-like
# build in a nested crate), while the protected names stay refused there;
# a linked worktree of a repository in the home commits once the main
# repository is in allowWrite, and says so when it is not; git worktree
# add of a worktree inside the workspace works.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

H=$FAKEHOME
P=$H/src/proj
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t \
    GIT_COMMITTER_EMAIL=t@t
mkdir -p "$P/src" "$P/crate/src"
git init -q "$P"
printf 'hello: hello.c\n\tcc -o hello hello.c\n' >"$P/src/Makefile"
printf 'int main(void) { return 0; }\n' >"$P/src/hello.c"
printf '[package]\nname = "crate"\nversion = "0.1.0"\n' >"$P/crate/Cargo.toml"
git -C "$P" add -A && git -C "$P" commit -q -m init
git -C "$P" worktree add -q "$H/src/proj-wt" -b feature
chmod -R a+rwX "$H/src"
chmod a+rx "$H"
run_config

# hsbx DIR [pisbx-run options] -- CMD...: pisbx-run in DIR.
hsbx() {
	_d=$1
	shift
	(cd "$_d" && "$RUN" --config "$CONF" --access-log "$PX_LOG" "$@")
}

# 1. In a subdirectory of the project: the working directory is writable.
hsbx "$P/src" -v -- sh -c 'touch x && make -s hello' >"$T/src.out" 2>&1
check "touch in the working directory (a subdirectory of the workspace)" \
    test -f "$P/src/x"
check "make builds there" test -x "$P/src/hello"
if grep -q "read-only $P/src\$" "$T/src.out"; then
	not_ok "the working directory is bound read-only: $(grep 'fs:' "$T/src.out" | tr '\n' ' ')"
else
	ok "... which is not bound read-only"
fi
hsbx "$P/crate" -- sh -c 'echo "# lock" >Cargo.lock && mkdir -p target/debug &&
    echo bin >target/debug/crate' >"$T/crate.out" 2>&1
check "a cargo-like build writes its lock file and target/" \
    test -f "$P/crate/Cargo.lock" -a -f "$P/crate/target/debug/crate"

# 2. The protected names stay refused there.
hsbx "$P/src" -- sh -c 'echo x >.bashrc; mkdir -p .vscode &&
    echo "{}" >.vscode/tasks.json; echo x >../.git/hooks/pre-commit' \
    >"$T/prot.out" 2>&1
check ".bashrc in the working directory: refused" test ! -e "$P/src/.bashrc"
check ".vscode/tasks.json there: refused" test ! -e "$P/src/.vscode/tasks.json"
check ".git/hooks/pre-commit: refused" test ! -e "$P/.git/hooks/pre-commit"
contains "... each said" "$(cat "$T/prot.out")" \
    "refused to create $P/src/.bashrc: protected path"

# 3. A linked worktree made outside: the refusal names the entry to add.
echo change >"$H/src/proj-wt/f"
chmod a+rw "$H/src/proj-wt/f"
hsbx "$H/src/proj-wt" -- sh -c 'git add f && git commit -q -m in-wt' \
    >"$T/wt1.out" 2>&1
check "a commit in a worktree, main repository not writable: fails" \
    test "$(git -C "$H/src/proj-wt" log -1 --format=%s)" = init
contains "... and the refusal says which allowWrite entry to add, and where" \
    "$(cat "$T/wt1.out")" \
    "set filesystem.allowWrite to [\".\", \"$P\"] in $CONF"

# 4. With it (the home's "~" form), under the hidden home: commits.
run_config --fs '{"allowWrite": [".", "~/src/proj"]}'
hsbx "$H/src/proj-wt" -- sh -c 'git add f && git commit -q -m in-wt' \
    >"$T/wt2.out" 2>&1
eq "with the main repository in allowWrite, the commit is made" \
    "$(git -C "$H/src/proj-wt" log -1 --format=%s)" in-wt
hsbx "$H/src/proj-wt" -- sh -c 'git config x.y z; echo x >"$(git rev-parse --git-common-dir)/hooks/post-commit"' \
    >"$T/wt3.out" 2>&1
check "... while the main repository's config stays refused" \
    sh -c "! grep -q '^\[x\]' '$P/.git/config'"
check "... and its hooks" test ! -e "$P/.git/hooks/post-commit"

# 5. git worktree add in the sandbox, the worktree in the workspace:
#    works, and the host sees it.
run_config
hsbx "$P" -- git worktree add -q .wt/feat -b feat2 >"$T/add.out" 2>&1
check "git worktree add in an existing repository, inside the workspace" \
    test $? -eq 0
sed 's/^/# /' "$T/add.out"
check "... its commondir is git's own" \
    test "$(cat "$P/.git/worktrees/feat/commondir")" = "../.."
contains "... and the host's git lists it" \
    "$(git -C "$P" worktree list)" "$P/.wt/feat"
done_testing
