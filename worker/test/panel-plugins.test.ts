import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'puppeteer-core';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';

/**
 * The panel's plugin runner, used like a person would with a second (headless) browser: a
 * plugin family written here (plain JS) is listed, its form filled in and run on a real page,
 * and what the plugin received comes back on screen exactly as it was typed.
 */

const WAIT_MS = 20_000;
/** An id that must be encoded in the plugin's route. */
const PAGE = 'plug 1/a';

const README = '# demo/echo\n\nEchoes its parameters and stores a small file.\n';

/** Answers what it received and a file: the panel must show both. */
const ECHO_JS = `
module.exports.default = {
  async run(ctx, params) {
    const link = ctx.media.put(Buffer.from('hello'), 'echo.txt', 'text/plain');
    return { received: params, media_url: link.media_url };
  },
};`;

const PEEK_JS = `
module.exports.default = {
  async run(ctx, params) {
    return { received: params };
  },
};`;

const ECHO_PARAMS = [
  {
    name: 'query',
    type: 'text',
    label: 'Search query',
    required: true,
    placeholder: 'what to look for',
    help_text: 'Typed into the site search.',
  },
  { name: 'target', type: 'url', label: 'Target URL', placeholder: 'https://example.com/' },
  { name: 'notes', type: 'textarea', label: 'Notes', placeholder: 'anything else' },
  { name: 'mode', type: 'select', label: 'Mode', options: ['fast', 'careful'], default: 'careful' },
  {
    name: 'count',
    type: 'number',
    label: 'How many',
    min: 1,
    max: 10,
    default: 3,
    help_text: 'From 1 to 10.',
  },
  { name: 'loud', type: 'checkbox', label: 'Loud', default: false },
];

let w: RunningWorker;
let pluginsDir: string;
let downloads: string;
let client: ClientBrowser | undefined;
let context: BrowserContext;
let page: Page;

interface Sent {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string | undefined;
}
const sent: Sent[] = [];
const scriptErrors: string[] = [];

beforeAll(async () => {
  pluginsDir = writePluginTree([
    {
      name: 'demo/echo',
      readme: README,
      js: ECHO_JS,
      manifest: {
        description: 'Echoes what it was given. Also stores a file.',
        methods: ['POST'],
        bg_color: ['#0a5', '#05a'],
        parameters: ECHO_PARAMS,
        response: { received: 'object', media_url: 'string' },
      },
    },
    {
      name: 'demo/peek_state',
      js: PEEK_JS,
      manifest: {
        description: 'Reads without changing anything.',
        methods: ['GET'],
        bg_color: ['#a50', '#50a'],
        parameters: [
          { name: 'depth', type: 'number', label: 'Depth' },
          { name: 'deep', type: 'checkbox', label: 'Deep', default: true },
        ],
        response: { received: 'object' },
      },
    },
    // A manifest with no implementation: skipped at start, and the panel says so.
    {
      name: 'demo/broken',
      manifest: {
        description: 'Never built.',
        methods: ['POST'],
        bg_color: ['red', 'blue'],
        parameters: [],
      },
    },
  ]);
  downloads = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-downloads-'));
  w = await startWorker({ persona: 'plugin-runner', env: { PLUGINS_DIR: pluginsDir } });
  await w.waitInitialized();
  expect(
    (await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: PAGE } })).status,
  ).toBe(200);

  client = await launchClientBrowser();
  context = await client.browser.createBrowserContext({
    downloadBehavior: { policy: 'allow', downloadPath: downloads },
  });
  page = await context.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('request', (r) =>
    sent.push({
      method: r.method(),
      url: r.url(),
      authorization: r.headers().authorization,
      body: r.postData(),
    }),
  );
  page.on('pageerror', (err) => scriptErrors.push(String(err)));
});

