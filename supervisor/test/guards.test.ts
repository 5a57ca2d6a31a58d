import fs from 'node:fs';
import path from 'node:path';
import type { SupervisorStatus } from '@persona-browser/contracts';
import { fleetPids, isAlive } from '@persona-browser/testkit/fleet-procs';
import {
  ROOT,
  call,
  freePort,
  git,
  makeFleetRepo,
  marked,
  startSupervisor,
  until,
  workerCommit,
} from '@persona-browser/testkit/fleet-repo';
import type { FleetRepo, RunningSupervisor } from '@persona-browser/testkit/fleet-repo';

/**
 * What must never go wrong around an update: the trigger route, local work in the checkout,
 * and a supervisor killed in the middle of an update. UPDATE_INTERVAL is an hour here, so every
 * update below was started by `GET /api/v1/system/update` (the trigger file).
 */
const FLEET = `supg${process.pid}`;
const MAIN = 'worker/src/main.ts';
const original = fs.readFileSync(path.join(ROOT, MAIN), 'utf8');
const ENV = {
  WAKER_DRIVER: 'process',
  FLEET_ID: FLEET,
  UPDATE_INTERVAL: '3600',
  HEALTH_TIMEOUT: '40',
};

let repo: FleetRepo;
let sup: RunningSupervisor;
let personaPort: number;

const personaUrl = (route: string): string => `http://127.0.0.1:${personaPort}${route}`;

/** The commit the persona's worker answers ping with on its port (null: not the worker's). */
const pingHash = (): Promise<string | null> => workerCommit(personaPort);

/** What a user calls: the worker's update route, which touches `.update-trigger`. */
async function triggerUpdate(): Promise<void> {
  const r = await call(personaUrl('/api/v1/system/update'));
  expect(r.status).toBe(200);
}

const idleOn = (hash: string) => (s: SupervisorStatus) =>
  s.healthy_commit === hash && s.commit?.hash === hash && s.state === 'idle';

beforeAll(async () => {
  personaPort = await freePort();
  repo = makeFleetRepo({ ann: `PORT=${personaPort}\nMODE=always-on\n` });
  sup = await startSupervisor(repo, ENV);
  await sup.waitFor('healthy', idleOn(repo.head()), 180_000);
}, 240_000);

afterAll(async () => {
  expect(await sup?.stop()).toBe(0);
  expect(fleetPids(FLEET)).toEqual([]);
  repo?.remove();
}, 120_000);

test('the update route triggers an update at once, and the trigger file is consumed', async () => {
  const next = repo.push('Worker: triggered', { [MAIN]: marked(original, 'triggered') });
  const asked = Date.now();
  await triggerUpdate();
  const s = await sup.waitFor('updated', idleOn(next));
  expect(s.last_update).toMatchObject({ to: next, trigger: 'trigger', result: 'ok' });
  // Started by the trigger, not by a poll (the next one is an hour away).
  expect(Date.parse(s.last_update?.started_at ?? '') - asked).toBeLessThan(15_000);
  expect(fs.existsSync(path.join(repo.checkout, '.update-trigger'))).toBe(false);
  expect(await pingHash()).toBe(next);
}, 180_000);

test('a checkout with uncommitted changes refuses the update and keeps them', async () => {
  const before = repo.head();
  const readme = path.join(repo.checkout, 'README.md');
  const edited = `${fs.readFileSync(readme, 'utf8')}\nA note made on the server.\n`;
  fs.writeFileSync(readme, edited);
  const next = repo.push('Docs: a line', { 'docs-note.md': 'one\n' });
  await triggerUpdate();
  const s = await sup.waitFor('refused', (x) => x.refused !== null && x.state === 'idle');
  expect(s.refused).toMatch(/uncommitted changes \(README\.md\)/);
  expect(s.last_update).toMatchObject({ to: next, result: 'refused' });
  expect(repo.head()).toBe(before);
  expect(fs.readFileSync(readme, 'utf8')).toBe(edited);
  expect(await pingHash()).toBe(before);

  // Once the change is put away, the same commit goes through.
  git(repo.checkout, 'checkout', '--', 'README.md');
  await triggerUpdate();
  const after = await sup.waitFor('updated', idleOn(next));
  expect(after.refused).toBeNull();
}, 180_000);

test('local commits that the upstream lacks refuse the update and stay', async () => {
  git(repo.checkout, 'commit', '--quiet', '--allow-empty', '-m', 'A commit made on the server');
  const local = repo.head();
  const next = repo.push('Docs: another line', { 'docs-note.md': 'two\n' });
  await triggerUpdate();
  const s = await sup.waitFor('refused', (x) => x.refused !== null && x.state === 'idle');
  expect(s.refused).toMatch(/1 local commit\(s\) are not on origin\/main/);
  expect(repo.head()).toBe(local);
  expect(git(repo.checkout, 'log', '-1', '--format=%s')).toBe('A commit made on the server');

  git(repo.checkout, 'reset', '--quiet', '--keep', 'HEAD~1');
  await triggerUpdate();
  await sup.waitFor('updated', idleOn(next));
}, 180_000);

test('a supervisor killed in the middle of an update, started again, ends healthy', async () => {
  const before = repo.head();
  const next = repo.push('Worker: killed mid-update', { [MAIN]: marked(original, 'killed') });
  await triggerUpdate();
  const mid = await sup.waitFor(
    'updating',
    (x) => x.state === 'updating' && x.last_update?.to === next,
  );
  const { port, wakerPort } = sup;
  sup.proc.kill('SIGKILL');
  await sup.exited;
  // The waker it ran notices and stops itself and its worker.
  const wakerPid = mid.waker.pid;
  if (wakerPid !== null) await until(async () => (isAlive(wakerPid) ? null : true), 60_000);
  await until(async () => (fleetPids(FLEET).length === 0 ? true : null), 60_000);
  expect(repo.head() === before || repo.head() === next).toBe(true);

  sup = await startSupervisor(repo, ENV, { port, wakerPort });
  const s = await sup.waitFor('healthy again', idleOn(next), 180_000);
  expect(s.log.map((l) => l.message)).toEqual(
    expect.arrayContaining([expect.stringContaining('was cut short')]),
  );
  expect(s.last_update).toMatchObject({ to: next, trigger: 'recovery', result: 'ok' });
  expect(await pingHash()).toBe(next);
}, 300_000);
