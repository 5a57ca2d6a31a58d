import type { BankASite } from './fixtures/bank-a-site';
import { bankAWorldOptions } from './fixtures/bank-a-site';
import type { Body } from './fixtures/plugin-world';
import { pluginWorld } from './fixtures/plugin-world';

/**
 * bank/bank-a/site-check on the stand-in bank, logged in by the family's own chain: every mark
 * of the home, the current account and the card found; with the markup changed, exactly the
 * changed marks missing, with a failure bundle; the site received nothing but GETs from the
 * check, while the login it follows (a form posted) is what that guard sees.
 */

const world = pluginWorld(bankAWorldOptions('17'));
let site: BankASite;

/** What the site received besides reading: any request but a GET, any login attempt. */
const submitted = (): string[] => [
  ...site.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`),
  ...site.logins.map((l) => `login ${l.ok ? 'ok' : 'refused'}`),
];

/** The family's own login chain, the app's confirmation given by the stand-in's control. */
async function logIn(): Promise<void> {
  // The form may have hydrated (200 ms) by the time init-login reads the page.
  expect(await world.post('init-login')).toMatchObject({
    success: true,
    state: expect.stringMatching(/^login(_hydrated)?$/),
  });
  expect(await world.post('hydrate-login')).toMatchObject({ success: true });
  expect(site.confirm()).toBeGreaterThan(0);
  expect(await world.post('vai-a-home', { confirmation_wait_s: 10 })).toMatchObject({
    success: true,
    state: 'logged_in_home',
  });
}

/** Whether a test let the session expire: the next test logs in again first. */
let expired = false;

beforeAll(async () => {
  site = world.site;
  site.setHydrationMs(200);
  expect(submitted()).toEqual([]);
  await logIn();
  // Control: a plugin that submits a form (the login) is what the guard below sees.
  expect(submitted()).toEqual(['POST /auth/accesso', 'login ok']);
}, 60_000);

beforeEach(async () => {
  if (!expired) return;
  await logIn();
  expired = false;
}, 60_000);

const check = (waitS = 2): Promise<Body> => world.post('site-check', { wait_s: waitS });
const where = (r: Body, found: boolean): string[] =>
  (r.items as Body[]).filter((i) => i.found === found).map((i) => `${i.where}: ${i.name}`);

test('logged in: every mark of the home, the account and the card is found; only GETs', async () => {
  const before = submitted();
  const recorded = site.requests.length;
  const r = await check();
  // The site recorded the check's reads: the guard below reads a recording that is not empty.
  expect(site.requests.slice(recorded).some((q) => q.method === 'GET')).toBe(true);
  expect(r).toMatchObject({ success: true, missing: [], missing_count: 0 });
  expect(where(r, false)).toEqual([]);
  expect(where(r, true)).toEqual(
    expect.arrayContaining([
      'home: SELECTORS.logout',
      'home: SELECTORS.menuLink.carta',
      'conto page: PATHS.sections.conto',
      'conto page: SELECTORS.productBalance',
      'conto page: SELECTORS.periodSelect',
      'conto page: COLUMNS.amount',
      'carta page: SELECTORS.table',
      'carta page: PATTERNS.pageOf',
    ]),
  );
  expect(r.checked).toBe(6 + 2 * (1 + 13 + 6));
  expect(submitted()).toEqual(before);
  // The session is the same: the check left the persona logged in.
  expect(await world.state()).toMatchObject({ state: 'logged_in_carta' });
});

test('with the markup changed, exactly the changed marks are missing, with a bundle', async () => {
  const before = submitted();
  site.setChanges([
    ['<a class="logo"', '<a class="marchio"'],
    ['class="saldo-valore"', 'class="saldo-importo"'],
  ]);
  try {
    const r = await check(1);
    expect(r).toMatchObject({ success: false, missing_count: 3 });
    expect(where(r, false)).toEqual([
      'home: SELECTORS.logo',
      'conto page: SELECTORS.productBalance',
      'carta page: SELECTORS.productBalance',
    ]);
    expect(r.error).toMatch(/^Site changed: 3 of 46 marks of bank-a missing/);
    const bundle = await world.w.call<Body>('GET', `/api/v1/bundles/${r.debug_id}`);
    expect(bundle.status).toBe(200);
    expect(JSON.stringify(bundle.body)).toContain('bank/bank-a/site-check');
    expect(submitted()).toEqual(before);
  } finally {
    site.setChanges([]);
  }
});

test('logged out: the check says so and names the login page, touching nothing', async () => {
  expect((await fetch(`${site.url}/__test/scadenza`, { method: 'POST' })).status).toBe(200);
  expired = true;
  const before = submitted();
  const r = await check();
  expect(r).toMatchObject({ success: false });
  expect(r.error).toMatch(/^Expected a logged-in page of bank-a, found .*session expired/);
  expect(submitted()).toEqual(before);
});
