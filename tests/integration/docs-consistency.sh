#!/bin/sh
# docs/ agrees with the programs, whatever options and keys are added:
# - each program's --help options are in its manual page, and every
#   option of the page's OPTIONS section is in --help;
# - every config key the loader knows (its key tables in policy/config.c
#   and policy/compat.c) is documented in docs/config.md and is a property
#   in conf/schema.json;
# - every message line the docs quote in an example ("pisbx-run: ...",
#   "pisbx-proxy: ...", "pisbx: ..." in a code block) still exists in the
#   sources: its longest fixed run of words is in a *.c file.
. "$(dirname "$0")/../lib/common.sh"

for p in pisbx-run pisbx-sh pisbx-proxy pisbx-supervisor; do
	"$PISBX_BINDIR/$p" --help >"$T/$p.help" 2>&1 ||
	    not_ok "$p --help exits 0"
done

echo '{}' >"$T/ok.json"
"$PISBX_BINDIR/pisbx-proxy" --config "$T/ok.json" --check >"$T/check.out" 2>&1

PISBX_BINDIR=$PISBX_BINDIR "$PY" - "$PISBX_TOP" "$T" <<'EOF'
import glob, os, re, sys

top, tmp = sys.argv[1], sys.argv[2]
fails = 0


def report(good, desc):
    global fails
    print(("ok - " if good else "not ok - ") + desc)
    if not good:
        fails += 1


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---- options ---------------------------------------------------------
OPT = r"(--[a-z][a-z0-9-]*|-[A-Za-z](?![A-Za-z0-9-]))"


def help_options(text):
    """Options a --help text names, wherever it names them."""
    return set(re.findall(r"(?:^|[\s\[|,(])" + OPT, text, re.M))


def man_plain(text):
    """A manual page as text: roff's \\- is -, mdoc's Fl x is -x."""
    text = text.replace("\\-", "-").replace("\\(em", "-")
    text = re.sub(r"\bFl (-?[A-Za-z][A-Za-z0-9-]*)", r"-\1", text)
    return text


def man_section(text, name):
    m = re.search(r"^\.S[Hh] " + name + r"\n(.*?)(?=^\.S[Hh] |\Z)", text,
                  re.S | re.M)
    return m.group(1) if m else None


def man_options(section):
    """The options a page's OPTIONS section lists: its .TP heads (man)
    or .It heads (mdoc)."""
    opts, lines = set(), section.splitlines()
    for i, line in enumerate(lines):
        head = None
        if line.startswith(".TP") and i + 1 < len(lines):
            head = lines[i + 1]
        elif line.startswith(".It "):
            head = line
        if head is None:
            continue
        head = man_plain(head)
        opts.update(re.findall(r"(?:^|[\s\"(,|])" + OPT, head))
    return opts


def has_option(text, opt):
    return re.search(r"(?:^|[^A-Za-z0-9-])" + re.escape(opt) +
                     r"(?![A-Za-z0-9-])", text, re.M) is not None


for p in ["pisbx-run", "pisbx-sh", "pisbx-proxy", "pisbx-supervisor"]:
    helptext = read(os.path.join(tmp, p + ".help"))
    page = read(os.path.join(top, "docs", p + ".1"))
    plain = man_plain(page)
    hopts = help_options(helptext)
    report(len(hopts) > 1, "%s --help: options found (%s)" %
           (p, " ".join(sorted(hopts))))
    for o in sorted(hopts):
        report(has_option(plain, o), "%s --help's %s is in %s(1)" % (p, o, p))
    sec = man_section(page, "OPTIONS")
    if sec is None:
        continue
    mopts = man_options(sec)
    report(len(mopts) > 1, "%s(1) OPTIONS: options found (%s)" %
           (p, " ".join(sorted(mopts))))
    for o in sorted(mopts):
        report(has_option(helptext, o),
               "%s(1) OPTIONS's %s is in %s --help" % (p, o, p))

# ---- config keys -----------------------------------------------------
keys = set()
config_c = read(os.path.join(top, "policy", "config.c"))
compat_c = read(os.path.join(top, "policy", "compat.c"))
# static const char *const keys_x[] = { "a", "b", NULL }; and the
# toolchain and cache name tables ([T_X] = "name").
for body in re.findall(r"const char\s*\*const\s+\w+\[\]\s*=\s*\{(.*?)\};",
                       config_c + compat_c, re.S):
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    keys.update(re.findall(r'"([^"]+)"', body))
# compat.c's tables: { "key", CT_..., CA_..., "why" }
keys.update(re.findall(r'\{\s*"([A-Za-z$][A-Za-z0-9]*)",\s*CT_', compat_c))
report(len(keys) > 50, "config keys found in the loader: %d" % len(keys))
configmd = read(os.path.join(top, "docs", "config.md"))
schema = read(os.path.join(top, "conf", "schema.json"))
for k in sorted(keys):
    documented = re.search(r"`(?:[^`\s]*\.)?" + re.escape(k) +
                           r"(?:[.`\[ :(]|$)", configmd, re.M)
    report(documented is not None,
           "config key %s is documented in docs/config.md" % k)
    report('"%s":' % k in schema,
           "config key %s is a property in conf/schema.json" % k)

# ---- quoted messages -------------------------------------------------
src = ""
for d in ["approval", "common", "launcher", "policy", "proxy", "supervisor"]:
    for f in sorted(glob.glob(os.path.join(top, d, "**", "*.c"), recursive=True)):
        src += read(f)
# adjacent string literals are one string
src = re.sub(r'"\s*\n\s*"', "", src)
src = src.replace('\\"', '"')


