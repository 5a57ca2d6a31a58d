import http from 'node:http';
import type { AddressInfo } from 'node:net';
import QRCode from 'qrcode';
import { readQrCodes } from '../src/plugins/qr';
import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';

/**
 * A plugin and the person it works for. What it knows and nobody may read back: a family's secrets and the values a plugin
 * conceals are `[redacted]` in the network capture (URLs, headers and bodies, in their
 * URL-encoded, JSON- and HTML-escaped forms too), in the worker's log and in error messages.
 * The SDK's element screenshot and QR reading (a login code shown to the person), a wait for
 * the person during which the live view's "Take control" is granted at once, and a placeholder
 * plugin's 501.
 */

// Spaces, a quote, a plus and an ampersand: each escaped form differs from the raw value.
const SECRET = 'mario rossi+"bank"&co';
const LEARNED = 'otp-731904';
const QR_TEXT = 'BANK-QR:7f3a9c2e-login-4411';

const root = writePluginTree(
  [
    {
      name: 'vault/leak',
      manifest: manifest([]),
      js: `module.exports.default = { async run(ctx) {
        const who = ctx.secret('VAULT_USER');
        await ctx.page.goto(ctx.setting('VAULT_BASE_URL') + '/profile?user=' + encodeURIComponent(who));
        await ctx.network.settled();
        ctx.log.info('signed in', { as: who });
        throw new sdk.SiteError('the account page', 'a greeting for ' + who, { user: who });
      } };`,
    },
    {
      name: 'vault/conceal',
      manifest: manifest([{ name: 'value', type: 'text', required: true }]),
      js: `module.exports.default = { async run(ctx, p) {
        ctx.conceal(p.value);
        ctx.log.info('learned a code', { value: p.value });
        await ctx.page.goto(ctx.setting('VAULT_BASE_URL') + '/show?v=' + p.value);
        await ctx.network.settled();
        return { success: false, error: 'code ' + p.value + ' refused', echoed: p.value };
      } };`,
    },
    {
      name: 'vault/qr',
      manifest: manifest([{ name: 'selector', type: 'text', required: true }]),
      js: `module.exports.default = { async run(ctx, p) {
        await ctx.page.goto(ctx.setting('VAULT_BASE_URL') + '/qr');
        const png = await ctx.page.screenshot(p.selector);
        const head = Array.from(png.slice(1, 4)).map((c) => String.fromCharCode(c)).join('');
        return { texts: await ctx.codes.readQr(png), format: head, bytes: png.length };
      } };`,
    },
    {
      name: 'vault/wait',
      manifest: manifest([{ name: 'for_person', type: 'checkbox', default: false }]),
      js: `module.exports.default = { async run(ctx, p) {
        const wait = () => ctx.sleep(2500);
        if (p.for_person) await ctx.waitingForPerson('a code typed in the live view', wait);
        else await wait();
        return {};
      } };`,
    },
    {
      name: 'vault/later',
      manifest: manifest([], { placeholder: true, methods: ['GET', 'POST'] }),
    },
  ],
  {
    'vault/family.json': {
      settings: { VAULT_BASE_URL: { default: 'https://vault.example' } },
      secrets: ['VAULT_USER'],
    },
  },
);

let site: http.Server;
let base: string;
let w: RunningWorker;
let qrDataUrl: string;

/** The page asks the site's API who is signed in: the answer carries the secret again. */
const WHO_SCRIPT = `<script>fetch('/api/me').then((r) => r.json());</script>`;

