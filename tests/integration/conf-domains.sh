#!/bin/sh
# The allow lists per package manager (conf/domains/*.json): each is a
# config that pisbx-proxy --check accepts and holds nothing but
# network.allowedDomains; each entry allows its host on 443 and only 443;
# docs/policy.md's table lists exactly the same files and hosts; and the
# page's jq line, run as written (the installed paths made the tree's),
# merges a list into an existing config that still checks.
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

D=$PISBX_TOP/conf/domains
n=$(ls "$D"/*.json 2>/dev/null | wc -l)
check "conf/domains holds lists ($n)" test "$n" -ge 4

for f in "$D"/*.json; do
	b=${f##*/}
	out=$("$PROXY" --config "$f" --check 2>&1)
	eq "$b passes pisbx-proxy --check" "$out" "$f: configuration OK"
	"$PY" - "$f" >"$T/$b.hosts" 2>"$T/$b.err" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
if list(c) != ["network"] or list(c["network"]) != ["allowedDomains"]:
    sys.exit("keys other than network.allowedDomains: %s" % json.dumps(c)[:200])
for e in c["network"]["allowedDomains"]:
    print(e)
EOF
	check "$b holds network.allowedDomains only $(cat "$T/$b.err")" \
	    test ! -s "$T/$b.err" -a -s "$T/$b.hosts"
	i=0
	while read -r e; do
		h=${e%:443}
		if [ "$h" = "$e" ]; then
			not_ok "$b: $e is not restricted to port 443"
			continue
		fi
		out=$("$PROXY" --config "$f" --explain "$h:443")
		eq "$b: $h:443 allowed by its entry" "$out" \
		    "{\"host\":\"$h\",\"port\":443,\"decision\":\"allow\",\"reason\":\"allow-list:$e\",\"source\":\"$f: \$.network.allowedDomains[$i]\",\"layer\":\"run\"}"
		i=$((i + 1))
		out=$("$PROXY" --config "$f" --explain "$h:80")
		contains "$b: $h:80 is not allowed" "$out" '"decision":"deny"'
	done <"$T/$b.hosts"
done

# docs/policy.md's table: "| `file` | `host` | why |", a row with an
# empty first cell continuing the file above.
sed -n '/^## Package managers need more/,/^## /p' "$PISBX_TOP/docs/policy.md" |
    awk -F'|' '/^\| *(`[a-z0-9-]+\.json`)? *\| *`[^`]+` *\|/ {
	f = $2; h = $3
	gsub(/[ `]/, "", f); gsub(/[ `]/, "", h)
	if (f != "") cur = f
	print cur, h
    }' | sort >"$T/doc.pairs"
for f in "$D"/*.json; do
	sed "s|^|${f##*/} |" "$T/${f##*/}.hosts"
done | sort >"$T/conf.pairs"
if cmp -s "$T/doc.pairs" "$T/conf.pairs"; then
	ok "docs/policy.md lists the same files and hosts as conf/domains ($(wc -l <"$T/conf.pairs") entries)"
else
	not_ok "docs/policy.md and conf/domains differ:"
	diff "$T/doc.pairs" "$T/conf.pairs" | sed 's/^/# /'
fi

# The jq line from the page.
if command -v jq >/dev/null 2>&1; then
	sed -n '/^## Package managers need more/,/^## /p' \
	    "$PISBX_TOP/docs/policy.md" |
	    awk '/^```sh$/ { g = 1; next } g && /^```$/ { exit } g' |
	    sed -n '/^jq /,$p' >"$T/merge.sh"
	check "the page has the jq line" grep -q '^jq ' "$T/merge.sh"
	sed -i "s|/usr/share/pisbx/domains|$D|g" "$T/merge.sh"
	mkdir -p "$T/home/.config/pisbx" "$T/cwd"
	cp "$PISBX_TOP/conf/example.json" "$T/home/.config/pisbx/config.json"
	(cd "$T/cwd" && HOME=$T/home PATH="$PISBX_BINDIR:$PATH" sh "$T/merge.sh") \
	    >"$T/merge.out" 2>&1
	eq "it runs" "$?" 0
	C=$T/home/.config/pisbx/config.json
	out=$("$PROXY" --config "$C" --explain files.pythonhosted.org)
	contains "the merged config allows the list's hosts" "$out" \
	    '"reason":"allow-list:files.pythonhosted.org:443"'
	out=$("$PROXY" --config "$C" --explain api.github.com)
	contains "and keeps its own entries" "$out" '"reason":"allow-list:*.github.com"'
	check "and its other sections" grep -q '"maxInFlight"' "$C"
else
	echo "# jq is not installed: the page's jq line is not run"
fi
done_testing