def code_lines(path, text):
    """Lines inside a code block: ``` fences (markdown), .nf/.fi, .EX/.EE
    and .Bd/.Ed (manual pages)."""
    inside = False
    for line in text.splitlines():
        if path.endswith(".md"):
            if line.startswith("```"):
                inside = not inside
                continue
        else:
            if re.match(r"^\.(nf|EX|Bd)\b", line):
                inside = True
                continue
            if re.match(r"^\.(fi|EE|Ed)\b", line):
                inside = False
                continue
            line = man_plain(line)
        if inside:
            yield line


def variable(word):
    """A word a program fills in: a path, number, name with digits, a
    quoted value, an upper-case method or name."""
    return re.search(r"[0-9/\"'$=@~<>{}\[\]]", word) is not None or \
        re.fullmatch(r"[A-Z][A-Z_]{2,}[:;,.]?", word) is not None or \
        re.search(r"[a-z]\.[a-z]", word) is not None


def fixed_runs(msg):
    """msg's runs of words with nothing filled in; a run also ends after
    a word ending in ':' or ';' (where a message's parts meet)."""
    runs, cur = [], []
    for w in msg.split():
        if variable(w):
            runs.append(cur)
            cur = []
            continue
        cur.append(w)
        if w[-1] in ":;":
            runs.append(cur)
            cur = []
    runs.append(cur)
    return runs


def found(msg):
    """None when msg has no run of 4 fixed words; else the longest run
    and whether one of its 4-word windows is in the sources."""
    run = max(fixed_runs(msg), key=len)
    if len(run) < 4:
        return None
    wins = [" ".join(run[i:i + 4]) for i in range(len(run) - 3)]
    return " ".join(run), any(w in src for w in wins)


docs = sorted(glob.glob(os.path.join(top, "docs", "*.md")) +
              glob.glob(os.path.join(top, "docs", "*.1")) +
              [os.path.join(top, "README.md")])
nquoted = 0
for path in docs:
    for line in code_lines(path, read(path)):
        m = re.match(r"^(pisbx(?:-run|-sh|-proxy|-supervisor)?): (.*)$",
                     line.strip())
        if m is None:
            continue
        r = found(m.group(2))
        if r is None:
            continue
        nquoted += 1
        report(r[1], "%s quotes a message the sources still print: "
               "%s: ...%s..." % (os.path.relpath(path, top), m.group(1),
                                  r[0]))
report(nquoted > 3, "quoted messages found in the docs: %d" % nquoted)

# ---- "see pisbx-run(1), SECTION" in messages and docs ----------------
sections = {}
for page in glob.glob(os.path.join(top, "docs", "pisbx-*.1")):
    name = os.path.basename(page)[:-2]
    sections[name] = set(h.strip().strip('"') for h in
                         re.findall(r"^\.S[Hh] (.*)$", read(page), re.M))
refs = set()
text = src + "".join(read(p) for p in docs)
for m in re.finditer(r"(pisbx-[a-z]+)\(1\),? ([A-Z][A-Z-]+(?: [A-Z][A-Z-]+)*)",
                     text):
    refs.add((m.group(1), m.group(2)))
report(len(refs) > 2, "section references found: %d" % len(refs))
for page, sec in sorted(refs):
    report(sec in sections.get(page, ()),
           "%s(1) has the section %s that a message or page names" %
           (page, sec))

# ---- examples of --check and --explain -------------------------------
# What --check prints for a good file, with the file's name in place.
check_out = read(os.path.join(tmp, "check.out")).strip()
check_fmt = check_out.replace(os.path.join(tmp, "ok.json"), "FILE")
report(check_fmt == "FILE: configuration OK",
       "--check prints FILE: configuration OK (%r)" % check_out)
import json, subprocess
proxy = os.path.join(os.environ["PISBX_BINDIR"], "pisbx-proxy")
nexplain = 0
for path in docs:
    lines = list(code_lines(path, read(path)))
    rel = os.path.relpath(path, top)
    for i, line in enumerate(lines):
        if "configuration OK" in line:
            report(re.match(r"^\S.*: configuration OK$", line) is not None,
                   "%s shows --check's line as it prints it: %r" %
                   (rel, line))
        m = re.match(r"^\$ pisbx-proxy --config conf/example.json "
                     r"--explain '?([^' ]+)'?$", line)
        if m is None or i + 1 >= len(lines):
            continue
        nexplain += 1
        got = subprocess.run([proxy, "--config",
                              os.path.join(top, "conf/example.json"),
                              "--explain", m.group(1)], capture_output=True,
                             text=True).stdout
        want = list(json.loads(got))
        shown = list(json.loads(lines[i + 1]))
        report(shown == want, "%s: --explain %s shows the keys it prints "
               "(shown %s, printed %s)" % (rel, m.group(1),
                                           ",".join(shown), ",".join(want)))
report(nexplain > 2, "--explain examples found in the docs: %d" % nexplain)

# ---- the docs describe the product, not its making -------------------
history = re.compile(r"\bissues? #?[0-9]|\bredteam\b|\bengineers?\b|"
                     r"\b(?:commit|main at) [0-9a-f]{7,}\b|\bround [0-9]+\b",
                     re.I)
for path in docs:
    for n, line in enumerate(read(path).splitlines(), 1):
        m = history.search(line)
        if m:
            report(False, "%s:%d speaks of the project's history: %r" %
                   (os.path.relpath(path, top), n, m.group(0)))
sys.exit(1 if fails else 0)
EOF
[ $? -eq 0 ] || _nfail=$((_nfail + 1))

done_testing
