#!/usr/bin/python3
"""A scripted model for the agent scenarios: the Anthropic Messages API
(POST /v1/messages, streaming or not) on 127.0.0.1, answering a fixed
script instead of thinking.

    model.py --script FILE --port-file F --record F [--requests F]

The script is JSON: {"commands": ["CMD", ...], "final": "TEXT"}.  A request
that offers a bash tool (Claude Code's "Bash", pi's "bash") is answered
with the next step: step N is a call of that tool running commands[N]
(or, for an entry {"tool": NAME, "input": {...}}, a call of that tool),
where N is the number of tool calls already in the conversation; once
they are all answered, a text message "final".  A request without a bash
tool (an agent's side questions: titles, summaries) gets a short text.

Every tool result the agent sends back is recorded once, as one JSON line
{"id", "step", "command", "is_error", "text"} in the --record file, so a
test asserts what the model saw.  --requests logs one line per request
(method, path, tool names) for debugging.  Runs until killed.
"""

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
SEEN = set()


def text_of(block):
    """The text of a tool_result's content (a string or a list of blocks)."""
    c = block.get("content", "")
    if isinstance(c, str):
        return c
    return "".join(b.get("text", "") for b in c if isinstance(b, dict))


def bash_tool(req):
    """The name of the request's bash tool, or None."""
    for t in req.get("tools") or []:
        name = t.get("name", "")
        if name.lower() == "bash":
            return name
    return None


def history(req):
    """Tool calls made so far (id -> step) and tool results sent back."""
    calls, results = {}, []
    for m in req.get("messages", []):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use" and m.get("role") == "assistant":
                calls[b.get("id")] = len(calls)
            elif b.get("type") == "tool_result":
                results.append(b)
    return calls, results


def events(blocks, stop):
    """The SSE events of one assistant message made of blocks."""
    out = [("message_start", {"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant",
        "model": "scripted", "content": [], "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            out.append(("content_block_start", {
                "type": "content_block_start", "index": i,
                "content_block": {"type": "text", "text": ""}}))
            out.append(("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            out.append(("content_block_start", {
                "type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": b["id"],
                                  "name": b["name"], "input": {}}}))
            out.append(("content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "input_json_delta",
                          "partial_json": json.dumps(b["input"])}}))
        out.append(("content_block_stop", {"type": "content_block_stop",
                                           "index": i}))
    out.append(("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": stop,
                                            "stop_sequence": None},
                                  "usage": {"output_tokens": 1}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scripted-model"

    def log_message(self, fmt, *args):
        pass

    def note(self, what):
        if self.server.requests:
            with LOCK, open(self.server.requests, "a") as f:
                f.write(json.dumps(what) + "\n")

    def reply_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.note({"method": "GET", "path": self.path})
        self.reply_json(404, {"type": "error", "error": {
            "type": "not_found_error", "message": "scripted model"}})

    do_HEAD = do_GET

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        self.note({"method": "POST", "path": self.path,
                   "tools": [t.get("name") for t in req.get("tools") or []],
                   "stream": bool(req.get("stream"))})
        if path.endswith("/count_tokens"):
            self.reply_json(200, {"input_tokens": 1})
            return
        if not path.endswith("/messages"):
            self.reply_json(404, {"type": "error", "error": {
                "type": "not_found_error", "message": "scripted model"}})
            return
        blocks, stop = self.answer(req)
        if req.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for ev, data in events(blocks, stop):
                self.wfile.write(("event: %s\ndata: %s\n\n" %
                                  (ev, json.dumps(data))).encode())
                self.wfile.flush()
            self.close_connection = True
            return
        content = []
        for b in blocks:
            if b["type"] == "text":
                content.append({"type": "text", "text": b["text"]})
            else:
                content.append({"type": "tool_use", "id": b["id"],
                                "name": b["name"], "input": b["input"]})
        self.reply_json(200, {
            "id": "msg_scripted", "type": "message", "role": "assistant",
            "model": "scripted", "content": content, "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}})

    def answer(self, req):
        """The next step of the script for this conversation."""
        tool = bash_tool(req)
        if tool is None:
            return [{"type": "text", "text": "scripted"}], "end_turn"
        calls, results = history(req)
        cmds = self.server.script["commands"]
        with LOCK:
            for r in results:
                tid = r.get("tool_use_id")
                if tid in SEEN:
                    continue
                SEEN.add(tid)
                step = calls.get(tid, -1)
                rec = {"id": tid, "step": step,
                       "command": cmds[step] if 0 <= step < len(cmds)
                       else None,
                       "is_error": bool(r.get("is_error")),
                       "text": text_of(r)}
                with open(self.server.record, "a") as f:
                    f.write(json.dumps(rec) + "\n")
        step = len(calls)
        if step < len(cmds) and isinstance(cmds[step], dict):
            # {"tool": NAME, "input": {...}}: another tool (an MCP one).
            return [{"type": "tool_use", "id": "toolu_%02d" % step,
                     "name": cmds[step]["tool"],
                     "input": cmds[step].get("input", {})}], "tool_use"
        if step < len(cmds):
            return [{"type": "tool_use", "id": "toolu_%02d" % step,
                     "name": tool,
                     "input": {"command": cmds[step],
                               "description": "scripted step %d" % step}}
                    ], "tool_use"
        return [{"type": "text",
                 "text": self.server.script.get("final", "done")}], \
            "end_turn"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--record", required=True)
    ap.add_argument("--requests")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(a.script) as f:
        srv.script = json.load(f)
    srv.record = a.record
    srv.requests = a.requests
    open(a.record, "a").close()
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
