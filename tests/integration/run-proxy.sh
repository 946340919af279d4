#!/bin/sh
# The sandbox's one way out: clients inside reach an allowed loopback-named
# host through the proxy the launcher serves (HTTP forward, CONNECT,
# SOCKS5h, git over http, ssh via GIT_SSH_COMMAND / --connect-proxy), a
# denied host gets 403, and every decision is in the access log.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"

HOSTS_NAMES="allowed.test denied.test other.test ssh.test nossh.test"
export HOSTS_NAMES

# An origin with a dumb-http git repository.
git init -q "$T/src"
echo "hello through pisbx" >"$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=t -c user.email=t@example.invalid commit -qm "first commit"
mkdir -p "$T/srv"
git clone -q --bare "$T/src" "$T/srv/repo.git"
git -C "$T/srv/repo.git" update-server-info
srv_start http web --root "$T/srv" --root-prefix /git/
WEB=$SRV_PORT

run_config --allow "allowed.test ssh.test" --deny "denied.test nossh.test"

# The exact allow entry lets a loopback-resolving name through; the
# address, not the name, is what the proxy dials.
body=$(sbx -- curl -s -m 10 "http://allowed.test:$WEB/hello")
contains "curl through the proxy (HTTP forward)" "$body" '"path": "/hello"'
check_log "allow record (http)" event=decision proto=http host=allowed.test \
    port="$WEB" decision=allow reason=allow-list:allowed.test addr="127.0.0.1:$WEB"
check_log "close record (http)" event=close proto=http host=allowed.test

body=$(sbx -- curl -s -m 10 -p "http://allowed.test:$WEB/tunnel")
contains "curl through a CONNECT tunnel" "$body" '"path": "/tunnel"'
check_log "allow record (connect)" event=decision proto=connect host=allowed.test decision=allow

