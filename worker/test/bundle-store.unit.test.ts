import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BundleStore } from '../src/plugins/bundle-store';

/** Retention of failure bundles: the size cap (oldest first) and the age, on a real folder. */
const DAY = 86_400_000;
let now = Date.UTC(2025, 0, 10);
const dirs: string[] = [];

function newStore(capBytes: number, maxAgeMs = 14 * DAY): BundleStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bundles-'));
  dirs.push(dir);
  return new BundleStore({ dir, capBytes, maxAgeMs, now: () => now });
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A bundle of `bytes` bytes of HTML taken now; its id. */
async function put(store: BundleStore, plugin: string, bytes: number): Promise<string> {
  const { id, time } = store.nextId();
  const meta = {
    debug_id: id,
    plugin,
    page_id: 'a',
    url: 'about:blank',
    time: time.toISOString(),
    duration_ms: 1,
    error: { status: 200, message: 'failed' },
    missing: {},
  };
  await store.write(id, { 'meta.json': JSON.stringify(meta), 'page.html': 'x'.repeat(bytes) });
  now += 1000;
  return id;
}

test('past the cap the oldest bundles go first, until the rest fit', async () => {
  const store = newStore(25_000);
  await put(store, 'one', 10_000);
  await put(store, 'two', 10_000);
  // Control: both fit, both are kept.
  expect(store.list().map((b) => b.plugin)).toEqual(['two', 'one']);
  await put(store, 'three', 10_000);
  expect(store.list().map((b) => b.plugin)).toEqual(['three', 'two']);
  expect(store.list().reduce((n, b) => n + b.size, 0)).toBeLessThanOrEqual(25_000);
  expect(fs.readdirSync(store.dir).length).toBe(2);
});

test('bundles older than the age are dropped', async () => {
  const store = newStore(1_000_000, 2 * DAY);
  await put(store, 'old', 100);
  now += DAY;
  await put(store, 'newer', 100);
  expect(store.list().map((b) => b.plugin)).toEqual(['newer', 'old']);
  now += 1.5 * DAY;
  await put(store, 'newest', 100);
  expect(store.list().map((b) => b.plugin)).toEqual(['newest', 'newer']);
});

test('ids and names outside the store are refused', async () => {
  const store = newStore(1_000_000);
  const id = await put(store, 'one', 10);
  expect(store.file(id, 'page.html')?.contentType).toBe('text/html; charset=utf-8');
  expect(store.file(id, '../meta.json')).toBeNull();
  expect(store.file('..', 'meta.json')).toBeNull();
  expect(store.meta(`${id}/..`)).toBeNull();
});
