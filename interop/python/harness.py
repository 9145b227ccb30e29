"""Shared fixture for the Python interop tests.

Each test gets a scripted Messages API (interop/scriptedapi) of its own, a
throw-away cwd and HOME, and ClaudeAgentOptions that point the official
Python Agent SDK at the agentloop binary named by $AGENTLOOP_BIN.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, TextBlock

AGENTLOOP_BIN = os.environ.get("AGENTLOOP_BIN", "")
SCRIPTEDAPI_BIN = os.environ.get("SCRIPTEDAPI_BIN", "")
if not AGENTLOOP_BIN or not SCRIPTEDAPI_BIN:
    raise RuntimeError("set AGENTLOOP_BIN and SCRIPTEDAPI_BIN (run.sh does)")

#: Seconds one query may take before the test fails instead of hanging.
QUERY_TIMEOUT = float(os.environ.get("INTEROP_QUERY_TIMEOUT", "20"))


class Fixture:
    """A scripted API, a temp cwd and HOME; close() removes everything."""

    def __init__(self, script: dict[str, Any] | Any) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="agentloop-interop-py-"))
        self.cwd = self.root / "work"
        self.home = self.root / "home"
        self.cwd.mkdir()
        self.home.mkdir()
        if callable(script):
            script = script(self)
        script_path = self.root / "script.json"
        self.record_path = self.root / "requests.jsonl"
        script_path.write_text(json.dumps(script))
        self._api = subprocess.Popen(
            [SCRIPTEDAPI_BIN, "-script", str(script_path), "-record", str(self.record_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self._api.stdout is not None
        self.url = self._api.stdout.readline().strip()
        if not self.url.startswith("http"):
            raise RuntimeError(f"scriptedapi did not print its URL: {self._api.stderr.read()}")
        self.stderr_lines: list[str] = []

    def options(self, **extra: Any) -> ClaudeAgentOptions:
        """ClaudeAgentOptions for agentloop against this fixture's API."""
        env = {
            "HOME": str(self.home),
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "sk-interop-test",
            "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
        }
        env.update(extra.pop("env", {}))
        return ClaudeAgentOptions(
            cli_path=AGENTLOOP_BIN,
            cwd=str(self.cwd),
            env=env,
            stderr=self.stderr_lines.append,
            **extra,
        )

    def requests(self) -> list[dict[str, Any]]:
        """Every request the engine sent, in order."""
        if not self.record_path.exists():
            return []
        return [json.loads(l) for l in self.record_path.read_text().splitlines() if l.strip()]

    def main_requests(self) -> list[dict[str, Any]]:
        """Agent-loop turns: messages requests that declare tools and are
        not a helper forked from the conversation (see is_turn)."""
        return [r for r in self.requests() if r.get("path") == "/v1/messages" and r.get("tools") and is_turn(r)]

    def wait_main_requests(self, n: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Polls the record file until it holds n main requests."""
        deadline = time.monotonic() + timeout
        while True:
            reqs = self.main_requests()
            if len(reqs) >= n or time.monotonic() > deadline:
                return reqs
            time.sleep(0.05)

    def stderr(self) -> str:
        return "".join(self.stderr_lines)[-600:]

    def close(self) -> None:
        try:
            if self._api.stdin:
                self._api.stdin.close()
            self._api.wait(timeout=10)
        except Exception:
            self._api.kill()
        if not os.environ.get("INTEROP_KEEP"):
            shutil.rmtree(self.root, ignore_errors=True)


def is_turn(rec: dict[str, Any]) -> bool:
    """False for a helper request that reuses the conversation: its messages
    carry a cache_control breakpoint, but not on the last message (the
    reference forks such helpers; an agent-loop turn marks its last block);
    and for one with a message of another role than user and assistant."""
    msgs = (rec.get("body") or {}).get("messages") or []
    if any(m.get("role") not in ("user", "assistant") for m in msgs):
        # A shape the scripted API refuses (messages of role system, which
        # the reference tries first); the same turn is sent again.
        return False
    if not msgs:
        return True

    def has_cc(content: Any) -> bool:
        return isinstance(content, list) and any(isinstance(b, dict) and b.get("cache_control") for b in content)

    last = msgs[-1].get("content")
    last_cc = isinstance(last, list) and bool(last) and isinstance(last[-1], dict) and bool(last[-1].get("cache_control"))
    return last_cc or not any(has_cc(m.get("content")) for m in msgs)


def assistant_text(messages: list[Any]) -> str:
    """The text blocks of every assistant message, joined by newlines."""
    return "\n".join(
        b.text
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, TextBlock)
    )


def results(messages: list[Any]) -> list[ResultMessage]:
    return [m for m in messages if isinstance(m, ResultMessage)]


def user_texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of every user and assistant text block of a recorded
    request body, stripped, without <system-reminder> blocks (the
    reference adds them, and ends merged prompts with a newline)."""
    out: list[tuple[str, str]] = []
    for msg in body.get("messages", []):
        if msg.get("role") not in ("user", "assistant"):
            continue
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if block.get("type") != "text" or block["text"].startswith("<system-reminder>"):
                continue
            out.append((msg["role"], block["text"].strip()))
    return out
