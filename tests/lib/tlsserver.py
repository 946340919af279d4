#!/usr/bin/env python3
"""HTTPS (or plain HTTP) test servers on 127.0.0.1 for the TLS scenarios.

    tlsserver.py MODE [--cert PEM --key PEM | --plain] [--port-file F]
                 [--log FILE] [--root DIR] [--port N] [--auth VALUE]...

Listens on 127.0.0.1, port 0 (or --port); prints the port on stdout
(and writes it to --port-file, atomically).  Threaded; SIGTERM stops it
(the scenario kills it by PID).  Every request is appended to --log as
one JSON line: method, path, version, headers (as sent), "auth" (a Basic
credential decoded to "user:password", or the token of any other scheme:
Bearer, gh's "token X"), body (text, invalid UTF-8 replaced), and for
the modes that keep state an "action" naming what the request did
(publish, upload, push, receive-pack...).  With --auth VALUE
(repeatable), a request whose credential is none of them gets 401 and a
Basic challenge (action "unauthorised"), as a private server would.

MODE:
  echo      any method: 200, the body is the request line, the headers and
            the body as received.
  git       smart HTTP: a CGI to git-http-backend with GIT_PROJECT_ROOT=
            --root and GIT_HTTP_EXPORT_ALL, receive-pack enabled (so that
            without pisbx a push works).
  npm       a minimal registry: GET /PKG metadata pointing to a tarball on
            this server (the Host the client used), GET the tarball,
            PUT /PKG (publish) 200; other names (--package) are 404.
  pypi      GET /simple/PKG/ an index naming one wheel, GET the wheel,
            POST / (the legacy upload API) 200.
  registry  OCI distribution: GET /v2/, manifests and blobs 200; POST,
            PATCH blobs/uploads 202, PUT uploads and manifests 201.
  gh        the REST API as the GitHub CLI reads it: GET /user (github.com's
            api host) or /api/v3/user (an Enterprise host) answers the
            user as JSON; any other path is a JSON 404.  gh sends
            "Authorization: token X": --auth compares X.
Python 3 standard library only.
"""
import argparse
import base64
import gzip
import hashlib
import http.server
import io
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import tarfile
import threading
import uuid
import zipfile

GIT_BACKEND = "/usr/lib/git-core/git-http-backend"
MAX_BODY = 64 << 20

log_lock = threading.Lock()
args = None


def log_request(rec):
    if not args.log:
        return
    line = json.dumps(rec, sort_keys=True) + "\n"
    with log_lock:
        with open(args.log, "a", encoding="utf-8") as f:
            f.write(line)


def decode_auth(value):
    """A Basic credential as "user:password", a Bearer token as is."""
    if not value:
        return None
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(rest.strip()).decode("utf-8", "replace")
        except ValueError:
            return "(bad base64) " + rest
    return rest.strip()


def npm_tarball(name):
    """A package tarball: package/package.json and package/index.js."""
    files = {
        "package/package.json": json.dumps(
            {"name": name, "version": "1.0.0", "main": "index.js"}),
        "package/index.js":
            "module.exports = 'installed through pisbx';\n",
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as t:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            t.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def wheel(name):
    """A wheel NAME-1.0-py3-none-any.whl with one module, NAME_: VALUE."""
    name = re.sub(r"[-_.]+", "-", name).lower()
    mod = name.replace("-", "_")
    dist = mod + "-1.0.dist-info"
    files = {
        mod + ".py": "VALUE = 'installed through pisbx'\n",
        dist + "/METADATA":
            "Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name,
        dist + "/WHEEL":
            "Wheel-Version: 1.0\nGenerator: pisbx\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n",
    }
    rec = []
    for k, v in files.items():
        d = base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest())
        rec.append("%s,sha256=%s,%d" % (k, d.decode().rstrip("="), len(v)))
    rec.append(dist + "/RECORD,,")
    files[dist + "/RECORD"] = "\n".join(rec) + "\n"
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        for k, v in files.items():
            z.writestr(zipfile.ZipInfo(k, (1980, 1, 1, 0, 0, 0)), v)
    return mod + "-1.0-py3-none-any.whl", raw.getvalue()


# The OCI image a "registry" serves: one config blob, one layer blob.
OCI_CONFIG = b'{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}'
OCI_LAYER = gzip.compress(b"pisbx test layer\n", mtime=0)


