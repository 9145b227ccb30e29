// An editor that offers ACP's file system and terminals: text buffers kept
// in memory over the disk (so a buffer can hold unsaved text), and
// terminals that run the agent's command as a child process of the editor,
// as an editor's terminal does.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as acp from '@agentclientprotocol/sdk';
import { Editor } from './harness.mjs';

/** What FsTerminalEditor advertises in initialize. */
export const FS_AND_TERMINAL = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

export class FsTerminalEditor extends Editor {
  constructor() {
    super();
    this.buffers = new Map(); // path → unsaved text
    this.reads = [];
    this.writes = [];
    this.terminals = new Map(); // id → {request, output, exit (a promise), status, killed, released}
    this.onTerminal = null;
  }
  async readTextFile(req) {
    this.reads.push(req.path);
    if (this.buffers.has(req.path)) return { content: this.buffers.get(req.path) };
    try {
      return { content: readFileSync(req.path, 'utf8') };
    } catch (e) {
      throw acp.RequestError.resourceNotFound(req.path);
    }
  }
  async writeTextFile(req) {
    this.writes.push(req);
    this.buffers.set(req.path, req.content);
    return {};
  }
  async createTerminal(req) {
    const id = `term-${this.terminals.size + 1}`;
    const env = { ...process.env, IN_EDITOR_TERMINAL: 'yes' };
    for (const v of req.env || []) env[v.name] = v.value;
    const child = spawn(req.command, req.args || [], { cwd: req.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const term = { request: req, output: '', status: null, killed: false, released: false, child };
    const add = (d) => { term.output += d; };
    child.stdout.on('data', add);
    child.stderr.on('data', add);
    term.exit = new Promise((resolve) => child.once('close', (code, signal) => {
      term.status = { exitCode: code, signal };
      resolve(term.status);
    }));
    this.terminals.set(id, term);
    if (this.onTerminal) this.onTerminal(id);
    return { terminalId: id };
  }
  term(id) {
    const t = this.terminals.get(id);
    if (!t) throw acp.RequestError.invalidParams({ terminalId: id });
    return t;
  }
  async terminalOutput(req) {
    const t = this.term(req.terminalId);
    return { output: t.output, truncated: false, ...(t.status ? { exitStatus: t.status } : {}) };
  }
  async waitForTerminalExit(req) { return this.term(req.terminalId).exit; }
  async killTerminal(req) {
    const t = this.term(req.terminalId);
    t.killed = true;
    t.child.kill('SIGKILL');
    return {};
  }
  async releaseTerminal(req) {
    const t = this.term(req.terminalId);
    t.released = true;
    if (t.status === null) t.child.kill('SIGKILL');
    return {};
  }
}
