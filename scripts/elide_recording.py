#!/usr/bin/env python3
"""Elide the reference CLI's own prose from a recording's out/ folder, in place.

  python3 scripts/elide_recording.py testdata/conformance/<name>/out

A recording of the reference CLI carries its system prompt, tool descriptions,
<system-reminder> injections and attachment texts (transcripts also keep a
snapshot of the system prompt and the agent, skill and tool listings). They are not ours to copy,
and the scorer ignores them, so every such string is replaced by
"<elided: reference prose, N chars>" (N = the original length), the form the
conformance kit's recordings use. Conversation content (prompts, model output,
tool results) is kept. Files: requests.jsonl, stdout.jsonl, transcripts/*.jsonl
(also under runK/).
"""
import json
import os
import re
import sys

REMINDER = re.compile(r"(<system-reminder>)(.*?)(</system-reminder>|\Z)", re.S)


def tag(s):
    return "<elided: reference prose, %d chars>" % len(s)


def elide_reminders(s):
    return REMINDER.sub(lambda m: m.group(1) + (tag(m.group(2)) if not m.group(2).startswith("<elided") else m.group(2)) + m.group(3), s)


def elided(s):
    return isinstance(s, str) and s.startswith("<elided")


def schema(v):
    """Descriptions inside a JSON schema (tool input schemas)."""
    if isinstance(v, dict):
        for k, x in list(v.items()):
            if k == "description" and isinstance(x, str) and not elided(x):
                v[k] = tag(x)
            else:
                schema(x)
    elif isinstance(v, list):
        for x in v:
            schema(x)


def generic(v, key=None):
    """Reminders anywhere; role=system message texts."""
    if isinstance(v, dict):
        for k, x in list(v.items()):
            if isinstance(x, str):
                v[k] = elide_reminders(x)
            else:
                generic(x, k)
        if v.get("role") == "system":
            c = v.get("content")
            if isinstance(c, str):
                v["content"] = tag(c) if not elided(c) else c
            elif isinstance(c, list):
                for b in c:
                    if isinstance(b, dict) and isinstance(b.get("text"), str) and not elided(b["text"]):
                        b["text"] = tag(b["text"])
    elif isinstance(v, list):
        for x in v:
            generic(x, key)


def body(b):
    if not isinstance(b, dict):
        return
    sysp = b.get("system")
    if isinstance(sysp, str):
        b["system"] = tag(sysp)
    elif isinstance(sysp, list):
        for blk in sysp:
            if isinstance(blk, dict) and isinstance(blk.get("text"), str) and not elided(blk["text"]):
                blk["text"] = tag(blk["text"])
    for t in b.get("tools") or []:
        if isinstance(t, dict):
            if isinstance(t.get("description"), str) and not elided(t["description"]):
                t["description"] = tag(t["description"])
            schema(t.get("input_schema"))


# Attachments that hold the reference's own texts (its system prompt, its
# agent, skill and tool listings): every longer string in them is elided.
PROSE_ATTACHMENTS = {"prompt_snapshot", "agent_listing_delta", "skill_listing", "deferred_tools_delta",
                     "environment", "model", "date", "remote_session_change", "session_context",
                     "deferred_tools_record"}


def all_strings(v, minlen=40):
    if isinstance(v, dict):
        for k, x in list(v.items()):
            if isinstance(x, str):
                if len(x) >= minlen and not elided(x):
                    v[k] = tag(x)
            else:
                all_strings(x, minlen)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            if isinstance(x, str):
                if len(x) >= minlen and not elided(x):
                    v[i] = tag(x)
            else:
                all_strings(x, minlen)


def transcript_line(r):
    att = r.get("attachment")
    if isinstance(att, dict) and att.get("type") in PROSE_ATTACHMENTS:
        all_strings(att)
    if isinstance(att, dict) and isinstance(att.get("content"), str) and att.get("type") in (
            "skill_listing", "environment", "model", "deferred_tools_delta", "agent_listing_delta",
            "date", "remote_session_change"):
        att["content"] = tag(att["content"])
    for rd in r.get("rendered") or []:
        if isinstance(rd, dict) and isinstance(rd.get("content"), str) and not elided(rd["content"]):
            rd["content"] = tag(rd["content"])
    if r.get("type") == "api-request-shape":
        body(r.get("shape"))
    generic(r)


def do_file(path, fn):
    out = []
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError:
                out.append(line.rstrip("\n"))
                continue
            fn(r)
            out.append(json.dumps(r, ensure_ascii=False))
    with open(path, "w") as f:
        f.write("\n".join(out) + ("\n" if out else ""))


def request_line(r):
    body(r.get("body"))
    generic(r.get("body"))
    s = r.get("summary")
    if isinstance(s, dict) and isinstance(s.get("last_user_text_head"), str):
        h = s["last_user_text_head"]
        if h.startswith("<system-reminder>") and not h.startswith("<system-reminder><elided"):
            s["last_user_text_head"] = "<system-reminder>" + tag(h[len("<system-reminder>"):])


def stdout_line(r):
    generic(r)


def main():
    for root in sys.argv[1:]:
        for d, _, fs in os.walk(root):
            for f in fs:
                p = os.path.join(d, f)
                if f == "requests.jsonl":
                    do_file(p, request_line)
                elif f == "stdout.jsonl":
                    do_file(p, stdout_line)
                elif os.path.basename(d) == "transcripts" and f.endswith(".jsonl"):
                    do_file(p, transcript_line)


if __name__ == "__main__":
    main()
