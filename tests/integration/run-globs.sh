#!/bin/sh
# Path patterns in the filesystem policy, as srt and pi-sandbox users
# write them: what matches when the run starts is hidden (denyRead) or
# write-protected (denyWrite), at any depth and through a matching
# symlink; a name that matches is never created during the run, by any
# call (open, mkdir, symlink, link, rename, a directory renamed into
# place); everything else works as before.  Relative patterns start at
# the project (the git work tree's top), from any subdirectory.  The walk
# at start is bounded, and past a bound pisbx-run stops with the reason.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

# The project: a git work tree, secrets at several depths.
git init -q "$WS"
mkdir -p "$WS/sub/deep" "$WS/keys" "$WS/vault/inner" "$WS/logs" \
    "$WS/outside"
echo ROOT-ENV >"$WS/.env"
echo SUB-ENV >"$WS/sub/.env"
echo DEEP-ENV >"$WS/sub/deep/.env"
echo LOCAL-ENV >"$WS/.env.local"
echo SUB-LOCAL >"$WS/sub/.env.local"
echo ROOT-PEM >"$WS/root.pem"
echo DEEP-PEM >"$WS/keys/deep.pem"
echo VAULT-A >"$WS/vault/a"
echo VAULT-B >"$WS/vault/inner/b"
echo LINKED-SECRET >"$WS/outside/real.txt"
ln -s ../../outside/real.txt "$WS/sub/deep/linked.key"
echo fine >"$WS/sub/ok.txt"
chmod -R a+rwX "$WS"

# 1. denyRead: existing matches hidden, wherever the command runs.
run_config --fs '{"denyRead": ["**/.env", ".env.*", "*.pem", "**/*.key",
    "vault/**"]}'
sbx_sh 'for f in .env sub/.env sub/deep/.env .env.local root.pem \
    sub/deep/linked.key outside/real.txt vault/a vault/inner/b; do
    printf "%s=%s\n" "$f" "$(cat "$f" 2>/dev/null)"; done
    ls -A vault | tr "\n" " "; echo "(vault)"
    cat sub/.env.local keys/deep.pem sub/ok.txt'
for s in ROOT-ENV SUB-ENV DEEP-ENV LOCAL-ENV ROOT-PEM LINKED-SECRET VAULT-A \
    VAULT-B; do
	check "denyRead: $s is not read" sh -c "! grep -q $s '$T/out'"
done
contains "denyRead: vault/** leaves vault an empty directory" \
    "$(cat "$T/out")" "(vault)"
check "denyRead: vault lists nothing" grep -qx '(vault)' "$T/out"
# Anchored where srt anchors: ".env.*" and "*.pem" are the project's top.
contains "\".env.*\" is the top's: sub/.env.local stays readable" \
    "$(cat "$T/out")" SUB-LOCAL
contains "\"*.pem\" is the top's: keys/deep.pem stays readable" \
    "$(cat "$T/out")" DEEP-PEM
contains "non-matching files are read" "$(cat "$T/out")" fine

# From a subdirectory: "**/.env" still means the project's.
out=$(cd "$WS/sub/deep" && "$RUN" --config "$CONF" -- \
    /bin/sh -c 'cat ../../.env ../.env .env 2>&1; echo done' 2>&1)
check "from sub/deep, the top's .env is not read" \
    sh -c "! printf '%s' '$out' | grep -q -e ROOT-ENV -e SUB-ENV -e DEEP-ENV"
contains "from sub/deep, the command runs" "$out" done
out=$(cd "$WS/sub" && "$RUN" -v --config "$CONF" -- true 2>&1)
contains "-v names each pattern, anchored, with what it found" "$out" \
    "fs: pattern   $WS/**/.env (denyRead): 3 existing paths"

# 2. Names that match are never made during the run.
sbx_sh 'try() { if eval "$1" 2>/dev/null; then echo "MADE $2"; else echo "refused $2"; fi; }
    try "echo x >.env" top-env
    try "mkdir -p n && echo x >n/.env" new-dir-env
    try "echo x >x.pem" top-pem
    try "echo x >sub/y.pem" sub-pem
    try "mv sub/ok.txt .env.prod" rename-onto
    try "ln -s /etc/hostname sub/deep/new.key" symlink
    try "ln sub/ok.txt sub/deep/hard.key" hardlink
    try "mkdir t && echo k >t/inside && mv t vault/t" dir-into-vault
    try "echo x >vault/new" into-vault
    try "echo x >sub/new.txt" plain-file
    try "mkdir -p m/n && echo k >m/n/key && mv m/n m/keep" plain-rename'
for c in top-env new-dir-env top-pem rename-onto symlink hardlink \
    dir-into-vault into-vault; do
	contains "new matching name refused: $c" "$(cat "$T/out")" "refused $c"
done
contains "\"*.pem\" is the top's only: sub/y.pem is made" "$(cat "$T/out")" \
    "MADE sub-pem"
