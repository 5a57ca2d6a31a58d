import fs from 'node:fs';
import path from 'node:path';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { step } from '@persona-browser/testkit/steps';
import { sleep } from '@persona-browser/testkit/worker';
import { totalsOf } from '../bank/italian';
import type { BankBSite } from './fixtures/bank-b-site';
import { startBankBSite } from './fixtures/bank-b-site';
import type { AccountId } from './fixtures/bank-b-site-data';
import {
  BANK_B_ALIAS,
  BANK_B_PWD,
  PHONE_MASKED,
  addDays,
  italianDate,
} from './fixtures/bank-b-site-data';
import { LivePerson } from './fixtures/bank-b-site-person';
import type { Body } from './fixtures/plugin-world';
import { pluginWorld } from './fixtures/plugin-world';

/**
 * The bank-b chain end to end against a stand-in home banking site: init-login, hydrate-login
 * (the form hydrates late and clears what was typed before), the code sent by SMS typed by the
 * person in the live view while vai-a-conti waits (and a wait that runs out), seleziona-periodo
 * (a quick link, a preset typed, custom dates: the site received exactly those dates),
 * leggi-movimenti over every page compared with the site's own list, the wrong states, the
 * expired session, the placeholders, and no credential or code anywhere in the logs, the
 * request log, the errors, the answers or the network capture.
 */

const PAGE = 'bb';
const world = pluginWorld({
  family: 'bank/bank-b',
  stateRoute: 'read-state',
  pageId: PAGE,
  seed: '13',
  startSite: startBankBSite,
  env: (s) => ({ BANK_B_BASE_URL: s.url, BANK_B_ALIAS, BANK_B_PWD }),
});
let w: RunningWorker;
let site: BankBSite;
/** What a loaded page asks of the site by itself, at times of the browser's choosing. */
const ON_ITS_OWN = new Set([
  '/favicon.ico',
  // The script's beacons: reports of earlier clicks and keys, and of the page's geometry.
  '/__seen',
  // The greeting's profile read, started by the load the navigation waited for.
  '/api/utente',
]);
/**
 * What was asked of the site, less what the page asks by itself (CI counted one, then two more
 * requests during calls that moved nothing). A call that moves the page asks for another page
 * or a form's API.
 */
const askedOfSite = (): number =>
  site.seen.filter((r) => !ON_ITS_OWN.has(r.path.split('?')[0] as string)).length;
beforeAll(() => {
  w = world.w;
  site = world.site;
});

/** Every answer of the suite, for the no-secret check. */
const answers: Body[] = [];
const call = async (method: 'GET' | 'POST', name: string, body?: Body) => {
  const r = await world.plugin(method, name, body);
  answers.push(r.body);
  return r;
};
const post = async (name: string, body?: Body): Promise<Body> =>
  (await call('POST', name, body)).body;
const get = async (name: string, body?: Body): Promise<Body> =>
  (await call('GET', name, body)).body;
const state = (): Promise<Body> => get('read-state');

