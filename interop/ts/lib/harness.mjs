// Shared helpers for the interop tests: a scripted Messages API per test
// (interop/scriptedapi), a throw-away cwd and HOME, and the SDK options that
// point the official TypeScript SDK at the agentloop binary.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

export const AGENTLOOP_BIN = process.env.AGENTLOOP_BIN;
export const SCRIPTEDAPI_BIN = process.env.SCRIPTEDAPI_BIN;
if (!AGENTLOOP_BIN || !SCRIPTEDAPI_BIN) {
  throw new Error('set AGENTLOOP_BIN and SCRIPTEDAPI_BIN (run.sh does)');
}

/** Default per-query timeout; a query that hangs fails instead of blocking the suite. */
export const QUERY_TIMEOUT_MS = Number(process.env.INTEROP_QUERY_TIMEOUT_MS || 20000);

/**
 * Starts the scripted API with script (see interop/scriptedapi/main.go) and
 * returns {url, requests(), mainRequests(), close()}. requests() reads the
 * record file: every request the engine sent, in order.
 */
export async function startApi(dir, script) {
  const scriptPath = path.join(dir, `script-${Date.now()}-${Math.random().toString(16).slice(2)}.json`);
  const recordPath = scriptPath.replace(/\.json$/, '.requests.jsonl');
  await writeFile(scriptPath, JSON.stringify(script));
  const child = spawn(SCRIPTEDAPI_BIN, ['-script', scriptPath, '-record', recordPath], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once('line', (line) => { rl.close(); resolve(line.trim()); });
    child.once('exit', (code) => reject(new Error(`scriptedapi exited ${code}: ${stderr}`)));
  });
  async function requests() {
    if (!existsSync(recordPath)) return [];
    const text = await readFile(recordPath, 'utf8');
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }
  return {
    url,
    requests,
    /** Messages requests that declared tools (agent-loop turns). */
    async mainRequests() {
      return (await requests()).filter((r) => r.path === '/v1/messages' && (r.tools || []).length > 0);
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * Per-test fixture: temp cwd and HOME, the scripted API, and an opts()
 * builder for query() options. script is the scripted API's script, or a
 * function of {root, cwd, home} that returns it. Everything is cleaned up when the test ends.
 */
export async function setup(t, script) {
  const root = await mkdtemp(path.join(tmpdir(), 'agentloop-interop-'));
  const cwd = path.join(root, 'work');
  const home = path.join(root, 'home');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(cwd, { recursive: true });
  await mkdir(home, { recursive: true });
  const api = await startApi(root, typeof script === 'function' ? script({ root, cwd, home }) : script);
  const stderr = [];
  t.after(async () => {
    await api.close();
    if (!process.env.INTEROP_KEEP) await rm(root, { recursive: true, force: true });
  });
  function env(extra = {}) {
    return {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: 'sk-interop-test',
      ...extra,
    };
  }
  function opts(extra = {}) {
    const { env: extraEnv, ...rest } = extra;
    return {
      pathToClaudeCodeExecutable: AGENTLOOP_BIN,
      cwd,
      env: env(extraEnv),
      stderr: (d) => stderr.push(d),
      ...rest,
    };
  }
  return { root, cwd, home, api, opts, env, stderr: () => stderr.join('') };
}

/**
 * Drains a Query into an array. Resolves {messages, error}: error is what
 * the iterator threw (undefined on a normal end). A query that does not end
 * within timeoutMs is closed and reported as an error.
 */
export async function collect(q, { timeoutMs = QUERY_TIMEOUT_MS, onMessage } = {}) {
  const messages = [];
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const drain = (async () => {
    try {
      for await (const m of q) {
        messages.push(m);
        if (onMessage) await onMessage(m, messages);
      }
      return undefined;
    } catch (e) {
      return e;
    }
  })();
  const r = await Promise.race([drain, timeout]);
  clearTimeout(timer);
  if (r === 'timeout') {
    try { q.close(); } catch { /* already closed */ }
    return { messages, error: new Error(`query did not end within ${timeoutMs} ms`), timedOut: true };
  }
  return { messages, error: r };
}

export function results(messages) {
  return messages.filter((m) => m.type === 'result');
}

export function lastResult(messages) {
  const rs = results(messages);
  return rs[rs.length - 1];
}

export function assistantText(messages) {
  return messages
    .filter((m) => m.type === 'assistant')
    .flatMap((m) => m.message.content)
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n');
}

/** A push-driven async iterable of SDK user messages (streaming input mode). */
export function inputQueue() {
  const items = [];
  let wake;
  let ended = false;
  return {
    push(text, extra = {}) {
      items.push({
        type: 'user',
        message: { role: 'user', content: text },
        parent_tool_use_id: null,
        ...extra,
      });
      if (wake) { wake(); wake = undefined; }
    },
    end() {
      ended = true;
      if (wake) { wake(); wake = undefined; }
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (items.length) { yield items.shift(); continue; }
        if (ended) return;
        await new Promise((r) => { wake = r; });
      }
    },
  };
}

/** Describes a failed run for assertion messages. */
export function explain(run, fx) {
  const types = run.messages.map((m) => m.type + (m.subtype ? '/' + m.subtype : '')).join(', ');
  return `messages: [${types}]; error: ${run.error ? run.error.message : 'none'}; stderr: ${fx ? fx.stderr().slice(-600) : ''}`;
}
