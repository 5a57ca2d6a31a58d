import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import { KEY } from '@persona-browser/testkit/worker';
import type { BankBSite } from './fixtures/bank-b-site';
import { startBankBSite } from './fixtures/bank-b-site';
import { BANK_B_ALIAS, BANK_B_PWD } from './fixtures/bank-b-site-data';
import type { Body } from './fixtures/plugin-world';
import { pluginWorld } from './fixtures/plugin-world';

/**
 * bank/bank-b/site-check through `check:sites bank-b --worker URL`, on the stand-in bank with a
 * logged-in session: every mark found; with the markup changed, exactly the changed marks
 * missing, with a bundle; the site saw no form posted and no money moved. Control: a plugin of
 * the family that sends a transfer (written here, beside the family's real plugins) is what
 * that guard sees.
 */

const PLUGINS = path.join(__dirname, '..');
const CLI = path.join(PLUGINS, '..', 'waker', 'dist', 'site-checks', 'cli.js');

/** The family's plugins as built, plus a transfer no real plugin of ours makes. */
const root = writePluginTree([
  {
    name: 'bank/bank-b/bonifico-di-prova',
    manifest: manifest([]),
    js: `module.exports.default = { async run(ctx) {
      await ctx.page.goto(ctx.setting('BANK_B_BASE_URL') + '/bonifici');
      await ctx.gestures.click('#iban');
      await ctx.gestures.paste('IT60X0542811101000000123456');
      await ctx.gestures.click('#importo');
      await ctx.gestures.type('5');
      await ctx.page.navigationAfter(() => ctx.gestures.click('#invia'));
      return { success: true };
    } };`,
  },
]);
fs.cpSync(path.join(PLUGINS, 'bank', 'bank-b'), path.join(root, 'bank', 'bank-b'), {
  recursive: true,
  filter: (f) => !f.endsWith('.ts'),
});
fs.cpSync(path.join(PLUGINS, 'dist'), path.join(root, 'dist'), { recursive: true });
// The built plugins require the SDK by name: from the repository's modules.
fs.symlinkSync(path.join(PLUGINS, '..', 'node_modules'), path.join(root, 'node_modules'));

const world = pluginWorld({
  family: 'bank/bank-b',
  stateRoute: 'read-state',
  pageId: 'b',
  seed: '19',
  startSite: startBankBSite,
  env: (s) => ({ BANK_B_BASE_URL: s.url, BANK_B_ALIAS, BANK_B_PWD, PLUGINS_DIR: root }),
});
let site: BankBSite;

/** What the site received besides reading: any request but a GET, any transfer. */
const submitted = (): string[] => [
  ...site.seen
    .filter((s) => s.method !== 'GET' && s.path !== '/__seen')
    .map((s) => `${s.method} ${s.path}`),
  ...site.transfers.map((t) => `transfer ${t.importo}`),
];

const primitive = async (name: string, body: Body): Promise<void> => {
  const r = await world.w.call<Body>('POST', `/api/v1/primitive/b/${name}`, { body });
  expect(r.body.success).toBe(true);
};

beforeAll(async () => {
  site = world.site;
  site.hydrationMs = 200;
  site.redirectMs = 200;
  expect(await world.post('init-login')).toMatchObject({ success: true });
  expect(await world.post('hydrate-login')).toMatchObject({ success: true, state: '2fa_pending' });
  // The code sent by SMS, typed as the person would.
  await primitive('click-element', { selector: '#otp' });
  await primitive('type-text', { text: site.sms() });
  await primitive('press-enter', {});
  expect(await world.post('vai-a-conti', { confirmation_wait_s: 10 })).toMatchObject({
    success: true,
    state: 'logged_in_conti',
  });
}, 60_000);
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function checkSites(...args: string[]): Promise<{ code: number; stdout: string }> {
  const argv = [CLI, 'bank-b', '--worker', world.w.url, '--key', KEY, ...args];
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { env: { ...process.env, SERVICE_KEY: '' } }, (err, stdout) =>
      resolve({ code: err ? Number(err.code) : 0, stdout }),
    );
  });
}

test('logged in: every mark of the home and "I miei conti" is found; nothing posted', async () => {
  const before = submitted();
  const { code, stdout } = await checkSites('--param', 'wait_s=2', '--json');
  const out = JSON.parse(stdout) as Body;
  expect(out).toMatchObject({ family: 'bank-b', ok: true, missing: [], error: null });
  expect(code).toBe(0);
  expect((out.items as Body[]).map((i) => i.name)).toEqual(
    expect.arrayContaining([
      'SELECTORS.menuAccounts',
      'SELECTORS.accountTab',
      'SELECTORS.accountNumber',
      'SELECTORS.apply',
      'SELECTORS.row',
      'COLUMNS.credit',
      'PATTERNS.periodLine',
    ]),
  );
  expect(submitted()).toEqual(before);
});

test('with the markup changed, exactly the changed marks are missing, with a bundle', async () => {
  const before = submitted();
  site.changes = [
    ['class="valuta"', 'class="divisa"'],
    ['<th>Accrediti</th>', '<th>Entrate</th>'],
  ];
  try {
    const { code, stdout } = await checkSites('--param', 'wait_s=1');
    expect(code).toBe(1);
    const missingRows = stdout.split('\n').filter((l) => l.startsWith('MISSING'));
    expect(missingRows.map((l) => l.split(/\s+/)[2])).toEqual([
      'SELECTORS.currency',
      'COLUMNS.credit',
    ]);
    expect(stdout).toContain('bank-b: 2 of ');
    const id = /failure bundle: (\S+)/.exec(stdout)?.[1];
    const bundle = await world.w.call<Body>('GET', `/api/v1/bundles/${id}`);
    expect(bundle.status).toBe(200);
    expect(JSON.stringify(bundle.body)).toContain('bank/bank-b/site-check');
    expect(submitted()).toEqual(before);
  } finally {
    site.changes = [];
  }
});

test('control: a plugin of the family that moves money is what the guard sees', async () => {
  const before = submitted();
  expect(await world.post('bonifico-di-prova')).toMatchObject({ success: true });
  expect(submitted().slice(before.length)).toEqual(['POST /bonifici', 'transfer 5']);
});
