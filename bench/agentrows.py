"""The rows of make bench that measure what an agent does in a sandbox:
the CPU each start costs, Claude Code's command line through pisbx-sh
against plain bash, a mix of 50 ordinary agent commands (one sandbox
each, as an agent runs them), and git status on a 20,000-file tree.
Each beside bubblewrap and srt where they run.

CPU per run is perf stat's task-clock of the whole process tree (every
process the sandbox starts, waited for or not), measured in runs of its
own so that perf's start does not enter the wall times; without perf,
wait4(2)'s resource usage, which misses what a sandbox does not wait for
(bubblewrap's). Unlike wall time it moves little when other work shares
the CPUs."""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from benchlib import (BUILD, BASELINE, OURS, RUN, RUNS, Skip, STARTED, left,
                      median, run, shellq, stop)

GIT_FILES = 20000   # files in the git status tree
GIT_DIR = os.path.join(BUILD, "bench", "git20k")

# Claude Code 2.1's wrapper around each Bash command (docs/agents.md):
# the shell snapshot sourced, extglob off, the command evaluated, the
# working directory written back.
CLAUDE_LINE = ("source %(snap)s 2>/dev/null || true && "
               "{ shopt -u extglob || setopt NO_EXTENDED_GLOB "
               "NO_BARE_GLOB_QUAL; } >/dev/null 2>&1 || true && "
               "eval %(cmd)s < /dev/null && pwd -P >| %(cwdf)s")

# A shell snapshot like the one Claude Code writes: options, functions,
# aliases and PATH.
SNAPSHOT = """# Snapshot file
unalias -a 2>/dev/null || true
shopt -s expand_aliases
%s
alias ll='ls -l'
alias la='ls -A'
alias gs='git status'
export PATH=%s
""" % ("\n".join("f%d() { echo %d; }" % (i, i) for i in range(40)),
       shellq(os.environ.get("PATH", "/usr/bin:/bin")))

# Fifty commands of the kind an agent runs while it works on a project:
# look around, read, search, run a little Python, edit, check with git.
MIX = [
    "ls", "ls -la", "pwd", "cat README.md", "head -n 20 src/m01.py",
    "sed -n 1,30p src/m02.py", "wc -l src/*.py", "grep -rn TODO src",
    "grep -rl 'def ' src | head", "find . -name '*.py' -not -path './.git/*'",
    "git status", "git status --short", "git log --oneline -5",
    "git diff", "git diff --stat", "git branch", "git show --stat HEAD",
    "python3 -c 'print(1 + 1)'", "python3 -m py_compile src/m03.py",
    "python3 -c 'import json; print(json.dumps({\"a\": 1}))'",
    "echo note >> notes.txt", "cat notes.txt", "mkdir -p build/out",
    "touch build/out/a.o build/out/b.o", "ls build/out",
    "cp src/m04.py build/m04.py", "diff src/m04.py build/m04.py",
    "sed -i 's/VALUE = 4/VALUE = 5/' src/m04.py", "git diff --stat",
    "grep -n VALUE src/m04.py", "git checkout -- src/m04.py",
    "tar -cf build/src.tar src", "tar -tf build/src.tar | wc -l",
    "sort src/m05.py | uniq | wc -l", "awk 'END{print NR}' src/m06.py",
    "env | grep -c PATH", "which python3 git", "date +%s", "uname -a",
    "test -f setup.cfg && echo yes || echo no", "du -sh src",
    "printf 'x\\n' > build/x.txt", "cat build/x.txt", "stat -c %s README.md",
    "ls -R src | head -n 5", "git add -A && git diff --cached --stat",
    "git reset -q", "rm -rf build notes.txt", "git status --short",
    "true",
]


def perf_ok():
    """Whether perf stat can count this user's processes here."""
    if not hasattr(perf_ok, "v"):
        try:
            perf_ok.v = shutil.which("perf") is not None and \
                subprocess.run(["perf", "stat", "-x,", "-e", "task-clock",
                                "--", "true"], capture_output=True,
                               timeout=20).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            perf_ok.v = False
    return perf_ok.v


