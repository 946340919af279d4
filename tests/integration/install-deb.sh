#!/bin/sh
# The Debian package: dpkg-buildpackage -us -uc -b on a copy of the source
# tree in a temporary directory (it writes ../*.deb, so never in the
# tree), then the .deb: its files, conffiles, maintainer scripts (neither
# unit enabled or started), the version agreeing with the programs', the
# hardening of the binaries, the programs running from an extracted copy,
# and lintian without errors.  Skipped when the packaging tools are
# missing (./bootstrap --all installs them; CI's --test does not).
# run.sh: alone (it installs the package for the whole system).
. "$(dirname "$0")/../lib/common.sh"

missing=""
for t in dpkg-buildpackage dpkg-checkbuilddeps dh fakeroot lintian; do
	command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -z "$missing" ] || skip "packaging tools missing:$missing (./bootstrap --all installs them)"

# tree_state: what git sees in the source tree (not ignored), if a repo.
tree_state() {
	git -C "$PISBX_TOP" status --porcelain 2>/dev/null
}
tree_state >"$T/tree.before"

# The tree without what builds and tests leave in it.
mkdir -p "$T/pkg/src"
tar -C "$PISBX_TOP" --exclude=./build --exclude=./build-san --exclude=./bin \
    --exclude=./.git -cf - . | tar -C "$T/pkg/src" -xf -

# A clean environment: nothing of the suite's make (MAKEFLAGS, BUILD,
# BINDIR, SANITIZE, CFLAGS) may reach debian/rules.
build_env() {
	env -i PATH="$PATH" HOME="$T" LC_ALL=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}" "$@"
}
if ! (cd "$T/pkg/src" && build_env dpkg-checkbuilddeps) >"$T/deps.out" 2>&1; then
	not_ok "build dependencies missing: $(cat "$T/deps.out")"
	done_testing
fi
if (cd "$T/pkg/src" && build_env dpkg-buildpackage -us -uc -b) \
    >"$T/build.out" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b"
else
	not_ok "dpkg-buildpackage failed:"
	grep -v '^cc \|^ar ' "$T/build.out" | tail -n 30 | sed 's/^/# /'
	done_testing
fi

VERSION=$(cd "$T/pkg/src" && dpkg-parsechangelog -S Version)
DEB=$(ls "$T"/pkg/pisbx_"$VERSION"_*.deb 2>/dev/null | head -n 1)
check "the package is in the copy's parent: ${DEB##*/}" test -f "$DEB"
[ -f "$DEB" ] || done_testing

dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|; s| ->.*||' \
    >"$T/files"
for f in /usr/bin/pisbx-proxy /usr/bin/pisbx-run /usr/bin/pisbx-supervisor \
    /usr/share/man/man1/pisbx-proxy.1.gz /usr/share/man/man1/pisbx-run.1.gz \
    /usr/share/man/man1/pisbx-supervisor.1.gz \
    /usr/share/doc/pisbx/README.md /usr/share/doc/pisbx/install.md \
    /usr/share/doc/pisbx/supervisor.md /usr/share/doc/pisbx/copyright \
    /usr/share/pisbx/example.json /usr/share/pisbx/schema.json \
    /usr/share/pisbx/domains/npm.json /usr/share/pisbx/rules/git-readonly.json \
    /usr/lib/pisbx/pisbx-tls.so \
    /lib/systemd/system/pisbx-proxy.service \
    /usr/lib/systemd/user/pisbx-supervisor.service \
    /etc/pisbx/proxy.json /etc/logrotate.d/pisbx-proxy; do
	check "the package holds $f" grep -qx "$f" "$T/files"
done
for p in "$PISBX_BINDIR"/pisbx-*; do
	[ -L "$p" ] || continue
	check "the package holds the link /usr/bin/${p##*/}" \
	    grep -qx "/usr/bin/${p##*/}" "$T/files"
done

mkdir "$T/ctl" "$T/root"
dpkg-deb -e "$DEB" "$T/ctl"
dpkg-deb -x "$DEB" "$T/root"
eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: got '$2', want '$3'"; fi
}
eq "conffiles: the proxy's config and logrotate file" \
    "$(sort "$T/ctl/conffiles" | tr '\n' ' ')" \
    "/etc/logrotate.d/pisbx-proxy /etc/pisbx/proxy.json "
