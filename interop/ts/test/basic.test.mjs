// A single query, the .mjs shim, spawnClaudeCodeProcess, abort() and an API error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { query, AbortError } from '@anthropic-ai/claude-agent-sdk';
import { setup, collect, lastResult, assistantText, explain, AGENTLOOP_BIN } from '../lib/harness.mjs';

const SHIM = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'shim.mjs');

async function assertHello(fx, run) {
  const res = lastResult(run.messages);
  assert.ok(res, `no result: ${explain(run, fx)}`);
  assert.equal(res.subtype, 'success', explain(run, fx));
  assert.equal(res.result, 'Hello from the script.');
  assert.equal(run.error, undefined, explain(run, fx));
  const init = run.messages.find((m) => m.type === 'system' && m.subtype === 'init');
  assert.ok(init, 'no system/init message');
  assert.equal(init.session_id, res.session_id);
  assert.match(assistantText(run.messages), /Hello from the script\./);
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 1);
  assert.match(reqs[0].last_user, /Say hello/);
}

test('single query', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'Hello from the script.' }], side: { text: 'side' } });
  const run = await collect(query({ prompt: 'Say hello', options: fx.opts() }));
  await assertHello(fx, run);
});

test('.mjs shim as the executable', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'Hello from the script.' }], side: { text: 'side' } });
  const run = await collect(query({
    prompt: 'Say hello',
    options: fx.opts({ pathToClaudeCodeExecutable: SHIM, env: { AGENTLOOP_SHIM_TARGET: AGENTLOOP_BIN } }),
  }));
  await assertHello(fx, run);
});

test('spawnClaudeCodeProcess', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'Hello from the script.' }], side: { text: 'side' } });
  const calls = [];
  const run = await collect(query({
    prompt: 'Say hello',
    options: fx.opts({
      spawnClaudeCodeProcess: (o) => {
        calls.push(o);
        return spawn(o.command, o.args, { cwd: o.cwd, env: o.env, stdio: ['pipe', 'pipe', 'pipe'] });
      },
    }),
  }));
  assert.equal(calls.length, 1);
  assert.equal(calls[0].command, AGENTLOOP_BIN);
  assert.ok(calls[0].args.includes('stream-json'), `args: ${calls[0].args}`);
  assert.equal(calls[0].cwd, fx.cwd);
  await assertHello(fx, run);
});

test('abort() ends the query with AbortError', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'too late', delay_ms: 15000 }], side: { text: 'side' }, exhausted: { text: 'x' } });
  const ac = new AbortController();
  const started = Date.now();
  const run = await collect(query({ prompt: 'Wait for me', options: fx.opts({ abortController: ac }) }), {
    onMessage: (m) => { if (m.type === 'system' && m.subtype === 'init') setTimeout(() => ac.abort(), 200); },
  });
  assert.ok(run.messages.some((m) => m.type === 'system' && m.subtype === 'init'), explain(run, fx));
  assert.ok(run.error instanceof AbortError, `want AbortError, ${explain(run, fx)}`);
  assert.ok(Date.now() - started < 12000, 'abort did not end the run promptly');
  assert.ok(!run.messages.some((m) => m.type === 'result' && m.subtype === 'success'));
});

test('an API error ends in an error result', async (t) => {
  const fx = await setup(t, {
    replies: [{ error: { status: 400, type: 'invalid_request_error', message: 'scripted bad request' } }],
    side: { text: 'side' },
  });
  const run = await collect(query({ prompt: 'Fail please', options: fx.opts() }));
  const res = lastResult(run.messages);
  assert.ok(res, `no result: ${explain(run, fx)}`);
  assert.equal(res.is_error, true, explain(run, fx));
  assert.ok(!run.timedOut, explain(run, fx));
  const text = JSON.stringify(res) + (run.error ? run.error.message : '');
  assert.match(text, /scripted bad request|400|invalid/i);
  assert.equal((await fx.api.mainRequests()).length, 1, 'a 400 must not be retried');
});

test('an unknown flag exits 1 with the message on stderr', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'never' }], side: { text: 'side' } });
  const run = await collect(query({ prompt: 'hi', options: fx.opts({ extraArgs: { 'no-such-flag-xyz': null } }) }));
  assert.ok(run.error, `no error: ${explain(run, fx)}`);
  assert.match(run.error.message, /exited with code 1\b/, run.error.message);
  assert.match(fx.stderr(), /no-such-flag-xyz/);
  assert.equal((await fx.api.mainRequests()).length, 0);
});
