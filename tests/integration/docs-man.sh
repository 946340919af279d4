#!/bin/sh
# The man pages (docs/*.1) as man(1) shows them: each formats without a
# single troff warning at 80 columns (a terminal's width) and at 72 (a
# narrower one), with groff's every warning on, and "man -l" at
# MANWIDTH=80 prints the page and nothing on standard error.
. "$(dirname "$0")/../lib/common.sh"

command -v groff >/dev/null || skip "groff is not installed"
npages=0
for page in "$PISBX_TOP"/docs/*.1; do
	name=$(basename "$page")
	npages=$((npages + 1))
	case $(head -c 200 "$page") in
	*.Dd*)	macros=-mdoc ;;
	*)	macros=-man ;;
	esac
	for width in 80 72; do
		groff -ww $macros -Tutf8 -rLL=${width}n "$page" \
		    >"$T/out" 2>"$T/err"
		if [ -s "$T/err" ]; then
			not_ok "$name at $width columns: $(head -3 "$T/err" | tr '\n' ' ')"
		else
			ok "$name formats without a warning at $width columns"
		fi
		check "$name at $width columns is not empty" test -s "$T/out"
	done
	if command -v man >/dev/null; then
		MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings=w -l "$page" \
		    >"$T/man.out" 2>"$T/man.err"
		check "man -l $name printed the page" test -s "$T/man.out"
		if [ -s "$T/man.err" ]; then
			not_ok "man -l $name at MANWIDTH=80 warned: $(head -3 "$T/man.err" | tr '\n' ' ')"
		else
			ok "man -l $name at MANWIDTH=80 says nothing on stderr"
		fi
	fi
done
check "man pages found: $npages" test "$npages" -ge 4
done_testing
