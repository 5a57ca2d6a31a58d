import fs from 'node:fs';
import path from 'node:path';
import type { PersonaList, SupervisorStatus } from '@persona-browser/contracts';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { fleetPids } from '@persona-browser/testkit/fleet-procs';
import {
  BREAK,
  KEY,
  PING_ROUTE,
  ROOT,
  lateFirstPing,
  marked,
  call,
  freePort,
  makeFleetRepo,
  sleep,
  startSupervisor,
  workerCommit,
} from '@persona-browser/testkit/fleet-repo';
import type { FleetRepo, RunningSupervisor } from '@persona-browser/testkit/fleet-repo';
import { openFleetPanel } from '@persona-browser/testkit/panel-server';

/**
 * Updates as a server gets them: commits pushed to a real bare repository, a supervisor on the
 * server's checkout running the real waker with the process driver, one always-on persona with
 * its real worker and Chromium. The persona's own port is asked, as a user would, which commit
 * it runs.
 */
const FLEET = `sup${process.pid}`;
const INTERVAL_S = 2;
const HEALTH_S = 25;
const MAIN = 'worker/src/main.ts';
const original = fs.readFileSync(path.join(ROOT, MAIN), 'utf8');
/** The worker's start-up step that launches its browser. */
const LAUNCH = 'worker/src/startup/browser-steps.ts';
const launchOriginal = fs.readFileSync(path.join(ROOT, LAUNCH), 'utf8');
const pingRoute = fs.readFileSync(path.join(ROOT, PING_ROUTE), 'utf8');

/**
 * Pushes a commit of the product as it is with `change` on top: the files a bad commit broke
 * are put back in every later one, so no test inherits an earlier test's break.
 */
const push = (message: string, change: Record<string, string>): string =>
  repo.push(message, {
    [MAIN]: original,
    [LAUNCH]: launchOriginal,
    [PING_ROUTE]: pingRoute,
    ...change,
  });

let repo: FleetRepo;
let sup: RunningSupervisor;
let personaPort: number;

/** The commit the persona's worker answers ping with on its port (null: not the worker's). */
const pingHash = (): Promise<string | null> => workerCommit(personaPort);

/**
 * The fleet up, idle and healthy on the checkout's HEAD: where each update test starts, so none
 * relies on an earlier test having waited for the bring-up or for the last update to end.
 */
const settled = (): Promise<SupervisorStatus> =>
  sup.waitFor(
    'idle and healthy on HEAD',
    (x) => x.healthy_commit === repo.head() && x.state === 'idle' && x.waker.running,
    180_000,
  );

const updatedTo = (hash: string, result: string) => (s: SupervisorStatus) =>
  s.last_update?.to === hash && s.last_update.result === result && s.state === 'idle';

beforeAll(async () => {
  personaPort = await freePort();
  repo = makeFleetRepo({ ann: `PORT=${personaPort}\nMODE=always-on\n` });
  sup = await startSupervisor(repo, {
    WAKER_DRIVER: 'process',
    FLEET_ID: FLEET,
    UPDATE_INTERVAL: String(INTERVAL_S),
    HEALTH_TIMEOUT: String(HEALTH_S),
  });
}, 120_000);

afterAll(async () => {
  const code = await sup?.stop();
  expect(code).toBe(0);
  // The supervisor stopped the waker, and the waker every worker, Xvfb and Chromium.
  expect(fleetPids(FLEET)).toEqual([]);
  repo?.remove();
}, 120_000);

