import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import { keepRequests, personaRequests } from '../src/metrics';
import { SNAPSHOT_FILE, keptRequests } from '../src/metrics/remote-requests';

/**
 * Request counts of a persona whose log is out of the waker's reach (a cluster node): read from
 * its real worker while it runs, and kept beside its definition when it stops.
 */
let w: RunningWorker;
let dir: string;

beforeAll(async () => {
  w = await startWorker({ persona: 'faraway' });
  await w.waitInitialized();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-kept-'));
});
afterAll(async () => {
  await w?.stop();
});

const sum = (hours: Array<{ count: number }>): number => hours.reduce((s, h) => s + h.count, 0);

test('while it runs the worker counts; kept at its stop, the same counts answer while it sleeps', async () => {
  for (let i = 0; i < 3; i++) expect((await w.call('GET', '/api/v1/plugins')).status).toBe(200);
  const worker = { host: '127.0.0.1', port: w.port };
  const awake = { node: 'w2', spec: { dir }, runningAddress: () => worker };
  const live = await personaRequests(awake, 2, KEY);
  expect(sum(live)).toBe(3);
  // Hours written as the waker writes those it reads from files on one server.
  expect(live.map((h) => h.hour)).toEqual(live.map((h) => h.hour.replace('.000Z', 'Z')));
  expect(live[1]?.hour).toMatch(/T\d\d:00:00Z$/);
  await keepRequests(worker, KEY, dir);
  expect(fs.existsSync(path.join(dir, SNAPSHOT_FILE))).toBe(true);
  const asleep = { ...awake, runningAddress: () => null };
  expect(await personaRequests(asleep, 2, KEY)).toEqual(live);
  // Hours after the stop count nothing: the worker logged nothing then.
  const later = new Date(Date.now() + 3 * 3_600_000);
  expect(sum(await keptRequests(dir, 2, later))).toBe(0);
  expect(sum(await keptRequests(dir, 5, later))).toBe(3);
});

test('nothing kept yet, or a damaged file, counts zero rather than failing', async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-kept-'));
  expect(sum(await keptRequests(empty, 3))).toBe(0);
  fs.writeFileSync(path.join(empty, SNAPSHOT_FILE), '{"requests": [{"hour": 1}]');
  expect(sum(await keptRequests(empty, 3))).toBe(0);
  fs.writeFileSync(path.join(empty, SNAPSHOT_FILE), '{"requests": "x"}');
  expect(await keptRequests(empty, 3)).toHaveLength(3);
});
