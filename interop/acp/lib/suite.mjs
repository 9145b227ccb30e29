// The checks both paths run; each asserts what the scripted API answered
// (text, tool output), so it fails when the engine's answer is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { connect, agentText, within, ECHO_MCP } from './harness.mjs';

const T = Number(process.env.INTEROP_STEP_TIMEOUT_MS || 30000);
const side = { text: 'Side answer' };

async function newSession(c, extra = {}) {
  return within(c.conn.newSession({ cwd: c.fx.cwd, mcpServers: [], ...extra }), T, 'session/new');
}

async function prompt(c, sessionId, text) {
  return within(c.conn.prompt({ sessionId, prompt: [{ type: 'text', text }] }), T, 'session/prompt');
}

function toolCalls(us) { return us.filter((u) => u.sessionUpdate === 'tool_call'); }
function toolUpdates(us) { return us.filter((u) => u.sessionUpdate === 'tool_call_update'); }

/**
 * Registers the checks for path_ ('native' or 'adapter'). known maps a
 * check's short name to the reason it is known to fail on this path; such
 * a check runs as a todo (reported, not counted as a failure).
 */
export function suite(path_, known = {}) {
  test(`${path_}: prompt streams the reply`, async (t) => {
    const c = await connect(t, path_, { replies: [{ text: 'Hello from the scripted API.' }], side });
    const s = await newSession(c);
    const r = await prompt(c, s.sessionId, 'Say hello');
    assert.equal(r.stopReason, 'end_turn', c.stderr());
    assert.equal(agentText(c.editor.take()), 'Hello from the scripted API.');
  });

  for (const [answer, written] of [['allow_once', true], ['reject_once', false]]) {
    test(`${path_}: Write with its diff, ${answer}`, async (t) => {
      let file;
      const c = await connect(t, path_, ({ cwd }) => {
        file = path.join(cwd, 'notes.txt');
        return { replies: [
          { tool_use: { id: 'toolu_w1', name: 'Write', input: { file_path: file, content: 'written by the model\n' } } },
          { text: 'Wrote it.' },
        ], side };
      });
      c.editor.answer = answer;
      const s = await newSession(c);
      const r = await prompt(c, s.sessionId, 'Write notes.txt');
      assert.equal(r.stopReason, 'end_turn', c.stderr());
      const us = c.editor.take();
      assert.equal(c.editor.asked.length, 1, 'one permission request');
      const diffs = [...toolCalls(us), ...toolUpdates(us), { content: c.editor.asked[0].toolCall.content }]
        .flatMap((u) => u.content || []).filter((x) => x.type === 'diff');
      assert.ok(diffs.some((d) => d.path === file && d.newText === 'written by the model\n'), JSON.stringify(us));
      assert.equal(existsSync(file), written);
      const upd = toolUpdates(us).filter((u) => u.status);
      assert.equal(upd[upd.length - 1].status, written ? 'completed' : 'failed');
      assert.equal(agentText(us), 'Wrote it.');
    });
  }

  test(`${path_}: Bash runs and shows its output`, async (t) => {
    const c = await connect(t, path_, { replies: [
      { tool_use: { id: 'toolu_b1', name: 'Bash', input: { command: 'echo from-bash-$((6*7))', description: 'Print a number' } } },
      { text: 'Ran it.' },
    ], side });
    const s = await newSession(c);
    await prompt(c, s.sessionId, 'Run it');
    const us = c.editor.take();
    const call = toolCalls(us).find((u) => u.toolCallId === 'toolu_b1');
    assert.ok(call, JSON.stringify(us));
    assert.equal(call.kind, 'execute');
    assert.match(JSON.stringify(toolUpdates(us)), /from-bash-42/);
  });

  test(`${path_}: cancel, then a new prompt`, { todo: known.cancel }, async (t) => {
    const c = await connect(t, path_, { replies: [
      { tool_use: { id: 'toolu_c1', name: 'Bash', input: { command: 'mkdir made-here' } } },
      { text: 'After the cancel.' },
    ], side, lenient: true });
    c.editor.answer = 'hold';
    const asked = new Promise((resolve) => { c.editor.onAsk = resolve; });
    const s = await newSession(c);
    const first = c.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: 'text', text: 'Make a dir' }] });
    await within(asked, T, 'the permission request');
    await c.conn.cancel({ sessionId: s.sessionId });
    const r = await within(first, T, 'the cancelled prompt');
    assert.equal(r.stopReason, 'cancelled');
    assert.equal(existsSync(path.join(c.fx.cwd, 'made-here')), false);
    c.editor.take();
    c.editor.answer = 'allow_once';
    const r2 = await prompt(c, s.sessionId, 'Just answer');
    assert.equal(r2.stopReason, 'end_turn', c.stderr());
    const after = c.editor.take();
    assert.equal(agentText(after), 'After the cancel.', JSON.stringify({ updates: after, stderr: c.stderr(), n: (await c.fx.api.requests()).length }).slice(0, 6000));
  });

  test(`${path_}: cancel while the reply streams, then a new prompt`, { todo: known.cancelStream }, async (t) => {
    const slow = 'Counting slowly: one two three four five six seven eight nine ten eleven twelve.';
    const c = await connect(t, path_, { replies: [
      { text: slow, chunk: 10, event_delay_ms: 300 },
      { text: 'After the cancel.' },
    ], side });
    const s = await newSession(c);
    const streaming = new Promise((resolve) => {
      c.editor.onUpdate = (u) => { if (agentText([u]) !== '') resolve(); };
    });
    const first = c.conn.prompt({ sessionId: s.sessionId, prompt: [{ type: 'text', text: 'Count' }] });
    await within(streaming, T, 'the first streamed text');
    c.editor.onUpdate = null;
    await c.conn.cancel({ sessionId: s.sessionId });
    const r = await within(first, T, 'the cancelled prompt');
    assert.equal(r.stopReason, 'cancelled');
    const before = agentText(c.editor.take());
    assert.ok(before.length > 0 && before.length < slow.length && slow.startsWith(before), before);
    const r2 = await prompt(c, s.sessionId, 'Just answer');
    assert.equal(r2.stopReason, 'end_turn', c.stderr());
    const after = c.editor.take();
    assert.equal(agentText(after), 'After the cancel.', JSON.stringify({ updates: after, stderr: c.stderr() }).slice(0, 6000));
  });

  test(`${path_}: set mode and set model`, async (t) => {
    let file;
    const c = await connect(t, path_, ({ cwd }) => {
      file = path.join(cwd, 'edited-in-accept-edits.txt');
      return { replies: [
        { tool_use: { id: 'toolu_m1', name: 'Write', input: { file_path: file, content: 'no questions asked\n' } } },
        { text: 'Mode and model set.' },
      ], side };
    });
    const s = await newSession(c);
    const ids = s.modes.availableModes.map((m) => m.id);
    for (const m of ['default', 'acceptEdits', 'plan']) assert.ok(ids.includes(m), ids.join());
    await within(c.conn.setSessionMode({ sessionId: s.sessionId, modeId: 'acceptEdits' }), T, 'set_mode');
    const models = (s.models?.availableModels ?? []).filter((m) => m.modelId !== s.models.currentModelId && m.modelId !== 'default');
    assert.ok(models.length > 0, `models offered: ${JSON.stringify(s.models)}`);
    const target = models[0].modelId;
    await within(c.conn.unstable_setSessionModel({ sessionId: s.sessionId, modelId: target }), T, 'set_model');
    const r = await prompt(c, s.sessionId, 'Write without asking');
    assert.equal(r.stopReason, 'end_turn', c.stderr());
    assert.equal(agentText(c.editor.take()), 'Mode and model set.');
    assert.equal(c.editor.asked.length, 0, 'acceptEdits writes without asking');
    assert.equal(readFileSync(file, 'utf8'), 'no questions asked\n');
    const reqs = await c.fx.api.mainRequests();
    const alias = target.replace(/\[.*\]$/, '');
    assert.ok(reqs[0].model.includes(alias), `model ${reqs[0].model} for ${target}`);
  });

  test(`${path_}: list and load a session`, async (t) => {
    const c = await connect(t, path_, { replies: [{ text: 'First answer.' }, { text: 'Second answer.' }], side });
    const s = await newSession(c);
    await prompt(c, s.sessionId, 'Remember the first prompt');
    const l = await within(c.conn.listSessions({ cwd: c.fx.cwd }), T, 'session/list');
    assert.ok(l.sessions.some((x) => x.sessionId === s.sessionId), JSON.stringify(l));
    // A second editor process loads it once the first has gone.
    const exited = new Promise((resolve) => { if (c.proc.exitCode !== null) resolve(); else c.proc.once('exit', resolve); });
    c.proc.stdin.end();
    c.proc.kill();
    await within(exited, T, 'the first agent process ending');
    const c2 = await connect(t, path_, null, { fx: c.fx });
    await within(c2.conn.loadSession({ sessionId: s.sessionId, cwd: c.fx.cwd, mcpServers: [] }), T, 'session/load');
    const replay = c2.editor.take();
    assert.match(JSON.stringify(replay), /Remember the first prompt/);
    assert.equal(agentText(replay), 'First answer.');
    const r = await prompt(c2, s.sessionId, 'And now?');
    assert.equal(r.stopReason, 'end_turn', c2.stderr());
    assert.equal(agentText(c2.editor.take()), 'Second answer.');
    const reqs = await c.fx.api.mainRequests();
    assert.match(JSON.stringify(reqs[reqs.length - 1].body), /Remember the first prompt/);
  });

  test(`${path_}: an editor-provided MCP server`, async (t) => {
    const c = await connect(t, path_, { replies: [
      { tool_use: { id: 'toolu_e1', name: 'mcp__editor-echo__echo', input: { text: 'ping-from-model' } } },
      { text: 'Echoed.' },
    ], side });
    c.editor.answer = 'allow_once';
    const s = await newSession(c, { mcpServers: [{ name: 'editor-echo', command: process.execPath, args: [ECHO_MCP], env: [] }] });
    const r = await prompt(c, s.sessionId, 'Echo something');
    assert.equal(r.stopReason, 'end_turn', c.stderr());
    const us = c.editor.take();
    assert.match(JSON.stringify(toolUpdates(us)), /echo: ping-from-model/);
    assert.equal(agentText(us), 'Echoed.');
  });
}
