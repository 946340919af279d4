#!/bin/sh
# make install, as a packager and as an administrator use it.  A staged
# install (DESTDIR, PREFIX=/usr) puts every program, pisbx-run's other
# names, manual page, doc page, data file and unit in its place, the
# pages' docs/ references pointing at installed files and the units at
# the installed programs; a second install keeps an edited
# /etc/pisbx/proxy.json; uninstall leaves only SYSCONFDIR.  The installed
# README and docs name the installed files, and their links resolve.  A
# prefix of one's own keeps SYSCONFDIR inside it (PREFIX/etc), and a user
# can install into ~/.local.  An install under a real prefix then runs: the programs, the example and service
# configs, systemd-analyze verify and security of both units (when
# systemd's tools are installed), and each unit's command lines run as
# systemd would run them (tests/lib/unitexec.py): the proxy serving,
# reloading and reopening its log after a rotation, the supervisor's
# pre-start writing a private capability file, its start, and a pisbx-run
# registering with it.  The source tree is left as it was.
# run.sh: alone (it runs make install from the build tree the others use).
. "$(dirname "$0")/../lib/common.sh"
. "$PISBX_TOP/tests/lib/proxy.sh"

UNITEXEC=$PISBX_TOP/tests/lib/unitexec.py
VERSION=$(sed -n 's/^#define PISBX_VERSION "\(.*\)"$/\1/p' \
    "$PISBX_TOP/common/log.h")

# mk ARGS...: the project's make on the binaries this run built, not a
# sub-make of the make running the suite.
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$PISBX_TOP" \
	    BUILD="$PISBX_BUILD" BINDIR="$PISBX_BINDIR" "$@"
}

# tree_state: what git sees in the source tree (not ignored), if a repo.
tree_state() {
	git -C "$PISBX_TOP" status --porcelain 2>/dev/null
}
tree_state >"$T/tree.before"

# ---- staged install ----
S=$T/stage
if mk install DESTDIR="$S" PREFIX=/usr >"$T/install.out" 2>&1; then
	ok "make install DESTDIR=… PREFIX=/usr"
else
	not_ok "make install failed: $(tail -n 5 "$T/install.out")"
	done_testing
fi

for p in "$PISBX_BINDIR"/pisbx-*; do
	n=${p##*/}
	if [ "$n" = pisbx-tls.so ]; then
		# The TLS module: beside the programs' ../lib, where
		# tlsmod_load looks, not executable, writable by root only.
		check "$n installed in /usr/lib/pisbx, mode 644" \
		    test "$(stat -c %a "$S/usr/lib/pisbx/$n" 2>/dev/null)" = 644
		check "$n not installed in /usr/bin" test ! -e "$S/usr/bin/$n"
	elif [ -L "$p" ]; then
		check "$n is a link to pisbx-run" \
		    test "$(readlink "$S/usr/bin/$n")" = pisbx-run
	else
		check "$n installed, mode 755" \
		    test "$(stat -c %a "$S/usr/bin/$n" 2>/dev/null)" = 755
	fi
done

for m in "$PISBX_TOP"/docs/*.1; do
	n=${m##*/}
	f=$S/usr/share/man/man1/$n
	check "manual page $n installed" test -f "$f"
	if grep -q 'docs/' "$f"; then
		not_ok "$n still names docs/: $(grep 'docs/' "$f" | head -n 1)"
	fi
	for d in $(grep -o '/usr/share/doc/pisbx/[a-z0-9-]*\.md' "$f" | sort -u); do
		check "$n names $d, installed" test -f "$S$d"
	done
