#!/bin/sh
# An agent's everyday commands under the default config, in a home laid
# out like a developer's: rustup- and pyenv-style shims, a .gitconfig with
# an identity, secrets in every usual store.  cargo --version, the pyenv
# python, git commit, npm install twice from a local registry (the second
# fetches no tarball: the cache in ~/.cache/pisbx), pip install into a
# venv in the workspace -- all work; no secret is readable, even with the
# home re-exposed; nothing in the home changes but ~/.cache/pisbx.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/tools.sh"

HOSTS_NAMES="registry.test tarballs.test pypi.test"
export HOSTS_NAMES
H=$FAKEHOME

# rustup: a proxy in ~/.cargo/bin finds its toolchain in ~/.rustup.
TC=stable-x86_64-unknown-linux-gnu
mkdir -p "$H/.cargo/bin" "$H/.rustup/toolchains/$TC/bin"
echo "default_toolchain = \"$TC\"" >"$H/.rustup/settings.toml"
cat >"$H/.cargo/bin/cargo" <<'EOF'
#!/bin/sh
# rustup's proxy, in short: the default toolchain's own binary.
r=${RUSTUP_HOME:-$HOME/.rustup}
tc=$(sed -n 's/^default_toolchain = "\(.*\)"/\1/p' "$r/settings.toml")
exec "$r/toolchains/$tc/bin/$(basename "$0")" "$@"
EOF
cat >"$H/.rustup/toolchains/$TC/bin/cargo" <<'EOF'
#!/bin/sh
# The toolchain's cargo: its registry cache goes to $CARGO_HOME.
mkdir -p "$CARGO_HOME/registry" && echo x >"$CARGO_HOME/registry/probe" ||
    exit 101
echo "cargo 1.99.0 (pisbx test toolchain) CARGO_HOME=$CARGO_HOME"
EOF
# pyenv: a shim picks the version in ~/.pyenv/version.
mkdir -p "$H/.pyenv/shims" "$H/.pyenv/versions/3.99.0/bin"
echo 3.99.0 >"$H/.pyenv/version"
ln -s /usr/bin/python3 "$H/.pyenv/versions/3.99.0/bin/python"
cat >"$H/.pyenv/shims/python" <<'EOF'
#!/bin/sh
r=${PYENV_ROOT:-$HOME/.pyenv}
exec "$r/versions/$(cat "$r/version")/bin/python" "$@"
EOF
chmod 755 "$H/.cargo/bin/cargo" "$H/.rustup/toolchains/$TC/bin/cargo" \
    "$H/.pyenv/shims/python"
# git: the identity in ~/.gitconfig; credentials beside it.
printf '[user]\n\tname = Dev Eloper\n\temail = dev@example.invalid\n' \
    >"$H/.gitconfig"
# Secrets in every usual store.
SECRETS=".ssh/id_test .aws/credentials .azure/accessTokens.json
.config/gcloud/credentials.db .kube/config .docker/config.json .netrc
.git-credentials .config/git/credentials .npmrc .pypirc .config/gh/hosts.yml
.gnupg/private-keys-v1.d/k.key .bash_history .zsh_history
.mozilla/firefox/p/cookies.sqlite .config/google-chrome/Default/Cookies
.local/share/keyrings/login.keyring .claude/.credentials.json
.pi/agent/auth.json .codex/auth.json .cargo/credentials.toml"
for s in $SECRETS; do
	mkdir -p "$H/$(dirname "$s")"
	[ -f "$H/$s" ] || echo "SECRET $s" >"$H/$s"
done
chmod -R a+rX "$H"
snap_home() {
	# The home itself: its mtime moves when ~/.cache is made.
	(cd "$H" && find . -mindepth 1 -path ./.cache -prune -o \
	    -printf '%p %y %s %T@\n' | sort)
}
snap_home >"$T/home.before"

# A workspace that is a git repository, older than the run.
git init -q "$WS"
git -C "$WS" -c user.name=t -c user.email=t@t commit -q --allow-empty -m init
chmod -R a+rwX "$WS"

# The registries: npm (tarballs on their own host, to see them in the
# log) and a package index.
REG=$(free_port)
npm_registry "$T/reg" "http://tarballs.test:$REG"
spawn "$PY" -m http.server "$REG" --bind 127.0.0.1 --directory "$T/reg" \
    >"$T/reg.log" 2>&1
