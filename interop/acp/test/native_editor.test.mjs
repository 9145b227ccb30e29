// The editor's file system and terminals on the native path (`agentloop
// acp`): an editor that advertises fs.readTextFile, fs.writeTextFile and
// terminal gets Read/Edit/Write through fs/* and Bash in its terminal,
// behind the same permission checks. Zed's Claude adapter never calls
// these methods (its CLI reads and runs locally), so there is no adapter
// counterpart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { setup } from '../../ts/lib/harness.mjs';
import { connect, agentText, within } from '../lib/harness.mjs';
import { FsTerminalEditor, FS_AND_TERMINAL } from '../lib/editor_caps.mjs';

const T = Number(process.env.INTEROP_STEP_TIMEOUT_MS || 30000);
const side = { text: 'Side answer' };

/**
 * Connects a FsTerminalEditor natively with script. settings go to the
 * user's settings file; the sandbox is off unless they say otherwise, since
 * only commands the sandbox leaves unconfined run in the editor's terminal.
 */
async function connectEditor(t, script, settings = {}) {
  const fx = await setup(t, script);
  mkdirSync(path.join(fx.home, '.claude'), { recursive: true });
  writeFileSync(path.join(fx.home, '.claude', 'settings.json'),
    JSON.stringify({ sandbox: { enabled: false }, ...settings }));
  const editor = new FsTerminalEditor();
  const c = await connect(t, 'native', null, { fx, editor, capabilities: FS_AND_TERMINAL });
  const s = await within(c.conn.newSession({ cwd: fx.cwd, mcpServers: [] }), T, 'session/new');
  return { ...c, sessionId: s.sessionId };
}

async function prompt(c, text) {
  return within(c.conn.prompt({ sessionId: c.sessionId, prompt: [{ type: 'text', text }] }), T, 'session/prompt');
}

/** The text of the tool_result for id in the requests the engine sent. */
async function toolResult(c, id) {
  for (const r of await c.fx.api.mainRequests()) {
    for (const m of r.body?.messages || []) {
      for (const b of Array.isArray(m.content) ? m.content : []) {
        if (b.type === 'tool_result' && b.tool_use_id === id) {
          return typeof b.content === 'string' ? b.content : JSON.stringify(b.content);
        }
      }
    }
  }
  assert.fail(`no tool_result for ${id}`);
}

test('native: Read shows the editor\'s unsaved buffer and Edit writes through fs/write_text_file', async (t) => {
  let file;
  const c = await connectEditor(t, ({ cwd }) => {
    file = path.join(cwd, 'buffer.txt');
    writeFileSync(file, 'saved on disk\n');
    return { replies: [
      { tool_use: { id: 'toolu_r1', name: 'Read', input: { file_path: file } } },
      { tool_use: { id: 'toolu_e1', name: 'Edit', input: { file_path: file, old_string: 'unsaved', new_string: 'edited' } } },
      { text: 'Edited the buffer.' },
    ], side };
  });
  c.editor.buffers.set(file, 'unsaved in the editor\n');
  const r = await prompt(c, 'Edit the buffer');
  assert.equal(r.stopReason, 'end_turn', c.stderr());
  assert.match(await toolResult(c, 'toolu_r1'), /unsaved in the editor/);
  assert.match(await toolResult(c, 'toolu_e1'), /updated successfully/);
  assert.deepEqual(c.editor.writes.map((w) => [w.path, w.content]), [[file, 'edited in the editor\n']]);
  assert.equal(readFileSync(file, 'utf8'), 'saved on disk\n', 'the disk is left to the editor');
  assert.equal(agentText(c.editor.take()), 'Edited the buffer.');
});

test('native: Bash runs in the editor\'s terminal, embedded in the tool call', async (t) => {
  const c = await connectEditor(t, { replies: [
    { tool_use: { id: 'toolu_t1', name: 'Bash', input: { command: 'echo terminal-$IN_EDITOR_TERMINAL-$((6*7))' } } },
    { text: 'Ran it.' },
  ], side });
  const r = await prompt(c, 'Run it');
  assert.equal(r.stopReason, 'end_turn', c.stderr());
  assert.equal(await toolResult(c, 'toolu_t1'), 'terminal-yes-42');
  assert.equal(c.editor.terminals.size, 1);
  const [[id, term]] = [...c.editor.terminals];
  assert.deepEqual(term.request.args, ['-c', 'echo terminal-$IN_EDITOR_TERMINAL-$((6*7))']);
  assert.equal(term.request.cwd, c.fx.cwd);
  assert.ok(term.released, 'the terminal was released');
  const us = c.editor.take();
  const shown = us.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'toolu_t1')
    .flatMap((u) => u.content || []).filter((x) => x.type === 'terminal').map((x) => x.terminalId);
  assert.ok(shown.length > 0 && shown.every((x) => x === id), JSON.stringify(us));
});

test('native: deny rules keep calls from the editor\'s files and terminal', async (t) => {
  let file;
  const c = await connectEditor(t, ({ cwd }) => {
    file = path.join(cwd, 'secret.txt');
    writeFileSync(file, 'secret\n');
    return { replies: [
      { tool_use: { id: 'toolu_d1', name: 'Read', input: { file_path: file } } },
      { tool_use: { id: 'toolu_d2', name: 'Bash', input: { command: 'touch should-not-exist' } } },
      { text: 'Denied.' },
    ], side };
  }, { permissions: { deny: ['Read(./secret.txt)', 'Bash(touch:*)'] } });
  const r = await prompt(c, 'Try it');
  assert.equal(r.stopReason, 'end_turn', c.stderr());
  assert.match(await toolResult(c, 'toolu_d1'), /denied/);
  assert.match(await toolResult(c, 'toolu_d2'), /denied/);
  assert.deepEqual(c.editor.reads, []);
  assert.equal(c.editor.terminals.size, 0);
  assert.equal(existsSync(path.join(c.fx.cwd, 'should-not-exist')), false);
});

test('native: cancel kills the command in the editor\'s terminal', async (t) => {
  const c = await connectEditor(t, { replies: [
    { tool_use: { id: 'toolu_k1', name: 'Bash', input: { command: 'echo started; sleep 300' } } },
    { text: 'After the cancel.' },
  ], side, lenient: true });
  const started = new Promise((resolve) => { c.editor.onTerminal = resolve; });
  const first = c.conn.prompt({ sessionId: c.sessionId, prompt: [{ type: 'text', text: 'Sleep' }] });
  const id = await within(started, T, 'terminal/create');
  await c.conn.cancel({ sessionId: c.sessionId });
  const r = await within(first, T, 'the cancelled prompt');
  assert.equal(r.stopReason, 'cancelled');
  const term = c.editor.terminals.get(id);
  await within(term.exit, T, 'the command ending');
  for (let i = 0; i < 100 && !term.released; i++) await new Promise((res) => setTimeout(res, 50));
  assert.ok(term.killed, 'terminal/kill was sent');
  assert.ok(term.released, 'terminal/release was sent');
  c.editor.take();
  const r2 = await prompt(c, 'Just answer');
  assert.equal(r2.stopReason, 'end_turn', c.stderr());
  assert.equal(agentText(c.editor.take()), 'After the cancel.');
});
