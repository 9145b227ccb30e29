// Hook callbacks: UserPromptSubmit, PreToolUse (input rewrite), PostToolUse,
// Stop, and a hook that throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { query } from '@anthropic-ai/claude-agent-sdk';
import { setup, collect, lastResult, explain } from '../lib/harness.mjs';

const writeScript = ({ cwd }) => ({
  replies: [
    { tool_use: { id: 'toolu_w1', name: 'Write', input: { file_path: path.join(cwd, 'a.txt'), content: 'original' } } },
    { text: 'done' },
  ],
  side: { text: 'side' },
});

test('UserPromptSubmit hook adds context', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'ok' }], side: { text: 'side' } });
  const prompts = [];
  const run = await collect(query({
    prompt: 'Hello hooks',
    options: fx.opts({
      hooks: {
        UserPromptSubmit: [{
          hooks: [async (input) => {
            prompts.push(input.prompt);
            return { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'CTX-MARKER-4711' } };
          }],
        }],
      },
    }),
  }));
  assert.deepEqual(prompts, ['Hello hooks'], explain(run, fx));
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 1, explain(run, fx));
  assert.match(JSON.stringify(reqs[0].body.messages), /CTX-MARKER-4711/);
  assert.equal(lastResult(run.messages)?.subtype, 'success');
});

test('PreToolUse hook rewrites the tool input', async (t) => {
  const fx = await setup(t, writeScript);
  const seen = [];
  const run = await collect(query({
    prompt: 'Write the file',
    options: fx.opts({
      hooks: {
        PreToolUse: [{
          matcher: 'Write|Edit',
          hooks: [async (input, toolUseID) => {
            seen.push({ name: input.tool_name, toolUseID });
            return {
              hookSpecificOutput: {
                hookEventName: 'PreToolUse',
                permissionDecision: 'allow',
                permissionDecisionReason: 'scripted',
                updatedInput: { ...input.tool_input, content: 'from the hook' },
              },
            };
          }],
        }],
      },
    }),
  }));
  assert.deepEqual(seen, [{ name: 'Write', toolUseID: 'toolu_w1' }], explain(run, fx));
  assert.equal(readFileSync(path.join(fx.cwd, 'a.txt'), 'utf8'), 'from the hook');
  assert.equal(lastResult(run.messages)?.subtype, 'success', explain(run, fx));
});

test('PostToolUse hook sees the result and adds context', async (t) => {
  const fx = await setup(t, writeScript);
  const seen = [];
  const run = await collect(query({
    prompt: 'Write the file',
    options: fx.opts({
      permissionMode: 'acceptEdits',
      hooks: {
        PostToolUse: [{
          matcher: 'Write',
          hooks: [async (input) => {
            seen.push(input);
            return { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'POST-MARKER-0815' } };
          }],
        }],
      },
    }),
  }));
  assert.equal(seen.length, 1, explain(run, fx));
  assert.equal(seen[0].hook_event_name, 'PostToolUse');
  assert.equal(seen[0].tool_name, 'Write');
  assert.equal(seen[0].tool_input.content, 'original');
  assert.ok(seen[0].tool_response !== undefined, 'no tool_response');
  const reqs = await fx.api.mainRequests();
  assert.equal(reqs.length, 2);
  assert.match(JSON.stringify(reqs[1].body.messages), /POST-MARKER-0815/);
});

test('Stop hook is called once at the end', async (t) => {
  const fx = await setup(t, { replies: [{ text: 'ok' }], side: { text: 'side' } });
  const seen = [];
  const run = await collect(query({
    prompt: 'Hi',
    options: fx.opts({ hooks: { Stop: [{ hooks: [async (input) => { seen.push(input.hook_event_name); return {}; }] }] } }),
  }));
  assert.deepEqual(seen, ['Stop'], explain(run, fx));
  assert.equal(lastResult(run.messages)?.subtype, 'success', explain(run, fx));
});

test('a throwing hook does not stop the tool', async (t) => {
  const fx = await setup(t, writeScript);
  let calls = 0;
  const run = await collect(query({
    prompt: 'Write the file',
    options: fx.opts({
      permissionMode: 'acceptEdits',
      hooks: { PreToolUse: [{ matcher: 'Write', hooks: [async () => { calls++; throw new Error('hook boom'); }] }] },
    }),
  }));
  assert.equal(calls, 1, explain(run, fx));
  assert.ok(!run.timedOut, explain(run, fx));
  assert.equal(existsSync(path.join(fx.cwd, 'a.txt')), true, 'the tool did not run after the hook failed');
  assert.equal(lastResult(run.messages)?.subtype, 'success', explain(run, fx));
});
