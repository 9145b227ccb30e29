// The web page of `agentloop serve`: a small client of the /v1 HTTP API.
// Plain ES module, no framework, no build step. Every string that comes
// from the server is put into the page as text (textContent), never as HTML.

const $ = (id) => document.getElementById(id);
const base = location.pathname.replace(/[^/]*$/, ''); // the page's folder
const TOKEN_KEY = 'agentloop.token';

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  current: null, // the open session's record
  lastEventId: 0, // the highest event id seen on the open session's stream
  stream: null, // AbortController of the open stream
  live: null, // the assistant text element that stream_event deltas extend
  tools: new Map(), // tool_use_id → list item, to attach results
  echoed: [], // texts sent from this page not yet seen back on the stream
  refreshTimer: 0,
  initLine: '', // the last model and mode shown
  opening: 0, // counts openSession calls
};

// h builds an element: h('li', {class: 'x', onclick: f}, 'text', child…).
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

function say(text, isError = false) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('error', isError);
}

// api calls one /v1 endpoint with the bearer token and returns the decoded
// JSON body (null for 204). A non-2xx status throws an Error whose message is
// the server's error message.
async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${state.token}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = { error: { message: text } }; }
  }
  if (!res.ok) {
    const msg = data?.error?.message || res.statusText;
    const err = new Error(`${method} ${path}: ${res.status} ${msg}`);
    err.status = res.status;
    throw err;
  }
  return data;
}

const money = (x) => `$${Number(x || 0).toFixed(4)}`;

// ---- sessions list ----

async function refreshSessions() {
  if (!state.token) return;
  try {
    const sessions = (await api('GET', 'v1/sessions'))?.sessions || [];
    const ul = $('sessions');
    ul.replaceChildren(...sessions.map((s) => h('li', {},
      h('button', {
        type: 'button', class: 'session',
        'aria-current': state.current?.id === s.id ? 'true' : null,
        onclick: () => openSession(s.id),
      },
      h('span', { class: 'title' }, s.title || s.id),
      h('span', { class: 'meta' },
        `${s.state} · ${money(s.cost_usd)} · ${s.turns} turn${s.turns === 1 ? '' : 's'}`)))));
    if (!sessions.length) ul.append(h('li', { class: 'empty' }, 'No sessions yet.'));
  } catch (e) {
    say(e.message, true);
  }
}

async function startSession(form) {
  const body = {};
  for (const [k, v] of new FormData(form)) if (String(v).trim() !== '') body[k] = String(v).trim();
  try {
    const rec = await api('POST', 'v1/sessions', body);
    form.reset();
    say(`Started session ${rec.id}.`);
    await openSession(rec.id);
  } catch (e) {
    say(e.message, true);
  }
}

// ---- one session ----

// showFacts shows a record's title, cost and turns, and its state only when
// withState: once the event stream is followed, its state events are newer
// than any record fetched concurrently.
function showFacts(rec, withState) {
  $('chat-title').textContent = rec.title || rec.id;
  if (withState && rec.state) setState(rec.state);
  if (rec.cost_usd !== undefined) $('chat-cost').textContent = money(rec.cost_usd);
  if (rec.turns !== undefined) $('chat-turns').textContent = String(rec.turns);
}

function setState(s) {
  $('chat-state').textContent = s;
  $('interrupt').disabled = s === 'idle';
}

async function openSession(id) {
  const gen = ++state.opening; // a later click wins over a slower earlier one
  if (state.stream) state.stream.abort();
  Object.assign(state, { lastEventId: 0, live: null, tools: new Map(), echoed: [], initLine: '' });
  $('log').replaceChildren();
  $('perm-list').replaceChildren();
  $('perms').hidden = true;
  try {
    const rec = await api('GET', `v1/sessions/${encodeURIComponent(id)}`);
    if (gen !== state.opening) return;
    if (state.stream) state.stream.abort();
    state.current = rec;
    $('chat').hidden = false;
    showFacts(rec, true);
    for (const p of rec.pending_permissions || []) addPermission(p);
    follow(id);
    refreshSessions();
  } catch (e) {
    say(e.message, true);
  }
}

// refreshRecord reloads the open session's record (its cost and turns are
// the session's totals) and the list beside it.
async function refreshRecord() {
  const id = state.current?.id;
  if (!id) return;
  try {
    const rec = await api('GET', `v1/sessions/${encodeURIComponent(id)}`);
    if (state.current?.id === id) showFacts(rec);
  } catch (e) {
    say(e.message, true);
  }
  refreshSessions();
}

async function sendMessage(form) {
  const text = $('message').value;
  if (!state.current || !text.trim()) return;
  // Shown before the POST returns: the stream may echo the text first.
  state.echoed.push(text);
  const li = addEntry('user', 'You', text);
  try {
    await api('POST', `v1/sessions/${encodeURIComponent(state.current.id)}/messages`, { text });
    $('message').value = '';
  } catch (e) {
    li.remove();
    const i = state.echoed.indexOf(text);
    if (i >= 0) state.echoed.splice(i, 1);
    say(e.message, true);
  }
}

