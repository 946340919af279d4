#!/bin/sh
# Clients that do not read HTTP_PROXY reach the sandbox's one way out too,
# each through its own spelling (launcher/run/env.c): Node's own fetch()
# (NODE_USE_ENV_PROXY), the JVM (the JDK's net.properties, silently:
# java, Maven; JAVA_TOOL_OPTIONS after the caller's own), npm over
# a project .npmrc's proxy, pip into a venv, git:// (GIT_PROXY_COMMAND),
# plain ssh (ssh's system config).
# host.pisbx.internal reaches a service on the host's loopback through
# its exact name:port entry and nothing else; every 403 says which file
# and entry would allow it.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/tools.sh"

HOSTS_NAMES="allowed.test denied.test other.test"
export HOSTS_NAMES

srv_start http web
WEB=$SRV_PORT
# The user's dev server on the host, and a second one nobody allowed.
srv_start http devsrv
DEV=$SRV_PORT
srv_start http devsrv2
DEV2=$SRV_PORT

run_config --allow "allowed.test host.pisbx.internal:$DEV *.pisbx.internal" \
    --deny "denied.test"

# 1. Every client family's spelling is set, the caller's dropped
#    (JAVA_TOOL_OPTIONS: the caller's first, ours win as the later -D).
env JAVA_TOOL_OPTIONS="-Xmx64m -Dhttp.proxyHost=elsewhere.invalid" \
    npm_config_proxy=http://elsewhere.invalid:1/ \
    sh -c 'cd "$1" && "$2" --config "$3" -- env' sh "$WS" "$RUN" "$CONF" \
    >"$T/env.out" 2>&1
for v in "npm_config_proxy=http://127.0.0.1:3128" \
    "npm_config_https_proxy=http://127.0.0.1:3128" \
    "npm_config_noproxy=localhost,127.0.0.1,::1" \
    "YARN_HTTP_PROXY=http://127.0.0.1:3128" \
    "YARN_HTTPS_PROXY=http://127.0.0.1:3128" \
    "NODE_USE_ENV_PROXY=1" "RSYNC_PROXY=127.0.0.1:3128" \
    "JAVA_TOOL_OPTIONS=-Xmx64m -Dhttp.proxyHost=elsewhere.invalid -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=localhost|127.*|[::1]"; do
	check "environment: $v" grep -qxF -- "$v" "$T/env.out"
done
check "the caller's npm_config_proxy is dropped" \
    sh -c "! grep -q elsewhere.invalid:1 '$T/env.out'"
# Without the caller's JAVA_TOOL_OPTIONS, none of ours where the JDKs were
# found (each gets the proxy in its net.properties, silently).
if command -v java >/dev/null 2>&1; then
	env -u JAVA_TOOL_OPTIONS sh -c 'cd "$1" && "$2" --config "$3" -- env' \
	    sh "$WS" "$RUN" "$CONF" >"$T/env2.out" 2>&1
	check "no JAVA_TOOL_OPTIONS when the caller set none (a JDK is here)" \
	    sh -c "! grep -q '^JAVA_TOOL_OPTIONS=' '$T/env2.out'"
fi

# 2. Node's own fetch() through the proxy (Node 24 from the npm
#    registry; Node 20's fetch reads no proxy setting at all).
if tool_node24 >"$T/node24.out" 2>&1; then
	sbx -- "$NODE24" -e "fetch('http://allowed.test:$WEB/node-fetch')
	    .then(r => r.text()).then(t => console.log(t))
	    .catch(e => { console.log('ERR', e.cause || e); process.exit(1); })" \
	    >"$T/node.out" 2>&1
	contains "Node's fetch() goes through the proxy" "$(cat "$T/node.out")" \
	    '"path": "/node-fetch"'
	check_log "Node's request is logged" event=decision proto=connect \
	    host=allowed.test port="$WEB" decision=allow
	# undici tunnels plain http too: a refused CONNECT is an error.
	sbx -- "$NODE24" -e "fetch('http://denied.test:$WEB/')
	    .then(r => console.log(r.status))
	    .catch(e => console.log(String(e.cause.cause || e.cause)))" \
	    >"$T/node2.out" 2>&1
	contains "Node's fetch() of a denied host meets the proxy's 403" \
	    "$(cat "$T/node2.out")" "Proxy response (403)"
