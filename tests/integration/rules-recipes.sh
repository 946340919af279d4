#!/bin/sh
# The shipped request-rule recipes (conf/rules/) with real clients, through
# pisbx-run with TLS termination, against HTTPS servers on 127.0.0.1 whose
# test CA reaches pisbx through extraCaCertPaths (tests/lib/tlsserver.py).
# The recipes name real hosts: each one's rules are copied, unchanged, to
# a test host name.  Masked tokens reach their own server only, as the
# real values (the servers answer 401 to anything else):
# - git (git-readonly): clone and fetch over https with a token in the
#   remote URL work; push is refused with 403 naming the rule and file,
#   and never reaches git-http-backend (which would accept it);
# - npm (npm-no-publish): install with _authToken=${NPM_TOKEN} works,
#   publish is refused;
# - pip (pypi-no-upload): install from an index URL with a token works,
#   a twine-like upload is refused;
# - OCI (registry-pull-only): a manifest pull works, a blob upload not.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"
. "$PISBX_TOP/tests/lib/run.sh"
. "$PISBX_TOP/tests/lib/tlsca.sh"
command -v openssl >/dev/null 2>&1 || skip "openssl is not installed"
command -v jq >/dev/null 2>&1 || skip "jq is not installed"
[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "pisbx-tls.so not built"
[ -x /usr/lib/git-core/git-http-backend ] || skip "no git-http-backend"

HOSTS_NAMES="git.test npm.test pypi.test oci.test"
export HOSTS_NAMES
GH="ghp_REALgit$$x$(date +%s%N)"
NPMT="npm_REALnpm$$y$(date +%s%N)"
PIPT="pypi-REALpip$$z$(date +%s%N)"
export GH_TOKEN="$GH" NPM_TOKEN="$NPMT" PIP_TOKEN="$PIPT"
# This machine's own client settings stay outside.
unset PIP_FIND_LINKS PIP_CERT REQUESTS_CA_BUNDLE SSL_CERT_FILE \
    CURL_CA_BUNDLE GIT_SSL_CAINFO NODE_EXTRA_CA_CERTS

TLSCA=$T/ca
tlsca_make "$TLSCA" && tlsca_leaf "$TLSCA" git.test npm.test pypi.test \
    oci.test || { not_ok "the test CA"; exit 1; }

# The servers; each accepts only its real token.
mkdir -p "$T/git"
git init -q -b main "$T/src"
echo "fetched through pisbx" >"$T/src/README"
git -C "$T/src" add README
git -C "$T/src" -c user.name=t -c user.email=t@example.invalid commit -qm one
git clone -q --bare "$T/src" "$T/git/repo.git"
tls_start git git git.test --root "$T/git" --auth "x-access-token:$GH"
GITP=$SRV_PORT
tls_start npm npm git.test --auth "$NPMT"
NPMP=$SRV_PORT
tls_start pypi pypi git.test --auth "__token__:$PIPT"
PYPIP=$SRV_PORT
tls_start registry oci git.test
OCIP=$SRV_PORT

# The recipes' rules on the test hosts: the first entry of each, its
# host replaced.
mkdir -p "$T/rules"
for r in git-readonly:git.test npm-no-publish:npm.test \
    pypi-no-upload:upload.pypi.org:pypi.test \
    registry-pull-only:ghcr.io:oci.test; do
	name=${r%%:*} to=${r##*:}
	case $r in
	*:*:*) from=${r#*:}; from=${from%:*} ;;
	*) from= ;;
	esac
	jq --arg from "$from" --arg to "$to" '{requestRules: [.requestRules |
	    if $from == "" then .[0] else (.[] | select(.host == $from)) end |
	    .host = $to]}' "$PISBX_TOP/conf/rules/$name.json" \
	    >"$T/rules/$name.json" || { not_ok "jq on $name"; exit 1; }
done
chmod -R a+rX "$T"