async function interrupt() {
  if (!state.current) return;
  try {
    await api('POST', `v1/sessions/${encodeURIComponent(state.current.id)}/interrupt`);
    say('Interrupt sent.');
  } catch (e) {
    say(e.message, true);
  }
}

// ---- the event stream ----

// follow reads the session's Server-Sent Events with fetch (EventSource
// cannot send an Authorization header) and reconnects with Last-Event-ID
// after a drop, so no event is shown twice or lost.
async function follow(id) {
  const ctl = new AbortController();
  state.stream = ctl;
  let delay = 500;
  while (!ctl.signal.aborted) {
    try {
      const headers = { Authorization: `Bearer ${state.token}`, Accept: 'text/event-stream' };
      if (state.lastEventId > 0) headers['Last-Event-ID'] = String(state.lastEventId);
      const res = await fetch(`${base}v1/sessions/${encodeURIComponent(id)}/events`, {
        headers, signal: ctl.signal, cache: 'no-store',
      });
      if (!res.ok) {
        if (res.status === 401 || res.status === 404) {
          say(`Event stream: ${res.status} ${res.statusText}`, true);
          return;
        }
        throw new Error(`event stream: ${res.status}`);
      }
      delay = 500;
      await readEvents(res.body, (ev) => { if (!ctl.signal.aborted) onEvent(ev); });
    } catch (e) {
      if (ctl.signal.aborted) return;
      console.warn('event stream dropped:', e);
    }
    if (ctl.signal.aborted) return;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 10000);
  }
}

// readEvents parses an SSE body: lines of `field: value`, an event ends at a
// blank line; comment lines (`: ping`) are skipped.
async function readEvents(body, emit) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let ev = { id: '', event: 'message', data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let nl;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (ev.data.length) emit({ id: ev.id, event: ev.event, data: ev.data.join('\n') });
        ev = { id: '', event: 'message', data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? '' : line.slice(colon + 1);
      if (val.startsWith(' ')) val = val.slice(1);
      if (field === 'id') ev.id = val;
      else if (field === 'event') ev.event = val;
      else if (field === 'data') ev.data.push(val);
    }
  }
}

function onEvent({ id, event, data }) {
  const n = Number(id);
  if (Number.isFinite(n) && n > 0) {
    if (n <= state.lastEventId) return; // already shown
    state.lastEventId = n;
  }
  let d;
  try { d = JSON.parse(data); } catch { return; }
  switch (event) {
    case 'message': onMessage(d); break;
    case 'permission_request': addPermission(d); break;
    case 'permission_resolved': resolvePermission(d); break;
    case 'state':
      setState(d.state);
      if (d.state === 'idle') { // debounced: a replay holds many turns
        clearTimeout(state.refreshTimer);
        state.refreshTimer = setTimeout(refreshRecord, 150);
      }
      break;
    default: break;
  }
}

// onMessage shows one stream-json message.
function onMessage(m) {
  switch (m.type) {
    case 'assistant': {
      for (const b of m.message?.content || []) {
        if (b.type === 'text') {
          if (state.live) { state.live.textContent = b.text; state.live = null; }
          else addEntry('assistant', 'Assistant', b.text);
        } else if (b.type === 'tool_use') {
          addTool(b);
        }
      }
      state.live = null;
      break;
    }
    case 'user': {
      const c = m.message?.content;
      const blocks = typeof c === 'string' ? [{ type: 'text', text: c }] : (c || []);
      for (const b of blocks) {
        if (b.type === 'tool_result') addToolResult(b);
        else if (b.type === 'text' && !m.isSynthetic) {
          const i = state.echoed.indexOf(b.text);
          if (i >= 0) state.echoed.splice(i, 1);
          else addEntry('user', 'You', b.text);
        }
      }
      break;
    }
    case 'stream_event': {
      const e = m.event;
      if (e?.type === 'content_block_delta' && e.delta?.type === 'text_delta') {
        if (!state.live) state.live = addEntry('assistant', 'Assistant', '').querySelector('.text');
        state.live.textContent += e.delta.text;
      }
      break;
    }
    case 'result': {
      $('chat-cost').textContent = money(m.total_cost_usd);
      $('chat-turns').textContent = String(m.num_turns ?? 0);
      const ok = !m.is_error;
      const detail = ok ? `${m.num_turns} turn(s), ${money(m.total_cost_usd)}`
        : (m.errors || []).join('; ') || m.subtype;
      const stopped = !ok && /interrupt/i.test(detail);
      addEntry(ok ? 'result' : 'result error', ok ? 'Done' : stopped ? 'Interrupted' : 'Error', detail);
      break;
    }
    case 'system':
      if (m.subtype === 'init') { // each turn starts with one: show changes only
        const line = `model ${m.model}, mode ${m.permissionMode}`;
        if (line !== state.initLine) addEntry('system', 'Session', line);
        state.initLine = line;
      }
      break;
    default:
      break;
  }
}