def digest(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


OCI_BLOBS = {digest(OCI_CONFIG): OCI_CONFIG, digest(OCI_LAYER): OCI_LAYER}
OCI_MANIFEST = json.dumps({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
               "digest": digest(OCI_CONFIG), "size": len(OCI_CONFIG)},
    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                "digest": digest(OCI_LAYER), "size": len(OCI_LAYER)}],
}).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "pisbx-tlsserver"

    def log_message(self, fmt, *a):
        pass

    # -- request plumbing ------------------------------------------------
    def read_body(self):
        """The request body, Content-Length or chunked."""
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            out = bytearray()
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    raise ConnectionError("EOF in a chunked body")
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                out += self.rfile.read(size)
                self.rfile.readline(8)
                if len(out) > MAX_BODY:
                    raise ConnectionError("body too large")
            return bytes(out)
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            raise ConnectionError("body too large")
        return self.rfile.read(n) if n else b""

    def reply(self, code, body=b"", ctype="text/plain", headers=()):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def base_url(self):
        scheme = "http" if args.plain else "https"
        return "%s://%s" % (scheme, self.headers.get("Host", "127.0.0.1"))

    def handle_any(self):
        body = self.read_body()
        rec = {
            "method": self.command, "path": self.path,
            "version": self.request_version,
            "headers": [[k, v] for k, v in self.headers.items()],
            "auth": decode_auth(self.headers.get("Authorization")),
            "body": body.decode("utf-8", "replace"),
            "body_len": len(body),
        }
        if args.auth is not None and rec["auth"] not in args.auth:
            # As a private server would: no credential, or another
            # one (an unswapped placeholder), gets a challenge.
            self.reply(401, "credentials required\n", headers=[
                ("WWW-Authenticate", 'Basic realm="pisbx-test"')])
            rec["action"] = "unauthorised"
            log_request(rec)
            return
        action = getattr(self, "mode_" + args.mode)(body)
        if action:
            rec["action"] = action
        log_request(rec)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any
    do_OPTIONS = handle_any

    # -- modes -------------------------------------------------------------
    def mode_echo(self, body):
        head = "%s %s %s\n" % (self.command, self.path, self.request_version)
        head += "".join("%s: %s\n" % kv for kv in self.headers.items())
        self.reply(200, head.encode() + b"\n" + body)
        return None

    def mode_git(self, body):
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": args.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            # Receive-pack enabled without REMOTE_USER, as a server
            # that lets anyone push would: pisbx's rules must stop it.
            "GIT_CONFIG_COUNT": "2",
            "GIT_CONFIG_KEY_0": "http.receivepack",
            "GIT_CONFIG_VALUE_0": "true",
            "GIT_CONFIG_KEY_1": "safe.directory",
            "GIT_CONFIG_VALUE_1": "*",
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": args.root,
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "SERVER_PROTOCOL": "HTTP/1.1",
            "GATEWAY_INTERFACE": "CGI/1.1",
        }
        for k in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(k):
                env["HTTP_" + k.upper().replace("-", "_")] = self.headers[k]
        p = subprocess.run([GIT_BACKEND], input=body, env=env,
                           capture_output=True, timeout=60)
        head, _, out = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, out = p.stdout.partition(b"\n\n")
        code, hdrs, ctype = 200, [], "text/plain"
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            v = v.strip()
            if k.lower() == "status":
                code = int(v.split()[0])
            elif k.lower() == "content-type":
                ctype = v
            elif k and k.lower() != "content-length":
                hdrs.append((k, v))
        if p.returncode != 0 and not p.stdout:
            code, out = 500, p.stderr
        self.reply(code, out, ctype, hdrs)
        if path.endswith("/git-receive-pack") and self.command == "POST":
            return "receive-pack"
        if path.endswith("/git-upload-pack") and self.command == "POST":
            return "upload-pack"
        return None

    def mode_npm(self, body):
        path = self.path.split("?")[0]
        m = re.fullmatch(r"/([a-z0-9][a-z0-9._-]*)", path)
        if m and m.group(1) in args.package and self.command in ("GET", "HEAD"):
            name = m.group(1)
            tgz = npm_tarball(name)
            url = "%s/%s/-/%s-1.0.0.tgz" % (self.base_url(), name, name)
            meta = {
                "name": name, "dist-tags": {"latest": "1.0.0"},
                "versions": {"1.0.0": {
                    "name": name, "version": "1.0.0",
                    "dist": {
                        "tarball": url,
                        "shasum": hashlib.sha1(tgz).hexdigest(),
                        "integrity": "sha512-" + base64.b64encode(
                            hashlib.sha512(tgz).digest()).decode(),
                    }}},
            }
            self.reply(200, json.dumps(meta), "application/json")
            return None
        m = re.fullmatch(r"/([a-z0-9][a-z0-9._-]*)/-/\1-1\.0\.0\.tgz", path)
        if m and m.group(1) in args.package and self.command in ("GET", "HEAD"):
            self.reply(200, npm_tarball(m.group(1)), "application/octet-stream")
            return None
        if self.command == "PUT" and re.fullmatch(r"/[^/]+", path):
            self.reply(200, '{"ok":true}', "application/json")
            return "publish"
        if self.command == "DELETE":
            self.reply(200, '{"ok":true}', "application/json")
            return "unpublish"
        self.reply(404, '{"error":"not found"}', "application/json")
        return None

    def mode_pypi(self, body):
        path = self.path.split("?")[0]
        m = re.fullmatch(r"/simple/([A-Za-z0-9._-]+)/?", path)
        if m and self.command in ("GET", "HEAD"):
            fname, data = wheel(m.group(1))
            html = ('<!DOCTYPE html><html><body><a href="/files/%s#sha256=%s">'
                    '%s</a></body></html>\n' %
                    (fname, hashlib.sha256(data).hexdigest(), fname))
            self.reply(200, html, "text/html")
            return None
        m = re.fullmatch(r"/files/([a-z0-9_]+)-1\.0-py3-none-any\.whl", path)
        if m and self.command in ("GET", "HEAD"):
            self.reply(200, wheel(m.group(1))[1], "application/octet-stream")
            return None
        if self.command == "POST" and path in ("/", "/legacy/"):
            self.reply(200, "OK\n")
            return "upload"
        self.reply(404, "not found\n")
        return None

    def mode_registry(self, body):
        path = self.path.split("?")[0]
        if path in ("/v2/", "/v2") and self.command in ("GET", "HEAD"):
            self.reply(200, "{}", "application/json",
                       [("Docker-Distribution-API-Version", "registry/2.0")])
            return None
        m = re.fullmatch(r"/v2/(.+)/(manifests|blobs)/([^/]+)", path)
        if m and self.command in ("GET", "HEAD"):
            if m.group(2) == "manifests":
                self.reply(200, OCI_MANIFEST,
                           "application/vnd.oci.image.manifest.v1+json",
                           [("Docker-Content-Digest", digest(OCI_MANIFEST))])
            elif m.group(3) in OCI_BLOBS:
                self.reply(200, OCI_BLOBS[m.group(3)],
                           "application/octet-stream",
                           [("Docker-Content-Digest", m.group(3))])
            else:
                self.reply(404, '{"errors":[{"code":"BLOB_UNKNOWN"}]}',
                           "application/json")
            return None
        m = re.fullmatch(r"/v2/(.+)/blobs/uploads/([^/]*)", path)
        if m and self.command in ("POST", "PATCH"):
            loc = "/v2/%s/blobs/uploads/%s" % (m.group(1),
                                               m.group(2) or uuid.uuid4().hex)
            self.reply(202, "", headers=[("Location", loc), ("Range", "0-0")])
            return "blob-upload"
        if m and self.command == "PUT":
            self.reply(201, "", headers=[("Docker-Content-Digest",
                                          digest(body))])
            return "blob-upload"
        m = re.fullmatch(r"/v2/(.+)/manifests/([^/]+)", path)
        if m and self.command == "PUT":
            self.reply(201, "", headers=[("Docker-Content-Digest",
                                          digest(body))])
            return "manifest-push"
        if self.command == "DELETE":
            self.reply(202, "")
            return "delete"
        self.reply(404, '{"errors":[{"code":"NAME_UNKNOWN"}]}',
                   "application/json")
        return None

    def mode_gh(self, body):
        path = self.path.split("?")[0]
        if path in ("/user", "/api/v3/user") and self.command in ("GET", "HEAD"):
            self.reply(200, json.dumps({"login": "pisbx-test", "id": 20,
                                        "type": "User"}),
                       "application/json; charset=utf-8",
                       [("X-GitHub-Media-Type", "github.v3; format=json")])
            return "user"
        self.reply(404, json.dumps({"message": "Not Found"}),
                   "application/json; charset=utf-8")
        return None


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ctx = None

    def finish_request(self, request, client_address):
        # The handshake runs in the connection's own thread: a client
        # that stalls it holds up nobody else.
        request.settimeout(30)
        if self.ctx is not None:
            try:
                request = self.ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
        try:
            super().finish_request(request, client_address)
        finally:
            try:
                request.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        pass


def main():
    global args
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["echo", "git", "npm", "pypi", "registry",
                                    "gh"])
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--root")
    ap.add_argument("--auth", action="append",
                    help="answer 401 unless the request's credential "
                    "(Basic decoded, or Bearer) is this one (or another "
                    "--auth)")
    ap.add_argument("--port", type=int, default=0,
                    help="the port to listen on (0: any free one)")
    ap.add_argument("--package", action="append",
                    help="npm: a package the registry has (pisbx-dep)")
    args = ap.parse_args()
    args.package = args.package or ["pisbx-dep"]
    if args.mode == "git" and not args.root:
        ap.error("git mode needs --root")
    if not args.plain and not (args.cert and args.key):
        ap.error("--cert and --key, or --plain")

    srv = Server(("127.0.0.1", args.port), Handler)
    if not args.plain:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(args.cert, args.key)
        ctx.set_alpn_protocols(["http/1.1"])
        srv.ctx = ctx
    port = srv.server_address[1]
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print(port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    except (SystemExit, KeyboardInterrupt):
        pass
    srv.server_close()


if __name__ == "__main__":
    main()
