#!/bin/sh
# git's XDG config, ~/.config/git/config, or $XDG_CONFIG_HOME/git/config
# when XDG_CONFIG_HOME is set (git then reads it instead): shown from the
# hidden home as a filtered copy, as ~/.gitconfig is: the identity and
# aliases kept there work inside, a credential helper and the programs
# core names for the host (sshCommand, fsmonitor, askPass) are left out,
# and -v says so.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

H=$FAKEHOME
# xdg_config FILE: git's XDG config with an identity, an alias and what
# must not reach the sandbox.
xdg_config() {
	mkdir -p "$(dirname "$1")"
	cat >"$1" <<'EOC'
[user]
	name = Xdg Person
	email = xdg@example.invalid
[alias]
	who = config user.name
[core]
	abbrev = 9
	sshCommand = ssh -i /home/x/.ssh/HOSTKEY1
	fsmonitor = /home/x/bin/FSMONITOR1
	askPass = /home/x/bin/ASKPASS1
[credential]
	helper = "!f() { echo username=u; echo password=XDGTOKEN1; }; f"
EOC
	chmod -R a+rX "$H"
}
git init -q "$WS"
chmod -R a+rwX "$WS"

# check_shown WHERE FILE: inside, git reads FILE's identity, alias and
# ordinary core settings, and none of what is left out.
check_shown() {
	eq "$1: git's identity is the user's" \
	    "$(sbx -- git config user.email 2>&1)" xdg@example.invalid
	eq "$1: its aliases work" "$(sbx -- git who 2>&1)" "Xdg Person"
	eq "$1: core's ordinary settings too" \
	    "$(sbx -- git config core.abbrev 2>&1)" 9
	sbx -- /bin/sh -c "cat '$2';
	    git config --get-all core.sshcommand; git config core.fsmonitor;
	    git config core.askpass;
	    printf 'protocol=https\nhost=github.com\n\n' |
	    GIT_TERMINAL_PROMPT=0 git credential fill" >"$T/seen" 2>&1
	for _t in HOSTKEY1 FSMONITOR1 ASKPASS1 XDGTOKEN1; do
		check "$1: $_t not readable inside" \
		    sh -c "! grep -q $_t '$T/seen'"
	done
	sbx -v -- true >"$T/v.out" 2>&1
	contains "$1: -v says what the copy leaves out" "$(cat "$T/v.out")" \
	    "(a filtered copy of $2, without core.sshcommand, core.fsmonitor, core.askpass, credential.helper)"
}

# 1. ~/.config/git/config, XDG_CONFIG_HOME unset, the default policy.
unset XDG_CONFIG_HOME
xdg_config "$H/.config/git/config"
run_config
check_shown "~/.config/git/config" "$H/.config/git/config"

# 2. $XDG_CONFIG_HOME/git/config, in the home but not at ~/.config.
rm -rf "$H/.config/git"
export XDG_CONFIG_HOME="$H/xdg"
xdg_config "$XDG_CONFIG_HOME/git/config"
check_shown "\$XDG_CONFIG_HOME/git/config" "$XDG_CONFIG_HOME/git/config"

# 3. Outside the home, and readable there: bound over by its copy too.
export XDG_CONFIG_HOME="$T/xdg-out"
xdg_config "$XDG_CONFIG_HOME/git/config"
chmod -R a+rX "$T/xdg-out"
run_config --fs '{"denyRead": ["~"], "allowWrite": ["."]}'
check_shown "\$XDG_CONFIG_HOME outside the home" \
    "$XDG_CONFIG_HOME/git/config"

# 4. The git toolchain turned off: hidden with the home.
export XDG_CONFIG_HOME="$H/xdg"
run_config --fs '{"toolchains": {"git": false}}'
check "toolchains git false: \$XDG_CONFIG_HOME/git/config hidden" \
    sh -c "cd '$WS' && ! '$RUN' --config '$CONF' -- cat '$XDG_CONFIG_HOME/git/config' >/dev/null 2>&1"
unset XDG_CONFIG_HOME

done_testing
