#!/bin/sh
# pisbx-sh takes what bash-compatible callers pass: each row of the table
# runs under pisbx-sh and under plain bash, and both must print the same
# and exit the same (-e, -o pipefail, -x, -u, clusters such as -ec and
# -euo pipefail, CI runners' --noprofile --norc -eo pipefail, -O, +e).
# A login shell (-l, --login, -ilc) keeps the caller's PATH, which the
# system profile resets and the hidden home's profile would have built;
# the caller's BASH_ENV is still read and handed on.  -i runs an
# interactive bash.  --help and --version answer; anything else is a
# usage error (exit 2) that names what is taken.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

SH=$PISBX_BINDIR/pisbx-sh
# The bash pisbx-sh runs (run_bash: /bin/bash, then /usr/bin/bash).
for BASH in /bin/bash /usr/bin/bash ""; do
	[ -x "$BASH" ] && break
done
[ -n "$BASH" ] || skip "no bash"
VERSION=$(sed -n 's/^#define PISBX_VERSION "\(.*\)"$/\1/p' \
    "$PISBX_TOP/common/log.h")
run_config
export PISBX_CONFIG="$CONF"

# Each row: the arguments, as shell words.
cat >"$T/rows" <<'EOF'
-c 'echo "$0|$1|$-"' name one
-e -c 'false; echo not reached'
-ec 'false; echo not reached'
-c -e 'false; echo not reached'
+e -c 'false; echo reached'
-o pipefail -c 'false | true'
-eo pipefail -c 'false | true; echo not reached'
-euo pipefail -c 'echo "$nope"'
-oeu pipefail -c 'shopt -o pipefail errexit nounset'
--noprofile --norc -eo pipefail -c 'false | true; echo not reached'
-x -c 'echo traced'
-xe -c 'echo traced; false; echo not reached'
-u -c 'echo "$nope"'
-O extglob -c 'shopt extglob'
+O extglob -c 'shopt extglob'
-f -c 'echo /et*'
-C -c 'echo a >f; echo b >f; cat f; rm f'
--posix -c 'shopt -o posix'
EOF
n=0
while IFS= read -r row; do
	n=$((n + 1))
	eval "set -- $row"
	(cd "$WS" && "$BASH" "$@") >"$T/want" 2>&1
	want_rc=$?
	(cd "$WS" && "$SH" "$@") >"$T/got" 2>&1
	got_rc=$?
	if [ "$want_rc" = "$got_rc" ] && cmp -s "$T/want" "$T/got"; then
		ok "pisbx-sh $row: as bash (exit $got_rc)"
	else
		not_ok "pisbx-sh $row: exit $got_rc, bash $want_rc"
		diff "$T/want" "$T/got" | sed 's/^/# /'
	fi
done <"$T/rows"

# -l: the system profile resets PATH (Debian's /etc/profile does); the
# caller's comes first again, and bash is a login shell.
mkdir -p "$T/tools"
printf '#!/bin/sh\necho tool-found\n' >"$T/tools/pisbx-tool"
chmod 755 "$T/tools/pisbx-tool"
P=$T/tools:$PATH
out=$(cd "$WS" && PATH=$P "$BASH" -lc 'echo "$PATH"' 2>&1)
case :$out: in
*:"$T/tools":*) echo "# /etc/profile keeps PATH here: -l loses nothing to restore" ;;
*) echo "# outside, bash -l's PATH is $out" ;;
esac
for args in "-lc" "-l -c" "--login -c" "-elc" "-ilc" "-l -i -c"; do
	# shellcheck disable=SC2086
	out=$(cd "$WS" && PATH=$P "$SH" $args 'pisbx-tool; echo "$PATH"' \
	    </dev/null 2>/dev/null)
	case $out in
	tool-found*) ok "pisbx-sh $args: the caller's tools are found" ;;
	*) not_ok "pisbx-sh $args: the caller's tools are lost: $out" ;;
	esac
	case $(printf '%s\n' "$out" | tail -n 1) in
	"$P"*) ok "pisbx-sh $args: the caller's PATH comes first" ;;
	*) not_ok "pisbx-sh $args: PATH is $(printf '%s\n' "$out" | tail -n 1)" ;;
	esac
done
out=$(cd "$WS" && PATH=$P "$SH" -lc 'shopt -q login_shell && echo login' 2>&1)
eq "pisbx-sh -lc: bash is a login shell" "$out" login
out=$(cd "$WS" && PATH=$P "$SH" -ilc 'echo "$-"' </dev/null 2>/dev/null)
contains "pisbx-sh -ilc: bash is interactive" "$out" i
out=$(cd "$WS" && PATH=$P "$SH" -lc \
    "$BASH -c 'echo \"\${BASH_ENV-unset}\"; pisbx-tool'" 2>&1)
eq "pisbx-sh -lc: a bash it starts sees no BASH_ENV, the same PATH" "$out" \
    "unset
tool-found"
printf 'echo env-file-read; export FROM_ENV_FILE=1\n' >"$T/benv.sh"
out=$(cd "$WS" && BASH_ENV=$T/benv.sh "$SH" -lc \
    'echo "$FROM_ENV_FILE"; '"$BASH"' -c "echo \$BASH_ENV"' 2>&1)
eq "pisbx-sh -lc: the caller's BASH_ENV is read and handed on" "$out" \
    "env-file-read
1
env-file-read
$T/benv.sh"
out=$(cd "$WS" && PATH=$P "$SH" -lxc 'echo traced' 2>&1 >/dev/null | grep -c pisbx)
eq "pisbx-sh -lxc: pisbx's own lines are not traced" "$out" 0
out=$(cd "$WS" && PATH=$P "$SH" --noprofile -lc 'pisbx-tool' 2>&1)
eq "pisbx-sh --noprofile -lc: no profile, PATH as it was" "$out" tool-found

# -i: an interactive bash, as bash -ic gives one.
(cd "$WS" && "$BASH" -ic 'echo "$-"' </dev/null) >"$T/want" 2>/dev/null
(cd "$WS" && "$SH" -ic 'echo "$-"' </dev/null) >"$T/got" 2>/dev/null
check "pisbx-sh -ic: interactive, as bash -ic ($(cat "$T/got"))" \
    cmp -s "$T/want" "$T/got"

# Its own answers.
out=$("$SH" --version 2>&1)
eq "--version" "$out" "pisbx-sh $VERSION"
out=$("$SH" --help 2>/dev/null)
eq "--help exits 0" "$?" 0
contains "--help prints the usage on stdout" "$out" "usage: pisbx-sh [OPTION...] -c"
contains "and names the options taken" "$out" "-o NAME, -O NAME, -i, -l"

# What is refused: exit 2, the reason, and a usage line naming what is taken.
while IFS='|' read -r args why; do
	eval "set -- $args"
	(cd "$WS" && "$SH" "$@") >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$why" "$T/err" &&
	    grep -qF -- "-o NAME, -O NAME" "$T/err" && [ ! -s "$T/out" ]; then
		ok "pisbx-sh $args: refused ($why)"
	else
		not_ok "pisbx-sh $args: exit $rc: $(cat "$T/out" "$T/err")"
	fi
done <<'EOF'
-Z -c true|-Z: not an option of bash's that pisbx-sh takes
-eZc true|-Z: not an option
+c true|+c: not an option
--rcfile x -c true|--rcfile: not an option
--config /x -c true|pisbx-run's options go in the config
-c|-c: no command line
-e -o|-o: no option name
-e /usr/bin/printf x|bash's options need a command line
-l /usr/bin/printf x|bash's options need a command line
|no command
EOF
done_testing
