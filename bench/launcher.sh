#!/bin/sh
# bench/launcher.sh: what a sandbox costs per command.  Wall time of
# `pisbx-run -- true` (namespaces, listeners handed to the proxy, mount
# policy, Landlock, seccomp, reaper, teardown) against:
#   unshare -n true                     (a bare network namespace)
#   bwrap --unshare-net --ro-bind / / true
#   srt true                            (Anthropic's sandbox-runtime, npm
#                                        @anthropic-ai/sandbox-runtime, with
#                                        the same policy: home hidden, cwd
#                                        writable, no network allowed)
# all measured in this one run, with hyperfine when installed (./bootstrap
# --bench) or a shell loop.  Prints a table and the ratios.  Aims (issue
# 5): within 2x of `unshare -n true`, at least 50x faster than srt.
#   BENCH_RUNS=N (default 200; srt gets N/10), SRT_DIR=DIR (npm install
#   cache, default $BUILD/bench/srt), BENCH_NO_SRT=1 skips the npm install.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
BINDIR=${BINDIR:-bin}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
case $BINDIR in /*) ;; *) BINDIR=$top/$BINDIR ;; esac
RUN=$BINDIR/pisbx-run
RUNS=${BENCH_RUNS:-200}
SRT_RUNS=$((RUNS / 10))
[ "$SRT_RUNS" -ge 3 ] || SRT_RUNS=3
SRT_DIR=${SRT_DIR:-$BUILD/bench/srt}

[ -x "$RUN" ] || { echo "bench: $RUN not built (run make first)" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/pisbx-bench-run.XXXXXX")
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$T/ws"
cd "$T/ws" || exit 1
echo '{"network": {"allowedDomains": [], "deniedDomains": []}}' >"$T/conf.json"

# mean_ms NAME RUNS CMD...: mean wall time in milliseconds on stdout.
mean_ms() {
	_name=$1 _runs=$2
	shift 2
	if command -v hyperfine >/dev/null 2>&1; then
		hyperfine -N --style none --warmup 3 --runs "$_runs" \
		    --export-json "$T/$_name.json" -- "$*" >/dev/null 2>"$T/$_name.err" ||
		    return 1
		/usr/bin/python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"][0]
print("%.2f" % (r["mean"] * 1000))
open(sys.argv[2], "w").write("%.2f\n" % ((r["user"] + r["system"]) * 1000))' \
		    "$T/$_name.json" "$T/$_name.cpu"
		return
	fi
	"$@" >/dev/null 2>"$T/$_name.err" || return 1
	_s=$(date +%s%N)
	_i=0
	while [ $_i -lt "$_runs" ]; do
		"$@" >/dev/null 2>&1
		_i=$((_i + 1))
	done
	_e=$(date +%s%N)
	echo "$_s $_e $_runs" | awk '{ printf "%.2f\n", ($2 - $1) / 1e6 / $3 }'
}

if [ "$(id -u)" -eq 0 ]; then
	UNSHARE="unshare -n true"
else
	UNSHARE="unshare -r -n true"
fi
tool=loop
command -v hyperfine >/dev/null 2>&1 && tool=hyperfine

echo "== pisbx-run startup: $RUNS runs each ($tool), uid $(id -u), $(nproc) cpus"
pisbx=$(mean_ms pisbx "$RUNS" "$RUN" --config "$T/conf.json" -- true) ||
    { echo "bench: pisbx-run -- true failed: $(cat "$T/pisbx.err")" >&2; exit 1; }
# shellcheck disable=SC2086
unshare=$(mean_ms unshare "$RUNS" $UNSHARE) || unshare=
bwrap=
if command -v bwrap >/dev/null 2>&1; then
	bwrap=$(mean_ms bwrap "$RUNS" bwrap --unshare-net --ro-bind / / true) || bwrap=
fi

# srt, installed by npm into a cache directory, with the same policy.
srt= srt_note=
if [ "${BENCH_NO_SRT:-0}" = 1 ]; then
	srt_note="skipped (BENCH_NO_SRT=1)"
elif ! command -v npm >/dev/null 2>&1; then
	srt_note="npm not installed"
else
	SRT=$SRT_DIR/node_modules/.bin/srt
	if [ ! -x "$SRT" ]; then
		mkdir -p "$SRT_DIR"
		(cd "$SRT_DIR" && npm install --no-audit --no-fund --silent \
		    @anthropic-ai/sandbox-runtime) >"$T/npm.log" 2>&1 ||
		    srt_note="npm install failed: $(tail -n 2 "$T/npm.log" | tr '\n' ' ')"
	fi
	if [ -x "$SRT" ]; then
		cat >"$T/srt-settings.json" <<EOF
{"network": {"allowedDomains": [], "deniedDomains": []},
 "filesystem": {"denyRead": ["~"], "allowWrite": ["."], "denyWrite": []}}
EOF
		if ! srt=$(mean_ms srt "$SRT_RUNS" "$SRT" -s "$T/srt-settings.json" true); then
			srt=
			srt_note="srt cannot run here: $(grep -m1 -i error "$T/srt.err" ||
			    head -c 200 "$T/srt.err") (it needs bubblewrap, socat and ripgrep)"
		fi
	fi
fi

# CPU time (user+system of the whole process tree, from hyperfine) is
# much less sensitive to a busy machine than wall time.
cpu() { [ -s "$T/$1.cpu" ] && cat "$T/$1.cpu" || echo n/a; }
row() { printf '  %-42s %9s ms wall %9s ms cpu\n' "$1" "${2:-n/a}" "$3"; }
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
row "pisbx-run -- true" "$pisbx" "$(cpu pisbx)"
row "$UNSHARE" "$unshare" "$(cpu unshare)"
row "bwrap --unshare-net --ro-bind / / true" "$bwrap" "$(cpu bwrap)"
if [ -n "$srt" ]; then row "srt true ($SRT_RUNS runs)" "$srt" "$(cpu srt)"
else row "srt true" "" ""; echo "    srt: $srt_note"; fi

ratio() { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.1f", $1 / $2; else print "n/a" }'; }
echo "== ratios"
if [ -n "$unshare" ]; then
	r=$(ratio "$pisbx" "$unshare")
	echo "  pisbx-run / unshare -n:  ${r}x   (aim: <= 2x)"
	[ -s "$T/pisbx.cpu" ] && [ -s "$T/unshare.cpu" ] &&
	    echo "    (cpu time: $(ratio "$(cpu pisbx)" "$(cpu unshare)")x)"
fi
[ -n "$bwrap" ] && echo "  pisbx-run / bwrap:       $(ratio "$pisbx" "$bwrap")x"
if [ -n "$srt" ]; then
	echo "  srt / pisbx-run:         $(ratio "$srt" "$pisbx")x   (aim: >= 50x)"
fi
exit 0