beforeAll(async () => {
  qrDataUrl = await QRCode.toDataURL(QR_TEXT, { margin: 2, scale: 6 });
  site = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const html = (body: string, headers: Record<string, string> = {}): void => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers });
      res.end(`<!doctype html><html><head><title>vault</title></head><body>${body}</body></html>`);
    };
    const escaped = SECRET.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
    if (url.pathname === '/profile')
      return html(`<h1>Ciao ${escaped}</h1><p>${SECRET}</p>${WHO_SCRIPT}`, {
        'x-account': SECRET,
      });
    if (url.pathname === '/api/me') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ user: SECRET, form: `user=${encodeURIComponent(SECRET)}` }));
    }
    if (url.pathname === '/show') return html(`<p id="v">${url.searchParams.get('v')}</p>`);
    if (url.pathname === '/qr')
      return html(
        `<div id="filler" style="height:1500px">filler</div><img id="qr" src="${qrDataUrl}" width="240" height="240">` +
          '<div id="empty" style="width:0;height:0"></div>',
      );
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  w = await startWorker({ env: { PLUGINS_DIR: root, VAULT_BASE_URL: base, VAULT_USER: SECRET } });
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'v' } });
});
afterAll(async () => {
  await w?.stop();
  await new Promise((r) => site?.close(r));
});

type Body = Record<string, any>;
const run = (name: string, body: Body = {}): Promise<{ status: number; body: Body }> =>
  w.call<Body>('POST', `/api/v1/v/plugin/vault/${name}`, { body });