afterAll(async () => {
  await client?.close();
  await w?.stop();
  for (const dir of [pluginsDir, downloads])
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Each test, on its own: the panel asked only the loopback, and no script failed. Checked after
 * every test, so a test run alone is checked too and a failure names the test it happened in.
 */
let sentChecked = 0;
afterEach(() => {
  const away = sent.slice(sentChecked).filter((s) => {
    const u = new URL(s.url);
    return !['data:', 'blob:'].includes(u.protocol) && u.hostname !== '127.0.0.1';
  });
  sentChecked = sent.length;
  expect(away).toEqual([]);
  expect(scriptErrors.splice(0)).toEqual([]);
});

/** Replaces a field's content the way a person does: select all, delete, type. */
async function typeInto(selector: string, value: string): Promise<void> {
  await page.click(selector);
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyA');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  if (value) await page.type(selector, value);
}

const textOf = (selector: string): Promise<string> =>
  page.$eval(selector, (e) => (e as HTMLElement).innerText.trim());

/** Clicks Run and waits for the answer's status line (not the "Running…" one). */
async function runAndRead(): Promise<{ status: string; json: unknown }> {
  await page.click('#plugin-run');
  await page.waitForFunction(
    () => / HTTP \d{3}| Cannot reach/.test(document.getElementById('plugin-status')!.textContent),
    { timeout: WAIT_MS },
  );
  const json = await textOf('#plugin-json');
  return { status: await textOf('#plugin-status'), json: json ? JSON.parse(json) : null };
}

const pluginCalls = (route: string): Sent[] =>
  sent.filter(
    (s) => new URL(s.url).pathname === `/api/v1/${encodeURIComponent(PAGE)}/plugin/${route}`,
  );

/**
 * The panel freshly loaded with its plugins listed: each test starts here, so none depends on
 * what an earlier one left on the screen. The key is saved in the panel's key card (the
 * runner uses it) unless the browser remembers it already.
 */
async function openPanel(): Promise<void> {
  await page.goto(`${w.url}/`, { waitUntil: 'load' });
  await page.waitForSelector('#key-form:not([hidden]), #key-saved:not([hidden])', {
    timeout: WAIT_MS,
  });
  if (await page.$('#key-form:not([hidden])')) {
    await page.type('#key-input', KEY);
    await page.click('#key-save');
  }
  await page.waitForSelector('.plugin-btn', { timeout: WAIT_MS });
}

/** The panel with `name` chosen: its form shown. */
async function choose(name: string): Promise<void> {
  await openPanel();
  await page.click(`.plugin-btn[data-plugin="${name}"]`);
  await page.waitForFunction(
    (n) => document.getElementById('plugin-title')?.textContent === n,
    { timeout: WAIT_MS },
    name,
  );
  await page.waitForSelector('#plugin-form:not([hidden])', { timeout: WAIT_MS });
  // The page list is read after the form opens; until then it says so.
  await page.waitForSelector('#plugin-page[aria-busy="false"]', { timeout: WAIT_MS });
}

test('plugins are listed by family in their colours, the skipped one is named', async () => {
  await openPanel();

  expect(await textOf('#plugins-summary')).toBe('2 plugins');
  const families = await page.$$eval('.plugin-family', (fs) =>
    fs.map((f) => ({
      family: f.querySelector('h3')!.textContent,
      buttons: Array.from(f.querySelectorAll('.plugin-btn'), (b) => ({
        text: b.textContent,
        background: getComputedStyle(b).backgroundImage,
      })),
    })),
  );
  expect(families).toEqual([
    {
      family: 'demo',
      buttons: [
        { text: 'echo', background: 'linear-gradient(135deg, rgb(0, 170, 85), rgb(0, 85, 170))' },
        {
          text: 'peek_state',
          background: 'linear-gradient(135deg, rgb(170, 85, 0), rgb(85, 0, 170))',
        },
      ],
    },
  ]);
  const skipped = await textOf('#plugins-skipped');
  expect(skipped).toMatch(/^Not loaded: demo\/broken \(.*no implementation/);
});

test('choosing a plugin shows a form built from its parameters, and its docs', async () => {
  await choose('demo/echo');
  expect(await textOf('#plugin-title')).toBe('demo/echo');
  expect(await textOf('#plugin-description')).toBe('Echoes what it was given. Also stores a file.');

  const fields = await page.$$eval('.plugin-field', (rows) =>
    rows.map((row) => {
      const input = row.querySelector('input, select, textarea') as HTMLInputElement;
      const label = row.querySelector('label')!;
      return {
        label: label.textContent,
        labelled: label.htmlFor === input.id,
        control: input.tagName === 'INPUT' ? input.type : input.tagName.toLowerCase(),
        placeholder: input.getAttribute('placeholder'),
        value: input.type === 'checkbox' ? input.checked : input.value,
        options: Array.from(row.querySelectorAll('option'), (o) => o.value),
        help: row.querySelector('.plugin-help')?.textContent ?? null,
      };
    }),
  );
  const field = (label: string, control: string, more: object = {}): object => ({
    label,
    labelled: true,
    control,
    placeholder: null,
    value: '',
    options: [],
    help: null,
    ...more,
  });
  expect(fields).toEqual([
    field('Search query *', 'text', {
      placeholder: 'what to look for',
      help: 'Typed into the site search.',
    }),
    field('Target URL', 'url', { placeholder: 'https://example.com/' }),
    field('Notes', 'textarea', { placeholder: 'anything else' }),
    field('Mode', 'select', { value: 'careful', options: ['', 'fast', 'careful'] }),
    field('How many', 'number', { value: '3', help: 'From 1 to 10.' }),
    field('Loud', 'checkbox', { value: false }),
  ]);
  expect(await page.$eval('#plugin-param-count', (e) => e.getAttribute('step'))).toBe('any');

  // The pool's pages are offered, and one created meanwhile shows up.
  const options = (): Promise<string[]> =>
    page.$$eval('#plugin-page option', (os) => os.map((o) => o.value));
  expect(await options()).toEqual([PAGE]);
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'plug-b' } });
  await page.waitForFunction(() => document.querySelectorAll('#plugin-page option').length === 2, {
    timeout: WAIT_MS,
  });
  expect((await options()).sort()).toEqual([PAGE, 'plug-b'].sort());

  const docs = await page.$eval('#plugin-docs', (a) => a.getAttribute('href'));
  expect(docs).toBe('/api/v1/plugins/demo/echo/docs');
  const readme = await w.call('GET', docs!, { auth: false });
  expect(readme.status).toBe(200);
  expect(readme.body).toBe(README);
});