pypi_index "$T/pypi"
PYPI=$(free_port)
spawn "$PY" -m http.server "$PYPI" --bind 127.0.0.1 --directory "$T/pypi" \
    >"$T/pypi.log" 2>&1
wait_port 127.0.0.1 "$REG" 100 && wait_port 127.0.0.1 "$PYPI" 100 ||
    { not_ok "the registries did not start"; done_testing; }

# The default config, but for the names of the local registries.
run_config --allow "registry.test tarballs.test pypi.test"
SPATH="$H/.pyenv/shims:$H/.cargo/bin:$PATH"
# As a developer's shell would: the shims first, pyenv's root its own.
tsbx() { sbx -- env -u PYENV_ROOT -u RUSTUP_HOME PATH="$SPATH" "$@"; }

# 1. cargo through the rustup proxy; its cache is pisbx's, the project's.
out=$(tsbx cargo --version 2>&1)
contains "cargo --version (rustup's proxy, ~/.rustup)" "$out" \
    "cargo 1.99.0 (pisbx test toolchain)"
C=$(find "$H/.cache/pisbx" -mindepth 1 -maxdepth 1 -type d -name "ws-*")
contains "... with CARGO_HOME in ~/.cache/pisbx/<project>" "$out" \
    "CARGO_HOME=$C/cargo"
check "... which it could write" test -f "$C/cargo/registry/probe"
eq "... and which a record beside it names" "$(cat "$C.workspace")" "$WS"

# 2. The pyenv python, not /usr/bin/python3.
eq "python is pyenv's" "$(tsbx python -c 'import sys; print(sys.executable)' 2>&1)" \
    "$H/.pyenv/versions/3.99.0/bin/python"

# 3. git commit with the identity of ~/.gitconfig.
echo hello >"$WS/hello.txt"
chmod 666 "$WS/hello.txt"
tsbx sh -c 'git add hello.txt && git commit -q -m "from the sandbox"' \
    >"$T/git.out" 2>&1
check "git commit works" test $? -eq 0
eq "... as the user of ~/.gitconfig" "$(git -C "$WS" log -1 --format='%an <%ae> %s')" \
    "Dev Eloper <dev@example.invalid> from the sandbox"

# 4. npm install twice: the second from the cache, no tarball fetched.
for app in app1 app2; do
	mkdir -p "$WS/$app"
	echo '{"name": "'$app'", "version": "1.0.0", "dependencies": {"pisbx-dep": "1.0.0"}}' \
	    >"$WS/$app/package.json"
done
chmod -R a+rwX "$WS"
: >"$PX_LOG"
(cd "$WS/app1" && "$RUN" --config "$CONF" --access-log "$PX_LOG" -- \
    npm install --no-audit --no-fund --registry "http://registry.test:$REG/") \
    >"$T/npm1.out" 2>&1
check "npm install" test -f "$WS/app1/node_modules/pisbx-dep/index.js"
check_log "... fetched the tarball" event=decision host=tarballs.test \
    decision=allow
cp "$PX_LOG" "$T/npm1.log"
: >"$PX_LOG"
(cd "$WS/app2" && "$RUN" --config "$CONF" --access-log "$PX_LOG" -- \
    npm install --no-audit --no-fund --registry "http://registry.test:$REG/") \
    >"$T/npm2.out" 2>&1
check "npm install again, in another directory of the project" \
    test -f "$WS/app2/node_modules/pisbx-dep/index.js"
check "... without fetching the tarball (the cache)" \
    sh -c "! grep -q '\"host\":\"tarballs.test\"' '$PX_LOG'"
check "npm's cache is the project's" test -d "$C/npm/_cacache"

# 5. pip install into a venv in the workspace.
tsbx sh -c "python -m venv .venv && .venv/bin/pip install -q \
    --disable-pip-version-check --index-url http://pypi.test:$PYPI/simple/ \
    --trusted-host pypi.test:$PYPI pisbx-probe && .venv/bin/python -c \
    'import pisbx_probe; print(pisbx_probe.VALUE)'" >"$T/pip.out" 2>&1
