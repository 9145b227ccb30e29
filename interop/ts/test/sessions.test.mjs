// resume, forkSession and continue across two processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { setup, collect, lastResult, explain } from '../lib/harness.mjs';

async function firstRun(t) {
  const fx = await setup(t, { replies: [{ text: 'first answer' }, { text: 'second answer' }], side: { text: 'side' } });
  const run = await collect(query({ prompt: 'remember the word kumquat', options: fx.opts() }));
  const res = lastResult(run.messages);
  assert.equal(res?.subtype, 'success', explain(run, fx));
  return { fx, sessionId: res.session_id };
}

async function secondRun(fx, extra) {
  const run = await collect(query({ prompt: 'what was the word?', options: fx.opts(extra) }));
  const res = lastResult(run.messages);
  assert.equal(res?.subtype, 'success', explain(run, fx));
  assert.equal(res.result, 'second answer');
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 2);
  assert.equal(reqs[1].messages, 3, 'the second run did not carry the first run\'s history');
  assert.match(JSON.stringify(reqs[1].body.messages), /kumquat/);
  return res;
}

test('resume', async (t) => {
  const { fx, sessionId } = await firstRun(t);
  const res = await secondRun(fx, { resume: sessionId });
  assert.equal(res.session_id, sessionId);
});

test('resume with forkSession', async (t) => {
  const { fx, sessionId } = await firstRun(t);
  const res = await secondRun(fx, { resume: sessionId, forkSession: true });
  assert.notEqual(res.session_id, sessionId);
});

test('continue', async (t) => {
  const { fx, sessionId } = await firstRun(t);
  // Only the history is checked: whether --continue keeps the session id
  // is not pinned by the spec.
  await secondRun(fx, { continue: true });
  assert.ok(sessionId);
});