else
	echo "# Node 24 case skipped: $(tail -n 1 "$T/node24.out")"
fi

# 3. The JVM: java's HttpURLConnection and HttpClient, then Maven.
if command -v java >/dev/null 2>&1; then
	mkdir -p "$T/java"
	cat >"$T/java/Fetch.java" <<'EOF'
import java.net.URI;
import java.net.URL;
import java.net.HttpURLConnection;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

public class Fetch {
	public static void main(String[] a) throws Exception {
		HttpURLConnection c = (HttpURLConnection)new URL(a[0] + "/juc").openConnection();
		System.out.println("juc " + c.getResponseCode() + " " +
		    new String(c.getInputStream().readAllBytes()).contains("/juc"));
		HttpResponse<String> r = HttpClient.newHttpClient().send(
		    HttpRequest.newBuilder(URI.create(a[0] + "/jhc")).build(),
		    HttpResponse.BodyHandlers.ofString());
		System.out.println("jhc " + r.statusCode() + " " + r.body().contains("/jhc"));
	}
}
EOF
	chmod -R a+rX "$T/java"
	env -u JAVA_TOOL_OPTIONS -u JDK_JAVA_OPTIONS sh -c 'cd "$1" &&
	    "$2" --config "$3" --access-log "$4" -- \
	    java "$5/Fetch.java" "$6"' sh "$WS" "$RUN" "$CONF" "$PX_LOG" \
	    "$T/java" "http://allowed.test:$WEB" >"$T/java.out" 2>"$T/java.err"
	cat "$T/java.err" >>"$T/java.out"
	if grep -q "Picked up" "$T/java.err"; then
		not_ok "the JVM says nothing on stderr: $(cat "$T/java.err")"
	else
		ok "the JVM says nothing on stderr (no Picked up ...)"
	fi
	contains "java's HttpURLConnection goes through the proxy" \
	    "$(cat "$T/java.out")" "juc 200 true"
	contains "java's HttpClient goes through the proxy" \
	    "$(cat "$T/java.out")" "jhc 200 true"
	check_log "java's requests are logged" event=decision proto=http \
	    host=allowed.test port="$WEB" decision=allow
	if command -v mvn >/dev/null 2>&1; then
		# The parent POM is looked up before any plugin runs: Maven
		# asks its default repository, through the proxy, which says
		# no (no reviewer).
		mkdir -p "$WS/mvn"
		cat >"$WS/mvn/pom.xml" <<'EOF'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>org.pisbx.test</groupId><artifactId>parent</artifactId>
    <version>1</version><relativePath/></parent>
  <artifactId>child</artifactId>
</project>
EOF
		chmod -R a+rX "$WS/mvn"
		(cd "$WS/mvn" && "$RUN" --config "$CONF" --access-log "$PX_LOG" \
		    -- sh -c 'mvn -B -Dmaven.repo.local="$TMPDIR/m2" validate') \
		    >"$T/mvn.out" 2>&1
		check "maven fails: its repository is not allowed" \
		    grep -q "parent" "$T/mvn.out"
		check_log "maven asked the proxy for its repository" \
		    event=decision proto=connect host=repo.maven.apache.org \
		    port=443 decision=deny reason=no-reviewer
		rm -rf "$WS/mvn"
	else
		echo "# maven case skipped: mvn is not installed"
	fi
else
	echo "# java cases skipped: java is not installed"
fi

# 4. npm: the sandbox's proxy over a project .npmrc's own proxy= line.
mkdir -p "$WS/npmproj"
printf 'proxy=http://127.0.0.1:9/\nhttps-proxy=http://127.0.0.1:9/\n' \
    >"$WS/npmproj/.npmrc"
