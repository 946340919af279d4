#!/bin/sh
# A git repository the command makes during the run: pisbx-run names it at
# exit only when it holds something a fresh clone does not (a config key
# git clone and git init do not write, a hook that is not a sample, a
# file of the git directory such as rebase-merge/, a .git file, a config
# line read otherwise than git would), and then names exactly that.  A
# plain clone, git init with commits, a shallow clone, a bare clone and a
# merge stopped on a conflict are not mentioned.  A repository with
# something to name inside a plain one is named, and so is one whose .git
# was made or moved into place as ".git/", ".git//" or "./.git".
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

command -v git >/dev/null 2>&1 || skip "git not installed"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid

# The origin, outside the workspace, readable inside (as every user).
git init -q "$T/origin"
git -C "$T/origin" commit -q --allow-empty -m one
git -C "$T/origin" commit -q --allow-empty -m two
chmod -R a+rX "$T/origin"
chmod 777 "$WS"
run_config --fs "{\"allowRead\": [\"$T/origin\"]}"

# clone DIR [ARGS...]: a clone of the origin in the workspace.
cat >"$T/lib.sh" <<EOF2
clone() { d=\$1; shift; git clone -q "\$@" "file://$T/origin" "\$d"; }
EOF2
chmod 644 "$T/lib.sh"

# case NAME SCRIPT: run SCRIPT in the sandbox; its stderr in $T/NAME.err.
case_run() {
	sbx -- /bin/sh -c ". '$T/lib.sh'; $2" >"$T/$1.out" 2>"$T/$1.err"
	check "$1: the command succeeded" test $? -eq 0
	sed 's/^/# /' "$T/$1.err"
}
named() { grep "made a git repository at $WS/$1 " "$T/$2.err"; }

# Plain ones: nothing said.
case_run plain 'clone plain && git -C plain log -q >/dev/null &&
	git init -q made && git -C made commit -q --allow-empty -m x &&
	git -C made checkout -q -b topic && git -C made commit -q \
	--allow-empty -m y && git -C made gc -q && clone shallow --depth 1 &&
	clone bare.git --bare && mkdir -p deep/er && clone deep/er/c &&
	git -C plain fetch -q && git -C plain pull -q &&
	git init -q merged && cd merged && echo 0 >f && git add f &&
	git commit -q -m 0 && git checkout -q -b side && echo 1 >f &&
	git commit -q -am 1 && git checkout -q - && echo 2 >f &&
	git commit -q -am 2 && { git merge -q side >/dev/null; test -f \
	.git/MERGE_HEAD; }'
eq "plain clones, git init, gc, --depth, --bare, a stopped merge: nothing said" \
    "$(grep -c 'made a git repository' "$T/plain.err")" 0

# Each addition named, exactly.
case_run planted 'clone fsm && git -C fsm config core.fsmonitor "touch x" &&
	clone hook && printf "#!/bin/sh\n" >hook/.git/hooks/post-checkout &&
	clone linked && ln -s pre-commit.sample linked/.git/hooks/pre-commit &&
	clone rebase && mkdir rebase/.git/rebase-merge &&
	clone inline && printf "[core] fsmonitor = x\n" >>inline/.git/config &&
	clone alias && git -C alias config alias.st "!touch x" &&
	clone remote && git -C remote config remote.origin.uploadpack x &&
	clone gitfile && mv gitfile/.git gitdir && echo "gitdir: ../gitdir" \
	>gitfile/.git &&
	clone outer && git init -q outer/inner && git -C outer/inner config \
	core.sshCommand x &&
	git init -q --bare store.git && git -C store.git config \
	core.hooksPath /x'
contains "core.fsmonitor named" "$(named fsm planted)" \
    ".git/config core.fsmonitor; look at it"
contains "a hook named" "$(named hook planted)" ".git/hooks/post-checkout;"
contains "a hook that is a link to a sample named" "$(named linked planted)" \
    ".git/hooks/pre-commit;"
contains "a rebase in progress named" "$(named rebase planted)" \
    ".git/rebase-merge;"
contains "a key on a section's line named by its line" \
    "$(named inline planted)" ".git/config line "
contains "an alias named" "$(named alias planted)" ".git/config alias.st;"
contains "uploadpack named" "$(named remote planted)" \
    ".git/config remote.origin.uploadpack;"
contains "a .git file named" "$(named gitfile planted)" \
    ".git (a file naming another git directory)"
contains "a repository inside a plain clone named" \
    "$(named outer/inner planted)" ".git/config core.sshCommand;"
eq "the plain clone around it is not" "$(named outer planted)" ""
contains "a bare repository's config named" "$(named store.git planted)" \
    "config core.hooksPath;"
eq "each named once" "$(grep -c 'made a git repository' "$T/planted.err")" 10

# A .git made or moved into place under another spelling of its name
# (a trailing slash, two, a "." on the way) is the same .git: named.
case_run spelled '/usr/bin/python3 -c "import os
for d in (\"s1\", \"s2\", \"s3\", \"s4\", \"s5\"):
    os.mkdir(d)
os.mkdir(\"s1/.git/\")
os.mkdir(\"s2/.git//\")
os.mkdir(\"s3/./.git\")
os.mkdir(\"s4//.git/\")
os.mkdir(\"t5\")
os.rename(\"t5\", \"s5/.git/\")" &&
	for d in s1 s2 s3 s4 s5; do git init -q $d &&
	git -C $d config core.fsmonitor "touch x" || exit 1; done'
for d in s1 s2 s3 s4 s5; do
	contains "$d: a .git spelled otherwise is named" "$(named $d spelled)" \
	    ".git/config core.fsmonitor; look at it"
done

done_testing
