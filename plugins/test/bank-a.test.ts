import fs from 'node:fs';
import path from 'node:path';
import { KEY } from '@persona-browser/testkit/worker';
import type { BankASite } from './fixtures/bank-a-site';
import { BANK_A_LOGIN, bankAWorldOptions, startBankASite } from './fixtures/bank-a-site';
import { addDays, itDate, within } from './fixtures/bank-a-site-data';
import type { Body } from './fixtures/plugin-world';
import { pluginWorld } from './fixtures/plugin-world';

/**
 * The bank-a family against its stand-in ("Banca Aurora"): the whole chain (init-login,
 * hydrate-login, read-qr, vai-a-home waiting for the phone, vai-a-conto, seleziona-periodo with
 * a preset and with dates, leggi-movimenti over every page, vai-a-carta and its movements), the
 * input a late hydration throws away, every kind of wrong state, an expired session, a
 * confirmation not given in time, a live session at init-login, the placeholders' 501, a worker
 * without a credential, and no credential or QR text anywhere a client or an operator reads.
 */

const { cell: CELL, code: CODE } = BANK_A_LOGIN;

const world = pluginWorld(bankAWorldOptions('13'));

/** Every answer of a plugin, for the secret check at the end. */
const answers: Body[] = [];
/** Captures taken along the chain (a full load empties the page's capture). */
const captures: Body[][] = [];
const call = world.plugin;
world.plugin = async (method, name, body) => {
  const r = await call(method, name, body);
  answers.push(r.body);
  return r;
};
const { plugin, post, get, state, navigate } = world;
let site: BankASite;
let today: string;
beforeAll(() => {
  site = world.site;
  today = site.today;
});

const control = async (what: 'conferma' | 'scadenza'): Promise<void> => {
  const r = await fetch(`${site.url}/__test/${what}`, { method: 'POST' });
  expect(r.status).toBe(200);
};

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

const primitive = (name: string, body: Body) =>
  world.w.call<Body>('POST', `/api/v1/primitive/a/${name}`, { body });

const PLUGINS = [
  'init-login',
  'hydrate-login',
  'read-state',
  'read-qr',
  'vai-a-home',
  'vai-a-conto',
  'vai-a-carta',
  'seleziona-periodo',
  'leggi-movimenti',
  'site-check',
];
const PLACEHOLDERS: Array<['GET' | 'POST', string]> = [
  ['POST', 'login'],
  ['POST', 'logout'],
  ['POST', 'vai-a-movimenti-conto'],
  ['POST', 'vai-a-movimenti-carta'],
  ['GET', 'scarica-movimenti-conto'],
  ['GET', 'scarica-movimenti-carta'],
];

test('the family loads ten plugins and six placeholders; a placeholder answers 501', async () => {
  const r = await world.w.call<Body>('GET', '/api/v1/plugins', { auth: false });
  const ours = (r.body.plugins as Body[]).filter((p) => p.name.startsWith('bank/bank-a/'));
  expect(ours.map((p) => p.name.slice('bank/bank-a/'.length)).sort()).toEqual(
    [...PLUGINS, ...PLACEHOLDERS.map(([, n]) => n)].sort(),
  );
  expect((r.body.skipped as Body[]).filter((s) => s.name.startsWith('bank/'))).toEqual([]);
  const period = ours.find((p) => p.name === 'bank/bank-a/seleziona-periodo')!;
  expect(period.parameters.map((p: Body) => [p.name, p.default])).toEqual([
    ['preset', 'last_30_days'],
    ['from', null],
    ['to', null],
  ]);
  for (const [method, name] of PLACEHOLDERS) {
    const answer = await plugin(method, name);
    expect(answer.status).toBe(501);
    expect(answer.body).toMatchObject({ success: false, page_id: 'a' });
    expect(answer.body.error).toMatch(/not implemented/);
  }
  const docs = await world.w.call<string>('GET', '/api/v1/plugins/bank/bank-a/logout/docs', {
    auth: false,
  });
  expect(docs.body).toMatch(/not built yet/i);
});