async function until<T>(
  what: string,
  probe: () => T | undefined | null | false,
  ms = 10_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** The site's list for a period, as leggi-movimenti answers it. */
const expected = (account: AccountId, from: string, to: string): Body[] =>
  site.movementsFor(account, from, to).map((m) => ({ ...m, currency: 'EUR' }));

const BUILT = [
  'init-login',
  'hydrate-login',
  'read-state',
  'vai-a-conti',
  'seleziona-periodo',
  'leggi-movimenti',
];
const PLACEHOLDERS = [
  'login',
  'logout',
  'vai-a-movimenti',
  'imposta-date-movimenti',
  'scarica-movimenti',
];

// One test: each step starts from the page and session the one before left.
test('the chain, in order: from before the login to the expired session', async () => {
  await step('the plugins load; before any login every plugin refuses state unknown', async () => {
    const list = await w.call<Body>('GET', '/api/v1/plugins', { auth: false });
    const byName = new Map((list.body.plugins as Body[]).map((p) => [p.name, p]));
    for (const name of BUILT) expect(byName.get(`bank/bank-b/${name}`)).toBeDefined();
    expect(byName.get('bank/bank-b/leggi-movimenti')).toMatchObject({
      methods: ['GET'],
      route: '/api/v1/{page_id}/plugin/bank/bank-b/leggi-movimenti',
    });
    expect(
      (byName.get('bank/bank-b/seleziona-periodo')!.parameters as Body[]).map((p) => [
        p.name,
        p.default,
      ]),
    ).toEqual([
      ['preset', 'last_30_days'],
      ['from', null],
      ['to', null],
    ]);
    const skipped = (list.body.skipped as Body[]).filter((s) => s.name.startsWith('bank/bank-b/'));
    expect(skipped.filter((s) => BUILT.some((b) => s.name.endsWith(`/${b}`)))).toEqual([]);

    const s = await state();
    expect(s).toMatchObject({
      success: true,
      state: 'unknown',
      next: ['init-login'],
      session_expired: false,
    });
    expect(s.hint).toMatch(/bank\/bank-b\/init-login/);
    for (const [method, name] of [
      ['POST', 'hydrate-login'],
      ['POST', 'vai-a-conti'],
      ['POST', 'seleziona-periodo'],
      ['GET', 'leggi-movimenti'],
    ] as const) {
      const r = await call(method, name);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: false, state: 'unknown', next: ['init-login'] });
      expect(r.body.error).toMatch(/^Expected state .*, found a page titled/);
      expect(r.body.hint).toMatch(/init-login/);
    }
    expect(site.seen).toEqual([]);
  });

  await step(
    'init-login, then typing before the scripts run is lost; hydrate-login waits and its typing survives',
    async () => {
      site.hydrationMs = 5000;
      const opened = await post('init-login');
      expect(opened).toMatchObject({
        success: true,
        state: 'login',
        session_expired: false,
        next: ['hydrate-login', 'init-login'],
        page_url: `${site.url}/accesso`,
      });
      // Someone types into the form before it is hydrated: the site's script resets it.
      const typed = 'xq7pb';
      const primitive = (action: string, body: Body) =>
        w.call<Body>('POST', `/api/v1/primitive/${PAGE}/${action}`, { body });
      expect((await primitive('click-element', { selector: '#alias' })).body.success).toBe(true);
      expect((await primitive('type-text', { text: typed })).body.success).toBe(true);
      expect(site.events.some((e) => e.type === 'hydrated')).toBe(false);

      const r = await post('hydrate-login');
      expect(r).toMatchObject({
        success: true,
        state: '2fa_pending',
        next: ['vai-a-conti', 'read-state'],
        session_expired: false,
        page_url: `${site.url}/accesso/verifica`,
      });
      expect(r.hint).toMatch(/SMS/);
      const hydrated = site.events.filter((e) => e.type === 'hydrated');
      expect(hydrated).toEqual([expect.objectContaining({ cleared_chars: typed.length })]);
      // The plugin typed after the reset: the site received exactly the credentials.
      expect(site.received.logins).toEqual([{ alias: BANK_B_ALIAS, password: BANK_B_PWD }]);
      const input = site.events.filter((e) => e.type === 'click' || e.type === 'keydown');
      expect(input.length).toBeGreaterThan(BANK_B_ALIAS.length + BANK_B_PWD.length);
      expect(input.every((e) => e.trusted)).toBe(true);
      // The primitive's text is not logged by the worker.
      expect(w.logs.join('\n')).not.toContain(typed);
      site.hydrationMs = 1500;
    },
  );

  await step(
    '2fa_pending: the other plugins refuse it, and a short wait ends in 2fa_timeout',
    async () => {
      expect(await state()).toMatchObject({
        state: '2fa_pending',
        otp_sent_to: PHONE_MASKED,
        section: null,
        account: null,
      });
      for (const [method, name] of [
        ['POST', 'seleziona-periodo'],
        ['GET', 'leggi-movimenti'],
        ['POST', 'hydrate-login'],
      ] as const) {
        const r = await call(method, name);
        expect(r.body).toMatchObject({
          success: false,
          state: '2fa_pending',
          next: ['vai-a-conti', 'read-state'],
        });
      }
      const started = Date.now();
      const r = await post('vai-a-conti', { confirmation_wait_s: 1 });
      expect(r).toMatchObject({
        success: false,
        error: '2fa_timeout',
        state: '2fa_pending',
        next: ['vai-a-conti', 'read-state'],
        session_expired: false,
      });
      expect(r.hint).toMatch(/vai-a-conti/);
      expect(Date.now() - started).toBeLessThan(6_000);
      expect(site.received.codes).toEqual([]);
    },
  );

  await step(
    'vai-a-conti waits while the person types the SMS code in the live view, then opens the accounts',
    async () => {
      const code = site.sms()!;
      expect(code).toMatch(/^\d{6}$/);
      const started = Date.now();
      const logged = w.logs.length;
      const going = post('vai-a-conti', { confirmation_wait_s: 30 });
      await until('the worker logging that vai-a-conti waits for the person', () =>
        w.logs.slice(logged).some((l) => l.includes('waiting for the person')),
      );
      // The person reads the SMS, takes control in the live view and types the code. The plugin
      // holds the page all along: control is granted at once, not when the call ends.
      let answered = false;
      void going.then(() => (answered = true));
      const person = await LivePerson.takeControl(w, PAGE);
      expect(answered).toBe(false);
      const at = await until('the code page', () =>
        site.geometry?.path === '/accesso/verifica' ? site.geometry : null,
      );
      const field = at.fields['#otp']!;
      await person.click(
        at.screen.x + at.screen.left + field.x + field.width / 2,
        at.screen.y + at.screen.top + field.y + field.height / 2,
      );
      await person.type(code);
      await person.pressEnter();
      await until('the code checked', () => site.received.codes.find((c) => c.ok), 5_000);
      // The person hands the page back; the plugin was never held up by their control.
      await person.handBack();
      // While the code page says "Accesso in corso": the auth API's lines are not captured.
      const net = await w.call<Body>('GET', `/api/v1/ops/${PAGE}/network?include_body=true`);
      expect(net.body.url).toBe(`${site.url}/accesso/verifica`);
      // family.json's "/api/auth/" (a pattern between slashes reads as a regular expression).
      expect(net.body.blacklist).toEqual(['/api\\/auth/']);
      expect((net.body.http as Body[]).filter((l) => String(l.url).includes('/api/auth/'))).toEqual(
        [],
      );
      expect(JSON.stringify(net.body)).not.toContain(code);

      const r = await going;
      expect(r).toMatchObject({
        success: true,
        from_state: '2fa_pending',
        state: 'logged_in_conti',
        next: ['seleziona-periodo', 'leggi-movimenti', 'vai-a-conti'],
        account: { label: 'Conto corrente', number_masked: site.accounts[0]!.number_masked },
        accounts: [
          {
            label: 'Conto corrente',
            number_masked: site.accounts[0]!.number_masked,
            selected: true,
          },
          {
            label: 'Conto deposito',
            number_masked: site.accounts[1]!.number_masked,
            selected: false,
          },
        ],
        page_url: `${site.url}/conti`,
      });
      expect(r.waited_s).toBeGreaterThan(0);
      expect(r.waited_s).toBeLessThan((Date.now() - started) / 1000);
      expect(r.steps).toEqual([
        `waited ${r.waited_s} s for the code sent by SMS`,
        'clicked "I miei conti" in the main menu',
      ]);
      // The code was typed by the person (trusted keys), the menu clicked like a person.
      const onCode = site.events.filter(
        (e) => e.path === '/accesso/verifica' && e.type === 'keydown',
      );
      expect(onCode.length).toBeGreaterThanOrEqual(code.length);
      const menu = site.events.filter((e) => e.path === '/home' && e.type === 'click');
      expect(menu).toEqual([
        { type: 'click', trusted: true, target: 'I miei conti', path: '/home' },
      ]);
      expect(site.events.every((e) => e.type === 'hydrated' || e.trusted)).toBe(true);
    },
  );

  await step(
    'seleziona-periodo: a quick link, a preset typed, custom dates; the site received exactly those dates',
    async () => {
      const today = site.today;
      const year = await post('seleziona-periodo', { preset: 'this_year' });
      const jan1 = `${today.slice(0, 4)}-01-01`;
      expect(year).toMatchObject({
        success: true,
        period: { from: jan1, to: today, preset: 'this_year' },
        shown: { from: jan1, to: today },
        how: 'quick_link',
        state: 'logged_in_conti',
      });
      expect(site.received.periods.at(-1)).toEqual({
        dal: italianDate(jan1),
        al: italianDate(today),
        error: null,
      });

      // Custom dates, one ISO and one Italian: what the site received is what was asked.
      const from = addDays(today, -100);
      const to = addDays(today, -40);
      const custom = await post('seleziona-periodo', { from, to: italianDate(to) });
      expect(custom).toMatchObject({
        success: true,
        period: { from, to, preset: null },
        shown: { from, to },
        how: 'typed',
      });
      expect(site.received.periods.at(-1)).toEqual({
        dal: italianDate(from),
        al: italianDate(to),
        error: null,
      });
      expect(await state()).toMatchObject({
        state: 'logged_in_conti',
        period: { from, to },
        page: { current: 1 },
      });

      const read = await get('leggi-movimenti');
      const list = expected('corrente', from, to);
      expect(list.length).toBeGreaterThan(15);
      expect(read).toMatchObject({
        success: true,
        state: 'logged_in_conti',
        account: { label: 'Conto corrente', number_masked: site.accounts[0]!.number_masked },
        period: { from, to },
        currency: 'EUR',
        count: list.length,
        pages_read: Math.ceil(list.length / 15),
        complete: true,
      });
      expect(read.movements).toEqual(list);
      expect(read.totals).toEqual(totalsOf(list.map((m) => m.amount as number)));
    },
  );

  await step(
    'leggi-movimenti reads all pages of 90 days from the first; max_pages stops it; the other account',
    async () => {
      const today = site.today;
      const from = addDays(today, -89);
      const r = await post('seleziona-periodo', { preset: 'last_90_days' });
      expect(r).toMatchObject({
        success: true,
        period: { from, to: today, preset: 'last_90_days' },
        how: 'typed',
      });
      expect(site.received.periods.at(-1)).toEqual({
        dal: italianDate(from),
        al: italianDate(today),
        error: null,
      });

      const list = expected('corrente', from, today);
      expect(list.length).toBeGreaterThan(40);
      expect(
        list.some((m) => Math.abs(m.amount as number) >= 1000 && (m.amount as number) < 0),
      ).toBe(true);
      expect(list.some((m) => (m.amount as number) >= 1000)).toBe(true);
      const all = await get('leggi-movimenti');
      expect(all).toMatchObject({
        success: true,
        count: list.length,
        complete: true,
        period: { from, to: today },
      });
      expect(all.pages_read).toBe(Math.ceil(list.length / 15));
      expect(all.movements).toEqual(list);
      expect(all.page_url).toBe(`${site.url}/conti?pagina=${all.pages_read}`);

      // From the last page: back to the first, then one page only.
      const one = await get('leggi-movimenti', { max_pages: 1 });
      expect(one).toMatchObject({ success: true, count: 15, pages_read: 1, complete: false });
      expect(one.movements).toEqual(list.slice(0, 15));

      await world.navigate('/conti?conto=deposito');
      const deposit = await get('leggi-movimenti');
      expect(deposit).toMatchObject({
        success: true,
        account: { label: 'Conto deposito', number_masked: site.accounts[1]!.number_masked },
        movements: expected('deposito', from, today),
        complete: true,
        pages_read: 1,
      });
    },
  );

  await step(
    'in the logged-in area: hydrate-login refuses it, init-login lands in the live session',
    async () => {
      const r = await post('hydrate-login');
      expect(r).toMatchObject({ success: false, state: 'logged_in_conti' });
      expect(r.error).toMatch(
        /^Expected state login or login_hydrated, found state logged_in_conti/,
      );
      const opened = await post('init-login');
      expect(opened).toMatchObject({ success: true, state: 'logged_in', next: ['vai-a-conti'] });
      expect(await state()).toMatchObject({ state: 'logged_in', section: 'La tua home' });
      const again = await post('vai-a-conti');
      expect(again).toMatchObject({
        success: true,
        from_state: 'logged_in',
        state: 'logged_in_conti',
        waited_s: 0,
      });
    },
  );

  await step(
    'no alias, password or SMS code anywhere: logs, request log, errors, answers, capture',
    async () => {
      const secrets = [BANK_B_ALIAS, BANK_B_PWD, site.sms()!];
      // The profile API echoes the alias on this page: only the redaction keeps it out.
      let http: Body[] = [];
      for (let i = 0; i < 50; i += 1) {
        http = await world.capture();
        if (http.some((l) => String(l.url).endsWith('/api/utente') && typeof l.body === 'string'))
          break;
        await sleep(200);
      }
      const profile = http.find((l) => String(l.url).endsWith('/api/utente'));
      expect(profile?.body).toContain('[redacted]');
      const csv = fs
        .readdirSync(path.join(w.dataDir, 'requests'))
        .map((f) => fs.readFileSync(path.join(w.dataDir, 'requests', f), 'utf8'))
        .join('\n');
      expect(csv).toContain('bank/bank-b/hydrate-login');
      const places: Record<string, string> = {
        'worker log': w.logs.join('\n'),
        'request log': csv,
        errors: answers.map((a) => String(a.error ?? '')).join('\n'),
        answers: JSON.stringify(answers),
        capture: JSON.stringify(http),
      };
      for (const [where, text] of Object.entries(places)) {
        for (const secret of secrets) {
          expect([where, text.includes(secret)]).toEqual([where, false]);
          expect([where, text.includes(encodeURIComponent(secret))]).toEqual([where, false]);
        }
      }
    },
  );

  await step(
    'an expired session: the next page is the login with its notice; plugins say so',
    async () => {
      site.expireSessions();
      // Nothing moved yet: the page still shows the accounts.
      expect((await state()).state).toBe('logged_in_conti');
      const r = await post('vai-a-conti');
      expect(r).toMatchObject({ success: false, session_expired: true });
      expect(['login', 'login_hydrated']).toContain(r.state);
      expect(r.hint).toMatch(/expired.*hydrate-login/);
      const s = await state();
      expect(s).toMatchObject({
        session_expired: true,
        notice: "Sessione scaduta per inattività. Effettua di nuovo l'accesso.",
        page_url: `${site.url}/accesso?motivo=sessione-scaduta`,
      });
      expect(s.next[0]).toBe('hydrate-login');
      const read = await get('leggi-movimenti');
      expect(read).toMatchObject({ success: false, session_expired: true });
    },
  );
}, 600_000);

