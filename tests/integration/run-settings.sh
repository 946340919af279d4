#!/bin/sh
# The settings files the sandbox is shown from the home hold credentials
# too (a token in a git URL, a credential helper, http.extraHeader, an
# npm _authToken, a registry or index URL with user:password, a GOPROXY
# with a password).  Inside, each is a filtered copy: no credential is
# readable, git's credential helper does not run, while the ordinary
# settings still work (git's identity and aliases, npm's registry and
# save-exact, pip's index without its password); the same with the home
# re-exposed; a file the config names itself is shown as it is; -v says
# what each copy leaves out.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

H=$FAKEHOME
mkdir -p "$H/.config/pip" "$H/.config/go"
cat >"$H/.gitconfig" <<'EOF'
[user]
	name = Dev Eloper
	email = dev@example.invalid
[alias]
	who = config user.name
[url "https://x-access-token:GITTOKEN1@github.com/"]
	insteadOf = https://github.com/
[http]
	extraHeader = Authorization: Bearer GITTOKEN2
[credential]
	helper = "!f() { echo username=u; echo password=GITTOKEN3; }; f"
[sendemail]
	smtpPass = GITTOKEN4
[include]
	path = .gitconfig.local
EOF
printf '[github]\n\ttoken = GITTOKEN5\n[core]\n\tabbrev = 12\n' \
    >"$H/.gitconfig.local"
# ~/.npmrc a link into a dotfiles repository: the file it names is
# filtered too.
mkdir -p "$H/dotfiles"
cat >"$H/dotfiles/npmrc" <<'EOF'
registry=http://npmuser:NPMTOKEN1@registry.test:4873/
//registry.test:4873/:_authToken=NPMTOKEN2
save-exact=true
EOF
ln -s dotfiles/npmrc "$H/.npmrc"
cat >"$H/.config/pip/pip.conf" <<'EOF'
[global]
index-url = https://__token__:PIPTOKEN1@pypi.corp.test/simple
timeout = 42
EOF
printf 'GOPROXY=https://u:GOTOKEN1@goproxy.corp.test,direct\nGOPRIVATE=corp.test/*\n' \
    >"$H/.config/go/env"
TOKENS="GITTOKEN1 GITTOKEN2 GITTOKEN3 GITTOKEN4 GITTOKEN5 NPMTOKEN1 NPMTOKEN2
PIPTOKEN1 GOTOKEN1"
FILES=".gitconfig .gitconfig.local .npmrc dotfiles/npmrc .config/pip/pip.conf
.config/go/env"
chmod -R a+rX "$H"
git init -q "$WS"
chmod -R a+rwX "$WS"

# tokens_seen: the tokens a command inside can read in the settings
# files, or get from git's credential helper.
tokens_seen() {
	sbx -- /bin/sh -c "cd '$H' && cat $(echo $FILES) 2>/dev/null;
	    printf 'protocol=https\nhost=github.com\n\n' |
	    GIT_TERMINAL_PROMPT=0 git credential fill 2>/dev/null" \
	    >"$T/seen" 2>&1
	for _t in $TOKENS; do
		grep -q "$_t" "$T/seen" && printf '%s ' "$_t"
	done
	echo
}

run_config
eq "no token readable inside (the default)" "$(tokens_seen)" ""
eq "git's identity is the user's" \
    "$(sbx -- git config user.email 2>&1)" dev@example.invalid
eq "... its aliases work" "$(sbx -- git who 2>&1)" "Dev Eloper"
eq "... and an included file's ordinary settings too" \
    "$(sbx -- git config core.abbrev 2>&1)" 12
eq "npm keeps its registry, without the user" \
    "$(sbx -- npm config get registry 2>/dev/null)" \
    "http://registry.test:4873/"
eq "... and its other settings" \
    "$(sbx -- npm config get save-exact 2>/dev/null)" true
eq "pip's index is the same index, without the password" \
    "$(sbx -- sh -c "grep index-url '$H/.config/pip/pip.conf'" 2>&1)" \
    "index-url = https://pypi.corp.test/simple"
eq "go keeps GOPRIVATE" \
    "$(sbx -- sh -c "cat '$H/.config/go/env'" 2>&1)" "GOPRIVATE=corp.test/*"
sbx -v -- true >"$T/v.out" 2>&1
contains "-v says what the git copy leaves out" "$(cat "$T/v.out")" \
    "(a filtered copy of $H/.gitconfig, without "
contains "... and the npm one" "$(cat "$T/v.out")" \
    "(a filtered copy of $H/dotfiles/npmrc, without the user and password of URLs, //registry.test:4873/:_authToken)"

# The same with the home re-exposed, or with no denyRead at all (where
# a file the git config includes is an ordinary file of the home: git
# still reads its filtered copy).
FILES=".gitconfig .npmrc dotfiles/npmrc .config/pip/pip.conf .config/go/env"
TOKENS="GITTOKEN1 GITTOKEN2 GITTOKEN3 GITTOKEN4 NPMTOKEN1 NPMTOKEN2
PIPTOKEN1 GOTOKEN1"
run_config --fs '{"allowRead": ["~"]}'
eq "no token readable with allowRead [\"~\"]" "$(tokens_seen)" ""
eq "... while git reads the include's copy" \
    "$(sbx -- sh -c 'git config --show-origin github.token; git config core.abbrev' 2>&1)" 12
run_config --fs '{"denyRead": [], "allowWrite": ["."]}'
eq "no token readable with no denyRead" "$(tokens_seen)" ""

# Named on purpose: the file as it is (allowRead shows the file the
# link names, under that name).
run_config --fs '{"allowRead": ["~/.npmrc"]}'
contains "a settings file named in allowRead is shown whole" \
    "$(sbx -- cat "$H/dotfiles/npmrc" 2>&1)" NPMTOKEN2
eq "... the others stay filtered" \
    "$(sbx -- cat "$H/.gitconfig" 2>&1 | grep -c GITTOKEN)" 0

# Turned off: hidden with the home.
run_config --fs '{"toolchains": {"npm": false, "git": false}}'
check "toolchains npm and git false: ~/.npmrc and ~/.gitconfig hidden" \
    sh -c "cd '$WS' && ! '$RUN' --config '$CONF' -- cat '$H/.npmrc' '$H/.gitconfig' >/dev/null 2>&1"
done_testing
