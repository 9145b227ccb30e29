// maxTurns, maxBudgetUsd, outputFormat, the four systemPrompt forms and an
// option soup of every option the SDK maps to a flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { setup, collect, lastResult, explain } from '../lib/harness.mjs';

const readLoop = ({ cwd }) => ({
  replies: [
    { tool_use: { id: 'toolu_r1', name: 'Read', input: { file_path: path.join(cwd, 'notes.txt') } }, usage: { input_tokens: 2000000, output_tokens: 100000 } },
    { tool_use: { id: 'toolu_r2', name: 'Read', input: { file_path: path.join(cwd, 'notes.txt') } } },
    { text: 'finished' },
  ],
  side: { text: 'side' },
  exhausted: { text: 'finished' },
});

test('maxTurns ends in error_max_turns', async (t) => {
  const fx = await setup(t, readLoop);
  writeFileSync(path.join(fx.cwd, 'notes.txt'), 'some notes');
  const run = await collect(query({ prompt: 'read the notes', options: fx.opts({ maxTurns: 1 }) }));
  const res = lastResult(run.messages);
  assert.equal(res?.subtype, 'error_max_turns', explain(run, fx));
  assert.equal(res.is_error, true);
  assert.equal((await fx.api.mainRequests()).length, 1);
});

test('maxBudgetUsd ends in error_max_budget_usd', async (t) => {
  const fx = await setup(t, readLoop);
  writeFileSync(path.join(fx.cwd, 'notes.txt'), 'some notes');
  const run = await collect(query({
    prompt: 'read the notes',
    options: fx.opts({ model: 'claude-sonnet-4-5', maxBudgetUsd: 0.01 }),
  }));
  const res = lastResult(run.messages);
  assert.equal(res?.subtype, 'error_max_budget_usd', explain(run, fx));
  assert.ok(res.total_cost_usd > 0.01, `cost ${res.total_cost_usd}`);
  assert.ok((await fx.api.mainRequests()).length < 3, 'the run went on past the budget');
});

test('outputFormat json_schema gives structured_output', async (t) => {
  const fx = await setup(t, {
    replies: [
      { tool_use: { id: 'toolu_s1', name: 'StructuredOutput', input: { answer: 'forty-two', confidence: 0.9 } } },
      { text: 'done' },
    ],
    side: { text: 'side' },
    exhausted: { text: 'done' },
  });
  const schema = {
    type: 'object',
    properties: { answer: { type: 'string' }, confidence: { type: 'number' } },
    required: ['answer', 'confidence'],
    additionalProperties: false,
  };
  const run = await collect(query({ prompt: 'answer in JSON', options: fx.opts({ outputFormat: { type: 'json_schema', schema } }) }));
  const res = lastResult(run.messages);
  assert.equal(res?.subtype, 'success', explain(run, fx));
  assert.deepEqual(res.structured_output, { answer: 'forty-two', confidence: 0.9 });
  const reqs = await fx.api.mainRequests();
  assert.ok(reqs[0].tools.includes('StructuredOutput'), `tools: ${reqs[0].tools}`);
});

const systemPromptForms = [
  ['a string', 'SYS-STRING-1', (s) => s.includes('SYS-STRING-1')],
  ['an array', ['SYS-PART-A', 'SYS-PART-B'], (s) => s.includes('SYS-PART-A') && s.includes('SYS-PART-B')],
  ['custom', { type: 'custom', prompt: 'SYS-CUSTOM-3' }, (s) => s.includes('SYS-CUSTOM-3')],
  ['preset with append', { type: 'preset', preset: 'claude_code', append: 'SYS-APPEND-4' },
    (s) => s.includes('SYS-APPEND-4') && s.length > 2000],
];

for (const [name, systemPrompt, check] of systemPromptForms) {
  test(`systemPrompt: ${name}`, async (t) => {
    const fx = await setup(t, { replies: [{ text: 'ok' }], side: { text: 'side' } });
    const run = await collect(query({ prompt: 'hi', options: fx.opts({ systemPrompt }) }));
    assert.equal(lastResult(run.messages)?.subtype, 'success', explain(run, fx));
    const reqs = await fx.api.mainRequests();
    assert.equal(reqs.length, 1);
    assert.ok(check(reqs[0].system), `system prompt (${reqs[0].system.length} chars): ${reqs[0].system.slice(0, 300)}`);
  });
}

function soupOptions(fx, { withAgent }) {
  return {
    thinking: { type: 'adaptive' },
    effort: 'high',
    maxTurns: 5,
    maxBudgetUsd: 5,
    model: 'claude-sonnet-4-5',
    fallbackModel: 'claude-haiku-4-5',
    betas: ['context-1m-2025-08-07'],
    ...(withAgent ? { agent: 'chef', agents: { chef: { description: 'Cooks soup', prompt: 'You cook soup.' } } } : {}),
    allowedTools: ['Read', 'Bash(echo:*)'],
    disallowedTools: ['WebFetch', 'WebSearch'],
    tools: ['Read', 'Write', 'Bash'],
    settingSources: [],
    strictMcpConfig: true,
    permissionMode: 'default',
    includePartialMessages: true,
    includeHookEvents: true,
    additionalDirectories: [fx.home],
    debugFile: path.join(fx.root, 'debug.log'),
    settings: { env: { SOUP: 'yes' } },
    extraArgs: { 'replay-user-messages': null },
    canUseTool: async () => ({ behavior: 'allow' }),
  };
}

for (const withAgent of [true, false]) {
  test(`option soup: every option the SDK maps to a flag${withAgent ? '' : ' (without agent)'}`, async (t) => {
    const fx = await setup(t, { replies: [{ text: 'soup is ready' }], side: { text: 'side' }, exhausted: { text: 'soup is ready' } });
    const sessionId = randomUUID();
    const run = await collect(query({ prompt: 'make soup', options: fx.opts({ ...soupOptions(fx, { withAgent }), sessionId }) }));
    const res = lastResult(run.messages);
    assert.equal(res?.subtype, 'success', explain(run, fx));
    assert.equal(res.result, 'soup is ready');
    assert.equal(res.session_id, sessionId);
    assert.doesNotMatch(fx.stderr(), /unknown option|not supported/i);
    const reqs = await fx.api.mainRequests();
    assert.equal(reqs.length, 1);
    assert.equal(reqs[0].model, 'claude-sonnet-4-5');
    const tools = reqs[0].tools;
    assert.ok(!tools.includes('WebFetch') && !tools.includes('WebSearch'), `tools: ${tools}`);
    assert.ok(tools.includes('Read'), `tools: ${tools}`);
    if (withAgent) assert.match(reqs[0].system, /You cook soup\./);
  });
}
