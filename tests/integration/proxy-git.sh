#!/bin/sh
# git clone over HTTP through the proxy: a dumb-HTTP repository served on
# loopback, cloned with http.proxy pointing at pisbx-proxy (allowed), and
# refused (403 from the proxy) for a host the policy denies.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

git init -q "$T/src"
echo "hello through pisbx" >"$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=t -c user.email=t@example.invalid \
    commit -qm "first commit"
mkdir -p "$T/srv"
git clone -q --bare "$T/src" "$T/srv/repo.git"
git -C "$T/srv/repo.git" update-server-info
srv_start http git --root "$T/srv" --root-prefix /git/
GIT_PORT=$SRV_PORT
dns_start git.test=127.0.0.1 nogit.test=127.0.0.1
px_config "$T/conf.json" --allow "git.test" --deny "nogit.test"
px_start "$T/conf.json"

if git -c "http.proxy=http://127.0.0.1:$PX_PORT" clone -q \
    "http://git.test:$GIT_PORT/git/repo.git" "$T/clone" >"$T/clone.err" 2>&1; then
	ok "git clone over http through the proxy"
else
	not_ok "git clone through the proxy: $(cat "$T/clone.err")"
fi
eq "cloned file content" "$(cat "$T/clone/README" 2>/dev/null)" "hello through pisbx"
eq "cloned history" "$(git -C "$T/clone" log --format=%s 2>/dev/null)" "first commit"
check_log "git's requests logged" event=decision proto=http host=git.test \
    port="$GIT_PORT" decision=allow

if git -c "http.proxy=http://127.0.0.1:$PX_PORT" clone -q \
    "http://nogit.test:$GIT_PORT/git/repo.git" "$T/clone2" >"$T/clone2.err" 2>&1; then
	not_ok "git clone of a denied host succeeded"
else
	ok "git clone of a denied host fails"
fi
contains "git reports the proxy's 403" "$(cat "$T/clone2.err")" "403"
check_log "denied clone logged" event=decision host=nogit.test decision=deny \
    reason=deny-list:nogit.test
check "proxy still running" px_alive
px_done