/** Every form in which a value could leak. */
const formsOf = (v: string): string[] => [
  v,
  encodeURIComponent(v),
  encodeURIComponent(v).replace(/%20/g, '+'),
  JSON.stringify(v).slice(1, -1),
  v.replace(/&/g, '&amp;').replace(/"/g, '&quot;'),
];

async function capturedText(): Promise<string> {
  const r = await w.call<Body>('GET', '/api/v1/ops/v/network?include_body=true');
  expect(r.status).toBe(200);
  return JSON.stringify(r.body);
}

test('a family secret is redacted from the capture, the log and the error message', async () => {
  const r = await run('leak');
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({
    success: false,
    error: 'Expected the account page, found a greeting for [redacted]',
    user: '[redacted]',
  });
  const captured = await capturedText();
  // The lines are there, with the secret taken out of the URL, a header and both bodies.
  expect(captured).toContain('/profile?user=[redacted]');
  expect(captured).toContain('"x-account":"[redacted]"');
  expect(captured).toContain('<h1>Ciao [redacted]</h1><p>[redacted]</p>');
  expect(captured).toContain('{\\"user\\":\\"[redacted]\\",\\"form\\":\\"user=[redacted]\\"}');
  for (const form of formsOf(SECRET)) expect(captured).not.toContain(form);
  // The pool status, which needs no key, shows the page's address without it too.
  const pages = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
  expect(pages.body.pages).toEqual([
    expect.objectContaining({ page_id: 'v', url: `${base}/profile?user=[redacted]` }),
  ]);
  const logs = w.logs.join('\n');
  expect(logs).toContain('signed in');
  for (const form of formsOf(SECRET)) expect(logs).not.toContain(form);
});

test('a value a plugin conceals is hidden from then on, everywhere', async () => {
  const r = await run('conceal', { value: LEARNED });
  expect(r.body).toMatchObject({
    success: false,
    error: 'code [redacted] refused',
    echoed: '[redacted]',
  });
  const captured = await capturedText();
  expect(captured).toContain('/show?v=[redacted]');
  expect(captured).toContain('<p id=\\"v\\">[redacted]</p>');
  expect(captured).not.toContain(LEARNED);
  expect(w.logs.join('\n')).toContain('learned a code');
  expect(w.logs.join('\n')).not.toContain(LEARNED);
});

test('an element screenshot is a PNG of it, even below the fold; QR codes in it are read', async () => {
  const r = await run('qr', { selector: '#qr' });
  expect(r.body).toMatchObject({ success: true, texts: [QR_TEXT], format: 'PNG' });
  const plain = await run('qr', { selector: '#filler' });
  expect(plain.body).toMatchObject({ success: true, texts: [], format: 'PNG' });
  const empty = await run('qr', { selector: '#empty' });
  expect(empty.body).toMatchObject({ success: false, error: expect.stringMatching(/no size/) });
  const none = await run('qr', { selector: '#nothing' });
  expect(none.body).toMatchObject({ success: false, error: expect.stringMatching(/No element/) });
});

test('the QR reader answers no code for bytes that are no image', async () => {
  expect(await readQrCodes(new Uint8Array([1, 2, 3]))).toEqual([]);
});

test('a placeholder is mounted, listed and answers 501 on each of its methods', async () => {
  const list = await w.call<Body>('GET', '/api/v1/plugins', { auth: false });
  expect((list.body.plugins as Body[]).map((p) => p.name)).toContain('vault/later');
  for (const method of ['GET', 'POST']) {
    const r = await w.call<Body>(method, '/api/v1/v/plugin/vault/later');
    expect([method, r.status, r.body]).toEqual([
      method,
      501,
      {
        success: false,
        error: 'vault/later is not implemented yet: the route is a placeholder',
        page_id: 'v',
      },
    ]);
  }
  const missing = await w.call<Body>('POST', '/api/v1/nope/plugin/vault/later');
  expect(missing.status).toBe(404);
});

describe('a wait for the person', () => {
  /** Takes control of page v in the live view; answers when the worker granted it. */
  async function takeControl(): Promise<string> {
    const session = await fetch(`${w.url}/vnc/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
    });
    const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const r = await w.call('POST', '/vnc/control', {
      auth: false,
      headers: { cookie },
      body: { page_id: 'v' },
    });
    expect(r.status).toBe(200);
    return cookie;
  }

  /** Which came first: control granted, or the plugin's answer (made under `lease`, if any). */
  async function race(forPerson: boolean, lease?: string): Promise<string[]> {
    const order: string[] = [];
    const waitingLines = (): number =>
      w.logs.filter((l) => l.includes('waiting for the person')).length;
    const waitedBefore = waitingLines();
    const call = w
      .call<Body>('POST', '/api/v1/v/plugin/vault/wait', { body: { for_person: forPerson }, lease })
      .then((r) => {
        order.push(r.body.success ? 'plugin answered' : `plugin failed: ${r.body.error}`);
      });
    // The plugin is at its wait: it says it waits for the person, or it runs on the page.
    await until(
      async () => {
        if (forPerson) return waitingLines() > waitedBefore ? true : null;
        const r = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
        const page = (r.body.pages as Body[]).find((p) => p.page_id === 'v');
        return page?.current_operation === 'vault/wait' ? true : null;
      },
      10_000,
      forPerson ? 'the plugin to say it waits for the person' : 'vault/wait to run on the page',
    );
    const cookie = await takeControl().then((c) => {
      order.push('control granted');
      return c;
    });
    await call;
    const back = await w.call('DELETE', '/vnc/control', { auth: false, headers: { cookie } });
    expect(back.status).toBe(200);
    return order;
  }

  test('control is granted at once while a plugin waits for the person', async () => {
    expect(await race(true)).toEqual(['control granted', 'plugin answered']);
    expect(w.logs.join('\n')).toContain('waiting for the person');
  });

  test('any other call finishes before the person gets the page', async () => {
    expect(await race(false)).toEqual(['plugin answered', 'control granted']);
  });

  test('a client that leased the page for the wait shares its lease with the person', async () => {
    const leased = await w.call<Body>('POST', '/api/v1/ops/v/lease', { body: { ttl: 60 } });
    const token = leased.body.lease_token as string;
    expect(typeof token).toBe('string');
    expect(await race(true, token)).toEqual(['control granted', 'plugin answered']);
    // Handing back left the client's lease in place: it renews with the same token.
    const renewed = await w.call<Body>('POST', '/api/v1/ops/v/lease', { body: {}, lease: token });
    expect(renewed.body).toMatchObject({ success: true, lease_token: token });
    expect((await w.call('DELETE', '/api/v1/ops/v/lease', { lease: token })).status).toBe(200);
  });
});
