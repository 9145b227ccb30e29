// Shared helpers for the ACP interop tests: an ACP client (the editors'
// library, @agentclientprotocol/sdk) connected to an agent process, which
// is either agentloop itself (`agentloop acp`) or Zed's Claude adapter
// (@agentclientprotocol/claude-agent-acp, formerly published as
// @zed-industries/claude-agent-acp) running agentloop as its CLI.
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { createRequire } from 'node:module';
import * as acp from '@agentclientprotocol/sdk';
import { AGENTLOOP_BIN, setup } from '../../ts/lib/harness.mjs';

const require = createRequire(import.meta.url);
export const ADAPTER_JS = require.resolve('@agentclientprotocol/claude-agent-acp/dist/index.js');
export const ECHO_MCP = new URL('../../ts/fixtures/echo-mcp.mjs', import.meta.url).pathname;

/** The two ways an editor runs agentloop. */
export const PATHS = {
  native: (env) => spawn(AGENTLOOP_BIN, ['acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] }),
  adapter: (env) => spawn(process.execPath, [ADAPTER_JS], {
    env: { ...env, CLAUDE_CODE_EXECUTABLE: AGENTLOOP_BIN },
    stdio: ['pipe', 'pipe', 'pipe'],
  }),
};

/**
 * An editor: records session updates (calling this.onUpdate with each,
 * when set) and answers permission requests with this.answer (an option
 * kind: allow_once, allow_always, reject_once), or holds them open when
 * answer is 'hold'.
 */
export class Editor {
  constructor() {
    this.updates = [];
    this.asked = [];
    this.answer = 'allow_once';
    this.onAsk = null;
    this.onUpdate = null;
  }
  async sessionUpdate(n) {
    this.updates.push(n.update);
    if (this.onUpdate) this.onUpdate(n.update);
  }
  async requestPermission(req) {
    this.asked.push(req);
    if (this.onAsk) this.onAsk(req);
    if (this.answer === 'hold') return new Promise(() => {}); // until the prompt is cancelled
    const opt = req.options.find((o) => o.kind === this.answer);
    if (!opt) throw new Error(`no ${this.answer} option in ${JSON.stringify(req.options)}`);
    return { outcome: { outcome: 'selected', optionId: opt.optionId } };
  }
  async readTextFile() { throw acp.RequestError.methodNotFound('fs/read_text_file'); }
  async writeTextFile() { throw acp.RequestError.methodNotFound('fs/write_text_file'); }
  /** The updates so far, forgotten. */
  take() { const u = this.updates; this.updates = []; return u; }
}

/** The text of the agent_message_chunk updates of us, joined. */
export function agentText(us) {
  return us.filter((u) => u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text')
    .map((u) => u.content.text).join('');
}

/**
 * Starts the agent of path with a scripted API (script, as in interop/ts)
 * and connects an Editor to it (editor, or a new Editor), which advertises
 * capabilities (none by default). Returns {fx, editor, conn, proc, stderr()}.
 * The process is ended when the test ends.
 */
export async function connect(t, path, script, { fx, editor, capabilities = {} } = {}) {
  fx = fx || await setup(t, script);
  const proc = PATHS[path](fx.env());
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  editor = editor || new Editor();
  const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
  const conn = new acp.ClientSideConnection(() => editor, stream);
  t.after(() => { proc.stdin.end(); proc.kill(); });
  await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: capabilities });
  return { fx, editor, conn, proc, stderr: () => stderr };
}

/** Rejects after ms, naming what timed out. */
export function within(p, ms, what) {
  let timer;
  return Promise.race([p, new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  })]).finally(() => clearTimeout(timer));
}