function addEntry(kind, who, text) {
  const li = h('li', { class: `entry ${kind}` },
    h('span', { class: 'who' }, who), h('div', { class: 'text' }, text));
  const log = $('log');
  log.append(li);
  log.scrollTop = log.scrollHeight;
  return li;
}

// summarize gives a one-line view of a tool input.
function summarize(input) {
  if (!input || typeof input !== 'object') return '';
  const v = input.command ?? input.file_path ?? input.path ?? input.pattern ?? input.url ?? input.description;
  const s = typeof v === 'string' ? v : JSON.stringify(input);
  return s.length > 160 ? `${s.slice(0, 157)}…` : s;
}

function addTool(b) {
  const li = addEntry('tool', `Tool: ${b.name}`, summarize(b.input));
  li.dataset.toolUseId = b.id;
  state.tools.set(b.id, li);
}

function resultText(content) {
  if (typeof content === 'string') return content;
  return (content || []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

function addToolResult(b) {
  const text = resultText(b.content);
  const det = h('details', { class: b.is_error ? 'tool-result error' : 'tool-result' },
    h('summary', {}, b.is_error ? 'Tool error' : `Result (${text.length} chars)`),
    h('pre', {}, text));
  const li = state.tools.get(b.tool_use_id);
  if (li) li.append(det);
  else addEntry('tool', 'Tool result', '').append(det);
}

// ---- permission prompts ----

function addPermission(p) {
  const list = $('perm-list');
  if (list.querySelector(`[data-request-id="${CSS.escape(p.request_id)}"]`)) return;
  const answer = (behavior) => answerPermission(p, behavior, li);
  const li = h('li', { 'data-request-id': p.request_id, class: 'perm' },
    h('p', {}, h('strong', {}, p.title || `Allow ${p.tool_name}?`)),
    p.description ? h('p', {}, p.description) : null,
    h('pre', {}, summarize(p.input) || JSON.stringify(p.input)),
    p.blocked_path ? h('p', {}, `Path outside the working directory: ${p.blocked_path}`) : null,
    h('div', { class: 'row' },
      h('button', { type: 'button', class: 'allow', onclick: () => answer('allow') }, 'Allow'),
      h('button', { type: 'button', class: 'deny', onclick: () => answer('deny') }, 'Deny')));
  list.append(li);
  $('perms').hidden = false;
}

async function answerPermission(p, behavior, li) {
  const id = state.current?.id;
  if (!id) return;
  for (const b of li.querySelectorAll('button')) b.disabled = true;
  const body = { behavior };
  if (behavior === 'deny') body.message = 'Denied from the web page.';
  try {
    await api('POST', `v1/sessions/${encodeURIComponent(id)}/permissions/${encodeURIComponent(p.request_id)}`, body);
    resolvePermission({ request_id: p.request_id, behavior });
  } catch (e) {
    if (e.status === 404 || e.status === 409) resolvePermission({ request_id: p.request_id });
    else for (const b of li.querySelectorAll('button')) b.disabled = false;
    say(e.message, true);
  }
}

function resolvePermission(d) {
  const li = $('perm-list').querySelector(`[data-request-id="${CSS.escape(d.request_id)}"]`);
  if (!li) return;
  li.remove();
  if (d.behavior) addEntry('system', 'Permission', `${d.behavior === 'allow' ? 'Allowed' : 'Denied'}`);
  $('perms').hidden = $('perm-list').children.length === 0;
}

// ---- wiring ----

function useToken(t) {
  state.token = t;
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
  $('token').value = '';
  $('token').placeholder = t ? 'saved (type to replace)' : 'Bearer token';
  if (!t) {
    if (state.stream) state.stream.abort();
    $('sessions').replaceChildren();
    $('chat').hidden = true;
  }
}

$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const v = $('token').value.trim();
  if (!v) return;
  useToken(v);
  say('Token saved for this tab.');
  refreshSessions();
});
$('token-forget').addEventListener('click', () => { useToken(''); say('Token forgotten.'); });
$('refresh').addEventListener('click', refreshSessions);
$('new-session').addEventListener('submit', (e) => { e.preventDefault(); startSession(e.target); });
$('composer').addEventListener('submit', (e) => { e.preventDefault(); sendMessage(e.target); });
$('message').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); $('composer').requestSubmit(); }
});
$('interrupt').addEventListener('click', interrupt);

if (state.token) {
  useToken(state.token);
  refreshSessions();
} else {
  say('Enter an API token to begin.');
}