contains "other names are made" "$(cat "$T/out")" "MADE plain-file"
contains "other directories are renamed" "$(cat "$T/out")" "MADE plain-rename"
contains "the refusal names the pattern" "$(cat "$T/out")" \
    "refused to create $WS/n/.env: the name matches filesystem.denyRead pattern $WS/**/.env"
contains "an existing match is not written either" "$(cat "$T/out")" \
    "refused to write $WS/.env: the name matches"
for f in n/.env x.pem .env.prod sub/deep/new.key sub/deep/hard.key \
    vault/t vault/new; do
	check "nothing made at $f" test ! -e "$WS/$f"
done
check "the secrets are intact on disk" grep -qx ROOT-ENV "$WS/.env"
rm -rf "$WS/n" "$WS/t" "$WS/m" "$WS/sub/new.txt" "$WS/sub/y.pem"

# A directory renamed so that a name in it would match where it lands.
run_config --fs '{"denyRead": ["**/secrets/**"]}'
sbx_sh 'mkdir -p a/x && echo KEY >a/x/key && mv a/x a/secrets; echo rc=$?'
contains "renaming a directory to secrets/ with a file in it: refused" \
    "$(cat "$T/out")" "rc=1"
contains "... and said, with the name inside" "$(cat "$T/out")" \
    "$WS/a/secrets/key would be there and matches"
check "... and it is still where it was" test -f "$WS/a/x/key"
rm -rf "$WS/a"

# 3. denyWrite: existing matches and new names alike.
echo original >"$WS/sub/run.sh"
run_config --fs '{"denyWrite": ["**/*.sh"]}'
sbx_sh 'echo changed >sub/run.sh; echo new >new.sh; echo ok >sub/fine.txt;
    rm sub/run.sh; cat sub/run.sh'
eq "denyWrite: an existing match is not changed" "$(cat "$WS/sub/run.sh")" \
    original
check "denyWrite: a new match is not made" test ! -e "$WS/new.sh"
eq "denyWrite: other files are written" "$(cat "$WS/sub/fine.txt")" ok
contains "denyWrite: the refusal says write-protected" "$(cat "$T/out")" \
    "matches filesystem.denyWrite pattern $WS/**/*.sh of $CONF (such files are write-protected"
rm -f "$WS/sub/fine.txt"

# 4. allowRead inside a hidden tree; allowWrite "dir/**".
mkdir -p "$FAKEHOME/.config/app"
echo '{"ok": 1}' >"$FAKEHOME/.config/app/settings.json"
echo HOME-TOKEN >"$FAKEHOME/.config/app/token.txt"
chmod -R a+rX "$FAKEHOME/.config"
run_config --fs '{"denyRead": ["~"], "allowRead": ["~/.config/**/*.json"],
    "allowWrite": ["logs/**"]}'
sbx_sh 'cat ~/.config/app/settings.json; cat ~/.config/app/token.txt;
    echo line >logs/run.log; echo no >top.txt'
contains "allowRead pattern: the matching file is read" "$(cat "$T/out")" \
    '{"ok": 1}'
check "allowRead pattern: the rest of the hidden tree is not" \
    sh -c "! grep -q HOME-TOKEN '$T/out'"
eq "allowWrite \"logs/**\": logs is writable" "$(cat "$WS/logs/run.log")" line
check "allowWrite \"logs/**\": the top is not" test ! -e "$WS/top.txt"

# 5. The walk's bounds: past one, no run, and the reason.
mkdir -p "$T/many"
"$PY" -c "
import os
for i in range(4200):
    open(os.path.join('$T/many', 'k%d.pem' % i), 'w').close()
"
run_config --fs "{\"denyRead\": [\"$T/many/*.pem\"]}"
sbx -- /bin/echo ran >"$T/out" 2>&1
rc=$?
eq "more matches than the bound: exit 78" "$rc" 78
contains "... saying which pattern and what to do" "$(cat "$T/out")" \
    "matches more than 4096 existing paths; pisbx-run stops rather than protect less"
d=$T/deep
i=0
while [ $i -lt 70 ]; do d=$d/d; i=$((i + 1)); done
mkdir -p "$d"
run_config --fs "{\"denyRead\": [\"$T/deep/**/.env\"]}"
sbx -- /bin/echo ran >"$T/out" 2>&1
rc=$?
eq "deeper than the bound: exit 78" "$rc" 78
contains "... saying so" "$(cat "$T/out")" "directories below $T/deep"
if [ "$(id -u)" -ne 0 ]; then
	mkdir -p "$T/locked/in"
	chmod 311 "$T/locked"
	run_config --fs "{\"denyRead\": [\"$T/locked/**/.env\"]}"
	sbx -- /bin/echo ran >"$T/out" 2>&1
	rc=$?
	eq "a directory that cannot be listed but entered: exit 78" "$rc" 78
	contains "... saying so" "$(cat "$T/out")" "cannot list $T/locked"
	chmod 755 "$T/locked"
fi

done_testing
