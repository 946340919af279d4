# Run the sourcing scenario in a private network namespace: it re-executes
# itself once under "unshare -n" (skipping when namespaces are not
# available) and then brings lo up.  Source it first, before common.sh:
#   . "$(dirname "$0")/../lib/netns.sh"
# Nothing the scenario binds or dials can then leave the namespace.
if [ "${PISBX_IN_TEST_NETNS:-}" != 1 ]; then
	if ! unshare -n true 2>/dev/null; then
		echo "skip: cannot create a network namespace (unshare -n)"
		exit 77
	fi
	PISBX_IN_TEST_NETNS=1 exec unshare -n sh "$0" "$@"
fi
ip link set lo up || exit 1