test('off the site: read-state says unknown; every plugin with a precondition refuses', async () => {
  const s = await state();
  expect(s).toMatchObject({
    success: true,
    state: 'unknown',
    next: ['init-login'],
    session_expired: false,
    page_url: 'about:blank',
    account: null,
  });
  expect(s.hint).toMatch(/bank\/bank-a\/init-login/);
  const refusals: Array<['GET' | 'POST', string]> = [
    ['POST', 'hydrate-login'],
    ['GET', 'read-qr'],
    ['POST', 'vai-a-home'],
    ['POST', 'vai-a-conto'],
    ['POST', 'vai-a-carta'],
    ['POST', 'seleziona-periodo'],
    ['GET', 'leggi-movimenti'],
  ];
  for (const [method, name] of refusals) {
    const r = await plugin(method, name);
    expect({ name, status: r.status, ...r.body }).toMatchObject({
      name,
      status: 200,
      success: false,
      state: 'unknown',
      next: ['init-login'],
      session_expired: false,
    });
  }
  expect(site.requests).toEqual([]);
});

test('what is typed before the login form is hydrated is thrown away by the site', async () => {
  site.setHydrationMs(5_000);
  try {
    await navigate('/accesso');
    expect((await primitive('click-element', { selector: '#cellulare' })).body.success).toBe(true);
    expect((await primitive('type-text', { text: '999' })).body.success).toBe(true);
    expect(await state()).toMatchObject({ state: 'login', hydrated: false });
    const reset = await until(
      async () => site.events.find((e) => e.type === 'reset'),
      (e) => e !== undefined,
    );
    expect(reset).toMatchObject({ discarded: 1 });
    expect(await state()).toMatchObject({
      state: 'login_hydrated',
      hydrated: true,
      next: ['hydrate-login', 'init-login'],
    });
  } finally {
    site.setHydrationMs(1_500);
  }
});