chmod -R a+rX "$WS/npmproj"
(cd "$WS/npmproj" && "$RUN" --config "$CONF" --access-log "$PX_LOG" -- \
    sh -c "npm_config_cache=\$TMPDIR/npm npm ping \
    --registry http://allowed.test:$WEB/") >"$T/npm.out" 2>&1
check "npm ping through the proxy, whatever .npmrc says" test $? -eq 0
check_log "npm's request is logged" event=decision proto=http \
    host=allowed.test port="$WEB" decision=allow
rm -rf "$WS/npmproj"

# 5. pip into a venv, from an index on an allowed host.
pypi_index "$T/pypi"
PYPI=$(free_port)
spawn "$PY" -m http.server "$PYPI" --bind 127.0.0.1 --directory "$T/pypi" \
    >"$T/pypi.log" 2>&1
if wait_port 127.0.0.1 "$PYPI" 100; then
	sbx -- /bin/sh -c "/usr/bin/python3 -m venv \$TMPDIR/venv &&
	    \$TMPDIR/venv/bin/pip install -q --disable-pip-version-check \
	    --no-cache-dir --index-url http://allowed.test:$PYPI/simple/ \
	    --trusted-host allowed.test:$PYPI \
	    pisbx-probe && \$TMPDIR/venv/bin/python -c \
	    'import pisbx_probe; print(pisbx_probe.VALUE)'" >"$T/pip.out" 2>&1
	contains "pip installs into a venv through the proxy" \
	    "$(cat "$T/pip.out")" "installed through pisbx"
	grep -q "installed through pisbx" "$T/pip.out" ||
	    sed 's/^/# pip: /' "$T/pip.out" | tail -n 20
	check_log "pip's requests are logged" event=decision proto=http \
	    host=allowed.test port="$PYPI" decision=allow
else
	not_ok "the package index did not start: $(cat "$T/pypi.log")"
fi

# 6. git:// through GIT_PROXY_COMMAND (a CONNECT to the git daemon).
git init -q "$T/src"
echo "git protocol through pisbx" >"$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=t -c user.email=t@example.invalid commit -qm c
mkdir -p "$T/gitd"
git clone -q --bare "$T/src" "$T/gitd/repo.git"
chmod -R a+rX "$T/gitd"
GITD=$(free_port)
spawn git daemon --reuseaddr --export-all --base-path="$T/gitd" \
    --listen=127.0.0.1 --port="$GITD" "$T/gitd"
if wait_port 127.0.0.1 "$GITD" 100; then
	sbx -- /bin/sh -c "git clone -q git://allowed.test:$GITD/repo.git \
	    \"\$TMPDIR/c\" && cat \"\$TMPDIR/c/README\"" >"$T/gitd.out" 2>&1
	eq "git clone git:// through the proxy" "$(cat "$T/gitd.out")" \
	    "git protocol through pisbx"
	check_log "git://'s tunnel is logged" event=decision proto=connect \
	    host=allowed.test port="$GITD" decision=allow
	sbx -- git ls-remote "git://denied.test:$GITD/repo.git" \
	    >"$T/gitd2.out" 2>&1
	check "git:// to a denied host fails" test $? -ne 0
	check_log "git:// deny logged" event=decision proto=connect \
	    host=denied.test port="$GITD" decision=deny
else
	not_ok "git daemon did not start"
fi

# 7. Plain ssh (and scp, sftp, rsync -e ssh): ssh's system config in the
#    sandbox ends with the proxy's ProxyCommand.
if sshd_start >"$T/sshd.why"; then
	sbx -- /bin/sh -c "ssh -o BatchMode=yes \
	    -o StrictHostKeyChecking=no -o UserKnownHostsFile=\$TMPDIR/kh \
	    -p $SSH_PORT git@allowed.test true; cat \$TMPDIR/kh" \
	    >"$T/ssh.out" 2>&1
	contains "plain ssh goes through the proxy (sshd's host key)" \
	    "$(cat "$T/ssh.out")" "$(cut -d' ' -f2 "$T/ssh/hostkey.pub")"
	check_log "plain ssh's tunnel is logged" event=decision \
	    proto=connect host=allowed.test port="$SSH_PORT" decision=allow
