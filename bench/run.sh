#!/bin/sh
# make bench: pisbx beside direct loopback, unshare -n, bubblewrap,
# tinyproxy, microsocks, dante and srt; one table from one run.  The
# driver is bench/bench.py (its docstring lists the rows and knobs).
top=$(cd "$(dirname "$0")/.." && pwd)
exec /usr/bin/python3 "$top/bench/bench.py" "$@"
