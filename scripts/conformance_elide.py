#!/usr/bin/env python3
"""Turn a fresh recording of the reference CLI into project test data.

  python3 scripts/conformance_elide.py SCENARIO_DIR --tmp-root DIR

SCENARIO_DIR is a scenario folder (scenario.json, scripts, files/) whose out/
was just written by the conformance kit's run_scenario.py with --tmp-root DIR.
In place, for out/ and every out/runK/:

  - the reference's own prose is replaced by "<elided: reference prose, N
    chars>": system prompt blocks, role=system messages, tool descriptions,
    and every user text that is neither a prompt of the scenario nor a
    local-command marker (<command-name>, <local-command-stdout>); inside a
    <system-reminder> only the wording is elided where the reminder carries
    a tool call or a file's text (re-attached files after a compaction), so
    the facts stay;
  - the recording machine's temporary root DIR becomes /scratch/oracle (the
    kit's own recordings use that root), in paths and in path slugs;
  - the fake API's digest of each request loses its quote of the last user
    text (last_user_text_head);
  - transcripts/ is dropped: it holds the reference's prompts verbatim and
    the scorer does not read it.

The result is what testdata/conformance/<name>/ keeps. Run it once per
recording; it is idempotent.
"""
import argparse
import json
import os
import re
import shutil

# One line-by-line rewriter for both elision scripts.
from elide_recording import do_file as jsonl

NEUTRAL = "/scratch/oracle"
REMINDER = re.compile(r"<system-reminder>(.*?)</system-reminder>", re.S)
CALLED = re.compile(r"^(\s*[^{]*?)(\{.*\})(\s*)$", re.S)
RESULT = re.compile(r"^(\s*[^\n]*?:)(\n.*)$", re.S)
CAVEAT = re.compile(r"<local-command-caveat>(.*?)</local-command-caveat>", re.S)
KEEP_PREFIXES = ("<command-name>", "<local-command-stdout>", "<local-command-stderr>")


def elided(s):
    return "<elided: reference prose, %d chars>" % len(s)


def is_elided(s):
    return s.startswith("<elided: reference prose, ")


def elide_reminder(inner):
    """Elide a reminder's wording; keep a tool input or a file's text."""
    if is_elided(inner.strip()) or inner.startswith("<elided: "):
        return inner
    m = CALLED.match(inner)
    if m and "tool" in m.group(1).lower():
        return elided(m.group(1)) + m.group(2) + m.group(3)
    m = RESULT.match(inner)
    if m and "tool" in m.group(1).lower():
        return elided(m.group(1)) + m.group(2)
    return elided(inner)


def elide_text(t, prompts):
    if t in prompts or t.strip() in prompts or is_elided(t):
        return t
    if t.lstrip().startswith(KEEP_PREFIXES):
        return t
    if CAVEAT.search(t):
        return CAVEAT.sub(lambda m: "<local-command-caveat>%s</local-command-caveat>" % (
            m.group(1) if is_elided(m.group(1)) else elided(m.group(1))), t)
    if t.lstrip().startswith("<system-reminder>"):
        return REMINDER.sub(lambda m: "<system-reminder>%s</system-reminder>" % elide_reminder(m.group(1)), t)
    return elided(t)


def elide_content(c, prompts):
    if isinstance(c, str):
        return elide_text(c, prompts)
    if isinstance(c, list):
        for b in c:
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
                b["text"] = elide_text(b["text"], prompts)
    return c


def elide_descriptions(v):
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "description" and isinstance(x, str):
                v[k] = elided(x) if not is_elided(x) else x
            else:
                elide_descriptions(x)
    elif isinstance(v, list):
        for x in v:
            elide_descriptions(x)


def elide_request(body, prompts):
    if not isinstance(body, dict):
        return
    sysp = body.get("system")
    if isinstance(sysp, str):
        body["system"] = elided(sysp) if not is_elided(sysp) else sysp
    elif isinstance(sysp, list):
        for b in sysp:
            if isinstance(b, dict) and isinstance(b.get("text"), str) and not is_elided(b["text"]):
                b["text"] = elided(b["text"])
    for t in body.get("tools") or []:
        elide_descriptions(t)
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "system":
            for b in m.get("content") or []:
                if isinstance(b, dict) and isinstance(b.get("text"), str) and not is_elided(b["text"]):
                    b["text"] = elided(b["text"])
        elif m.get("role") == "user":
            m["content"] = elide_content(m.get("content"), prompts)


def rewrite_paths(text, root):
    root = root.rstrip("/")
    slug = root.replace("/", "-").replace("_", "-")
    text = text.replace(root, NEUTRAL)
    return text.replace(slug, NEUTRAL.replace("/", "-"))


def prompts_of(scenario):
    ps = set()
    for r in [scenario] + list(scenario.get("runs") or []):
        if isinstance(r.get("prompt"), str):
            ps.add(r["prompt"])
    return ps


def one_run(d, root, prompts):
    shutil.rmtree(os.path.join(d, "transcripts"), ignore_errors=True)
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            with open(p, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
            new = rewrite_paths(text, root)
            if new != text:
                with open(p, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(new)

    def stdout_line(m):
        if m.get("type") == "user" and isinstance(m.get("message"), dict):
            m["message"]["content"] = elide_content(m["message"].get("content"), prompts)

    def request_line(r):
        elide_request(r.get("body"), prompts)
        if isinstance(r.get("summary"), dict):
            # the fake API's digest quotes the last user text, prose and all
            r["summary"].pop("last_user_text_head", None)

    run = os.path.join(d, "run.json")
    if os.path.exists(run):
        with open(run) as f:
            r = json.load(f)
        if r.get("argv"):
            r["argv"][0] = os.path.basename(r["argv"][0])  # not this machine's path
        with open(run, "w") as f:
            json.dump(r, f, indent=1)
            f.write("\n")
    if os.path.exists(os.path.join(d, "stdout.jsonl")):
        jsonl(os.path.join(d, "stdout.jsonl"), stdout_line)
    if os.path.exists(os.path.join(d, "requests.jsonl")):
        jsonl(os.path.join(d, "requests.jsonl"), request_line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--tmp-root", required=True)
    a = ap.parse_args()
    with open(os.path.join(a.scenario, "scenario.json")) as f:
        prompts = prompts_of(json.load(f))
    out = os.path.join(a.scenario, "out")
    one_run(out, a.tmp_root, prompts)
    for name in sorted(os.listdir(out)):
        if re.fullmatch(r"run\d+", name) and os.path.isdir(os.path.join(out, name)):
            one_run(os.path.join(out, name), a.tmp_root, prompts)


if __name__ == "__main__":
    main()