CREDS='{"envVars":[
  {"name":"GH_TOKEN","mode":"mask","injectHosts":["git.test"]},
  {"name":"NPM_TOKEN","mode":"mask","injectHosts":["npm.test"]},
  {"name":"PIP_TOKEN","mode":"mask","injectHosts":["pypi.test"]}]}'
run_config --allow "git.test npm.test pypi.test oci.test" \
    --net '{"tlsTerminate":{"extraCaCertPaths":["'"$TLSCA"'/ca.pem"]},
      "requestRules":["'"$T"'/rules/git-readonly.json",
        "'"$T"'/rules/npm-no-publish.json",
        "'"$T"'/rules/pypi-no-upload.json",
        "'"$T"'/rules/registry-pull-only.json"]}' \
    --top '{"credentials":'"$CREDS"'}'

# srv_saw NAME JQ: some request NAME's server logged matches JQ;
# srv_never NAME JQ: none does (and the log is there to read).
srv_saw() {
	jq -n -e "[inputs | select($2)] | length > 0" "$T/$1.reqs" >/dev/null
}
srv_never() {
	jq -n -e "[inputs | select($2)] | length == 0" "$T/$1.reqs" >/dev/null
}
# refused DESC METHOD PATHRE RULE FILE: the access log has the request's
# 403 record, reason request-rule, naming RULE and FILE.
refused() {
	check_log "$1: request record 403 request-rule \"$4\"" event=request \
	    method="$2" path~"$3" status=403 reason=request-rule rule="$4" \
	    source~"^$T/rules/$5: [\$][.]requestRules\\[0\\][.]deny\\[[0-9]+\\]\$"
}

# 1. git: clone and fetch with the token in the URL, push refused.
URL="https://x-access-token:\$GH_TOKEN@git.test:$GITP/repo.git"
sbx -- /bin/sh -c "git clone -q \"$URL\" \"\$TMPDIR/c\" &&
    cat \"\$TMPDIR/c/README\" && cd \"\$TMPDIR/c\" && git fetch -q origin &&
    echo fetched && echo two >>README &&
    git -c user.name=t -c user.email=t@example.invalid commit -qam two &&
    git push origin main; echo push=\$?" >"$T/git.out" 2>&1
contains "git clone over https through pisbx" "$(cat "$T/git.out")" \
    "fetched through pisbx"
contains "git fetch over https through pisbx" "$(cat "$T/git.out")" fetched
check "the git server got the real token (Basic, swapped)" \
    srv_saw git ".action == \"upload-pack\" and .auth == \"x-access-token:$GH\""
contains "git push fails" "$(cat "$T/git.out")" "push=1"
contains "git says the server answered 403" "$(cat "$T/git.out")" "403"
refused "git push" POST "/repo\\.git/git-receive-pack$" \
    "POST /**/git-receive-pack" git-readonly.json
contains "the end-of-run summary names the rule and its file" \
    "$(cat "$T/git.out")" "(request-rule): POST /repo.git/git-receive-pack is refused by the request rule \"POST /**/git-receive-pack\" ($T/rules/git-readonly.json"
check "the push never reached git-http-backend" \
    srv_never git '.action == "receive-pack"'
eq "the repository's main is still the first commit" \
    "$(git -C "$T/git/repo.git" log --format=%s main)" one
check_log "the clone's requests carry the injected name" event=request \
    method=POST path="/repo.git/git-upload-pack" status=200 \
    injected~'GH_TOKEN'

# 2. npm: install with the masked token, publish refused.
mkdir -p "$WS/np"
printf 'registry=https://npm.test:%s/\n//npm.test:%s/:_authToken=${NPM_TOKEN}\n' \
    "$NPMP" "$NPMP" >"$WS/np/.npmrc"
echo '{"name":"pisbx-pub","version":"1.0.0","main":"index.js"}' \
    >"$WS/np/package.json"
