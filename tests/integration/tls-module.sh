#!/bin/sh
# The TLS module pisbx-tls.so: the programs do not link OpenSSL or PCRE2
# (ldd), the module exports its one symbol, and tlsmod_load finds it next
# to the program (EXEDIR/../lib/pisbx/, else EXEDIR/) and refuses one
# that someone else could have replaced: writable by group or others, a
# symbolic link, owned by another user, in a directory others can write.
. "$(dirname "$0")/../lib/common.sh"

MOD=$PISBX_BINDIR/pisbx-tls.so
PROBE=$PISBX_BUILD/tests/helpers/tlsprobe
[ -f "$MOD" ] || skip "no $MOD (make builds it)"
[ -x "$PROBE" ] || skip "no $PROBE (make tests-build)"
[ -x "$RUN" ] && [ -x "$PROXY" ] || skip "no $RUN or $PROXY (make builds them)"

# ldd_has PROG LIBRARY: PROG is linked with LIBRARY.  A sanitizer build
# links every library of the build (gcc puts --no-as-needed before
# libasan): there, PROG links LIBRARY when it uses a symbol of it.
ldd_has() {
	if ! ldd "$1" 2>/dev/null | grep -q "libasan"; then
		ldd "$1" 2>/dev/null | grep -q "^[[:space:]]*$2[.-]"
		return
	fi
	_lib=$(ldd "$1" 2>/dev/null |
	    sed -n "s|^[[:space:]]*$2[.-][^ ]* => \([^ ]*\) .*|\1|p")
	[ -n "$_lib" ] || return 1
	nm -D --defined-only "$_lib" | awk '{ print $3 }' | sed 's/@.*//' |
	    sort -u >"$T/def"
	nm -D --undefined-only "$1" | awk '{ print $2 }' | sed 's/@.*//' |
	    sort -u >"$T/undef"
	[ -n "$(comm -12 "$T/def" "$T/undef")" ]
}

if ldd "$RUN" 2>&1 | grep -q "not a dynamic executable\|statically linked"; then
	ok "pisbx-run is static (STATIC=1): it links nothing"
else
	for lib in libssl libcrypto libpcre2-8; do
		check "pisbx-run does not link $lib" eval '! ldd_has "$RUN" $lib'
	done
fi
for lib in libssl libcrypto libpcre2-8; do
	check "pisbx-proxy does not link $lib" eval '! ldd_has "$PROXY" $lib'
done
# The supervisor's request ids use libcrypto's SHA-256; TLS it leaves
# to the module too.
for lib in libssl libpcre2-8; do
	check "pisbx-supervisor does not link $lib" \
	    eval '! ldd_has "$PISBX_BINDIR/pisbx-supervisor" $lib'
done
for lib in libssl libcrypto libpcre2-8; do
	check "pisbx-tls.so links $lib" ldd_has "$MOD" $lib
done
syms=$(nm -D --defined-only "$MOD" | awk '{ print $3 }' | sort | tr '\n' ' ')
check "pisbx-tls.so exports pisbx_tlsmod only ($syms)" \
    test "$syms" = "pisbx_tlsmod "

# probe DIR: the probe run from DIR; its output in $out, status in $rc.
probe() { out=$("$1/tlsprobe" 2>&1); rc=$?; }
# expect_refused DESC TEXT: the last probe failed, saying TEXT.
expect_refused() {
	if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -qF -- "$2"; then
		ok "$1"
	else
		not_ok "$1 (exit $rc)"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}
expect_loaded() {
	if [ $rc -eq 0 ] && [ "$out" = "loaded
-----BEGIN CERTIFICATE-----" ]; then
		ok "$1"
	else
		not_ok "$1 (exit $rc)"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

# Beside the program (the source tree's bin/).
mkdir -p "$T/flat"
cp "$PROBE" "$T/flat/tlsprobe"
probe "$T/flat"
expect_refused "no module: said, naming both places" \
    "not installed: neither $T/flat/../lib/pisbx/pisbx-tls.so nor $T/flat/pisbx-tls.so exists"
cp "$MOD" "$T/flat/pisbx-tls.so"
chmod 0644 "$T/flat/pisbx-tls.so"
probe "$T/flat"
expect_loaded "the module beside the program loads and makes a CA"

chmod 0664 "$T/flat/pisbx-tls.so"
probe "$T/flat"
expect_refused "a group-writable module is refused" \
    "$T/flat/pisbx-tls.so: unsafe (owner uid $(id -u), mode 0664)"
chmod 0646 "$T/flat/pisbx-tls.so"
probe "$T/flat"
expect_refused "a world-writable module is refused" "mode 0646"
chmod 0644 "$T/flat/pisbx-tls.so"

chmod 0777 "$T/flat"
probe "$T/flat"
expect_refused "a module in a world-writable directory is refused" \
    "its directory $T/flat is writable by others"
chmod 0755 "$T/flat"

mv "$T/flat/pisbx-tls.so" "$T/real.so"
ln -s "$T/real.so" "$T/flat/pisbx-tls.so"
probe "$T/flat"
expect_refused "a symbolic link is refused" \
    "$T/flat/pisbx-tls.so: a symbolic link"
rm "$T/flat/pisbx-tls.so"
mkdir "$T/flat/pisbx-tls.so"
probe "$T/flat"
expect_refused "a directory is refused" "not a regular file"
rmdir "$T/flat/pisbx-tls.so"

if [ "$(id -u)" = 0 ]; then
	cp "$MOD" "$T/flat/pisbx-tls.so"
	chown 65534 "$T/flat/pisbx-tls.so"
	probe "$T/flat"
	expect_refused "a module owned by another user is refused" \
	    "(owner uid 65534, mode"
	rm -f "$T/flat/pisbx-tls.so"
fi

# An installed tree: PREFIX/bin/PROGRAM and PREFIX/lib/pisbx/.
mkdir -p "$T/prefix/bin" "$T/prefix/lib/pisbx"
cp "$PROBE" "$T/prefix/bin/tlsprobe"
cp "$MOD" "$T/prefix/lib/pisbx/pisbx-tls.so"
chmod 0644 "$T/prefix/lib/pisbx/pisbx-tls.so"
probe "$T/prefix/bin"
expect_loaded "the installed module (../lib/pisbx/) loads"
# The installed one comes first; unsafe, it is refused, not skipped for
# one beside the program.
cp "$MOD" "$T/prefix/bin/pisbx-tls.so"
chmod 0664 "$T/prefix/lib/pisbx/pisbx-tls.so"
probe "$T/prefix/bin"
expect_refused "an unsafe installed module is refused, no fallback" \
    "$T/prefix/bin/../lib/pisbx/pisbx-tls.so: unsafe"

# Something that is not the module.
printf 'not an ELF file\n' >"$T/flat/pisbx-tls.so"
probe "$T/flat"
expect_refused "a file that is no library is refused" \
    "pisbx-tls.so (for network.tlsTerminate and credentials): $T/flat/pisbx-tls.so: "

done_testing