describe('the chain', () => {
  test('init-login opens the login page; hydrate-login waits for the form, types, submits', async () => {
    const init = await post('init-login');
    expect(init).toMatchObject({
      success: true,
      state: 'login',
      page_url: `${site.url}/accesso`,
      session_expired: false,
      next: ['hydrate-login', 'init-login'],
    });
    const seen = site.events.length;
    const h = await post('hydrate-login');
    expect(h).toMatchObject({
      success: true,
      state: 'app_confirmation',
      next: ['read-qr', 'vai-a-home'],
      session_expired: false,
      page_url: `${site.url}/accesso/conferma`,
    });
    expect(site.logins).toEqual([{ cellulare: CELL, codice: CODE, ok: true }]);
    const events = site.events.slice(seen);
    // The plugin waited for the hydration: it threw nothing away.
    expect(events.filter((e) => e.type === 'reset').map((e) => e.discarded)).toEqual([0]);
    const input = events.filter((e) => e.type !== 'reset');
    expect(input.every((e) => e.trusted)).toBe(true);
    expect(input.filter((e) => e.type === 'click').map((e) => e.target)).toEqual([
      'cellulare',
      'codice',
      'Accedi',
    ]);
    expect(input.filter((e) => e.type === 'keydown').length).toBeGreaterThanOrEqual(
      CELL.length + CODE.length,
    );
  });

  test('read-qr answers the QR text the site issued and a one-shot PNG of it', async () => {
    const q = await get('read-qr');
    expect(q).toMatchObject({ success: true, state: 'app_confirmation', text: site.qrTokens[0] });
    expect(Object.keys(q).sort()).toEqual(
      ['success', 'page_id', 'text', 'media_url', 'state', 'page_url', 'message'].sort(),
    );
    const download = () =>
      fetch(world.w.url + q.media_url, { headers: { authorization: `Bearer ${KEY}` } });
    const png = await download();
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toMatch(/^image\/png/);
    const bytes = new Uint8Array(await png.arrayBuffer());
    // A PNG of the QR box (the worker decoded the text above from these bytes).
    const head = Buffer.from(bytes);
    expect(head.subarray(1, 4).toString()).toBe('PNG');
    expect(head.subarray(12, 16).toString()).toBe('IHDR');
    expect(head.readUInt32BE(16)).toBeGreaterThanOrEqual(200);
    expect(head.readUInt32BE(20)).toBeGreaterThanOrEqual(200);
    expect((await download()).status).toBe(404);
    // The token came from a blacklisted auth endpoint: the capture never holds it.
    const lines = await world.capture();
    captures.push(lines);
    expect(lines.filter((l) => l.url.includes('/auth/'))).toEqual([]);
  });

  test('before the phone confirms: the logged-in plugins refuse, naming read-qr and vai-a-home', async () => {
    for (const name of ['vai-a-conto', 'seleziona-periodo']) {
      expect(await post(name)).toMatchObject({
        success: false,
        state: 'app_confirmation',
        next: ['read-qr', 'vai-a-home'],
      });
    }
  });

  test('vai-a-home waits while the person confirms on the phone, then clicks home', async () => {
    const confirmLater = setTimeout(() => void control('conferma'), 1_000);
    try {
      const r = await post('vai-a-home', { confirmation_wait_s: 30 });
      expect(r).toMatchObject({
        success: true,
        from_state: 'app_confirmation',
        state: 'logged_in_home',
        page_url: `${site.url}/home`,
        next: ['vai-a-conto', 'vai-a-carta'],
      });
      expect(r.steps).toEqual([
        expect.stringMatching(/^waited \d+ s for the confirmation on the phone app$/),
        'clicked the logo in the header',
      ]);
    } finally {
      clearTimeout(confirmLater);
    }
  });

  test('on the home: the movement plugins and the login plugins refuse', async () => {
    expect(await get('leggi-movimenti')).toMatchObject({
      success: false,
      state: 'logged_in_home',
      next: ['vai-a-conto', 'vai-a-carta'],
    });
    expect(await get('read-qr')).toMatchObject({ success: false, state: 'logged_in_home' });
    expect(await post('hydrate-login')).toMatchObject({ success: false, state: 'logged_in_home' });
  });

  test('vai-a-conto clicks the menu; read-state reads the account page', async () => {
    const events = site.events.length;
    const r = await post('vai-a-conto');
    expect(r).toMatchObject({
      success: true,
      from_state: 'logged_in_home',
      state: 'logged_in_conto',
      steps: ['clicked Conto corrente in the main menu'],
      page_url: `${site.url}/conto`,
    });
    const clicks = site.events.slice(events).filter((e) => e.type === 'click');
    expect(clicks).toEqual([
      { type: 'click', trusted: true, target: 'Conto corrente', path: '/home' },
    ]);
    const s = await state();
    expect(s).toMatchObject({
      state: 'logged_in_conto',
      section: 'conto',
      account: { label: 'Conto Aurora', number_masked: 'IT** X*** **** **** **** ***3 456' },
      period: { from: addDays(today, -29), to: today },
      list_page: { current: 1 },
      session_expired: false,
    });
    expect(s.next[0]).toBe('leggi-movimenti');
    captures.push(await world.capture());
  });

  test('seleziona-periodo: a preset of the selector', async () => {
    const asked = site.queries.length;
    const r = await post('seleziona-periodo', { preset: 'last_90_days' });
    const period = { from: addDays(today, -89), to: today };
    expect(r).toEqual({
      success: true,
      page_id: 'a',
      period: { ...period, preset: 'last_90_days' },
      shown: period,
      state: 'logged_in_conto',
      page_url: `${site.url}/conto`,
      message: expect.stringMatching(/"Ultimi 90 giorni"/),
    });
    expect(site.queries.slice(asked).at(-1)).toEqual({
      section: 'conto',
      periodo: '90',
      dal: null,
      al: null,
      pagina: 1,
    });
  });

  test('seleziona-periodo: custom dates, typed as the site wants them', async () => {
    const asked = site.queries.length;
    const from = addDays(today, -119);
    const r = await post('seleziona-periodo', { from: itDate(from), to: today });
    expect(r).toMatchObject({
      success: true,
      period: { from, to: today, preset: null },
      shown: { from, to: today },
    });
    expect(site.queries.slice(asked)).toEqual([
      { section: 'conto', periodo: null, dal: itDate(from), al: itDate(today), pagina: 1 },
    ]);
    // Bad input is a 400 before the page moves.
    const bad = await plugin('POST', 'seleziona-periodo', { from: itDate(from) });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/from and to go together/);
    const future = await plugin('POST', 'seleziona-periodo', {
      preset: 'custom',
      from: today,
      to: addDays(today, 3),
    });
    expect(future.status).toBe(400);
  });

  test('leggi-movimenti reads every page exactly as the site lists them', async () => {
    const from = addDays(today, -119);
    const asked = site.queries.length;
    const r = await get('leggi-movimenti');
    const expected = within(site.account, from, today);
    expect(expected).toHaveLength(40);
    expect(r.movements).toEqual(expected);
    const cents = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b * 100, 0)) / 100;
    const amounts = expected.map((m) => m.amount);
    expect(r).toMatchObject({
      success: true,
      state: 'logged_in_conto',
      account: { label: 'Conto Aurora' },
      period: { from, to: today },
      currency: 'EUR',
      count: 40,
      pages_read: 4,
      complete: true,
      totals: {
        income: cents(amounts.filter((a) => a > 0)),
        outflow: cents(amounts.filter((a) => a < 0)),
        net: cents(amounts),
      },
    });
    expect(site.queries.slice(asked).map((q) => q.pagina)).toEqual([2, 3, 4]);
  });

  test('leggi-movimenti with max_pages: back to the first page, stops early', async () => {
    const r = await get('leggi-movimenti', { max_pages: 2 });
    const expected = within(site.account, addDays(today, -119), today).slice(0, 20);
    expect(r).toMatchObject({ success: true, count: 20, pages_read: 2, complete: false });
    expect(r.movements).toEqual(expected);
  });

  test('vai-a-carta, a preset, and the card movements (no balance, no value date)', async () => {
    expect(await post('vai-a-carta')).toMatchObject({
      success: true,
      from_state: 'logged_in_conto',
      state: 'logged_in_carta',
      steps: ['clicked Carte in the main menu'],
    });
    const from = addDays(today, -89);
    expect(await post('seleziona-periodo', { preset: 'last_90_days' })).toMatchObject({
      success: true,
      shown: { from, to: today },
    });
    expect(site.queries.at(-1)).toMatchObject({ section: 'carta', periodo: '90' });
    const r = await get('leggi-movimenti');
    const expected = within(site.card, from, today);
    expect(expected).toHaveLength(15);
    expect(r.movements).toEqual(expected);
    expect(r).toMatchObject({
      state: 'logged_in_carta',
      account: { label: 'Carta di credito Aurora Oro', number_masked: '**** **** **** 9012' },
      currency: 'EUR',
      count: 15,
      pages_read: 2,
      complete: true,
    });
    captures.push(await world.capture());
  });
});

