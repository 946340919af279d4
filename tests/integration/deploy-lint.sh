#!/bin/sh
# conf/deploy/: the Kubernetes manifest passes yamllint (strict) and
# parses; the config in its ConfigMap loads with pisbx-proxy --check;
# the ports agree everywhere they are named (the config's listeners,
# the container's ports, the probes, the Service, the Prometheus
# annotation, the Containerfile's EXPOSE); the config's mount path is
# the one the arguments name; and the Containerfile is built FROM
# Debian 12, installs pisbx's .deb and runs what the package installs.
# No registry is reachable here: the image itself is not built.
# (systemd-analyze verify of the units is install-destdir.sh's.)
. "$(dirname "$0")/../lib/common.sh"
[ -x "$PROXY" ] || skip "pisbx-proxy not built"
command -v yamllint >/dev/null || skip "yamllint missing (Debian package yamllint)"
$PY -c 'import yaml' 2>/dev/null || skip "python3-yaml missing (Debian package python3-yaml)"
D=$PISBX_TOP/conf/deploy

out=$(yamllint -s -f parsable "$D/pisbx-proxy.yaml" 2>&1)
eq() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (got '$2', want '$3')"; fi; }
eq "yamllint -s: nothing to say" "$out" ""

# The checks in Python, one "ok"/"not ok" line each; the ConfigMap's
# config is written out for --check.
$PY - "$D/pisbx-proxy.yaml" "$D/Containerfile" "$T/proxy.json" <<'PYEOF'
import json, re, sys
import yaml

manifest, containerfile, confout = sys.argv[1:4]
fails = 0


def report(good, desc):
    global fails
    print(("ok - " if good else "not ok - ") + desc)
    if not good:
        fails += 1


docs = [d for d in yaml.safe_load_all(open(manifest)) if d is not None]
kinds = {d["kind"]: d for d in docs}
report(sorted(kinds) == ["ConfigMap", "Deployment", "Service"],
       "manifest: a ConfigMap, a Deployment and a Service (%s)" %
       ", ".join(sorted(kinds)))
cm, dep, svc = kinds["ConfigMap"], kinds["Deployment"], kinds["Service"]
conf = json.loads(cm["data"]["proxy.json"])
open(confout, "w").write(cm["data"]["proxy.json"])


def port_of(addr):
    return int(addr.rsplit(":", 1)[1])


proxy_port = port_of(conf["proxy"]["listen"][0])
metrics_port = port_of(conf["proxy"]["metrics"]["listen"])

pod = dep["spec"]["template"]
report(dep["spec"]["selector"]["matchLabels"].items() <=
       pod["metadata"]["labels"].items(),
       "Deployment: its selector matches its pods' labels")
report(svc["spec"]["selector"].items() <= pod["metadata"]["labels"].items(),
       "Service: its selector matches the pods' labels")
c = pod["spec"]["containers"][0]
cports = {p["name"]: p["containerPort"] for p in c["ports"]}
report(cports == {"proxy": proxy_port, "metrics": metrics_port},
       "container ports are the config's listeners (%s)" % cports)
for probe in ("readinessProbe", "livenessProbe"):
    pr = c[probe]
    port = (pr.get("tcpSocket") or pr.get("httpGet"))["port"]
    report(port in cports, "%s names a container port (%s)" % (probe, port))
report(c["livenessProbe"]["httpGet"]["path"] == "/metrics",
       "the liveness probe asks GET /metrics (anything else is 404)")
sports = {p["name"]: (p["port"], p["targetPort"]) for p in svc["spec"]["ports"]}
report(sports == {"proxy": (proxy_port, "proxy"),
                  "metrics": (metrics_port, "metrics")},
       "Service ports match (%s)" % sports)
ann = svc["metadata"]["annotations"]
report(ann["prometheus.io/port"] == str(metrics_port) and
       ann["prometheus.io/path"] == "/metrics",
       "the Prometheus annotation names the metrics port")
args = c["args"]
cfg = args[args.index("--config") + 1]
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["spec"]["volumes"]}
mdir = cfg.rsplit("/", 1)[0]
report(mdir in mounts and
       vols[mounts[mdir]]["configMap"]["name"] == cm["metadata"]["name"] and
       cfg.rsplit("/", 1)[1] in cm["data"],
       "--config %s is the ConfigMap's file, mounted" % cfg)
sc = c["securityContext"]
report(sc["readOnlyRootFilesystem"] and sc["capabilities"]["drop"] == ["ALL"]
       and not sc["allowPrivilegeEscalation"] and
       pod["spec"]["securityContext"]["runAsNonRoot"],
       "the container runs unprivileged, read-only, without capabilities")

text = open(containerfile).read()
lines = [l.strip() for l in re.sub(r"\\\n", " ", text).splitlines()
         if l.strip() and not l.lstrip().startswith("#")]
instr = [l.split(None, 1) for l in lines]
report(instr[0][0] == "FROM" and instr[0][1].startswith("debian:bookworm"),
       "Containerfile: FROM debian:bookworm (%s)" % instr[0][1])
known = {"FROM", "COPY", "RUN", "EXPOSE", "USER", "ENTRYPOINT", "CMD"}
report(all(i[0] in known for i in instr),
       "Containerfile: only known instructions")
run = " ".join(i[1] for i in instr if i[0] == "RUN")
report("apt-get install" in run and "pisbx_" in run and ".deb" in run,
       "Containerfile installs pisbx's .deb")
expose = [int(p) for i in instr if i[0] == "EXPOSE" for p in i[1].split()]
report(sorted(expose) == sorted([proxy_port, metrics_port]),
       "Containerfile EXPOSE %s = the config's ports" % expose)
entry = json.loads(dict((i[0], i[1]) for i in instr)["ENTRYPOINT"])
cmd = json.loads(dict((i[0], i[1]) for i in instr)["CMD"])
report(entry == ["/usr/bin/pisbx-proxy"],
       "ENTRYPOINT is where the package installs pisbx-proxy (PREFIX=/usr)")
report(cmd == args, "the image's CMD is the Deployment's args")
user = dict((i[0], i[1]) for i in instr)["USER"]
report(user.split(":")[0] != "0" and user.split(":")[0] != "root",
       "Containerfile: not root (USER %s)" % user)
sys.exit(1 if fails else 0)
PYEOF
[ $? -eq 0 ] || _nfail=$((_nfail + 1))

out=$("$PROXY" --config "$T/proxy.json" --check 2>&1)
eq "the ConfigMap's config loads (--check)" "$out" "$T/proxy.json: configuration OK"
# And its policy does what the manifest's comment promises.
out=$("$PROXY" --config "$T/proxy.json" --explain uploads.github.com:443 2>&1)
contains() { case $2 in *"$3"*) ok "$1" ;; *) not_ok "$1 ($2)" ;; esac; }
contains "its policy denies uploads.github.com" "$out" "deny"
done_testing
