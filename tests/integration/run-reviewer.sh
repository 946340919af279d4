#!/bin/sh
# The reviewer runs on the host, so review.command may not run a file the
# sandboxed command can write -- neither named as a word, nor inside a
# shell string (". ws/reviewer.sh"), nor as interpreter code (python3 -c),
# nor through an expansion pisbx cannot see through ($, globs, cd, eval),
# nor as a name $PATH finds in a writable directory.  Each form: exit 78,
# the message names the key and the config, nothing runs.  A shell string
# with nothing writable in it still works: its reviewer is asked.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

mkdir -p "$T/rev" "$WS/bin"
cat >"$T/rev/reviewer.sh" <<EOF
#!/bin/sh
cat >/dev/null
: >"$T/asked"
echo '{"action": "deny", "reason": "asked"}'
EOF
cp "$T/rev/reviewer.sh" "$WS/reviewer.sh"
cp "$T/rev/reviewer.sh" "$WS/bin/myreviewer"
chmod 755 "$T/rev/reviewer.sh" "$WS/reviewer.sh" "$WS/bin/myreviewer"
chmod -R a+rwX "$WS"

# reviewer JSON-ARRAY: $CONF with that review.command.
reviewer() {
	run_config --deny "denied.test"
	"$PY" - "$CONF" "$1" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["review"] = {"command": json.loads(sys.argv[2])}
json.dump(c, open(sys.argv[1], "w"))
EOF
}

# refused DESC INDEX NEEDLE JSON-ARRAY: exit 78 naming review.command[INDEX]
# and NEEDLE, the command not run.
refused() {
	reviewer "$4"
	rm -f "$WS/ran"
	(cd "$WS" && timeout -k 2 30 "$RUN" --config "$CONF" \
	    --access-log "$PX_LOG" -- /bin/sh -c ': >ran') >"$T/out" 2>&1
	eq "$1: exit 78" "$?" 78
	check "$1: nothing ran" test ! -e "$WS/ran"
	contains "$1: names the key and the config" "$(cat "$T/out")" \
	    "pisbx-run: $CONF: review.command[$2] "
	contains "$1: says why" "$(cat "$T/out")" "$3"
}

# 1. The reported form and its variants: a writable script in a string.
refused "a shell string sourcing a workspace script" 2 \
    "names $WS/reviewer.sh, inside the writable directory $WS" \
    '["/bin/sh", "-c", ". '"$WS"'/reviewer.sh"]'
refused "bash source, quoted" 2 "names $WS/reviewer.sh" \
    '["/bin/bash", "-c", "source '"'$WS/reviewer.sh'"'"]'
refused "exec of a workspace script after a harmless command" 2 \
    "names $WS/reviewer.sh" \
    '["/bin/sh", "-c", "true; exec '"$WS"'/review'"''"'er.sh"]'
refused "a script for sh as a plain argument" 1 "names $WS/reviewer.sh" \
    '["/bin/sh", "'"$WS"'/reviewer.sh"]'
refused "env sh -c" 3 "names $WS/reviewer.sh" \
    '["/usr/bin/env", "sh", "-c", ". '"$WS"'/reviewer.sh"]'
refused "sh -c inside sh -c" 2 "names $WS/reviewer.sh" \
    '["/bin/sh", "-c", "/bin/sh -c \". '"$WS"'/reviewer.sh\""]'
refused "a module directory in a short option" 1 "names $WS" \
    '["/usr/bin/perl", "-I'"$WS"'", "/dev/null"]'
refused "a redirect from a workspace file into sh" 2 "names $WS/reviewer.sh" \
    '["/bin/sh", "-c", "/bin/sh <'"$WS"'/reviewer.sh"]'
refused "PATH set to a writable directory" 2 "names $WS/bin" \
    '["/bin/sh", "-c", "PATH=/usr/bin:'"$WS"'/bin myreviewer"]'

# 2. What pisbx cannot see through.
refused "a variable" 2 "has '\$'" \
    '["/bin/sh", "-c", ". \"$PWD/reviewer.sh\""]'
refused "a command substitution" 2 "has '\`'" \
    '["/bin/sh", "-c", ". `pwd`/reviewer.sh"]'
refused "a glob" 2 "has '*'" \
    '["/bin/sh", "-c", ". '"$WS"'/rev*.sh"]'
refused "a tilde" 2 "has '~'" '["/bin/sh", "-c", ". ~/reviewer.sh"]'
refused "cd, then a relative name" 2 "uses \"cd\"" \
    '["/bin/sh", "-c", "cd '"$T"' && . ws/reviewer.sh"]'
refused "eval" 2 "uses \"eval\"" \
    '["/bin/sh", "-c", "eval . /dev/null"]'
refused "python3 -c" 2 "to a program that runs it as code pisbx cannot read" \
    '["/usr/bin/python3", "-c", "exec(open(\"/dev/null\").read())"]'
refused "perl -e" 2 "to a program that runs it as code pisbx cannot read" \
    '["/usr/bin/perl", "-e", "do \"/dev/null\""]'
refused "env -S" 2 "to a program that runs it as code pisbx cannot read" \
    '["/usr/bin/env", "-S", "sh -c true"]'

# 3. A name $PATH finds in a writable directory first.
PATH="$WS/bin:$PATH" refused "a name found on a writable PATH" 2 \
    "runs \"myreviewer\" found on \$PATH, whose directory $WS/bin is writable" \
    '["/bin/sh", "-c", "exec myreviewer"]'

# 4. Harmless strings: accepted, and the reviewer is asked.
for rv in '["/bin/sh", "-c", "exec '"$T"'/rev/reviewer.sh --x"]' \
    '["/bin/sh", "-c", "'"$T"'/rev/reviewer.sh 2>/dev/null; exit 0"]' \
    '["/usr/bin/env", "LC_ALL=C", "/bin/sh", "'"$T"'/rev/reviewer.sh"]'; do
	reviewer "$rv"
	rm -f "$T/asked" "$PX_LOG"
	(cd "$WS" && timeout -k 2 60 "$RUN" --config "$CONF" \
	    --access-log "$PX_LOG" -- /bin/sh -c \
	    'curl -s -o /dev/null -w "%{http_code}" http://unlisted.test/') \
	    >"$T/out" 2>"$T/err"
	eq "accepted: $rv" "$?" 0
	check "... its reviewer was asked" test -e "$T/asked"
	check "... and its answer decided ($(head -c 300 "$T/err"))" \
	    log_wait host=unlisted.test reason=review:deny
done
done_testing
