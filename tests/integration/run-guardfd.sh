#!/bin/sh
# The creation guard opens files for the command, in the sandbox's PID 1:
# no name the command gives may reach what that process holds (redteam
# #1).  Every spelling of "descriptor N" (/dev/fd/N, /proc/self/fd/N,
# /proc/./self, /proc//self, self/fd/N from a cwd or dirfd of /proc, a
# symlink to /proc/self/fd, /proc/<pid>/fd/N for every pid), and names
# below them, opened for writing, give only the command's own files --
# not the host's /dev, not descriptors pisbx-run inherited, not the
# guard's report channel; records forged into any of them change neither
# the "made a git repository" warning nor the summary; and the ordinary
# uses of /dev/stdout, /dev/fd/N and /proc/self/fd/N keep working; a
# file reached through its descriptor is checked by its whole name, even
# one ending in " (deleted)".
# The guard's own lines: a name's control characters masked (redteam
# #9), mkdir of an existing protected directory is EEXIST without a
# refusal (#10), a refusal repeated is said once, counted in the summary
# (newuser C8).
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

PROBE=$PISBX_BUILD/tests/helpers/fdprobe
[ -x "$PROBE" ] || { not_ok "fdprobe not built ($PROBE)"; done_testing; }
command -v git >/dev/null || skip "git not installed"

run_config
chmod -R a+rwX "$WS"
mkdir "$T/outside"
echo precious >"$T/outside/file"
chmod -R a+rwX "$T/outside"

# 1. The scan, with descriptors pisbx-run inherits from its caller: a
# file and a directory outside the sandbox's writable places.
(cd "$WS" && exec 7<>"$T/outside/file" 8<"$T/outside" &&
    "$RUN" --config "$CONF" --access-log "$PX_LOG" -- "$PROBE" scan) \
    >"$T/scan" 2>"$T/scan.err"
rc=$?
grep '^leak ' "$T/scan" | head -n 20
check "fdprobe scan ran every spelling" \
    grep -q '^scan tried=[0-9][0-9][0-9][0-9]* ' "$T/scan"
check "no spelling of a descriptor opens a file that is not the command's" \
    grep -q '^scan .* leaks=0$' "$T/scan"
check "fdprobe scan exit status 0 (got $rc)" [ "$rc" -eq 0 ]
check "nothing was made through an inherited directory descriptor" \
    [ "$(ls "$T/outside")" = file ]
check "an inherited file descriptor was not written" \
    [ "$(cat "$T/outside/file")" = precious ]
check "a name in another process's /proc is refused with a line" \
    grep -q "refused to open /proc/1/fd: a name in /proc that is not the calling process's own" "$T/scan.err"

# 2. Forged records: a repository made, then a record saying it moved
# away, and a refusal with a made-up fix, into every descriptor number.
# The repository has what a fresh clone has not (core.fsmonitor runs a
# command at the next git status on the host), so it is warned about.
rm -f "$WS/fdlink" "$WS/proclink"
sbx -- /bin/sh -c 'git init -q vendor &&
    git -C vendor config core.fsmonitor "touch /tmp/x" &&
    "$1" forge "$PWD/vendor"' sh \
    "$PROBE" >"$T/forge" 2>&1
check "the command made a repository" [ -d "$WS/vendor/.git" ]
check "the repository warning is printed despite forged records" \
    grep -q "made a git repository at $WS/vendor .*core.fsmonitor" "$T/forge"
if grep -q FORGED-FIX "$T/forge"; then
	not_ok "a forged refusal reached the summary"
else
	ok "no forged refusal in the summary"
fi
rm -rf "$WS/vendor"

# 3. The command's own descriptors, by every ordinary spelling.
sbx -- /bin/bash -c 'echo to-stderr >/dev/stderr
    echo to-stdout >/dev/stdout
    echo to-fd1 >/dev/fd/1
    exec 3>f3
    echo tee-line | tee /dev/fd/3 >/dev/null
    echo proc-self >>/proc/self/fd/3
    echo proc-pid >>/proc/$$/fd/3
    echo thread-self >>/proc/thread-self/fd/3
    (cd /proc && echo from-cwd-proc >>self/fd/3)
    ln -s /proc/self/fd fdl && echo via-link >>fdl/3
    exec 3>&-
    cat f3
    echo piped | (cat >/dev/fd/1)
    exec 4>&1
    echo dup-fd4 >/proc/self/fd/4
    echo dev-null >/dev/null && echo null-ok' 2>&1 | cat >"$T/own"
