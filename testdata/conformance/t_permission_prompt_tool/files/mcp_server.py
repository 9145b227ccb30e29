#!/usr/bin/env python3
"""A small stdio MCP server for conformance recordings (newline-delimited JSON-RPC).

Tools: `approve` (a permission-prompt tool: allows every call unless the input
mentions "forbidden"; it appends the arguments of each call to
approve_calls.jsonl in its working directory) and `tool_0` .. `tool_{N-1}` (N from argv[1], default
60), each echoing its `text` argument with its own number, so that a session
has more tools than fit undeferred.
"""
import json
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 60
TOPICS = ["weather", "stocks", "recipes", "music", "maps", "calendar", "mail", "notes", "photos", "news"]


def tools():
    out = [{
        "name": "approve",
        "description": "Decides whether a tool call may run.",
        "inputSchema": {"type": "object", "properties": {
            "tool_name": {"type": "string"}, "input": {"type": "object"},
            "tool_use_id": {"type": "string"}}, "required": ["tool_name", "input"]},
    }]
    for i in range(N):
        topic = TOPICS[i % len(TOPICS)]
        out.append({
            "name": "tool_%d" % i,
            "description": "Looks up %s item number %d." % (topic, i),
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                            "required": ["text"]},
        })
    return out


def call(name, args):
    if name == "approve":
        with open("approve_calls.jsonl", "a") as f:
            f.write(json.dumps(args, sort_keys=True) + "\n")
        inp = args.get("input") or {}
        if "forbidden" in json.dumps(inp):
            dec = {"behavior": "deny", "message": "the approve tool refused it"}
        else:
            dec = {"behavior": "allow", "updatedInput": inp}
        return {"content": [{"type": "text", "text": json.dumps(dec)}]}
    if name.startswith("tool_"):
        return {"content": [{"type": "text", "text": "%s says: %s" % (name, args.get("text", ""))}]}
    return {"content": [{"type": "text", "text": "no such tool"}], "isError": True}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        mid = msg.get("id")
        method = msg.get("method")
        if mid is None:
            continue
        if method == "initialize":
            res = {"protocolVersion": msg.get("params", {}).get("protocolVersion", "2025-06-18"),
                   "capabilities": {"tools": {}}, "serverInfo": {"name": "many", "version": "1.0"}}
        elif method == "tools/list":
            res = {"tools": tools()}
        elif method == "tools/call":
            p = msg.get("params", {})
            res = call(p.get("name"), p.get("arguments") or {})
        elif method == "ping":
            res = {}
        else:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid,
                                         "error": {"code": -32601, "message": "unknown method"}}) + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": res}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