test('running sends what was typed, typed; the answer shows what the plugin received', async () => {
  await choose('demo/echo');
  const before = pluginCalls('demo/echo').length;
  await typeInto('#plugin-param-query', 'cats & "dogs"');
  await typeInto('#plugin-param-notes', 'line one\nline two');
  await page.select('#plugin-param-mode', 'fast');
  await typeInto('#plugin-param-count', '7.5');
  await page.click('#plugin-param-loud');
  await page.select('#plugin-page', PAGE);
  const { status, json } = await runAndRead();

  expect(status).toMatch(/^POST \/api\/v1\/plug%201%2Fa\/plugin\/demo\/echo → HTTP 200 in /);
  const typed = {
    query: 'cats & "dogs"',
    notes: 'line one\nline two',
    mode: 'fast',
    count: 7.5,
    loud: true,
  };
  // The empty optional URL is left out; the rest arrives as typed, number and boolean typed.
  expect(json).toEqual({
    success: true,
    page_id: PAGE,
    received: typed,
    media_url: expect.stringMatching(/^\/api\/v1\/media\/./),
  });
  const calls = pluginCalls('demo/echo').slice(before);
  expect(calls).toHaveLength(1);
  expect(calls[0]).toMatchObject({ method: 'POST', authorization: `Bearer ${KEY}` });
  expect(JSON.parse(calls[0]!.body!)).toEqual(typed);
});

test("the file link is fetched with the key and saves the plugin's bytes", async () => {
  await choose('demo/echo');
  await typeInto('#plugin-param-query', 'a file');
  await page.select('#plugin-page', PAGE);
  expect((await runAndRead()).status).toMatch(/→ HTTP 200 in /);
  const { media_url: mediaUrl } = JSON.parse(await textOf('#plugin-json')) as { media_url: string };
  await page.click('#plugin-fetch');
  await page.waitForSelector('#plugin-download', { timeout: WAIT_MS });
  expect(await page.$eval('#plugin-download', (a) => a.getAttribute('download'))).toBe('echo.txt');
  const fetched = sent.filter((s) => s.url === w.url + mediaUrl);
  expect(fetched).toEqual([expect.objectContaining({ authorization: `Bearer ${KEY}` })]);

  await page.click('#plugin-download');
  const file = path.join(downloads, 'echo.txt');
  // Chromium makes the file under its name before it writes the bytes: wait for the bytes.
  const saved = (): string => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');
  const until = Date.now() + WAIT_MS;
  while (saved() !== 'hello' && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  expect(saved()).toBe('hello');
  // The one download was the panel's: the link is used up.
  expect((await w.call('GET', mediaUrl)).status).toBe(404);
});

test("a number out of range shows the plugin's 400 message", async () => {
  await choose('demo/echo');
  await typeInto('#plugin-param-query', 'too many');
  await page.select('#plugin-page', PAGE);
  await typeInto('#plugin-param-count', '11');
  const { status, json } = await runAndRead();
  expect(status).toMatch(/→ HTTP 400 in .*: count must be between 1\.0 and 10\.0$/);
  expect(json).toMatchObject({ success: false, error: 'count must be between 1.0 and 10.0' });
  expect(await page.$$('#plugin-fetch')).toHaveLength(0);
});

test('a GET plugin gets its parameters as a query string, on its route', async () => {
  await choose('demo/peek_state');
  const before = pluginCalls('demo/peek-state').length;
  expect(await page.$eval('#plugin-param-deep', (e) => (e as HTMLInputElement).checked)).toBe(true);
  await typeInto('#plugin-param-depth', '2');
  await page.click('#plugin-param-deep');
  await page.select('#plugin-page', PAGE);
  const { status, json } = await runAndRead();
  expect(status).toMatch(/^GET \/api\/v1\/plug%201%2Fa\/plugin\/demo\/peek-state → HTTP 200/);
  expect(json).toEqual({ success: true, page_id: PAGE, received: { depth: 2, deep: false } });
  const calls = pluginCalls('demo/peek-state').slice(before);
  expect(calls).toHaveLength(1);
  expect(calls[0]!.method).toBe('GET');
  expect(new URL(calls[0]!.url).search).toBe('?depth=2&deep=false');
});

test("without a key Run is off, like the panel's other API buttons", async () => {
  await choose('demo/echo');
  await page.click('#key-forget');
  await page.waitForSelector('#plugin-run:disabled', { timeout: WAIT_MS });
  expect(await page.$eval('#plugin-run', (b) => b.getAttribute('title'))).toBe(
    'Enter the API key first',
  );
  await page.type('#key-input', KEY);
  await page.click('#key-save');
  await page.waitForSelector('#plugin-run:enabled', { timeout: WAIT_MS });
});