done
n=$(grep -l '/usr/share/doc/pisbx/' "$S"/usr/share/man/man1/*.1 | wc -l)
check "the manual pages name the installed docs ($n pages)" test "$n" -ge 2

for d in "$PISBX_TOP"/docs/*.md; do
	check "doc ${d##*/} installed" test -f "$S/usr/share/doc/pisbx/${d##*/}"
done
check "README.md installed, its links point at the pages beside it" \
    sh -c "test -f '$S/usr/share/doc/pisbx/README.md' &&
	! grep -q '](docs/' '$S/usr/share/doc/pisbx/README.md' &&
	grep -q '](supervisor.md)' '$S/usr/share/doc/pisbx/README.md'"

# The installed README and docs name installed files: every relative
# link resolves beside them, every absolute one under the stage, and no
# source-tree path (conf/*.json, docs/, /usr/local/bin) is left.
check "the installed README and docs: links and named files exist" $PY - \
    "$S" /usr <<'EOF'
import glob, os, re, sys
stage, prefix = sys.argv[1], sys.argv[2]
doc = stage + prefix + "/share/doc/pisbx"
bad = []
for f in sorted(glob.glob(doc + "/*.md")):
    text = open(f).read()
    name = os.path.basename(f)
    for t in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"(https?|mailto):|#", t):
            continue
        t = t.split("#")[0]
        p = stage + t if t.startswith("/") else os.path.join(doc, t)
        if not os.path.exists(p):
            bad.append("%s: link %s" % (name, t))
    for t in re.findall(prefix + r"/(?:bin/pisbx-[a-z]+|share/(?:pisbx|doc/pisbx|man/man1)/[\w./-]*)", text):
        if not os.path.exists(stage + t.rstrip(".")):
            bad.append("%s: names %s" % (name, t))
    for pat in (r"/usr/local/bin/pisbx", r"(^|[^\w./-])(\.\./)?conf/(domains/|rules/|\w+\.json)",
                r"\]\(docs/", r"`docs/[\w-]+\.md`"):
        for m in re.finditer(pat, text, re.M):
            bad.append("%s: source-tree path %r" % (name, m.group(0)))
if bad:
    sys.exit("\n".join(bad))
EOF
check "the installed README says it is the installed copy" grep -q \
    '^> This copy was installed by `make install`' "$S/usr/share/doc/pisbx/README.md"
check "the README's example config is the installed one" grep -q \
    'pisbx-proxy --config /usr/share/pisbx/example.json --check' \
    "$S/usr/share/doc/pisbx/README.md"

for f in example.json schema.json default.json; do
	check "$f in /usr/share/pisbx" cmp -s "$PISBX_TOP/conf/$f" \
	    "$S/usr/share/pisbx/$f"
