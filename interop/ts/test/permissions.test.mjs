// canUseTool: allow with updatedInput, allow plain, deny, and an interrupt
// while a permission request is pending.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { setup, collect, lastResult, explain } from '../lib/harness.mjs';

function writeScript(cwd) {
  return [
    { tool_use: { id: 'toolu_w1', name: 'Write', input: { file_path: path.join(cwd, 'a.txt'), content: 'original' } } },
    { text: 'done' },
  ];
}

const fixture = (t) => setup(t, ({ cwd }) => ({ replies: writeScript(cwd), side: { text: 'side' } }));

test('canUseTool allow with updatedInput', async (t) => {
  const fx = await fixture(t);
  const seen = [];
  const run = await collect(query({
    prompt: 'Write the file',
    options: fx.opts({
      canUseTool: async (name, input) => {
        seen.push({ name, input });
        return { behavior: 'allow', updatedInput: { ...input, content: 'changed by host' } };
      },
    }),
  }));
  assert.equal(seen.length, 1, explain(run, fx));
  assert.equal(seen[0].name, 'Write');
  assert.equal(seen[0].input.content, 'original');
  assert.equal(readFileSync(path.join(fx.cwd, 'a.txt'), 'utf8'), 'changed by host');
  assert.equal(lastResult(run.messages)?.subtype, 'success', explain(run, fx));
});

test('canUseTool allow plain', async (t) => {
  const fx = await fixture(t);
  let calls = 0;
  const run = await collect(query({
    prompt: 'Write the file',
    options: fx.opts({ canUseTool: async () => { calls++; return { behavior: 'allow' }; } }),
  }));
  assert.equal(calls, 1, explain(run, fx));
  assert.equal(readFileSync(path.join(fx.cwd, 'a.txt'), 'utf8'), 'original');
  assert.equal(lastResult(run.messages)?.subtype, 'success', explain(run, fx));
});

test('canUseTool deny', async (t) => {
  const fx = await fixture(t);
  const run = await collect(query({
    prompt: 'Write the file',
    options: fx.opts({ canUseTool: async () => ({ behavior: 'deny', message: 'not today, scripted' }) }),
  }));
  assert.equal(existsSync(path.join(fx.cwd, 'a.txt')), false, 'the denied write happened');
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 2, explain(run, fx));
  const tr = reqs[1].tool_results.find((r) => r.tool_use_id === 'toolu_w1');
  assert.ok(tr, 'no tool_result for the denied call');
  assert.equal(tr.is_error, true);
  assert.match(tr.text, /not today, scripted/);
  const res = lastResult(run.messages);
  assert.ok(res, explain(run, fx));
  assert.equal(res.permission_denials?.length, 1, JSON.stringify(res.permission_denials));
  assert.equal(res.permission_denials[0].tool_name, 'Write');
});

test('interrupt while a permission request is pending', async (t) => {
  const fx = await fixture(t);
  let q;
  let asked = 0;
  q = query({
    prompt: 'Write the file',
    options: fx.opts({
      canUseTool: (name, input, { signal }) => {
        asked++;
        // Never answer; interrupt the session instead.
        setTimeout(() => { q.interrupt().catch(() => {}); }, 100);
        return new Promise((resolve) => {
          signal.addEventListener('abort', () => resolve({ behavior: 'deny', message: 'aborted' }));
        });
      },
    }),
  });
  const run = await collect(q);
  assert.equal(asked, 1, explain(run, fx));
  assert.ok(!run.timedOut, `the interrupt did not end the run: ${explain(run, fx)}`);
  assert.ok(lastResult(run.messages), explain(run, fx));
  assert.equal(existsSync(path.join(fx.cwd, 'a.txt')), false, 'the write ran despite the interrupt');
  assert.equal((await fx.api.mainRequests()).length, 1, 'the model was called again after the interrupt');
});
