#!/bin/sh
# pisbx-supervisor --tty: reviews answered by the person at the
# supervisor's terminal (played by pty-answer.py): y allows, n denies, a
# network question shows the request's warning as a note line above the
# answer, a host-IPC question carries the outside-the-sandbox warning, and two
# reviews at once are asked one after the other, never interleaved.
. "$PISBX_TOP/tests/lib/common.sh"
. "$PISBX_TOP/tests/lib/super.sh"
[ -x "$SUPERVISOR" ] || skip "no $SUPERVISOR"
FIX=$PISBX_TOP/tests/fixtures/reviewers
SOCK=$T/s.sock
echo '{"network": {"allowedDomains": [], "deniedDomains": []}}' >"$T/conf.json"

# The session on the terminal: the supervisor, then the requests.
cat >"$T/session.sh" <<EOF
#!/bin/sh
PISBX_SUPERVISOR_CAPABILITY=$CAP "$SUPERVISOR" --config "$T/conf.json" \\
    --socket "$SOCK" --tty --review-timeout 60000 >"$T/sup.out" 2>"$T/sup.err" &
SP=\$!
i=0
while [ ! -S "$SOCK" ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i + 1)); done
req() {
	$PY "$SUPPY" send --timeout 60 --socket "$SOCK" \\
	    "{\"version\":1,\"capability\":\"$CAP\",\"id\":\"\$1\",\"type\":\"\$2\",\"workerId\":\"w1\",\"cwd\":\"/work/p\",\$3}"
}
req r0 register '"x":0' >"$T/r0"
req r1 network '"hostname":"yes.example","port":443,"protocol":"connect","warning":"yes.example is 10.0.0.1 (rfc1918) in /etc/hosts: refused even when allowed here"' >"$T/r1"
req r2 host-ipc '"operation":"execute-host","command":"tmux ls","rule":"preflight-prefix:tmux"' >"$T/r2"
req r3 network '"hostname":"one.example","port":443,"protocol":"http"' >"$T/r3" &
P3=\$!
req r4 network '"hostname":"two.example","port":443,"protocol":"http"' >"$T/r4" &
P4=\$!
wait \$P3 \$P4
kill \$SP
wait \$SP
EOF
chmod 755 "$T/session.sh"
$PY "$FIX/pty-answer.py" y n y y -- /bin/sh "$T/session.sh" >"$T/tty.out" 2>&1
check "the session ended cleanly" [ $? -eq 0 ]

act() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["id"], r["action"], r.get("reason",""))' "$1"; }
check "register: allowed" [ "$(act "$T/r0")" = "r0 allow " ]
check "y at the terminal allows" [ "$(act "$T/r1")" = "r1 allow allowed at the terminal" ]
check "n at the terminal denies" [ "$(act "$T/r2")" = "r2 deny denied at the terminal" ]
check "the network question shows target, port, protocol, directory" $PY -c '
import sys
t = open(sys.argv[1]).read()
for s in ("target   yes.example", "port     443", "protocol connect", "in       /work/p", "worker   w1", "waiting  no other question",
          "time     60 s to answer (no answer: no)",
          "allow it? y = once, r = for this command\x27s run, N = no [y/r/N]"):
    assert s in t, s
' "$T/tty.out"
check "the request's warning is a note line, before the answer" $PY -c '
import sys
t = open(sys.argv[1]).read()
i = t.index("pisbx:   note     yes.example is 10.0.0.1 (rfc1918) in /etc/hosts: refused even when allowed here")
assert t.index("worker   w1") < i < t.index("allow it? y = once"), i
' "$T/tty.out"
check "the host-IPC question warns it runs outside the sandbox" $PY -c '
import sys
t = open(sys.argv[1]).read()
i = t.index("WARNING: this command would run on the host, OUTSIDE the sandbox")
for s in ("command  tmux ls", "rule     preflight-prefix:tmux", "run it on the host? [y/N]"):
    assert t.index(s) > i, s
' "$T/tty.out"
check "two reviews at once: both asked and both allowed" \
    [ "$(act "$T/r3" | cut -d' ' -f2) $(act "$T/r4" | cut -d' ' -f2)" = "allow allow" ]
check "two reviews at once: one question after the other" $PY -c '
import sys
t = open(sys.argv[1]).read().replace("\r", "")
blocks = t.split("pisbx: a sandboxed command wants a connection no list allows:")[1:]
assert len(blocks) == 3, len(blocks)
for b in blocks[1:]:
    head = b.split("[y/r/N]")[0]
    # each question is whole: one target, one port, one prompt
    assert head.count("target ") == 1 and head.count("port ") == 1, head
hosts = [b.split("target")[1].split()[0] for b in blocks[1:]]
assert sorted(hosts) == ["one.example", "two.example"], hosts
' "$T/tty.out"
check "the capability is never shown at the terminal" sh -c "! grep -q -- '$CAP' '$T/tty.out'"
done_testing