test('the fleet comes up on the checkout and its commit is the healthy one', async () => {
  const head = repo.head();
  const s = await sup.waitFor(
    'healthy on HEAD',
    (x) => x.healthy_commit === head && x.state === 'idle',
  );
  expect(s.commit?.hash).toBe(head);
  expect(s.waker.running).toBe(true);
  expect(s.upstream).toBe('origin/main');
  expect(await pingHash()).toBe(head);
  // The waker it runs relays the same status on the waker's port.
  const relayed = await call<SupervisorStatus>(`http://127.0.0.1:${sup.wakerPort}/api/supervisor`);
  expect(relayed.status).toBe(200);
  expect(relayed.body).toMatchObject({ healthy_commit: head, waker: { pid: s.waker.pid } });
  // A supervisor that does not answer (frozen) is a 502 from the waker after its deadline.
  const pid = sup.proc.pid as number;
  process.kill(pid, 'SIGSTOP');
  try {
    const frozen = await call(`http://127.0.0.1:${sup.wakerPort}/api/supervisor`);
    expect(frozen.status).toBe(502);
    expect(frozen.body).toEqual({
      success: false,
      error: 'supervisor unreachable: no answer within 3 s',
      page_id: null,
    });
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}, 180_000);

test('a good commit pushed is fetched, built, restarted and passes the gate', async () => {
  await settled();
  // Its worker answers the first ping, the waker's own read of its commit, late.
  const good = push('Worker: a comment', {
    [MAIN]: marked(original, 'update one'),
    [PING_ROUTE]: lateFirstPing(pingRoute),
  });
  const s = await sup.waitFor('updated', updatedTo(good, 'ok'));
  expect(repo.head()).toBe(good);
  expect(s.healthy_commit).toBe(good);
  // The waker's list agrees as soon as the update has ended: its own read of the worker's commit
  // is part of the gate, though it came in after the gate's own ping.
  const list = await call<PersonaList>(`http://127.0.0.1:${sup.wakerPort}/api/personas`);
  expect(list.body.personas.map((p) => [p.name, p.commit?.hash])).toEqual([['ann', good]]);
  expect(await pingHash()).toBe(good);
  // The lock file did not change: no install; the rest ran and was timed.
  expect(s.last_update?.timings.install).toBeUndefined();
  for (const step of ['fetch', 'checkout', 'build', 'restart', 'health'] as const) {
    expect(s.last_update?.timings[step]).toEqual(expect.any(Number));
  }
  // The new code is what runs: the built worker holds the change.
  expect(fs.readFileSync(path.join(repo.checkout, 'worker/dist/main.js'), 'utf8')).toContain(
    "BUILD_MARK = 'update one'",
  );
  expect(s.log.map((l) => l.message)).toEqual(
    expect.arrayContaining([expect.stringContaining('package-lock.json unchanged')]),
  );
}, 240_000);

test('a worker that exits at start is rolled back, remembered and not tried again', async () => {
  await settled();
  const good = repo.head();
  const bad = push('Worker: exits at start', { [MAIN]: BREAK.exitsAtStart(original) });
  const s = await sup.waitFor('rolled back', updatedTo(bad, 'rolled_back'));
  expect(repo.head()).toBe(good);
  expect(s.healthy_commit).toBe(good);
  expect(await pingHash()).toBe(good);
  const remembered = s.bad_commits.find((b) => b.hash === bad);
  // A crash loop fails the gate without waiting out its timeout, and says why.
  expect(remembered?.reason).toMatch(/ann crashed 3 times in \d+ s \(.*\)/);
  expect(s.last_update?.timings.health).toBeLessThan(HEALTH_S * 1000);

  // Several polls later the bad commit has not been tried again.
  const startedAt = s.last_update?.started_at;
  // Time itself is tested: nothing retried over three polls.
  await sleep(INTERVAL_S * 3 * 1000);
  const later = await sup.status();
  expect(later.last_update?.started_at).toBe(startedAt);
  expect(repo.head()).toBe(good);
  expect(later.log.map((l) => l.message)).toEqual(
    expect.arrayContaining([expect.stringContaining('failed its health gate before')]),
  );
}, 240_000);

test('a worker that never becomes initialized is rolled back after HEALTH_TIMEOUT', async () => {
  await settled();
  const good = repo.head();
  const bad = push('Worker: never starts its browser', {
    [LAUNCH]: BREAK.neverInitialized(fs.readFileSync(path.join(ROOT, LAUNCH), 'utf8')),
  });
  const s = await sup.waitFor('rolled back', updatedTo(bad, 'rolled_back'));
  expect(repo.head()).toBe(good);
  expect(await pingHash()).toBe(good);
  // The gate waited its whole timeout before it gave up, and no longer.
  expect(s.last_update?.timings.health).toBeGreaterThanOrEqual(HEALTH_S * 1000);
  expect(s.last_update?.timings.health).toBeLessThan((HEALTH_S + 15) * 1000);
  expect(s.bad_commits.map((b) => b.hash)).toEqual(expect.arrayContaining([bad]));
}, 240_000);

test('two commits pushed in quick succession end on the newest', async () => {
  await settled();
  const first = push('Worker: first of two', { [MAIN]: marked(original, 'two: a') });
  const second = push('Worker: second of two', { [MAIN]: marked(original, 'two: b') });
  expect(first).not.toBe(second);
  const s = await sup.waitFor(
    'on the second commit',
    (x) => x.healthy_commit === second && x.state === 'idle',
    240_000,
  );
  expect(repo.head()).toBe(second);
  expect(s.commit?.hash).toBe(second);
  expect(await pingHash()).toBe(second);
}, 300_000);

test('a commit that does not build is rolled back, and the waker running is kept', async () => {
  const wakerPid = (await settled()).waker.pid;
  const good = repo.head();
  const bad = push('Worker: does not compile', {
    [MAIN]: `${original}\nexport const BROKEN: number = 'text';\n`,
  });
  const s = await sup.waitFor('rolled back', updatedTo(bad, 'rolled_back'));
  expect(s.last_update?.reason).toMatch(/npm run build/);
  // The build failed before any restart: the waker on the good commit never stopped.
  expect(s.last_update?.timings.restart).toBeUndefined();
  expect(s.waker.pid).toBe(wakerPid);
  expect(s.log.map((l) => l.message)).toEqual(
    expect.arrayContaining([expect.stringMatching(/^waker kept: health gate on/)]),
  );
  expect(repo.head()).toBe(good);
  expect(await pingHash()).toBe(good);
}, 240_000);

test('a rollback that fails too halts, says so, and tries nothing until the trigger', async () => {
  await settled();
  const good = repo.head();
  const envFile = path.join(repo.personasDir, 'ann', 'persona.env');
  const personaEnv = fs.readFileSync(envFile, 'utf8');
  // The bad commit fails its gate; by the time of the rollback the persona cannot start either.
  const bad = push('Worker: exits at start, again', {
    [MAIN]: BREAK.exitsAtStart(marked(original, 'bad again')),
  });
  fs.writeFileSync(envFile, `${personaEnv}CHROME_PATH=/nonexistent/chromium\n`);
  const s = await sup.waitFor('halted', (x) => x.state === 'halted', 240_000);
  expect(s.last_update).toMatchObject({ to: bad, result: 'rollback_failed' });
  expect(s.halted).toMatch(/rollback to .* failed too/);
  expect(s.log.filter((l) => l.level === 'error').map((l) => l.message)).toEqual(
    expect.arrayContaining([expect.stringContaining('failed too')]),
  );
  expect(repo.head()).toBe(good);
  expect(s.waker.running).toBe(true);

  // The fleet panel says it loudly, beside the bad commits.
  const client = await launchClientBrowser();
  try {
    const page = await openFleetPanel(client.browser, `http://127.0.0.1:${sup.wakerPort}`, {
      key: KEY,
      width: 1280,
      errors: [],
    });
    await page.waitForSelector('#updates-alert:not([hidden])', { timeout: 30_000 });
    const text = (sel: string): Promise<string> => page.$eval(sel, (e) => e.textContent ?? '');
    expect(await text('#updates-alert')).toMatch(/failed too/);
    expect(await text('#updates-state')).toMatch(/halted/);
    const bad = await page.$$eval('#updates-bad li', (items) => items.map((i) => i.textContent));
    expect(bad.join('\n')).toContain(s.bad_commits[0]?.hash.slice(0, 7));
    expect(await text('#updates-last')).toContain('rollback_failed');
    expect(await text('#updates-commit')).toContain(good.slice(0, 7));
    const log = await page.$$eval('#updates-log li', (items) => items.length);
    expect(log).toBeGreaterThan(0);
    expect(log).toBeLessThanOrEqual(10);
  } finally {
    await client.close();
  }

  // A newer commit waits: no update starts while halted.
  const next = push('Worker: after the halt', { [MAIN]: marked(original, 'after halt') });
  // Time itself is tested: nothing started over three polls.
  await sleep(INTERVAL_S * 3 * 1000);
  const still = await sup.status();
  expect(still.state).toBe('halted');
  expect(still.last_update?.started_at).toBe(s.last_update?.started_at);

  // Mended, and asked through the trigger file: it goes on to the newest commit.
  fs.writeFileSync(envFile, personaEnv);
  fs.writeFileSync(path.join(repo.checkout, '.update-trigger'), '');
  const after = await sup.waitFor('updated', updatedTo(next, 'ok'), 240_000);
  expect(after.halted).toBeNull();
  expect(await pingHash()).toBe(next);
}, 600_000);