cat "$T"/ctl/postinst "$T"/ctl/preinst "$T"/ctl/postrm 2>/dev/null \
    >"$T/scripts"
check "no maintainer script starts a unit" \
    sh -c "! grep -Eq 'deb-systemd-invoke (start|restart)|systemctl (--[a-z]+ )*start' '$T/scripts'"
# --no-enable: debhelper enables a unit again only on the upgrade of an
# installed, enabled one (its "debian-installed" guard); without it, the
# first install enables.
check "the system unit is not enabled on a first install" \
    grep -q "deb-systemd-helper debian-installed 'pisbx-proxy.service'" \
    "$T/scripts"
check "the user unit is not enabled on a first install" \
    grep -q "deb-systemd-helper --user debian-installed 'pisbx-supervisor.service'" \
    "$T/scripts"

out=$("$T/root/usr/bin/pisbx-proxy" --version 2>&1)
eq "the packaged pisbx-proxy runs, its version is the package's" "$out" \
    "pisbx-proxy $VERSION"
out=$("$T/root/usr/bin/pisbx-proxy" --config "$T/root/etc/pisbx/proxy.json" \
    --check 2>&1)
eq "the packaged service config passes --check" "$out" \
    "$T/root/etc/pisbx/proxy.json: configuration OK"
for b in "$T"/root/usr/bin/pisbx-*; do
	[ -L "$b" ] && continue
	n=${b##*/}
	check "$n is position-independent" sh -c \
	    "readelf -h '$b' | grep -q 'Type:.*DYN'"
	check "$n has full RELRO (GNU_RELRO and BIND_NOW)" sh -c \
	    "readelf -lW '$b' | grep -q GNU_RELRO &&
	    readelf -dW '$b' | grep -Eq 'BIND_NOW|FLAGS.*NOW'"
	check "$n calls fortified functions" sh -c \
	    "readelf --dyn-syms -W '$b' | grep -Eq '__[a-z0-9]+_chk@'"
	check "$n has a stack protector" sh -c \
	    "readelf --dyn-syms -W '$b' | grep -q __stack_chk_fail"
done

# The TLS module: its libraries in Depends (shlibs), found and loaded
# from the package's layout (bin/../lib/pisbx/), hardened like the rest.
deps=$(dpkg-deb -f "$DEB" Depends)
for lib in libssl3 libpcre2-8-0; do
	check "Depends names $lib ($deps)" sh -c \
	    "printf '%s\n' '$deps' | grep -q '\\b$lib\\b'"
done
if [ -x "$PISBX_BUILD/tests/helpers/tlsprobe" ]; then
	cp "$PISBX_BUILD/tests/helpers/tlsprobe" "$T/root/usr/bin/tlsprobe"
	out=$("$T/root/usr/bin/tlsprobe" 2>&1 | head -n 1)
	rm -f "$T/root/usr/bin/tlsprobe"
	eq "the packaged pisbx-tls.so loads from /usr/lib/pisbx" "$out" loaded
fi
m=$T/root/usr/lib/pisbx/pisbx-tls.so
check "pisbx-tls.so has full RELRO" sh -c \
    "readelf -lW '$m' | grep -q GNU_RELRO &&
    readelf -dW '$m' | grep -Eq 'BIND_NOW|FLAGS.*NOW'"
check "pisbx-tls.so has a stack protector" sh -c \
    "readelf --dyn-syms -W '$m' | grep -q __stack_chk_fail"

lintian --display-info --fail-on error "$T"/pkg/pisbx_"$VERSION"_*.changes >"$T/lintian.out" 2>&1
rc=$?
grep -v '^running with root privileges' "$T/lintian.out" | sed 's/^/# lintian: /'
if [ $rc -eq 0 ] && ! grep -q '^E: ' "$T/lintian.out"; then
	ok "lintian: no error ($(grep -c '^[WIP]: ' "$T/lintian.out") other tags)"
else
	not_ok "lintian (exit $rc) reports errors"
fi

tree_state >"$T/tree.after"
check "the source tree is as it was" cmp -s "$T/tree.before" "$T/tree.after"
done_testing