test('parameters the site would refuse are 400s before the page moves', async () => {
  const before = askedOfSite();
  const bad: Array<[string, Body, RegExp]> = [
    ['seleziona-periodo', { from: '01/10/2026' }, /from and to go together/],
    [
      'seleziona-periodo',
      { from: addDays(site.today, -3), to: addDays(site.today, -9) },
      /is after/,
    ],
    [
      'seleziona-periodo',
      { preset: 'last_7_days', from: '01/01/2026', to: '02/01/2026' },
      /disagree/,
    ],
    ['seleziona-periodo', { preset: 'custom' }, /needs from and to/],
    ['seleziona-periodo', { from: addDays(site.today, -400), to: site.today }, /at most 12 months/],
    ['seleziona-periodo', { preset: 'yesterday' }, /preset/],
    ['vai-a-conti', { confirmation_wait_s: 301 }, /confirmation_wait_s/],
  ];
  for (const [name, body, message] of bad) {
    const r = await call('POST', name, body);
    expect([r.status, r.body.error]).toEqual([400, expect.stringMatching(message)]);
  }
  const r = await call('GET', 'leggi-movimenti', { max_pages: 0 });
  expect(r.status).toBe(400);
  expect(askedOfSite()).toBe(before);
});

test('the placeholders answer 501 and touch nothing', async () => {
  const before = askedOfSite();
  for (const name of PLACEHOLDERS) {
    const r = await w.call<Body>('POST', `/api/v1/${PAGE}/plugin/bank/bank-b/${name}`, {
      body: {},
    });
    expect([name, r.status]).toEqual([name, 501]);
    expect(r.body).toMatchObject({ success: false, page_id: PAGE });
    expect(r.body.error).toMatch(/not implemented/i);
  }
  expect(askedOfSite()).toBe(before);
});

test('the count of the two tests above rises when a page asks the site for a page (their control)', async () => {
  // Another page, and a path the site does not know: the chain's page and session stay as they are.
  const other = `${PAGE}-control`;
  const created = await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: other } });
  expect(created.status).toBe(200);
  try {
    const before = askedOfSite();
    const nav = await w.call<Body>('POST', `/api/v1/ops/${other}/navigate`, {
      body: { url: `${site.url}/nessuna-pagina` },
    });
    expect([nav.body.success, nav.body.status_code]).toEqual([true, 404]);
    expect(askedOfSite()).toBeGreaterThan(before);
  } finally {
    await w.call('POST', `/api/v1/ops/${other}/destroy-page`);
  }
});