contains "pip install into a venv in the workspace" "$(cat "$T/pip.out")" \
    "installed through pisbx"
eq "pip's cache is the project's" "$(tsbx sh -c '.venv/bin/pip cache dir' 2>&1)" \
    "$C/pip"

# 5b. Another project has caches of its own: what one project's commands
#     leave in a tool home (a cargo rustc-wrapper) never reaches another's
#     build, and no project's commands can write another's caches.
tsbx sh -c 'printf "[build]\nrustc-wrapper = \"$CARGO_HOME/wrap.sh\"\n" \
    >"$CARGO_HOME/config.toml"' >/dev/null 2>&1
check "a project's command writes its own cargo config" \
    test -f "$C/cargo/config.toml"
B=$T/projb
mkdir -p "$B"
git init -q "$B"
chmod -R a+rwX "$B"
(cd "$B" && "$RUN" --config "$CONF" -- sh -c 'echo "$CARGO_HOME";
    cat "$CARGO_HOME/config.toml" 2>&1; ls "$(dirname "$CARGO_HOME")/.."' \
    ) >"$T/projb.out" 2>&1
CB=$(find "$H/.cache/pisbx" -mindepth 1 -maxdepth 1 -type d -name "projb-*")
check "another project: another cache directory" \
    test -n "$CB" -a "$CB" != "$C"
contains "... its CARGO_HOME" "$(cat "$T/projb.out")" "$CB/cargo"
check "... without the first project's cargo config" \
    sh -c "! grep -q rustc-wrapper '$T/projb.out'"
check "... nor a sight of its cache" sh -c "! grep -q 'ws-' '$T/projb.out'"
(cd "$B" && "$RUN" --config "$CONF" -- sh -c "echo x >'$C/cargo/planted'") \
    >/dev/null 2>&1
check "... nor a way to write there" test ! -e "$C/cargo/planted"
eq "... and its record names it" "$(cat "$CB.workspace")" "$B"

# 6. No secret is readable: the default, a re-exposed home, a re-exposed
#    ~/.config; a store named on purpose is.
secrets_read() {
	sbx -- /bin/sh -c "cd '$H' && cat $(echo $SECRETS) 2>/dev/null" |
	    grep -c SECRET
}
eq "no secret readable (the default)" "$(secrets_read)" 0
run_config --allow "registry.test" --fs '{"allowRead": ["~"]}'
eq "... nor with allowRead [\"~\"]" "$(secrets_read)" 0
eq "... which shows the rest of the home" \
    "$(sbx -- cat "$H/.pyenv/version")" 3.99.0
run_config --allow "registry.test" --fs '{"denyRead": [], "allowWrite": ["."]}'
eq "... nor with no denyRead at all" "$(secrets_read)" 0
run_config --allow "registry.test" --fs '{"allowRead": ["~", "~/.aws"]}'
eq "a store named in allowRead is readable" \
    "$(sbx -- cat "$H/.aws/credentials")" "SECRET .aws/credentials"
eq "... and the others are not" "$(secrets_read)" 1

# 7. Toolchains are read-only; each can be turned off.
run_config --allow "registry.test"
sbx -- sh -c "echo x >'$H/.cargo/bin/planted'" >/dev/null 2>&1
check "~/.cargo/bin is read-only" test ! -e "$H/.cargo/bin/planted"
run_config --allow "registry.test" --fs '{"toolchains": {"pyenv": false}}'
check "toolchains.pyenv false: ~/.pyenv hidden" \
    sh -c "! '$RUN' --config '$CONF' -- cat '$H/.pyenv/version' >/dev/null 2>&1"
run_config --allow "registry.test" --fs '{"caches": false}'
check "caches false: no CARGO_HOME set" \
    sh -c "cd '$WS' && ! '$RUN' --config '$CONF' -- env | grep -q CARGO_HOME"

# 8. Nothing in the home changed but pisbx's caches.
snap_home >"$T/home.after"
if cmp -s "$T/home.before" "$T/home.after"; then
	ok "nothing in the home changed outside ~/.cache/pisbx"
else
	not_ok "the home changed: $(diff "$T/home.before" "$T/home.after" | head -5 | tr '\n' ' ')"
fi
eq "~/.cache holds only pisbx" "$(ls -A "$H/.cache")" pisbx
done_testing
