#!/usr/bin/python3
"""Run one command line of a systemd unit file the way systemd would start
it, without systemd: for tests of the units pisbx ships.

    unitexec.py UNIT KEY      (KEY: ExecStartPre, ExecStart, ExecReload)

What it does, from the unit's [Service] section: UMask=; RuntimeDirectory=
and LogsDirectory= made (with their modes) under $SD_RUNTIME and $SD_LOGS
and passed as $RUNTIME_DIRECTORY / $LOGS_DIRECTORY; Environment= and
EnvironmentFile= (a leading "-": optional) read into the environment; in
the command line the specifiers %t, %E, %h and %% ($SD_t, $SD_E, $HOME),
"$$" for "$", ${VAR} anywhere and $VAR as a whole word; then the words are
split as systemd splits them and the program is exec'ed (same PID).

Only what pisbx's units use is understood: an unknown specifier, a
backslash (systemd's C escapes are not emulated), an Exec prefix (-@+!:)
or a second line for KEY is an error, never a guess.
"""
import os
import re
import shlex
import sys


def fail(msg):
    sys.exit("unitexec: " + msg)


def specifiers(text):
    table = {"t": os.environ.get("SD_t"), "E": os.environ.get("SD_E"),
             "h": os.environ.get("HOME"), "%": "%"}

    def one(m):
        v = table.get(m.group(1))
        if v is None:
            fail("specifier %%%s is not emulated (or its SD_ variable "
                 "is not set)" % m.group(1))
        return v
    return re.sub(r"%(.)", one, text)


def variables(text, env):
    text = text.replace("$$", "\0")

    def one(m):
        if m.group(1) not in env:
            fail("${%s} is not set" % m.group(1))
        return env[m.group(1)]
    text = re.sub(r"\$\{(\w+)\}", one, text)
    return text


def main():
    if len(sys.argv) != 3:
        fail("usage: unitexec.py UNIT KEY")
    unit, key = sys.argv[1], sys.argv[2]
    service = {}
    section = None
    for line in open(unit):
        line = line.rstrip("\n")
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if section != "Service" or not line or line[0] in "#;":
            continue
        k, _, v = line.partition("=")
        service.setdefault(k, []).append(v)
    if len(service.get(key, [])) != 1:
        fail("%s: want exactly one %s= line" % (unit, key))

    env = dict(os.environ)
    umask = service.get("UMask", ["0022"])[-1]
    os.umask(int(umask, 8))
    for k, root, var in (("RuntimeDirectory", "SD_RUNTIME", "RUNTIME_DIRECTORY"),
                         ("LogsDirectory", "SD_LOGS", "LOGS_DIRECTORY")):
        for name in service.get(k, []):
            base = os.environ.get(root)
            if base is None:
                fail("%s= needs $%s" % (k, root))
            path = os.path.join(base, name)
            os.makedirs(path, exist_ok=True)
            os.chmod(path, int(service.get(k + "Mode", ["0755"])[-1], 8))
            env[var] = path
    for v in service.get("Environment", []):
        for word in shlex.split(specifiers(v)):
            n, _, val = word.partition("=")
            env[n] = val
    for v in service.get("EnvironmentFile", []):
        optional = v.startswith("-")
        path = specifiers(v[1:] if optional else v)
        if not os.path.exists(path):
            if optional:
                continue
            fail("EnvironmentFile %s is missing" % path)
        for line in open(path):
            line = line.strip()
            if line and line[0] not in "#;":
                n, _, val = line.partition("=")
                env[n] = val

    cmd = service[key][0]
    if "\\" in cmd:
        fail("%s has a backslash: C escapes are not emulated" % key)
    if cmd[:1] in "-@+!:":
        fail("%s: the prefix %s is not emulated" % (key, cmd[0]))
    words = shlex.split(variables(specifiers(cmd), env))
    argv = []
    for w in words:
        m = re.fullmatch(r"\$(\w+)", w)
        if m:
            if m.group(1) not in env:
                fail("$%s is not set" % m.group(1))
            argv.extend(env[m.group(1)].split())
        else:
            argv.append(w.replace("\0", "$"))
    os.execvpe(argv[0], argv, env)


main()