describe('sessions', () => {
  test('an expired session: the next XHR lands on the login page, and plugins say so', async () => {
    await control('scadenza');
    // read-state observes only: the card page is still on screen.
    expect((await state()).state).toBe('logged_in_carta');
    const r = await get('leggi-movimenti');
    expect(r).toMatchObject({
      success: false,
      state: expect.stringMatching(/^login/),
      session_expired: true,
      next: ['hydrate-login', 'init-login'],
    });
    const s = await state();
    expect(s).toMatchObject({
      state: expect.stringMatching(/^login/),
      session_expired: true,
      page_url: `${site.url}/accesso?motivo=scaduta`,
    });
    expect(s.hint).toMatch(/session expired.*bank\/bank-a\/hydrate-login/i);
    expect(s.login_notice).toMatch(/Sessione scaduta/);
  });

  test('a confirmation not given in time: confirmation_timeout; each login has its own QR', async () => {
    expect(await post('hydrate-login')).toMatchObject({ success: true, state: 'app_confirmation' });
    expect(site.qrTokens).toHaveLength(2);
    expect(site.qrTokens[1]).not.toBe(site.qrTokens[0]);
    expect(await get('read-qr')).toMatchObject({ success: true, text: site.qrTokens[1] });
    const r = await plugin('POST', 'vai-a-home', { confirmation_wait_s: 1 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      success: false,
      error: 'confirmation_timeout',
      state: 'app_confirmation',
      next: ['read-qr', 'vai-a-home'],
      session_expired: false,
      page_url: `${site.url}/accesso/conferma`,
    });
    expect(r.body.message).toMatch(/within 1 s/);
  });

  test('confirmed later: the communications page; init-login with a live session goes on', async () => {
    await control('conferma');
    const s = await until(state, (b) => b.state === 'logged_in');
    expect(s).toMatchObject({
      state: 'logged_in',
      next: ['vai-a-home', 'vai-a-conto', 'vai-a-carta'],
    });
    expect(await post('vai-a-conto')).toMatchObject({
      success: true,
      from_state: 'logged_in',
      state: 'logged_in_conto',
      steps: ['clicked the logo in the header', 'clicked Conto corrente in the main menu'],
    });
    captures.push(await world.capture());
    expect(await post('init-login')).toMatchObject({
      success: true,
      from_state: 'logged_in_conto',
      state: 'logged_in_home',
      page_url: `${site.url}/home`,
    });
  });
});