done
for f in "$PISBX_TOP"/conf/domains/*.json; do
	check "domains/${f##*/} in /usr/share/pisbx" cmp -s "$f" \
	    "$S/usr/share/pisbx/domains/${f##*/}"
done
for f in "$PISBX_TOP"/conf/rules/*.json; do
	check "rules/${f##*/} in /usr/share/pisbx" cmp -s "$f" \
	    "$S/usr/share/pisbx/rules/${f##*/}"
done

PU=$S/usr/lib/systemd/system/pisbx-proxy.service
SU=$S/usr/lib/systemd/user/pisbx-supervisor.service
for u in "$PU" "$SU"; do
	check "${u##*/} installed" test -f "$u"
	if grep -q '@[A-Z]*@' "$u"; then
		not_ok "${u##*/} keeps a placeholder: $(grep '@[A-Z]*@' "$u")"
	fi
done
check "the proxy unit starts /usr/bin/pisbx-proxy with /etc/pisbx/proxy.json" \
    grep -q '^ExecStart=/usr/bin/pisbx-proxy --config /etc/pisbx/proxy.json ' "$PU"
check "the supervisor unit starts /usr/bin/pisbx-supervisor" \
    grep -q '^ExecStart=/usr/bin/pisbx-supervisor ' "$SU"
check "the units name the installed docs" \
    grep -q '^Documentation=.*file:/usr/share/doc/pisbx/install.md' "$PU"

check "/etc/pisbx/proxy.json installed" cmp -s "$PISBX_TOP/conf/proxy.json" \
    "$S/etc/pisbx/proxy.json"
check "/etc/logrotate.d/pisbx-proxy installed" test -f \
    "$S/etc/logrotate.d/pisbx-proxy"
w=$(find "$S" -perm /022 ! -type l | head -n 3)
check "nothing installed is group- or world-writable${w:+ ($w)}" test -z "$w"

# An administrator's edit survives a second install.
echo '{"network": {"allowedDomains": ["edited.example"]}}' \
    >"$S/etc/pisbx/proxy.json"
mk install DESTDIR="$S" PREFIX=/usr >"$T/install2.out" 2>&1
check "a second install keeps the edited /etc/pisbx/proxy.json" \
    grep -q edited.example "$S/etc/pisbx/proxy.json"

mk uninstall DESTDIR="$S" PREFIX=/usr >"$T/uninstall.out" 2>&1
left=$(cd "$S" && find . ! -type d | sort | tr '\n' ' ')
check "make uninstall leaves only /etc (left: $left)" \
    test "$left" = "./etc/logrotate.d/pisbx-proxy ./etc/pisbx/proxy.json "

# ---- an install under a real prefix, run ----
# SYSCONFDIR follows a prefix of one's own: nothing is written outside
# it (checked on the dry run first, so a failure writes nothing to /etc).
R=$T/prefix
out=$(mk -n install PREFIX="$R" 2>&1 | grep -oE ' /([^ ]*/)?etc/[^ ;]*' |
    sed 's/^ //' | grep -v "^$R/" | sort -u | tr '\n' ' ')
if [ -n "$out" ]; then
	not_ok "make install PREFIX=$R would write outside it: $out"
	done_testing
fi
ok "make install PREFIX=… keeps its configuration in PREFIX/etc"
mk install PREFIX="$R" >"$T/install3.out" 2>&1
check "the proxy's config is in PREFIX/etc" cmp -s \
    "$PISBX_TOP/conf/proxy.json" "$R/etc/pisbx/proxy.json"
check "and the unit names it there" grep -q \
    "^ExecStart=$R/bin/pisbx-proxy --config $R/etc/pisbx/proxy.json " \
    "$R/lib/systemd/system/pisbx-proxy.service"
# As a user, into a prefix of one's own (make install PREFIX=~/.local).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	U=$T/user
	mkdir "$U"
	chown 65534:65534 "$U"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL HOME="$U" make -s \
	    -C "$PISBX_TOP" BUILD="$PISBX_BUILD" BINDIR="$PISBX_BINDIR" \
	    install PREFIX="$U/.local" >"$T/install-user.out" 2>&1
	eq "make install PREFIX=~/.local as a user (nobody) succeeds" "$?" 0
	sed 's/^/# /' "$T/install-user.out" | head -n 5
	check "its programs and its proxy.json are under ~/.local" test \
	    -x "$U/.local/bin/pisbx-run" -a -f "$U/.local/etc/pisbx/proxy.json"
	out=$("$U/.local/bin/pisbx-run" --version 2>&1)
	eq "the user's pisbx-run runs" "$out" "pisbx-run $VERSION"
else
	echo "# not root: the install as another user is not tried"
fi
out=$("$R/bin/pisbx-proxy" --version 2>&1)
eq "the installed pisbx-proxy runs" "$out" "pisbx-proxy $VERSION"
out=$("$R/bin/pisbx-proxy" --config "$R/share/pisbx/example.json" --check \
    2>"$T/example.err")
eq "the installed example config passes --check" "$out" \
    "$R/share/pisbx/example.json: configuration OK"
# Copied as it is, it works: its reviewer is one pisbx has (a reviewer
# that cannot run would be a warning, and refuse every review).
eq "... without a warning" "$(cat "$T/example.err")" ""
# The hint for a package manager's host names the list as installed.
out=$("$R/bin/pisbx-proxy" --config "$R/etc/pisbx/proxy.json" \
    --explain static.crates.io 2>&1)
contains "an --explain hint names the installed domain list" "$out" \
    "it is in pisbx's list for cargo, $R/share/pisbx/domains/cargo.json,"
out=$("$R/bin/pisbx-proxy" --config "$R/etc/pisbx/proxy.json" --check 2>&1)
eq "the service's config passes --check" "$out" \
    "$R/etc/pisbx/proxy.json: configuration OK"

PU=$R/lib/systemd/system/pisbx-proxy.service
SU=$R/lib/systemd/user/pisbx-supervisor.service
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -m 700 "$T/xdg"
	out=$(MANPATH=$R/share/man systemd-analyze verify "$PU" 2>&1)
	eq "systemd-analyze verify pisbx-proxy.service: nothing to say" "$out" ""
	out=$(MANPATH=$R/share/man XDG_RUNTIME_DIR=$T/xdg \
	    systemd-analyze --user verify "$SU" 2>&1)
	eq "systemd-analyze --user verify pisbx-supervisor.service: nothing to say" \
	    "$out" ""
	# --threshold is the exposure level times ten.
	if systemd-analyze security --offline=true --threshold=15 "$PU" \
	    >"$T/sec.proxy" 2>&1; then
		ok "pisbx-proxy.service: $(grep -o 'Overall exposure.*' "$T/sec.proxy")"
	else
		not_ok "pisbx-proxy.service exposure over 1.5: $(grep -o 'Overall.*' "$T/sec.proxy")"
		grep '✗' "$T/sec.proxy" | sed 's/^/# /'
	fi
	if XDG_RUNTIME_DIR=$T/xdg systemd-analyze --user security \
	    --offline=true --threshold=10 "$SU" >"$T/sec.sup" 2>&1; then
		ok "pisbx-supervisor.service: $(grep -o 'Overall exposure.*' "$T/sec.sup")"
	else
		not_ok "pisbx-supervisor.service exposure over 1.0: $(grep -o 'Overall.*' "$T/sec.sup")"
		grep '✗' "$T/sec.sup" | sed 's/^/# /'
	fi
else
	echo "# systemd-analyze is not installed: the units are not verified or scored"
fi
if command -v logrotate >/dev/null 2>&1; then
	logrotate -d -s "$T/logrotate.state" "$R/etc/logrotate.d/pisbx-proxy" \
	    >"$T/logrotate.out" 2>&1
	check "logrotate reads /etc/logrotate.d/pisbx-proxy without an error" \
	    sh -c "[ $? -eq 0 ] && ! grep -qi 'error' '$T/logrotate.out'"
fi

# The proxy unit, as systemd runs it, with the service's config edited
# as an administrator would (a free port, the test server allowed).
srv_start http origin
cat >"$R/etc/pisbx/proxy.json" <<EOF
{"network": {"allowedDomains": ["127.0.0.1:$SRV_PORT"]},
 "proxy": {"listen": ["127.0.0.1:0"]}}
EOF
mkdir -p "$T/sd/run" "$T/sd/log"
export SD_RUNTIME=$T/sd/run SD_LOGS=$T/sd/log
: >"$T/unit.err"
spawn "$PY" "$UNITEXEC" "$PU" ExecStart 2>"$T/unit.err"
MAINPID=$LAST_PID
i=0
PORT=
while [ -z "$PORT" ] && [ $i -lt 200 ] && kill -0 $MAINPID 2>/dev/null; do
	PORT=$(sed -n 's/^pisbx-proxy: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' \
	    "$T/unit.err")
	sleep 0.05; i=$((i + 1))
done
if [ -z "$PORT" ]; then
	not_ok "the proxy unit's ExecStart did not start: $(cat "$T/unit.err")"
	done_testing
fi
ok "the proxy unit's ExecStart listens"
LOG=$T/sd/log/pisbx/access.log
get() { px_req --port "$PORT" "GET http://127.0.0.1:$SRV_PORT/$1 HTTP/1.1\r\nHost: 127.0.0.1:$SRV_PORT\r\nConnection: close\r\n\r\n"; }
get one
eq "allowed through the service's proxy" "$STATUS" 200
check "its access log is in LogsDirectory" logq wait "$LOG" decision=allow
check "the log file is private (UMask=0077)" \
    test "$(stat -c %a "$LOG")" = 600

# A rotation as logrotate does it (nocreate), then ExecReload.
mv "$LOG" "$LOG.1"
cat >"$R/etc/pisbx/proxy.json" <<EOF
{"network": {"deniedDomains": ["127.0.0.1:$SRV_PORT"]},
 "proxy": {"listen": ["127.0.0.1:0"]}}
EOF
MAINPID=$MAINPID "$PY" "$UNITEXEC" "$PU" ExecReload
# The log is reopened, then the config reloaded, in one turn of the event
# loop that serves the next request only afterwards.
i=0
while [ ! -e "$LOG" ] && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
get two
eq "after ExecReload the new policy holds" "$STATUS" 403
check "the proxy made a new log file itself" logq wait "$LOG" decision=deny
check "the rotated file kept the old records only" sh -c \
    "grep -q allow-list '$LOG.1' && ! grep -q deny-list '$LOG.1'"
kill -TERM $MAINPID
wait $MAINPID
eq "the service stops on SIGTERM with status 0" "$?" 0

# The supervisor user unit, as a user manager runs it.
export SD_t=$T/xdgrun SD_E=$T/xdgconf SD_RUNTIME=$T/xdgrun \
    SD_LOGS=$T/xdgconf/log
mkdir -m 700 "$SD_t"
mkdir -p "$SD_E/pisbx"
echo '{"network": {"allowedDomains": ["example.com"]}}' \
    >"$SD_E/pisbx/config.json"
if "$PY" "$UNITEXEC" "$SU" ExecStartPre 2>"$T/pre.err"; then
	ok "the supervisor unit's ExecStartPre runs"
else
	not_ok "ExecStartPre failed: $(cat "$T/pre.err")"
fi
ENVF=$SD_t/pisbx/supervisor.env
check "it writes supervisor.env, mode 600" \
    test "$(stat -c %a "$ENVF" 2>/dev/null)" = 600
check "with the socket and a 256-bit capability, nothing else" sh -c "
	test \$(wc -l <'$ENVF') -eq 2 &&
	grep -qx 'PISBX_SUPERVISOR_SOCKET=$SD_t/pisbx/supervisor.sock' '$ENVF' &&
	grep -Eqx 'PISBX_SUPERVISOR_CAPABILITY=[0-9a-f]{64}' '$ENVF'"
spawn "$PY" "$UNITEXEC" "$SU" ExecStart >"$T/sup.out" 2>"$T/sup.err"
SUP=$LAST_PID
wait_file "$T/sup.out" 200
eq "started from the unit, it prints only the socket" "$(cat "$T/sup.out")" \
    "export PISBX_SUPERVISOR_SOCKET='$SD_t/pisbx/supervisor.sock'"
unset PISBX_CONFIG XDG_CONFIG_HOME PISBX_SANDBOX PISBX_DEPTH
if [ "$(id -u)" -eq 0 ] || unshare -U -r -n true 2>/dev/null; then
	mkdir -p "$T/work"
	out=$(cd "$T/work" && set -a && . "$ENVF" && set +a &&
	    "$R/bin/pisbx-run" -- sh -c 'echo ran' 2>&1)
	eq "a pisbx-run with supervisor.env registers and runs" "$out" ran
	check "the supervisor logged the registration in LogsDirectory" \
	    logq wait "$SD_E/log/pisbx/supervisor.log" reason=registered
else
	echo "# no user namespaces for $(id -un): no pisbx-run registration"
fi
kill -TERM $SUP
wait $SUP
eq "the supervisor stops on SIGTERM with status 0" "$?" 0

tree_state >"$T/tree.after"
check "the source tree is as it was" cmp -s "$T/tree.before" "$T/tree.after"
done_testing