def timed(argv, cwd, env=None, cpu=False, timeout=120, pre=()):
    """One run of argv: its wall ms, or with cpu its CPU ms (perf stat's
    task-clock, else wait4's rusage); Skip when it fails or overruns.
    pre: a command that runs perf (or argv) in its place, not counted
    in the CPU (the wall time includes it)."""
    err = tempfile.NamedTemporaryFile(prefix="bench-err.",
                                      dir=os.path.join(BUILD, "bench"))
    if cpu and perf_ok():
        argv = ["perf", "stat", "-x,", "-e", "task-clock", "-o",
                err.name + ".perf", "--"] + argv
    argv = list(pre) + argv
    t = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=err,
                         start_new_session=True)
    STARTED.append(p)
    timer = threading.Timer(min(timeout, max(left(), 5)), stop, (p,))
    timer.start()
    try:
        _, status, ru = os.wait4(p.pid, 0)
    finally:
        timer.cancel()
    wall = (time.monotonic() - t) * 1000
    p.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    text = err.read().decode(errors="replace")
    err.close()
    if p.returncode != 0:
        raise Skip("%s exited %d: %s" % (os.path.basename(argv[0]),
                                          p.returncode, text.strip()[-200:]))
    if not cpu:
        return wall
    if not perf_ok():
        return (ru.ru_utime + ru.ru_stime) * 1000
    try:
        with open(err.name + ".perf") as f:
            out = f.read()
        os.unlink(err.name + ".perf")
        return float(re.search(r"^([0-9.]+),msec,task-clock", out,
                               re.M).group(1))
    except (OSError, AttributeError, ValueError):
        raise Skip("perf stat gave no task-clock")


def timed_runs(argvs, n, cwd, env=None, cpu=False, warmup=1, pre=()):
    """Median ms (wall, or with cpu CPU) of running the list argvs in a
    row, n times after warmup rounds."""
    got = []
    for k in range(warmup + n):
        v = sum(timed(argv, cwd, env, cpu, pre=pre) for argv in argvs)
        if k >= warmup:
            got.append(v)
    return median(got)


def cpu_source():
    return ("perf stat task-clock" if perf_ok() else
            "wait4 rusage (perf not available: misses what a sandbox does "
            "not wait for)")


def sh_of(who):
    """The pisbx-sh of our column who."""
    return os.path.join(os.path.dirname(RUN) if who == "pisbx" else
                        BASELINE, "pisbx-sh")


