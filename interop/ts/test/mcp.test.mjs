// MCP: an in-process tool from createSdkMcpServer (with and without the
// SDK's manifests) and a stdio server delivered in initialize.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { query, createSdkMcpServer, tool } from '@anthropic-ai/claude-agent-sdk';
import { setup, collect, lastResult, explain } from '../lib/harness.mjs';

const ECHO = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'echo-mcp.mjs');

const calcScript = {
  replies: [
    { tool_use: { id: 'toolu_m1', name: 'mcp__calc__add', input: { a: 2, b: 40 } } },
    { text: 'the sum is 42' },
  ],
  side: { text: 'side' },
};

async function inProcess(t, disableManifests) {
  const fx = await setup(t, calcScript);
  const calls = [];
  const calc = createSdkMcpServer({
    name: 'calc',
    version: '1.0.0',
    tools: [tool('add', 'Adds two numbers', { a: z.number(), b: z.number() }, async (args) => {
      calls.push(args);
      return { content: [{ type: 'text', text: `sum=${args.a + args.b}` }] };
    })],
  });
  const saved = process.env.CLAUDE_AGENT_SDK_DISABLE_MCP_MANIFESTS;
  if (disableManifests) process.env.CLAUDE_AGENT_SDK_DISABLE_MCP_MANIFESTS = '1';
  let run;
  try {
    run = await collect(query({
      prompt: 'Add 2 and 40',
      options: fx.opts({ mcpServers: { calc }, allowedTools: ['mcp__calc__add'] }),
    }));
  } finally {
    if (saved === undefined) delete process.env.CLAUDE_AGENT_SDK_DISABLE_MCP_MANIFESTS;
    else process.env.CLAUDE_AGENT_SDK_DISABLE_MCP_MANIFESTS = saved;
  }
  assert.deepEqual(calls, [{ a: 2, b: 40 }], explain(run, fx));
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 2, explain(run, fx));
  // Declared as a tool, or announced as a deferred tool (tool search).
  assert.match(JSON.stringify(reqs[0].body), /mcp__calc__add/, 'the model was not told about the tool');
  const tr = reqs[1].tool_results.find((r) => r.tool_use_id === 'toolu_m1');
  assert.ok(tr, 'no tool_result');
  assert.match(tr.text, /sum=42/);
  assert.equal(lastResult(run.messages)?.subtype, 'success');
}

test('in-process MCP tool (createSdkMcpServer, with manifests)', (t) => inProcess(t, false));

test('in-process MCP tool (createSdkMcpServer, manifests disabled)', (t) => inProcess(t, true));

test('stdio MCP server delivered in initialize', async (t) => {
  const fx = await setup(t, {
    replies: [
      { tool_use: { id: 'toolu_e1', name: 'mcp__echo__echo', input: { text: 'ping-123' } } },
      { text: 'echoed' },
    ],
    side: { text: 'side' },
  });
  const run = await collect(query({
    prompt: 'Echo something',
    options: fx.opts({
      mcpServers: { echo: { type: 'stdio', command: process.execPath, args: [ECHO] } },
      mcpServersDelivery: 'initialize',
      allowedTools: ['mcp__echo__echo'],
    }),
  }));
  const init = run.messages.find((m) => m.type === 'system' && m.subtype === 'init');
  assert.ok(init, explain(run, fx));
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 2, explain(run, fx));
  assert.match(JSON.stringify(reqs[0].body), /mcp__echo__echo/, 'the model was not told about the tool');
  const tr = reqs[1].tool_results.find((r) => r.tool_use_id === 'toolu_e1');
  assert.match(tr?.text ?? '', /echo: ping-123/);
  assert.equal(lastResult(run.messages)?.subtype, 'success');
});
