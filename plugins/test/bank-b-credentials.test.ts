import { startBankBSite } from './fixtures/bank-b-site';
import { BANK_B_ALIAS } from './fixtures/bank-b-site-data';
import { pluginWorld } from './fixtures/plugin-world';

/**
 * A worker whose environment lacks BANK_B_PWD: hydrate-login says which credential is missing,
 * clearly and without touching the form.
 */

const world = pluginWorld({
  family: 'bank/bank-b',
  stateRoute: 'read-state',
  pageId: 'bbc',
  seed: '13',
  startSite: startBankBSite,
  env: (s) => ({ BANK_B_BASE_URL: s.url, BANK_B_ALIAS, BANK_B_PWD: undefined }),
});

test('hydrate-login without BANK_B_PWD names it and types nothing', async () => {
  const { site } = world;
  expect(await world.post('init-login')).toMatchObject({ success: true, state: 'login' });
  const r = await world.plugin('POST', 'hydrate-login');
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    success: false,
    debug_id: expect.any(String),
    error: "BANK_B_PWD is not set in the worker's environment",
    missing: ['BANK_B_PWD'],
    page_id: 'bbc',
  });
  expect(site.received.logins).toEqual([]);
  expect(site.events.filter((e) => e.type === 'keydown' || e.type === 'click')).toEqual([]);
  expect((await world.state()).state).toMatch(/^login/);
});