for want in to-stderr to-stdout to-fd1 tee-line proc-self proc-pid \
    thread-self from-cwd-proc via-link piped dup-fd4 null-ok; do
	check "own descriptor by name: $want" grep -qx "$want" "$T/own"
done
check "no refusal for the command's own descriptors" \
    sh -c "! grep -q refused '$T/own'"
# Standard output redirected to a file outside the workspace stays
# writable by name (Landlock allows that one file).
(cd "$WS" && "$RUN" --config "$CONF" --access-log "$PX_LOG" -- \
    /bin/sh -c 'echo by-name >/dev/stdout') >"$T/outside/stdout.txt"
check "stdout to a file outside, reopened by name" \
    grep -qx by-name "$T/outside/stdout.txt"

# 4. The guard's lines.
git init -q "$WS/repo"
chmod -R a+rwX "$WS/repo"
sbx -- /bin/sh -c 'cd repo
    mkdir .git 2>&1; echo "mkdir .git rc=$?"
    mkdir -p .git/hooks; echo "mkdir -p .git/hooks rc=$?"
    for i in 1 2 3; do echo x >.git/config; done
    mkdir ".git/hooks/$(printf "h\n\033[31mpisbx-run: all clear")"' \
    >"$T/lines" 2>&1
check "mkdir of an existing protected directory: EEXIST" \
    grep -q "mkdir: cannot create directory.*File exists" "$T/lines"
check "mkdir -p of an existing protected directory succeeds" \
    grep -qx "mkdir -p .git/hooks rc=0" "$T/lines"
check "no refusal line for .git or .git/hooks themselves" \
    sh -c "! grep -Eq 'refused to create $WS/repo/.git(/hooks)?:' '$T/lines'"
eq "a repeated refusal is said once inline" \
    "$(grep -c "^pisbx-run: refused to write $WS/repo/.git/config" "$T/lines")" 1
check "and counted in the summary" \
    grep -q "write $WS/repo/.git/config (3 times)" "$T/lines"
check "a control character in a refused name is masked" \
    grep -q "refused to create $WS/repo/.git/hooks/h??\[31mpisbx-run: all clear: protected path" "$T/lines"
if grep -q "$(printf '\033')" "$T/lines" || grep -q '^.\[31mpisbx-run: all clear' "$T/lines"; then
	not_ok "an escape sequence or a line of the command's reached pisbx-run's output"
else
	ok "no escape sequence or forged line in pisbx-run's output"
fi

# A file reached through its descriptor is checked by its name, even one
# that ends like the kernel's mark of a file with no name left: made in
# a write-protected directory by the host during the run (so no mount
# covers it), opened for reading, then written through /proc/self/fd.
run_config --fs '{"denyWrite": ["vault/*"]}'
mkdir -p "$WS/vault"
chmod a+rwx "$WS/vault"
spawn sbx -- /bin/sh -c 'echo x >"$0/ready"; i=0
    while [ ! -e "$0/vault/late (deleted)" ] && [ $i -lt 200 ]; do
    sleep 0.05; i=$((i + 1)); done
    exec 3<"$0/vault/late (deleted)"
    if echo pwned >/proc/self/fd/3; then echo written; else echo refused; fi
    ' "$WS" >"$T/deleted.out" 2>&1
if wait_file "$WS/ready" 200; then
	echo keep >"$WS/vault/late (deleted)"
else
	not_ok "the command did not start (deleted)"
fi
wait "$LAST_PID"
contains "a protected name ending in ' (deleted)': writing it through its descriptor is refused" \
    "$(cat "$T/deleted.out")" refused
check "... and it is unchanged" grep -qx keep "$WS/vault/late (deleted)"
rm -rf "$WS/vault" "$WS/ready"

done_testing
