#!/bin/sh
# The include graph between pisbx's folders, one edge a line:
#   approval -> common  (7)
# meaning seven #include lines in approval/ name a header in common/.
# Bare names ("log.h", as found through -Ifolder before common/ existed)
# are resolved as the compiler did: the including file's folder first,
# then policy/ proxy/ approval/ launcher/.
#
# With --check, enforce the layering the README's Layout table states and
# exit 1 naming every include that breaks it:
#   common/, policy/   include nothing else of ours
#   approval/          common/ and policy/
#   proxy/             adds approval/
#   supervisor/        like proxy/ (never proxy/ itself)
#   launcher/, tests/, bench/  anything
#   proxy/tls/         common/ and proxy/tlsmod.h only (pisbx-tls.so:
#                      it links OpenSSL, never the proxy's libevent)
# and every include must name its folder (#include "common/log.h"), since
# the build passes -I. and nothing else.  A new top-level folder with C in
# it must be added to the table below.
#
# launcher/'s subfolders are layers of their own (docs/internals.md),
# shown in the graph as launcher/git and so on; the files directly in
# launcher/ (main.c, connect.c) sit on top of them, and launcher.h, the
# constants every process of a run shares, under them all:
#   launcher/launcher.h  nothing else of ours
#   launcher/git/      common/, policy/, launcher/launcher.h
#   launcher/agent/    the same
#   launcher/fs/       adds launcher/git/
#   launcher/guard/    common/, policy/, launcher/launcher.h, launcher/fs/,
#                      launcher/git/
#   launcher/sandbox/  common/, policy/, launcher/launcher.h, launcher/fs/,
#                      launcher/guard/guard.h (not the guard's _int.h)
#   launcher/run/      all of those, approval/ and proxy/
#
#   sh scripts/includes.sh [--check] [TOP]
set -eu

check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top"

# Our sources: every .c and .h outside the build output.
srcs=$(find . \( -name build -o -name 'build-*' -o -name bin -o -name .git \) \
    -prune -o \( -name '*.c' -o -name '*.h' \) -type f -print | sed 's|^\./||' |
    sort)
[ -n "$srcs" ] || { echo "includes.sh: no sources under $top" >&2; exit 2; }

# shellcheck disable=SC2086
{
	printf '%s\n' $srcs | sed 's/^/F /'
	grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $srcs |
	    sed 's/^\([^:]*\):[^"]*"\([^"]*\)".*/I \1 \2/'
} | awk -v check="$check" '
# A layer as messages name it: a folder with its slash, a header as is.
function shown(l) { return l ~ /\.h$/ ? l : l "/" }
# The layer of a path: its top-level folder, or launcher/SUB for a file
# in a subfolder of launcher/.
function top_of(p) {
	if (p == "launcher/launcher.h")
		return p
	if (p ~ /^proxy\/tls\//)
		return "proxy/tls"
	if (p ~ /^launcher\/[^\/]+\//) {
		sub(/^launcher\//, "", p)
		sub(/\/.*/, "", p)
		return "launcher/" p
	}
	sub(/\/.*/, "", p)
	return p
}
function dir_of(p) { if (p !~ /\//) return "."; sub(/\/[^\/]*$/, "", p); return p }
# Who may include whom: "*" anything, "" nothing else of ours.
BEGIN {
	may["common"] = ""
	may["policy"] = ""
	may["approval"] = " common policy "
	may["proxy"] = " common policy approval "
	may["supervisor"] = " common policy approval "
	may["launcher"] = "*"
	may["proxy/tls"] = " common proxy/tlsmod.h "
	may["launcher/launcher.h"] = ""
	# An entry with a file name allows that header only.
	may["launcher/git"] = " common policy launcher/launcher.h "
	may["launcher/agent"] = " common policy launcher/launcher.h "
	may["launcher/fs"] = " common policy launcher/launcher.h launcher/git "
	may["launcher/guard"] = " common policy launcher/launcher.h " \
	    "launcher/fs launcher/git "
	may["launcher/sandbox"] = " common policy launcher/launcher.h " \
	    "launcher/fs launcher/guard/guard.h "
	may["launcher/run"] = " common policy approval proxy " \
	    "launcher/launcher.h launcher/git launcher/agent launcher/fs " \
	    "launcher/sandbox launcher/guard "
	may["tests"] = "*"
	may["bench"] = "*"
	bad = 0
}
$1 == "F" { have[$2] = 1; next }
$1 == "I" {
	file = $2; inc = $3; from = top_of(file)
	if (inc ~ /\//)
		path = inc
	else {
		path = ""
		n = split(dir_of(file) " policy proxy approval launcher", d, " ")
		for (i = 1; i <= n && path == ""; i++)
			if ((d[i] "/" inc) in have)
				path = d[i] "/" inc
	}
	if (check && inc !~ /\//) {
		printf "%s: #include \"%s\" does not name its folder " \
		    "(the build has -I. only)\n", file, inc
		bad++
	} else if (check && !(path in have)) {
		printf "%s: #include \"%s\": no such file from the top\n", \
		    file, inc
		bad++
	}
	if (path == "")
		next
	to = top_of(path)
	if (to == from)
		next
	edge[from " -> " to]++
	if (!check)
		next
	if (!(from in may)) {
		printf "%s: folder %s/ is not in the layering table " \
		    "(scripts/includes.sh, README Layout)\n", file, from
		bad++
	} else if (may[from] != "*" && index(may[from], " " to " ") == 0 &&
	    index(may[from], " " path " ") == 0) {
		printf "%s: #include \"%s\": %s may not include %s " \
		    "(README, Layout)\n", file, inc, shown(from), shown(to)
		bad++
	}
}
END {
	if (check) {
		if (bad > 0)
			printf "%d include(s) break the layering\n", bad
		else
			print "includes: layering OK"
		exit bad > 0
	}
	for (e in edge)
		printf "%s  (%d)\n", e, edge[e] | "sort"
}'
