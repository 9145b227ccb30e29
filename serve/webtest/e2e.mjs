// End-to-end test of the agentloop serve web page in a real browser
// (Debian's Chromium, driven by playwright-core). webtest_test.go starts
// the server and runs this script; it can also be run by hand against any
// server whose model is scripted the same way (see webtest_test.go):
//
//   WEBTEST_URL=http://127.0.0.1:8080/ WEBTEST_TOKEN=secret \
//   WEBTEST_SCREENSHOT=/tmp/serve-web.png node e2e.mjs
//
// Env: WEBTEST_URL (the page), WEBTEST_TOKEN (a bearer token),
// WEBTEST_SCREENSHOT (where the PNG goes), CHROMIUM (the browser binary,
// default /usr/bin/chromium), WEBTEST_TIMEOUT_MS (per step, default 15000).
//
// The scripted model must answer: first a Bash tool call running COMMAND
// (it writes a file, so it needs permission), then the text of REPLY1;
// on the next message, the text of REPLY2; on the third, anything, slowly
// enough (seconds) for the page to interrupt it.
//
// Exit 0 and a last line "e2e: passed" when every step held; exit 1 with the
// failed step otherwise (a screenshot of the failure goes next to the
// requested one, suffixed -failed.png).

import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const COMMAND = 'touch from-web.txt && echo hello-from-bash';
export const REPLY1 = 'The command printed hello-from-bash.';
export const REPLY2 = 'Second turn: still here.';

const url = need('WEBTEST_URL');
const token = need('WEBTEST_TOKEN');
const shot = need('WEBTEST_SCREENSHOT');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const timeout = Number(process.env.WEBTEST_TIMEOUT_MS || 15000);

function need(k) {
  const v = process.env[k];
  if (!v) {
    console.error(`e2e: ${k} is not set`);
    process.exit(2);
  }
  return v;
}

let step = 'launch';
const log = (s) => { step = s; console.log(`e2e: ${s}`); };

const profile = mkdtempSync(join(tmpdir(), 'agentloop-webtest-'));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
});
const problems = [];
const page = ctx.pages()[0] || await ctx.newPage();
page.setDefaultTimeout(timeout);
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
page.on('console', (m) => {
  if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  else if (process.env.WEBTEST_DEBUG) console.log(`page ${m.type()}: ${m.text()}`);
});

const expect = async (cond, what) => {
  if (!(await cond)) throw new Error(`expected ${what}`);
};

let failed = null;
try {
  log('open the page');
  await page.goto(url);
  await page.getByText('Enter an API token to begin.').waitFor();

  log('enter the token');
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Use token' }).click();
  await page.getByText('Token saved for this tab.').waitFor();

  log('start a session');
  await page.getByLabel('Title (optional)').fill('Web test session');
  await page.getByLabel('Permission mode').selectOption('default');
  await page.getByRole('button', { name: 'Start session' }).click();
  await page.getByRole('heading', { name: 'Web test session' }).waitFor();
  await page.locator('.sessions').getByText('Web test session').waitFor();

  log('send a message');
  await page.getByLabel('Message').fill('Run the echo command, please.');
  await page.getByRole('button', { name: 'Send' }).click();
  const logList = page.getByRole('list', { name: 'Conversation' });
  await logList.getByText('Run the echo command, please.').waitFor();

  log('see the tool call and the permission prompt');
  const tool = logList.locator('.entry.tool', { hasText: 'Tool: Bash' });
  await tool.getByText(COMMAND).waitFor();
  const prompt = page.getByRole('region', { name: 'Permission requests' });
  await prompt.waitFor();
  await prompt.getByText(COMMAND).waitFor();
  await page.locator('#chat-state', { hasText: 'requires_action' }).waitFor();

  log('approve it');
  await prompt.getByRole('button', { name: 'Allow' }).click();
  await prompt.waitFor({ state: 'hidden' });

  log('see the tool result (collapsed) and the answer');
  const details = tool.locator('details.tool-result');
  await details.waitFor();
  await expect(details.evaluate((d) => !d.open), 'the tool result collapsed');
  await details.locator('summary').click();
  await details.getByText('hello-from-bash').first().waitFor();
  await logList.getByText(REPLY1).waitFor();
  await logList.locator('.entry.result', { hasText: 'Done' }).waitFor();
  await page.locator('#chat-turns', { hasText: /^[1-9]/ }).waitFor();
  await page.locator('#chat-state', { hasText: 'idle' }).waitFor();
  await expect(tool.count().then((n) => n === 1), 'one tool entry (no event shown twice)');
  await expect(logList.getByText(REPLY1).count().then((n) => n === 1), 'the answer shown once');

  log('reload and resume the session');
  await page.reload();
  await page.getByText('Enter an API token to begin.').waitFor({ state: 'hidden' });
  await page.locator('.sessions').getByRole('button', { name: /Web test session/ }).click();
  await logList.getByText(REPLY1).waitFor(); // replayed from the event log
  await logList.getByText('Run the echo command, please.').waitFor(); // the prompt too
  await expect(logList.getByText('Run the echo command, please.').count().then((n) => n === 1), 'the first prompt shown once after replay');
  await page.getByLabel('Message').fill('Once more.');
  await page.getByRole('button', { name: 'Send' }).click();
  await logList.getByText(REPLY2).waitFor();
  await logList.locator('.entry.result').nth(1).waitFor(); // the text comes before its result
  await expect(logList.locator('.entry.result').count().then((n) => n === 2), 'two results after resuming');
  await expect(logList.getByText(REPLY1).count().then((n) => n === 1), 'the first answer shown once after replay');
  await page.locator('#chat-state', { hasText: 'idle' }).waitFor();

  log('interrupt a slow turn');
  await page.getByLabel('Message').fill('Take your time.');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('#chat-state', { hasText: 'running' }).waitFor();
  await page.getByRole('button', { name: 'Interrupt' }).click();
  await logList.locator('.entry.result.error').waitFor();
  await page.locator('#chat-state', { hasText: 'idle' }).waitFor();
  await expect(page.getByRole('button', { name: 'Interrupt' }).isDisabled(), 'Interrupt disabled when idle');
  await expect(logList.locator('.entry.system', { hasText: 'model ' }).count().then((n) => n === 1),
    'the model and mode shown once (they did not change)');

  if (problems.length) throw new Error(problems.join('\n'));
  log('screenshot');
  await logList.evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await page.screenshot({ path: shot, fullPage: true });
} catch (e) {
  failed = e;
  console.error(`e2e: FAILED at "${step}": ${e.message}`);
  if (problems.length) console.error(problems.join('\n'));
  await page.screenshot({ path: shot.replace(/\.png$/, '') + '-failed.png', fullPage: true }).catch(() => {});
} finally {
  await ctx.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
}
if (failed) process.exit(1);
console.log('e2e: passed');
