"""Run a program on a fresh pty, with a second pty of the caller's beside.

  ptyrun.py OUT -- PROGRAM [ARG...]

Opens a pty that stands for another terminal of the caller's (another
window), then the program's: PROGRAM runs as a session leader with that
pty as its controlling terminal and stdin, stdout and stderr.  Their
names are in PROGRAM's environment as PTYRUN_MINE and PTYRUN_OTHER.
OUT gets "mine NAME", "other NAME", what PROGRAM wrote (CR LF made LF),
"exit N", and "other-got N": how many bytes reached the other terminal.
Everything stops after 60 seconds ("timeout").
"""
import os
import select
import signal
import sys
import termios
import fcntl
import time


def main():
    out = sys.argv[1]
    argv = sys.argv[sys.argv.index("--") + 1:]
    om, os_ = os.openpty()
    mm, ms = os.openpty()
    mine, other = os.ttyname(ms), os.ttyname(os_)
    os.set_inheritable(os_, False)
    os.set_inheritable(om, False)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.close(mm)
        fcntl.ioctl(ms, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(ms, fd)
        os.closerange(3, 1024)
        env = dict(os.environ, PTYRUN_MINE=mine, PTYRUN_OTHER=other)
        os.execvpe(argv[0], argv, env)
    os.close(ms)
    text = b""
    status = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r, _, _ = select.select([mm], [], [], 0.2)
        if r:
            try:
                d = os.read(mm, 4096)
            except OSError:
                d = b""
            if not d:
                break
            text += d
        elif status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
    while status is None and time.monotonic() < deadline:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        else:
            time.sleep(0.05)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    os.set_blocking(om, False)
    try:
        got = len(os.read(om, 4096))
    except OSError:
        got = 0
    with open(out, "w") as f:
        f.write("mine %s\nother %s\n" % (mine, other))
        f.write(text.decode(errors="replace").replace("\r\n", "\n"))
        if status is None:
            f.write("timeout\n")
        else:
            f.write("exit %d\n" % os.waitstatus_to_exitcode(status))
        f.write("other-got %d\n" % got)


main()
