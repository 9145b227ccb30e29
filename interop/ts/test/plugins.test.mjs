// A local plugin passed with the SDK's `plugins` option (--plugin-dir): its
// namespaced command is listed in system/init and runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { setup, collect, lastResult, explain } from '../lib/harness.mjs';

test('plugins: a local plugin\'s command is listed and runs', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'kit says hi' }], side: { text: 'side' } });
  const dir = path.join(fx.root, 'kit');
  mkdirSync(path.join(dir, '.claude-plugin'), { recursive: true });
  mkdirSync(path.join(dir, 'commands'), { recursive: true });
  writeFileSync(path.join(dir, '.claude-plugin', 'plugin.json'), JSON.stringify({ name: 'kit', version: '1.2.3' }));
  writeFileSync(path.join(dir, 'commands', 'hello.md'), '---\ndescription: Greets\n---\nGREET-FROM-KIT $ARGUMENTS\n');
  const run = await collect(query({ prompt: '/kit:hello world', options: fx.opts({ plugins: [{ type: 'local', path: dir }] }) }));
  const res = lastResult(run.messages);
  assert.equal(res?.subtype, 'success', explain(run, fx));
  const init = run.messages.find((m) => m.type === 'system' && m.subtype === 'init');
  assert.ok(init.plugins.some((p) => p.name === 'kit' && p.path === dir), `plugins: ${JSON.stringify(init.plugins)}`);
  assert.ok(init.slash_commands.includes('kit:hello'), `slash_commands: ${init.slash_commands}`);
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 1);
  assert.match(reqs[0].last_user, /GREET-FROM-KIT world/);
  assert.doesNotMatch(fx.stderr(), /plugin/i);
});
