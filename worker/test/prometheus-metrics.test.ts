import { personTakesOver } from '@persona-browser/testkit/agent';
import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { Sample } from '@persona-browser/testkit/prometheus';
import { parseExposition, valueOf } from '@persona-browser/testkit/prometheus';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';

/**
 * The worker's `GET /metrics` as Prometheus reads it (with the key): the numbers move as a
 * client calls, leases, runs plugins, and as a person takes a page over at the live view.
 */
const root = writePluginTree([
  {
    name: 'demo/fine',
    manifest: manifest([]),
    js: 'module.exports.default = { async run() { return {}; } };',
  },
  {
    name: 'demo/refuse',
    manifest: manifest([]),
    js: "module.exports.default = { async run() { return { success: false, error: 'no' }; } };",
  },
]);

const W = 'persona_browser_worker_';
let w: RunningWorker;

async function scrape(): Promise<Sample[]> {
  const r = await fetch(`${w.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await r.text());
}

const callCount = (s: Sample[], route: string, status_class = '2xx'): number =>
  valueOf(s, `${W}call_duration_seconds_count`, { route, status_class });

beforeAll(async () => {
  w = await startWorker({ env: { PLUGINS_DIR: root } });
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
});

test('without the key /metrics answers 401 like every authenticated route', async () => {
  const none = await fetch(`${w.url}/metrics`);
  expect(none.status).toBe(401);
  expect(await none.json()).toEqual({ detail: 'Invalid API key' });
  const wrong = await fetch(`${w.url}/metrics`, { headers: { authorization: 'Bearer nope' } });
  expect(wrong.status).toBe(401);
});

test('calls, pages, leases, plugins and a take-over move their series', async () => {
  const before = await scrape();
  expect(callCount(before, 'create-page')).toBe(0);

  expect((await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'm' } })).status).toBe(
    200,
  );
  // A 404 is its own status class, under the route's declared name, not the URL.
  expect(
    (await w.call('POST', '/api/v1/ops/nope/navigate', { body: { url: 'about:blank' } })).status,
  ).toBe(404);
  const created = await scrape();
  expect(callCount(created, 'create-page')).toBe(1);
  expect(callCount(created, 'navigate', '4xx')).toBe(1);
  expect(created.some((s) => s.labels.route?.includes('/'))).toBe(false);
  const pages = (s: Sample[]): number =>
    s.filter((x) => x.name === `${W}pages`).reduce((n, x) => n + x.value, 0);
  expect(pages(created)).toBe(pages(before) + 1);
  expect(valueOf(created, `${W}pages`, { state: 'idle' })).toBeGreaterThanOrEqual(1);
  expect(valueOf(created, `${W}leases_held`)).toBe(0);

  const lease = await w.call<{ lease_token: string }>('POST', '/api/v1/ops/m/lease', { body: {} });
  expect(lease.status).toBe(200);
  expect(valueOf(await scrape(), `${W}leases_held`)).toBe(1);

  const fine = await w.call('POST', '/api/v1/m/plugin/demo/fine', {
    body: {},
    lease: lease.body.lease_token,
  });
  expect(fine.status).toBe(200);
  const refused = await w.call('POST', '/api/v1/m/plugin/demo/refuse', {
    body: {},
    lease: lease.body.lease_token,
  });
  expect(refused.body.success).toBe(false);
  const leasedOut = await w.call('DELETE', '/api/v1/ops/m/lease', {
    lease: lease.body.lease_token,
  });
  expect(leasedOut.status).toBe(200);
  const after = await scrape();
  const plugin = (name: string, result: string): number =>
    valueOf(after, `${W}plugin_calls_total`, { plugin: name, result });
  expect(plugin('demo/fine', 'ok')).toBe(1);
  expect(plugin('demo/refuse', 'failed')).toBe(1);
  expect(plugin('demo/fine', 'failed')).toBe(0);
  expect(valueOf(after, `${W}leases_held`)).toBe(0);
  expect(valueOf(after, `${W}media_bytes`)).toBe(0);
  expect(valueOf(after, `${W}capture_bytes`)).toBeGreaterThanOrEqual(0);

  expect(valueOf(after, `${W}person_takeovers_total`)).toBe(0);
  const person = await personTakesOver(w.url, 'm');
  const taken = await scrape();
  expect(valueOf(taken, `${W}person_takeovers_total`)).toBe(1);
  expect(valueOf(taken, `${W}leases_held`)).toBe(1);
  await person.handBack();
  expect(valueOf(await scrape(), `${W}leases_held`)).toBe(0);
});
