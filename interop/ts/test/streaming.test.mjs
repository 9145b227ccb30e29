// Streaming input: three messages, interrupt(), setPermissionMode/setModel,
// stdin closed early with two queued prompts, rewindFiles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { setup, collect, results, explain, inputQueue } from '../lib/harness.mjs';

test('streaming input: three messages, one turn each', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'r1' }, { text: 'r2' }, { text: 'r3' }], side: { text: 'side' } });
  const input = inputQueue();
  input.push('first message');
  const run = await collect(query({ prompt: input, options: fx.opts() }), {
    onMessage: (m, all) => {
      if (m.type !== 'result') return;
      const n = results(all).length;
      if (n === 1) input.push('second message');
      else if (n === 2) input.push('third message');
      else input.end();
    },
  });
  const rs = results(run.messages);
  assert.deepEqual(rs.map((r) => r.result), ['r1', 'r2', 'r3'], explain(run, fx));
  assert.equal(new Set(rs.map((r) => r.session_id)).size, 1, 'one session for the three messages');
  const reqs = await fx.api.mainRequests();
  assert.deepEqual(reqs.map((r) => r.last_user.trim().split('\n').pop()), ['first message', 'second message', 'third message']);
  assert.deepEqual(reqs.map((r) => r.messages), [1, 3, 5], 'each turn carries the history');
  assert.equal(run.error, undefined, explain(run, fx));
});

test('streaming input: interrupt() ends the turn and the session stays usable', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'slow', delay_ms: 15000 }, { text: 'after the interrupt' }], side: { text: 'side' } });
  const input = inputQueue();
  input.push('take your time');
  let q;
  let interruptAnswer;
  q = query({ prompt: input, options: fx.opts() });
  const run = await collect(q, {
    onMessage: async (m, all) => {
      if (m.type === 'system' && m.subtype === 'init' && !interruptAnswer) {
        // Let the request reach the API, then interrupt.
        for (let i = 0; i < 50 && (await fx.api.mainRequests()).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
        interruptAnswer = await q.interrupt();
        input.push('are you there?');
      }
      if (m.type === 'result' && results(all).length === 2) input.end();
    },
  });
  const rs = results(run.messages);
  assert.equal(rs.length, 2, explain(run, fx));
  assert.notEqual(rs[0].subtype, 'success', 'the interrupted turn reported success');
  assert.equal(rs[1].subtype, 'success');
  assert.equal(rs[1].result, 'after the interrupt');
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 2);
  assert.match(reqs[1].last_user, /are you there\?/);
});

test('setPermissionMode and setModel', async (t) => {
  const fx = await setup(t, ({ cwd }) => ({
    replies: [
      { tool_use: { id: 'toolu_w1', name: 'Write', input: { file_path: path.join(cwd, 'mode.txt'), content: 'written' } } },
      { text: 'done' },
    ],
    side: { text: 'side' },
  }));
  const input = inputQueue();
  const q = query({ prompt: input, options: fx.opts({ model: 'claude-sonnet-4-5' }) });
  // Control requests work before the first message.
  const mode = await q.setPermissionMode('acceptEdits');
  await q.setModel('claude-haiku-4-5');
  input.push('write the file');
  const run = await collect(q, { onMessage: (m) => { if (m.type === 'result') input.end(); } });
  assert.ok(mode === undefined || mode.mode === 'acceptEdits', JSON.stringify(mode));
  assert.equal(existsSync(path.join(fx.cwd, 'mode.txt')), true, `acceptEdits was not applied: ${explain(run, fx)}`);
  const reqs = await fx.api.mainRequests();
  assert.ok(reqs.length >= 1, explain(run, fx));
  assert.equal(reqs[0].model, 'claude-haiku-4-5');
});

test('stdin closed early with two queued prompts', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'answer one', delay_ms: 300 }, { text: 'answer two' }], side: { text: 'side' } });
  const input = inputQueue();
  input.push('queued one');
  input.push('queued two');
  input.end();
  const run = await collect(query({ prompt: input, options: fx.opts() }));
  const reqs = await fx.api.mainRequests();
  const users = reqs.map((r) => JSON.stringify(r.body.messages));
  assert.ok(users.some((u) => u.includes('queued one')), `first prompt lost: ${explain(run, fx)}`);
  assert.ok(users.some((u) => u.includes('queued two')), `second prompt lost: ${explain(run, fx)}`);
  const rs = results(run.messages);
  assert.ok(rs.length >= 1 && rs.every((r) => r.subtype === 'success'), explain(run, fx));
  assert.match(rs[rs.length - 1].result, /answer (one|two)/);
  assert.equal(run.error, undefined, explain(run, fx));
});

test('rewindFiles restores a file written in the session', async (t) => {
  const fx = await setup(t, ({ cwd }) => ({
    replies: [
      { tool_use: { id: 'toolu_w1', name: 'Write', input: { file_path: path.join(cwd, 'doc.txt'), content: 'version two' } } },
      { text: 'rewritten' },
    ],
    side: { text: 'side' },
  }));
  const file = path.join(fx.cwd, 'doc.txt');
  writeFileSync(file, 'version one');
  const input = inputQueue();
  const uuid = randomUUID();
  input.push('rewrite the doc', { uuid });
  const q = query({ prompt: input, options: fx.opts({ enableFileCheckpointing: true, permissionMode: 'acceptEdits' }) });
  let rewind;
  let afterWrite;
  const run = await collect(q, {
    onMessage: async (m) => {
      if (m.type !== 'result') return;
      afterWrite = readFileSync(file, 'utf8');
      try {
        const dry = await q.rewindFiles(uuid, { dryRun: true });
        rewind = { dry, real: await q.rewindFiles(uuid) };
      } catch (e) {
        rewind = { error: e };
      }
      input.end();
    },
  });
  assert.equal(afterWrite, 'version two', explain(run, fx));
  assert.ok(rewind && !rewind.error, `rewindFiles failed: ${rewind?.error?.message}`);
  assert.equal(rewind.dry.canRewind, true, JSON.stringify(rewind.dry));
  assert.equal(rewind.real.canRewind, true, JSON.stringify(rewind.real));
  assert.equal(readFileSync(file, 'utf8'), 'version one');
});
