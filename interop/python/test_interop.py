"""The official Python Agent SDK (claude_agent_sdk) against agentloop.

Every check looks at what only the engine can have produced: the text the
scripted API replied, the tool result the engine built, the file a tool
wrote, the request history the engine sent.
"""

from __future__ import annotations

import asyncio
import json
import unittest
from typing import Any

from claude_agent_sdk import (
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from harness import QUERY_TIMEOUT, Fixture, assistant_text, results, user_texts

SIDE = {"text": "side"}


def write_script(fx: Fixture) -> dict[str, Any]:
    return {
        "replies": [
            {"tool_use": {"id": "toolu_w1", "name": "Write",
                          "input": {"file_path": str(fx.cwd / "a.txt"), "content": "original"}}},
            {"text": "done"},
        ],
        "side": SIDE,
    }


async def prompt_stream(*texts: str):
    """Streaming-mode prompt (needed for can_use_tool with query())."""
    for t in texts:
        yield {"type": "user", "message": {"role": "user", "content": t}, "parent_tool_use_id": None}


async def run_query(prompt: Any, options: Any) -> list[Any]:
    async def drain() -> list[Any]:
        return [m async for m in query(prompt=prompt, options=options)]

    return await asyncio.wait_for(drain(), QUERY_TIMEOUT)


async def until_result(client: ClaudeSDKClient) -> list[Any]:
    async def drain() -> list[Any]:
        return [m async for m in client.receive_response()]

    return await asyncio.wait_for(drain(), QUERY_TIMEOUT)


def tool_result(fx: Fixture, request_index: int, tool_use_id: str) -> dict[str, Any]:
    reqs = fx.main_requests()
    assert len(reqs) > request_index, f"{len(reqs)} main requests; stderr: {fx.stderr()}"
    for tr in reqs[request_index].get("tool_results") or []:
        if tr["tool_use_id"] == tool_use_id:
            return tr
    raise AssertionError(f"no tool_result for {tool_use_id} in request {request_index}")


class InteropTest(unittest.IsolatedAsyncioTestCase):
    def fixture(self, script: Any) -> Fixture:
        fx = Fixture(script)
        self.addCleanup(fx.close)
        return fx

    async def test_one_shot_query(self) -> None:
        fx = self.fixture({"replies": [{"text": "Hello from the script."}], "side": SIDE})
        msgs = await run_query("Say hello", fx.options())
        res = results(msgs)
        self.assertEqual(len(res), 1, fx.stderr())
        self.assertEqual(res[0].subtype, "success")
        self.assertEqual(res[0].result, "Hello from the script.")
        self.assertEqual(assistant_text(msgs), "Hello from the script.")
        reqs = fx.main_requests()
        self.assertEqual(len(reqs), 1)
        self.assertEqual(user_texts(reqs[0]["body"])[-1], ("user", "Say hello"))

    async def test_multi_turn_client(self) -> None:
        fx = self.fixture({"replies": [{"text": "The word is PAPAYA."}, {"text": "You said PAPAYA."}], "side": SIDE})
        async with ClaudeSDKClient(options=fx.options()) as client:
            await client.query("Remember the word")
            first = results(await until_result(client))
            await client.query("What was the word?")
            second = results(await until_result(client))
        self.assertEqual([r.result for r in first + second], ["The word is PAPAYA.", "You said PAPAYA."], fx.stderr())
        self.assertEqual(first[0].session_id, second[0].session_id)
        reqs = fx.main_requests()
        self.assertEqual(len(reqs), 2)
        self.assertEqual(
            user_texts(reqs[1]["body"]),
            [("user", "Remember the word"), ("assistant", "The word is PAPAYA."), ("user", "What was the word?")],
        )

    async def test_interrupt_keeps_prompt_and_marker(self) -> None:
        fx = self.fixture({"replies": [{"text": "slow", "delay_ms": 15000}, {"text": "after the interrupt"}], "side": SIDE})
        async with ClaudeSDKClient(options=fx.options()) as client:
            await client.query("take your time")
            await asyncio.to_thread(fx.wait_main_requests, 1)
            await client.interrupt()
            interrupted_msgs = await until_result(client)
            interrupted = results(interrupted_msgs)
            await client.query("are you there?")
            after = results(await until_result(client))
        self.assertEqual(len(interrupted), 1, fx.stderr())
        # As the reference: the marker is also a user message on the stream.
        markers = [
            m for m in interrupted_msgs
            if isinstance(m, UserMessage) and "[Request interrupted by user]" in str(m.content)
        ]
        self.assertEqual(len(markers), 1, [type(m).__name__ for m in interrupted_msgs])
        self.assertNotEqual(interrupted[0].subtype, "success")
        self.assertEqual([r.result for r in after], ["after the interrupt"])
        reqs = fx.main_requests()
        self.assertEqual(len(reqs), 2)
        texts = [t for role, t in user_texts(reqs[1]["body"]) if role == "user"]
        # The interrupted prompt stays in the history once, followed by the
        # interruption marker, and is not asked again on its own.
        self.assertEqual(texts.count("take your time"), 1, texts)
        self.assertIn("[Request interrupted by user]", texts)
        self.assertEqual(texts[-1], "are you there?")

    async def test_can_use_tool_allow_updated_input(self) -> None:
        fx = self.fixture(write_script)
        seen: list[tuple[str, dict[str, Any]]] = []

        async def can_use_tool(name, input_, ctx):
            seen.append((name, input_))
            return PermissionResultAllow(updated_input={**input_, "content": "changed by host"})

        msgs = await run_query(prompt_stream("Write the file"), fx.options(can_use_tool=can_use_tool))
        self.assertEqual([(n, i["content"]) for n, i in seen], [("Write", "original")], fx.stderr())
        self.assertEqual((fx.cwd / "a.txt").read_text(), "changed by host")
        self.assertEqual(results(msgs)[-1].result, "done")

    async def test_can_use_tool_deny(self) -> None:
        fx = self.fixture(write_script)

        async def can_use_tool(name, input_, ctx):
            return PermissionResultDeny(message="not today, scripted")

        msgs = await run_query(prompt_stream("Write the file"), fx.options(can_use_tool=can_use_tool))
        self.assertFalse((fx.cwd / "a.txt").exists(), "the denied write happened")
        tr = tool_result(fx, 1, "toolu_w1")
        self.assertTrue(tr["is_error"])
        self.assertIn("not today, scripted", tr["text"])
        self.assertEqual(results(msgs)[-1].result, "done")

    async def test_pre_tool_use_hook_blocks(self) -> None:
        fx = self.fixture(write_script)
        calls: list[str] = []

        async def block(input_, tool_use_id, ctx):
            calls.append(input_["tool_name"])
            return {"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "blocked by the python hook",
            }}

        opts = fx.options(
            permission_mode="acceptEdits",
            hooks={"PreToolUse": [HookMatcher(matcher="Write", hooks=[block])]},
        )
        msgs = await run_query(prompt_stream("Write the file"), opts)
        self.assertEqual(calls, ["Write"], fx.stderr())
        self.assertFalse((fx.cwd / "a.txt").exists(), "the blocked write happened")
        tr = tool_result(fx, 1, "toolu_w1")
        self.assertTrue(tr["is_error"])
        self.assertIn("blocked by the python hook", tr["text"])
        self.assertEqual(results(msgs)[-1].result, "done")

    async def test_set_permission_mode(self) -> None:
        fx = self.fixture(write_script)
        asked: list[str] = []

        async def can_use_tool(name, input_, ctx):
            asked.append(name)
            return PermissionResultDeny(message="the host was asked")

        async with ClaudeSDKClient(options=fx.options(can_use_tool=can_use_tool)) as client:
            await client.set_permission_mode("acceptEdits")
            await client.query("Write the file")
            res = results(await until_result(client))
        # acceptEdits lets the engine write inside cwd without asking.
        self.assertEqual(asked, [], fx.stderr())
        self.assertEqual((fx.cwd / "a.txt").read_text(), "original")
        self.assertFalse(tool_result(fx, 1, "toolu_w1")["is_error"])
        self.assertEqual(res[-1].result, "done")

    async def test_sdk_mcp_server_tool(self) -> None:
        fx = self.fixture({
            "replies": [
                {"tool_use": {"id": "toolu_m1", "name": "mcp__util__shout", "input": {"word": "quiet"}}},
                {"text": "shouted"},
            ],
            "side": SIDE,
        })
        calls: list[dict[str, Any]] = []

        @tool("shout", "Upper-cases a word", {"word": str})
        async def shout(args: dict[str, Any]) -> dict[str, Any]:
            calls.append(args)
            return {"content": [{"type": "text", "text": "SHOUTED: " + args["word"].upper()}]}

        server = create_sdk_mcp_server("util", tools=[shout])
        opts = fx.options(mcp_servers={"util": server}, allowed_tools=["mcp__util__shout"])
        msgs = await run_query(prompt_stream("Shout quiet"), opts)
        self.assertEqual(calls, [{"word": "quiet"}], fx.stderr())
        tr = tool_result(fx, 1, "toolu_m1")
        self.assertFalse(tr["is_error"])
        self.assertEqual(tr["text"].split("<system-reminder>")[0].strip(), "SHOUTED: QUIET")
        self.assertEqual(results(msgs)[-1].result, "shouted")

    async def test_structured_output(self) -> None:
        fx = self.fixture({
            "replies": [
                {"tool_use": {"id": "toolu_s1", "name": "StructuredOutput",
                              "input": {"answer": "forty-two", "confidence": 0.9}}},
                {"text": "ok"},
            ],
            "side": SIDE,
        })
        schema = {
            "type": "object",
            "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"}},
            "required": ["answer", "confidence"],
        }
        msgs = await run_query("answer in JSON", fx.options(output_format={"type": "json_schema", "schema": schema}))
        res = results(msgs)[-1]
        self.assertEqual(res.subtype, "success", fx.stderr())
        self.assertEqual(res.structured_output, {"answer": "forty-two", "confidence": 0.9})
        self.assertIn("StructuredOutput", fx.main_requests()[0]["tools"])

    async def test_resume(self) -> None:
        fx = self.fixture({"replies": [{"text": "first answer"}, {"text": "second answer"}], "side": SIDE})
        first = results(await run_query("first question", fx.options()))
        self.assertEqual(first[-1].result, "first answer", fx.stderr())
        sid = first[-1].session_id
        second = results(await run_query("second question", fx.options(resume=sid)))
        self.assertEqual(second[-1].result, "second answer", fx.stderr())
        self.assertEqual(second[-1].session_id, sid)
        reqs = fx.main_requests()
        self.assertEqual(
            user_texts(reqs[1]["body"]),
            [("user", "first question"), ("assistant", "first answer"), ("user", "second question")],
        )


if __name__ == "__main__":
    unittest.main()
