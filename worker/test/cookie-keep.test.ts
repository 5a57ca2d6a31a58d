import fs from 'node:fs';
import path from 'node:path';
import { startFixture } from '@persona-browser/testkit/fixture';
import { useSite } from '@persona-browser/testkit/site-worker';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

/**
 * The cookies a browser held as it closed come back at its next start when its own last write
 * of them did not happen. The fault is injected: the profile's cookie database is put back to
 * what it was before the last session, as a close that never wrote it leaves it.
 */
type Body = Record<string, any>;
type Kept = { name: string; value: string; domain: string; path: string; expires: number };
const file = useSite(startFixture);

let w: RunningWorker;
beforeAll(async () => {
  w = await startWorker({});
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
});

const database = (): string => path.join(w.profileDir, 'Default', 'Cookies');
const keptFile = (): string => path.join(w.profileDir, 'persona-cookies.json');
const readKept = (): Kept[] => JSON.parse(fs.readFileSync(keptFile(), 'utf8')) as Kept[];

async function system(verb: 'start' | 'stop'): Promise<void> {
  const r = await w.call<Body>('GET', `/api/v1/system/${verb}`);
  expect({ verb, success: r.body.success }).toEqual({ verb, success: true });
}

/** Opens the fixture's cookie page (setting `persona` to `value` when given); its title. */
async function cookiePage(value?: string): Promise<string> {
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'c' } });
  const query = value ? `?v=${value}` : '';
  await w.call('POST', '/api/v1/ops/c/navigate', {
    body: { url: `${file.site.url}/cookie${query}` },
  });
  return String((await w.call<Body>('POST', '/api/v1/ops/c/extract-content')).body.title);
}

/** Sets `older`, then `newer` over it, stopping after each; gives the database of `older`. */
async function databaseBefore(older: string, newer: string): Promise<Buffer> {
  await system('start');
  expect(await cookiePage(older)).toBe(`cookies:persona=${older}`);
  await system('stop');
  const before = fs.readFileSync(database());
  await system('start');
  expect(await cookiePage(newer)).toBe(`cookies:persona=${newer}`);
  await system('stop');
  return before;
}

/** Puts the database back to `bytes`, dated `secondsBefore` the kept cookies' file. */
function rollBack(bytes: Buffer, secondsBefore: number): void {
  fs.writeFileSync(database(), bytes);
  fs.rmSync(`${database()}-journal`, { force: true });
  const kept = fs.statSync(keptFile()).mtime;
  const at = new Date(kept.getTime() - secondsBefore * 1000);
  fs.utimesSync(database(), at, at);
}

test('a stop keeps the persistent cookies the browser held, host-only ones as the site set them', async () => {
  await system('start');
  expect(await cookiePage('held')).toBe('cookies:persona=held');
  await system('stop');
  const kept = readKept();
  const host = new URL(file.site.url).hostname;
  expect(kept.filter((c) => c.name === 'persona')).toEqual([
    expect.objectContaining({ value: 'held', domain: host, path: '/' }),
  ]);
  expect(fs.statSync(keptFile()).mode & 0o777).toBe(0o600);
});

test('a close that did not write the last cookie: the next start has it back, and says so', async () => {
  const before = await databaseBefore('first', 'second');
  const keptBefore = readKept();
  rollBack(before, 10);
  const logged = w.logs.length;
  await system('start');
  expect(await cookiePage()).toBe('cookies:persona=second');
  const said = w.logs.slice(logged).filter((l) => l.includes('cookies the browser had'));
  expect(said).toHaveLength(1);
  expect(JSON.parse(said[0] ?? '{}')).toMatchObject({ cookies: { restored: 1, removed: 0 } });
  // Put back as it was: the next stop keeps the same cookie, host-only, expiring as set.
  await system('stop');
  const again = readKept().find((c) => c.name === 'persona');
  const was = keptBefore.find((c) => c.name === 'persona');
  expect(again).toEqual(was);
});

test('control: without the kept cookies, the same rolled-back database loses the last cookie', async () => {
  const before = await databaseBefore('third', 'fourth');
  rollBack(before, 10);
  fs.rmSync(keptFile());
  await system('start');
  expect(await cookiePage()).toBe('cookies:persona=third');
  await system('stop');
});

test('kept cookies older than the database are not used: the database was written after them', async () => {
  await system('start');
  expect(await cookiePage('fifth')).toBe('cookies:persona=fifth');
  await system('stop');
  // The kept file says otherwise; dated before the database it is a leftover and stays unused.
  const stale = readKept().map((c) => (c.name === 'persona' ? { ...c, value: 'stale' } : c));
  fs.writeFileSync(keptFile(), JSON.stringify(stale));
  const db = fs.statSync(database()).mtime;
  const at = new Date(db.getTime() - 10_000);
  fs.utimesSync(keptFile(), at, at);
  await system('start');
  expect(await cookiePage()).toBe('cookies:persona=fifth');
  await system('stop');
  // Control: the same file dated after the database is used.
  fs.writeFileSync(keptFile(), JSON.stringify(stale));
  await system('start');
  expect(await cookiePage()).toBe('cookies:persona=stale');
});