body=$(sbx -- curl -s -m 10 -x socks5h://127.0.0.1:1080 "http://allowed.test:$WEB/socks")
contains "curl through SOCKS5 (socks5h, ALL_PROXY's scheme)" "$body" '"path": "/socks"'
check_log "allow record (socks5)" event=decision proto=socks5 host=allowed.test decision=allow

code=$(sbx -- curl -s -o /dev/null -w '%{http_code}' -m 10 "http://denied.test:$WEB/")
eq "denied host gets 403" "$code" 403
check_log "deny record" event=decision host=denied.test decision=deny reason=deny-list:denied.test
code=$(sbx -- curl -s -o /dev/null -w '%{http_code}' -m 10 "http://other.test:$WEB/")
eq "unlisted host without a reviewer gets 403" "$code" 403
check_log "no-reviewer record" event=decision host=other.test decision=deny reason=no-reviewer

# --log-format text, and the log on standard output ("-").
(cd "$WS" && "$RUN" --config "$CONF" --access-log - --log-format text -- \
    curl -s -o /dev/null -m 10 "http://denied.test:$WEB/") >"$T/text.log" 2>&1
contains "--log-format text to stdout" "$(cat "$T/text.log")" "denied.test:$WEB"
check "text records are not JSON" sh -c "! grep -q '^{' '$T/text.log'"

# git over http, with the proxy from the environment.
sbx -- /bin/sh -c "git clone -q http://allowed.test:$WEB/git/repo.git \"\$TMPDIR/c\" && cat \"\$TMPDIR/c/README\"" \
    >"$T/git.out" 2>&1
eq "git clone over http through the proxy" "$(cat "$T/git.out")" "hello through pisbx"
check_log "git's requests logged" event=decision proto=http host=allowed.test \
    decision=allow reason=allow-list:allowed.test
sbx -- git clone -q "http://denied.test:$WEB/git/repo.git" x >"$T/git2.out" 2>&1
check "git clone of a denied host fails" test $? -ne 0
contains "git reports the proxy's 403" "$(cat "$T/git2.out")" "403"
check "the failed clone left nothing" test ! -e "$WS/x"

# --connect-proxy on its own: a CONNECT tunnel for ssh-like clients.
out=$(printf 'GET /cp HTTP/1.0\r\nHost: x\r\n\r\n' | sbx -- /bin/sh -c \
    "\"$RUN\" --connect-proxy allowed.test $WEB")
contains "--connect-proxy relays through a CONNECT tunnel" "$out" '"path": "/cp"'
sbx -- "$RUN" --connect-proxy denied.test "$WEB" </dev/null >"$T/cp.out" 2>&1
check "--connect-proxy to a denied host fails" test $? -ne 0
contains "--connect-proxy says the proxy refused" "$(cat "$T/cp.out")" "refused"

# ssh via GIT_SSH_COMMAND to a loopback sshd (run by this test).
if ! sshd_start >"$T/sshd.why"; then
	echo "# $(cat "$T/sshd.why"): ssh case skipped"
	done_testing
fi
# git runs GIT_SSH_COMMAND through the shell; so does this.
sbx -- /bin/sh -c "eval \"\$GIT_SSH_COMMAND\" -o BatchMode=yes -o StrictHostKeyChecking=no \
    -o UserKnownHostsFile=\$TMPDIR/kh -p $SSH_PORT git@ssh.test true; cat \$TMPDIR/kh" \
    >"$T/ssh.out" 2>&1
contains "ssh through the proxy reached sshd (its host key)" "$(cat "$T/ssh.out")" \
    "$(cut -d' ' -f2 "$T/ssh/hostkey.pub")"
check_log "ssh's tunnel logged" event=decision proto=connect host=ssh.test \
    port="$SSH_PORT" decision=allow

# The same from a pisbx-run whose path holds what both shells on the way
# (git's, then ssh's for ProxyCommand) and ssh's %-tokens would read.
odd="$T/it's a \"%h\" \$dir"
mkdir -p "$odd"
cp "$RUN" "$odd/pisbx-run"
(cd "$WS" && "$odd/pisbx-run" --config "$CONF" --access-log "$PX_LOG" -- \
    /bin/sh -c "eval \"\$GIT_SSH_COMMAND\" -o BatchMode=yes \
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=\$TMPDIR/kh \
    -p $SSH_PORT git@ssh.test true; cat \$TMPDIR/kh") >"$T/ssh-odd.out" 2>&1
contains "ssh through a pisbx-run at an odd path reached sshd" \
    "$(cat "$T/ssh-odd.out")" "$(cut -d' ' -f2 "$T/ssh/hostkey.pub")"
(cd "$WS" && "$odd/pisbx-run" --config "$CONF" --access-log "$PX_LOG" -- \
    /bin/sh -c "ssh -o BatchMode=yes -o StrictHostKeyChecking=no \
    -o UserKnownHostsFile=\$TMPDIR/kh -p $SSH_PORT git@ssh.test true; \
    cat \$TMPDIR/kh") >"$T/ssh-odd2.out" 2>&1
contains "plain ssh (the sandbox's ssh_config) from that path reached sshd" \
    "$(cat "$T/ssh-odd2.out")" "$(cut -d' ' -f2 "$T/ssh/hostkey.pub")"

# A whole git clone over ssh needs a login with a shell: as root, a second
# sshd running as root (privilege separation wants /run/sshd) with a key
# made here.  As an ordinary user sshd could only log in that user, whose
# shell may be nologin; the handshake above is the check then.
if [ "$(id -u)" -eq 0 ] && id sshd >/dev/null 2>&1; then
	made_run=
	[ -d /run/sshd ] || { mkdir -m 755 /run/sshd && made_run=1; }
	mkdir -p "$T/ssh2"
	ssh-keygen -q -t ed25519 -N '' -f "$T/ssh2/hostkey" >/dev/null
	ssh-keygen -q -t ed25519 -N '' -f "$T/ssh2/client" >/dev/null
	cp "$T/ssh2/client.pub" "$T/ssh2/authorized_keys"
	SSH2_PORT=$(free_port)
	cat >"$T/ssh2/sshd_config" <<EOF
Port $SSH2_PORT
ListenAddress 127.0.0.1
HostKey $T/ssh2/hostkey
PidFile none
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile $T/ssh2/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
EOF
	spawn "$SSHD" -D -e -f "$T/ssh2/sshd_config" 2>"$T/sshd2.log"
	if wait_port 127.0.0.1 "$SSH2_PORT" 100; then
		sbx -- /bin/sh -c "GIT_SSH_COMMAND=\"\$GIT_SSH_COMMAND -i $T/ssh2/client \
		    -o BatchMode=yes -o StrictHostKeyChecking=no -o LogLevel=ERROR \
		    -o UserKnownHostsFile=\$TMPDIR/kh\" \
		    git clone -q ssh://root@ssh.test:$SSH2_PORT$T/srv/repo.git \"\$TMPDIR/c\" &&
		    cat \"\$TMPDIR/c/README\"" >"$T/gitssh.out" 2>&1
		eq "git clone over ssh through the proxy" "$(cat "$T/gitssh.out")" \
		    "hello through pisbx"
		check_log "git-over-ssh tunnel logged" event=decision proto=connect \
		    host=ssh.test port="$SSH2_PORT" decision=allow
	else
		echo "# root sshd did not start: $(head -c 300 "$T/sshd2.log")"
	fi
	kill "$LAST_PID" 2>/dev/null
	wait "$LAST_PID" 2>/dev/null
	[ -n "$made_run" ] && rmdir /run/sshd 2>/dev/null
fi
sbx -- git ls-remote "ssh://git@nossh.test:$SSH_PORT/repo" >"$T/ssh2.out" 2>&1
check "git over ssh to a denied host fails" test $? -ne 0
check_log "git-over-ssh deny logged" event=decision proto=connect host=nossh.test decision=deny
done_testing
