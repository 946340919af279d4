"""A job-control shell in a fresh pty, for pisbx-run's terminal tests.

  jobshell.py OUT [--key BYTES] [--when FILE] [--null] -- PROGRAM [ARG...]

Forks a pty (the child is a session leader with the pty as its
controlling terminal) and, in that session, runs PROGRAM the way an
interactive shell runs a foreground job: in its own process group, given
the terminal.  When FILE exists (PROGRAM's "ready"), BYTES are typed at
the terminal once (\\x03 is ^C, \\x1a is ^Z).  --null: PROGRAM's stdin,
stdout and stderr are /dev/null, as an agent whose own interface holds
the terminal runs its commands.  The shell waits with
WUNTRACED: a stopped job is noted, the terminal taken back, then given
again and the job continued, as "fg" does.  OUT gets one line per event:
"stopped SIGTSTP", "exit N", then "terminal caller" when the terminal's
foreground is the job's group again after it ended ("terminal other"
otherwise).  Everything stops after 60 seconds ("timeout").
"""
import os
import pty
import select
import signal
import sys
import time


def shell(out, argv, null):
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.tcsetpgrp(0, os.getpid())
        if null:
            fd = os.open(os.devnull, os.O_RDWR)
            for i in range(3):
                os.dup2(fd, i)
        signal.signal(signal.SIGTTOU, signal.SIG_DFL)
        os.execvp(argv[0], argv)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass
    os.tcsetpgrp(0, pid)
    lines = []
    while True:
        _, st = os.waitpid(pid, os.WUNTRACED)
        if os.WIFSTOPPED(st):
            lines.append("stopped " + signal.Signals(os.WSTOPSIG(st)).name)
            os.tcsetpgrp(0, os.getpgrp())
            os.tcsetpgrp(0, pid)
            os.killpg(pid, signal.SIGCONT)
            continue
        lines.append("exit %d" % os.waitstatus_to_exitcode(st))
        break
    lines.append("terminal " + ("caller" if os.tcgetpgrp(0) == pid
                                else "other"))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    args = sys.argv[1:]
    out, key, when, null = args[0], None, None, False
    args = args[1:]
    while args[0] != "--":
        if args[0] == "--null":
            null = True
            args = args[1:]
            continue
        if args[0] == "--key":
            key = args[1].encode().decode("unicode_escape").encode("latin1")
        elif args[0] == "--when":
            when = args[1]
        args = args[2:]
    argv = args[1:]
    pid, fd = pty.fork()
    if pid == 0:
        try:
            shell(out, argv, null)
        finally:
            os._exit(0)
    deadline = time.monotonic() + 60
    while True:
        if key is not None and (when is None or os.path.exists(when)):
            os.write(fd, key)
            key = None
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            with open(out, "a") as f:
                f.write("timeout\n")
            break
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                if not os.read(fd, 65536):
                    break
            except OSError:
                break
        wpid, _ = os.waitpid(pid, os.WNOHANG)
        if wpid == pid:
            pid = 0
            break
    if pid:
        os.waitpid(pid, 0)
    os.close(fd)


main()