echo "module.exports = 1;" >"$WS/np/index.js"
chmod -R a+rwX "$WS/np"
(cd "$WS/np" && "$RUN" --config "$CONF" --access-log "$PX_LOG" -- \
    /bin/sh -c 'export npm_config_cache=$TMPDIR/npm;
    npm install --no-audit --no-fund --no-update-notifier pisbx-dep &&
    node -e "console.log(require(\"pisbx-dep\"))";
    npm publish --no-update-notifier; echo publish=$?') >"$T/npm.out" 2>&1
contains "npm install from the TLS registry" "$(cat "$T/npm.out")" \
    "installed through pisbx"
check "the registry got the real token (Bearer, swapped)" \
    srv_saw npm ".path == \"/pisbx-dep\" and .auth == \"$NPMT\""
contains "npm publish fails" "$(cat "$T/npm.out")" "publish=1"
refused "npm publish" PUT "^/pisbx-pub$" "PUT /**" npm-no-publish.json
check "the publish never reached the registry" \
    srv_never npm '.action == "publish"'
rm -rf "$WS/np"

# 3. pip: an index URL with the masked token; an upload refused.
sbx -- /bin/sh -c "/usr/bin/python3 -m pip download -q --no-deps \
    --no-cache-dir --disable-pip-version-check --retries 0 \
    -d \"\$TMPDIR/dl\" \
    --index-url \"https://__token__:\$PIP_TOKEN@pypi.test:$PYPIP/simple/\" \
    pisbx-probe && ls \"\$TMPDIR/dl\";
    echo 'print(1)' >\"\$TMPDIR/x.py\";
    curl -sS -o /dev/null -w 'upload=%{http_code}\n' \
    -u \"__token__:\$PIP_TOKEN\" -F ':action=file_upload' \
    -F \"content=@\$TMPDIR/x.py\" https://pypi.test:$PYPIP/legacy/" \
    >"$T/pip.out" 2>&1
contains "pip downloads from the TLS index with a token" \
    "$(cat "$T/pip.out")" "pisbx_probe-1.0-py3-none-any.whl"
check "the index got the real token" \
    srv_saw pypi ".path == \"/simple/pisbx-probe/\" and .auth == \"__token__:$PIPT\""
contains "an upload is answered 403" "$(cat "$T/pip.out")" "upload=403"
refused "the upload" POST "^/legacy/$" "POST /**" pypi-no-upload.json
check "the upload never reached the index" \
    srv_never pypi '.action == "upload"'

# 4. OCI: pull a manifest and a blob, push a blob refused.
sbx -- /bin/sh -c "curl -sS https://oci.test:$OCIP/v2/lib/img/manifests/latest;
    echo; curl -sS -o /dev/null -w 'post=%{http_code}\n' -X POST \
    https://oci.test:$OCIP/v2/lib/img/blobs/uploads/;
    curl -sS -o /dev/null -w 'put=%{http_code}\n' -X PUT --data-binary x \
    https://oci.test:$OCIP/v2/lib/img/manifests/v2" >"$T/oci.out" 2>&1
contains "a manifest pull works" "$(cat "$T/oci.out")" \
    '"mediaType": "application/vnd.oci.image.manifest.v1+json"'
contains "a blob upload is answered 403" "$(cat "$T/oci.out")" "post=403"
contains "a manifest push is answered 403" "$(cat "$T/oci.out")" "put=403"
refused "the blob upload" POST "^/v2/lib/img/blobs/uploads/$" \
    "POST /v2/**" registry-pull-only.json
refused "the manifest push" PUT "^/v2/lib/img/manifests/v2$" \
    "PUT /v2/**" registry-pull-only.json
check "no push reached the registry" srv_never oci \
    '.action == "blob-upload" or .action == "manifest-push"'

# 5. No real token in the access log.
check "the access log holds no real token" sh -c "! grep -qF -e '$GH' \
    -e '$NPMT' -e '$PIPT' '$PX_LOG'"

done_testing