def each(b, label, n, argvs_of, cwd, env=None, srt_n=None, cpu_n=None):
    """Wall and CPU medians of argvs_of(who) on the host (who None) and in
    each sandbox: ({who: wall}, {who: cpu}), the host's under None; the
    CPU from cpu_n runs of their own (default n // 3, at least 3)."""
    wall, cpu = {}, {}
    for who in [None] + b.sandboxes():
        if left() < 20:
            b.note("%s: %s skipped (time budget)" % (label, who or "host"))
            continue
        k = (srt_n or n) if who == "srt" else n
        c = cpu_n or max(3, k // 3)
        try:
            wall[who] = timed_runs(argvs_of(who), k, cwd, env)
            cpu[who] = timed_runs(argvs_of(who), c, cwd, env, cpu=True,
                                  warmup=0)
        except Skip as e:
            b.note("%s %s: %s" % (label, who or "host", e))
    return wall, cpu


def cpu_note(b, label, cpu):
    """CPU ms of each column, a line under the table."""
    b.diag.append("CPU ms, %s (median, %s): %s" % (label, cpu_source(),
                  ", ".join("%s %.1f" % (w or "host", v)
                            for w, v in cpu.items())))


def rows_start_cpu(b):
    """CPU per start of `true`, beside the wall-time row."""
    n = max(20, RUNS * 10)
    cpu = {}
    for who in [None] + b.sandboxes():
        if left() < 20:
            b.note("start CPU: %s skipped (time budget)" % (who or "host"))
            continue
        try:
            cpu[who] = timed_runs([b.sandbox(who or "unshare", ["true"])],
                                  max(3, n // 10) if who == "srt" else n,
                                  b.path("ws"), cpu=True)
        except Skip as e:
            b.note("start CPU %s: %s" % (who or "unshare", e))
    floor = cpu.pop(None, None)
    b.row("start", "start: CPU per SANDBOX true", "ms CPU ↓", "lo", floor,
          cpu, "SANDBOX true, the CPU of all its processes per start (%s; "
          "floor: unshare -n true)" % cpu_source())
    rows_start_cpu_desktop(b, n)


# A /tmp as a desktop session has it (X's and systemd's directories, an
# ssh agent, tmux, Kerberos, D-Bus and editor sockets, a few mktemp -d
# folders and downloads): (name, mode, what it is: "file", "sock", or a
# directory's list of (name, "file" or "sock")).
DESKTOP_TMP = (
    [(".X11-unix", 0o1777, [("X0", "sock")]), (".ICE-unix", 0o1777, []),
     (".XIM-unix", 0o1777, []), (".font-unix", 0o1777, []),
     ("tmux-0", 0o700, [("default", "sock")]),
     ("ssh-XXXXa1b2c3", 0o700, [("agent.4242", "sock")]),
     ("krb5cc_0", 0o600, "file"), ("hsperfdata_root", 0o755, []),
     ("node-compile-cache", 0o755, []), ("dbus-4Rk2pQ", 0o600, "sock")] +
    [("systemd-private-0f3c-%s.service-a1B2c3" % u, 0o700, [])
     for u in ("colord", "upower", "fwupd")] +
    [("tmp.%s" % t, 0o700, [("notes", "file")])
     for t in ("Ab3dE6fGh1", "Zq9wX8cV7b", "Lm4nO5pQ6r")] +
    [("claude-%d-cwd" % i, 0o644, "file") for i in range(3)] +
    [("report-%d.pdf" % i, 0o644, "file") for i in range(4)] +
    [("vscode-ipc-%d.sock" % i, 0o755, "sock") for i in range(3)])


def make_entry(path, what):
    if what == "sock":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.close()
    elif what == "file":
        open(path, "w").close()
    else:
        os.mkdir(path)
        for name, kind in what:
            make_entry(os.path.join(path, name), kind)


def desktop_tmp(b):
    """A folder laid out as DESKTOP_TMP, on the workspace's file system."""
    d = b.path("desktop-tmp")
    if not os.path.isdir(d):
        os.mkdir(d)
        for name, mode, what in DESKTOP_TMP:
            make_entry(os.path.join(d, name), what)
            os.chmod(os.path.join(d, name), mode)
        os.chmod(d, 0o1777)
    return d


def rows_start_cpu_desktop(b, n):
    """The start's CPU with a desktop's /tmp (DESKTOP_TMP bound over /tmp
    in a mount namespace of the run's own): the look through /tmp scales
    with its entries, and a machine that runs test suites holds hundreds."""
    name = "start: CPU per SANDBOX true, a desktop's /tmp"
    if os.getuid() != 0 or shutil.which("unshare") is None:
        b.skip_row("start", name, "needs root and unshare(1) to bind a "
                   "/tmp of its own")
        return
    pre = ["unshare", "-m", "--propagation", "private", "sh", "-c",
           'mount --bind "$0" /tmp && exec "$@"', desktop_tmp(b)]
    cpu = {}
    for who in [None] + [w for w in b.sandboxes() if w != "srt"]:
        if left() < 20:
            b.note("start CPU, desktop /tmp: %s skipped (time budget)" %
                   (who or "host"))
            continue
        try:
            cpu[who] = timed_runs([b.sandbox(who or "unshare", ["true"])],
                                  n, b.path("ws"), cpu=True, pre=pre)
        except Skip as e:
            b.note("start CPU, desktop /tmp, %s: %s" % (who or "unshare", e))
    floor = cpu.pop(None, None)
    b.row("start", name, "ms CPU ↓", "lo", floor, cpu,
          "the row above with a /tmp of %d entries as a desktop has "
          "(bench/agentrows.py DESKTOP_TMP) bound over /tmp; srt not run" %
          len(DESKTOP_TMP))


def rows_claude(b):
    """Claude Code's line through pisbx-sh, against plain bash."""
    ws = b.path("ws")
    cfg = b.path("claude")
    ctmp = os.path.join(ws, ".claude-tmp")
    os.makedirs(os.path.join(cfg, "shell-snapshots"), exist_ok=True)
    os.makedirs(ctmp, exist_ok=True)
    snap = os.path.join(cfg, "shell-snapshots", "snapshot-bash-1-bench.sh")
    with open(snap, "w") as f:
        f.write(SNAPSHOT)
    line = CLAUDE_LINE % {"snap": snap, "cmd": shellq("f7; ls"),
                          "cwdf": os.path.join(ctmp, "claude-b3c4-cwd")}
    env = dict(os.environ, CLAUDE_CONFIG_DIR=cfg, CLAUDE_CODE_TMPDIR=ctmp,
               PISBX_CONFIG=b.path("pisbx.json"))

    def argv(who):
        # Claude Code runs `$SHELL -c LINE`, with a prefix
        # `$SHELL -c "PREFIX 'LINE'"`: bash first in every column.
        if who is None:
            return [["bash", "-c", line]]
        if who in OURS:
            return [["bash", "-c", "%s %s" % (sh_of(who), shellq(line))]]
        inner = b.sandbox(who, ["bash", "-c", line])
        return [["bash", "-c", " ".join(shellq(a) for a in inner)]]

    n = max(20, RUNS * 10)
    wall, cpu = each(b, "claude", n, argv, ws, env, srt_n=max(3, n // 10))
    floor = wall.pop(None, None)
    b.row("claude", "Claude Code's line (ls), through the shell", "ms ↓",
          "lo", floor, wall, "bash -c \"pisbx-sh 'LINE'\" as Claude Code runs "
          "it with CLAUDE_CODE_SHELL_PREFIX (LINE: its snapshot sourced, "
          "eval 'f7; ls', pwd -P >| the cwd file); bwrap, srt: bash -c "
          "\"SANDBOX bash -c 'LINE'\"; floor: bash -c 'LINE'")
    cpu_note(b, "Claude Code's line", cpu)
    if floor is not None and "pisbx" in wall:
        b.diag.append("Claude Code's line: pisbx-sh adds %.1f ms of wall "
                      "time and %.1f ms of CPU to bash's" % (
                          wall["pisbx"] - floor,
                          cpu.get("pisbx", 0) - cpu.get(None, 0)))


def mix_project(d):
    """A small Python project under git, as an agent finds one."""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "src"))
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("# demo\n\nA project for the bench's agent commands.\n")
    for i in range(1, 41):
        with open(os.path.join(d, "src", "m%02d.py" % i), "w") as f:
            f.write("VALUE = %d\n\n" % i + "".join(
                "def f%d(x):\n    # TODO: check x\n    return x + %d\n\n"
                % (k, k) for k in range(20)))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=b@bench.test"]
    run(git + ["init", "-q", d])
    run(git + ["-C", d, "add", "-A"])
    run(git + ["-C", d, "commit", "-qm", "initial"])


def rows_mix(b):
    """50 ordinary agent commands, one sandbox each."""
    proj = b.path("mixproj")
    mix_project(proj)

    def argv(who):
        return [b.sandbox(who, ["sh", "-c", c], cwd=proj) if who else
                ["sh", "-c", c] for c in MIX]

    wall, cpu = each(b, "mix", RUNS, argv, proj, srt_n=1, cpu_n=1)
    floor = wall.pop(None, None)
    b.row("mix", "50 agent commands, a sandbox each", "ms ↓", "lo", floor,
          wall, "SANDBOX sh -c CMD for each of 50 commands an agent runs "
          "(ls, cat, grep -rn, git status/diff/log/add, python3 -c, sed -i, "
          "tar, ...; bench/agentrows.py MIX) in a 40-file git project, the "
          "total; floor: sh -c CMD on the host")
    cpu_note(b, "50 agent commands", cpu)


def git_tree():
    """A git work tree of GIT_FILES committed files, made once."""
    stamp = os.path.join(GIT_DIR, ".bench-ready")
    if os.path.exists(stamp):
        return GIT_DIR
    shutil.rmtree(GIT_DIR, ignore_errors=True)
    for d in range(200):
        sub = os.path.join(GIT_DIR, "pkg%03d" % d)
        os.makedirs(sub)
        for i in range(GIT_FILES // 200):
            with open(os.path.join(sub, "f%03d.ts" % i), "w") as f:
                f.write("export const v%d = %d;\n" % (i, d * 1000 + i))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=b@bench.test",
           "-C", GIT_DIR]
    run(["git", "init", "-q", GIT_DIR])
    run(git + ["add", "-A"], timeout=300)
    run(git + ["commit", "-qm", "tree"], timeout=300)
    open(stamp, "w").close()
    return GIT_DIR


def rows_git(b):
    """git status on a 20,000-file work tree."""
    tree = git_tree()
    with open(os.path.join(tree, ".git", "info", "exclude"), "w") as f:
        f.write(".bench-ready\n")

    def argv(who):
        return [b.sandbox(who, ["git", "status", "--porcelain"], cwd=tree)
                if who else ["git", "status", "--porcelain"]]

    n = max(5, RUNS * 3)
    wall, cpu = each(b, "git status", n, argv, tree, srt_n=3)
    floor = wall.pop(None, None)
    b.row("git", "git status, 20,000 files", "ms ↓", "lo", floor, wall,
          "SANDBOX git status --porcelain in a work tree of %d committed "
          "files in 200 folders (start included; floor: on the host)"
          % GIT_FILES)
    cpu_note(b, "git status", cpu)