test('no credential and no QR text anywhere: log, request log, answers, capture', async () => {
  captures.push(await world.capture());
  // The profile XHR echoes the mobile number: the capture holds it redacted.
  const profile = captures.flat().filter((l) => l.url.endsWith('/api/profilo'));
  expect(profile.length).toBeGreaterThan(0);
  for (const l of profile) expect(l.body).toContain('[redacted]');
  const logs = path.join(world.w.dataDir, 'requests');
  const csv = fs
    .readdirSync(logs)
    .map((f) => fs.readFileSync(path.join(logs, f), 'utf8'))
    .join('\n');
  expect(csv).toContain('bank/bank-a/hydrate-login');
  // read-qr's text is the one place the QR text is meant to be.
  const told = answers.map(({ text: _text, ...rest }) => rest);
  const haystacks: Record<string, string> = {
    'worker log': world.w.logs.join('\n'),
    'request log': csv,
    answers: JSON.stringify(told),
    capture: JSON.stringify(captures),
  };
  const secrets = [CELL, CODE, ...site.qrTokens];
  expect(site.qrTokens).toHaveLength(2);
  expect(world.w.logs.filter((l) => /plugin failed/.test(l))).toEqual([]);
  for (const [where, text] of Object.entries(haystacks)) {
    for (const secret of secrets) {
      expect({ where, leaks: text.includes(secret) }).toEqual({ where, leaks: false });
    }
  }
});

describe('a worker without BANK_A_CODE', () => {
  const bare = pluginWorld({
    family: 'bank/bank-a',
    stateRoute: 'read-state',
    pageId: 'b',
    seed: '5',
    startSite: () => startBankASite({ cell: CELL, code: CODE }),
    env: (s) => ({ BANK_A_BASE_URL: s.url, BANK_A_CELL: CELL, BANK_A_CODE: undefined }),
  });

  test('hydrate-login names the missing credential and types nothing', async () => {
    const r = await bare.plugin('POST', 'hydrate-login');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 'b',
      error: "BANK_A_CODE is not set in the worker's environment",
      missing: ['BANK_A_CODE'],
    });
    expect(bare.site.logins).toEqual([]);
    expect(bare.site.requests).toEqual([]);
  });
});
