#!/usr/bin/python3
"""A stdio MCP server with one tool, "probe", that tells where it runs:
"sandboxed=<PISBX_SANDBOX>" (1 inside pisbx).  For the agent scenarios:
an agent that starts its MCP servers through pisbx-sh starts this one in
the sandbox.  Newline-delimited JSON-RPC 2.0 on stdin/stdout."""

import json
import os
import sys


def reply(rid, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid,
                                 "result": result}) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            reply(rid, {"protocolVersion": msg["params"].get(
                "protocolVersion", "2024-11-05"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "probe", "version": "1"}})
        elif method == "tools/list":
            reply(rid, {"tools": [{
                "name": "probe", "description": "where the server runs",
                "inputSchema": {"type": "object", "properties": {}}}]})
        elif method == "tools/call":
            reply(rid, {"content": [{"type": "text", "text": "sandboxed=%s"
                                     % os.environ.get("PISBX_SANDBOX",
                                                      "no")}]})
        else:
            reply(rid, {})


if __name__ == "__main__":
    main()