else
	echo "# plain ssh case skipped: $(cat "$T/sshd.why")"
fi
check "ssh's system config is read-only in the sandbox" \
    sh -c "cd '$WS' && ! '$RUN' --config '$CONF' -- sh -c \
    'echo x >>/etc/ssh/ssh_config' 2>/dev/null"

# 8. host.pisbx.internal: the host's dev server through its exact entry.
body=$(sbx -- curl -s -m 10 "http://host.pisbx.internal:$DEV/dev")
contains "host.pisbx.internal:PORT reaches the host's loopback" "$body" \
    '"path": "/dev"'
check_log "dialled on the host's loopback" event=decision proto=http \
    host=host.pisbx.internal port="$DEV" decision=allow \
    reason="allow-list:host.pisbx.internal:$DEV" addr="127.0.0.1:$DEV"
body=$(sbx -- curl -s -m 10 -p "http://Host.Pisbx.Internal.:$DEV/tunnel")
contains "... through CONNECT too, in any spelling" "$body" '"path": "/tunnel"'
sbx -- curl -s -m 10 -i "http://host.pisbx.internal:$DEV2/" >"$T/b2"
eq "another port of the host: 403" "$(head -n 1 "$T/b2" | tr -d '\r')" \
    "HTTP/1.1 403 Forbidden"
check_log "... as host-loopback (the wildcard does not open it)" \
    event=decision host=host.pisbx.internal port="$DEV2" decision=deny \
    reason=host-loopback
contains "... and the body says which entry would allow it" "$(cat "$T/b2")" \
    "to allow it, add \"host.pisbx.internal:$DEV2\" to network.allowedDomains in $CONF"
code=$(sbx -- curl -s -o /dev/null -w '%{http_code}' -m 10 \
    -x socks5h://127.0.0.1:1080 "http://host.pisbx.internal:$DEV2/")
check "... and over SOCKS5" test "$code" != 200
# A reviewer that says yes to everything is never asked about it.
cat >"$T/asked.sh" <<EOF
#!/bin/sh
read -r req
printf '%s\n' "\$req" >>"$T/asked"
printf '{"action":"allow"}\n'
EOF
chmod 755 "$T/asked.sh"
: >"$T/asked"
chmod 666 "$T/asked"
run_config --allow "allowed.test"
"$PY" - "$CONF" "$T/asked.sh" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["review"] = {"command": [sys.argv[2]]}
json.dump(c, open(sys.argv[1], "w"))
EOF
code=$(sbx -- curl -s -o /dev/null -w '%{http_code}' -m 10 \
    "http://host.pisbx.internal:$DEV/")
eq "without its entry, even an approving reviewer cannot open it" "$code" 403
check_log "... refused as host-loopback" event=decision \
    host=host.pisbx.internal port="$DEV" decision=deny reason=host-loopback
sbx -- curl -s -o /dev/null -m 10 "http://other.test:$WEB/"
check "... the reviewer was asked about another host" grep -q other.test \
    "$T/asked"
check "... and never about host.pisbx.internal" \
    sh -c "! grep -q host.pisbx.internal '$T/asked'"

# 9. Every 403 says what would allow it, naming the config file.
run_config --allow "allowed.test" --deny "denied.test"
sbx -- curl -s -m 10 "http://other.test:$WEB/" >"$T/b3"
contains "no-reviewer 403: the entry and the file" "$(cat "$T/b3")" \
    "denied: no-reviewer; to allow it, add \"other.test:$WEB\" to network.allowedDomains in $CONF"
sbx -- curl -s -m 10 "http://denied.test:$WEB/" >"$T/b4"
contains "deny-list 403: the entry that refuses it" "$(cat "$T/b4")" \
    "\"denied.test\" in network.deniedDomains of $CONF refuses it"
done_testing
