#!/bin/sh
# The workspace found from a .git is taken only where git itself would
# trust it (safe.directory): the work tree's top and its .git the
# caller's, and never a sticky directory every user can write to.  A
# .git another user planted above a project (mkdir /tmp/.git) leaves the
# working directory the workspace, so the run cannot write the other
# projects beside it; -v says which directory was taken and why.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

run_config
me=$(id -u)

# in_dir DIR CMD...: pisbx-run -v in DIR with $CONF, the line CMD, bounded.
in_dir() {
	_d=$1; shift
	(cd "$_d" && timeout -k 2 60 "$RUN" -v --config "$CONF" -- \
	    /bin/sh -c "$*")
}

# 1. A trusted work tree: its top is the workspace, from a subdirectory.
mkdir -p "$T/repo/src"
git init -q "$T/repo"
in_dir "$T/repo/src" 'echo x >../top.txt' >"$T/out" 2>&1
eq "a work tree of ours: the command ran" "$?" 0
check "... and wrote its top" test -f "$T/repo/top.txt"
contains "-v says which and why" "$(cat "$T/out")" \
    "fs: workspace $T/repo: the top of the git work tree holding the working directory"

# 2. A sticky directory every user can write to, with a .git in it (ours,
# or anyone's): never the workspace.
mkdir -p "$T/sticky/proj" "$T/sticky/.git"
chmod 1777 "$T/sticky"
echo other >"$T/sticky/Makefile"
chmod 666 "$T/sticky/Makefile"
in_dir "$T/sticky/proj" 'echo x >proj.txt; echo evil >../Makefile' \
    >"$T/out" 2>&1
check "a sticky top: the project itself is written" test -f "$T/sticky/proj/proj.txt"
eq "... not the other project's Makefile beside it" \
    "$(cat "$T/sticky/Makefile")" other
contains "-v says the working directory and why" "$(cat "$T/out")" \
    "fs: workspace $T/sticky/proj: the working directory: the git work tree $T/sticky is not taken, as git would not trust it: $T/sticky is a sticky directory every user can write to"

# 3. Another user's .git above the project (as root: one owned by nobody;
# as nobody: one owned by root, in a directory everyone may write).
if [ "$me" -eq 0 ] && command -v setpriv >/dev/null; then
	nobody() {
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	}
	mkdir -p "$T/shared/proj"
	chmod 777 "$T/shared"
	nobody mkdir "$T/shared/.git"
	echo other >"$T/shared/Makefile"
	chmod 666 "$T/shared/Makefile"
	in_dir "$T/shared/proj" 'echo x >proj.txt; echo evil >../Makefile' \
	    >"$T/out" 2>&1
	check "root, nobody's .git above: the project is written" \
	    test -f "$T/shared/proj/proj.txt"
	eq "... the other project's Makefile is not" \
	    "$(cat "$T/shared/Makefile")" other
	contains "... and -v says why" "$(cat "$T/out")" \
	    "the git work tree $T/shared is not taken, as git would not trust it: $T/shared/.git belongs to uid 65534, not to you (uid 0)"

	mkdir -p "$T/rootgit/.git" "$T/rootgit/proj"
	chmod 777 "$T/rootgit"
	chown 65534:65534 "$T/rootgit/proj"
	echo other >"$T/rootgit/Makefile"
	chmod 666 "$T/rootgit/Makefile"
	chmod a+rx "$T"
	(cd "$T/rootgit/proj" && nobody env HOME=/nonexistent \
	    timeout -k 2 60 "$RUN" -v --config "$CONF" -- /bin/sh -c \
	    'echo x >proj.txt; echo evil >../Makefile') >"$T/out" 2>&1
	check "nobody, root's .git above: the project is written" \
	    test -f "$T/rootgit/proj/proj.txt"
	eq "... the other project's Makefile is not" \
	    "$(cat "$T/rootgit/Makefile")" other
	contains "... and -v says why" "$(cat "$T/out")" \
	    "the git work tree $T/rootgit is not taken, as git would not trust it: $T/rootgit belongs to uid 0, not to you (uid 65534)"
fi
done_testing
