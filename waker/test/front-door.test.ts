import fs from 'node:fs';
import WebSocket from 'ws';
import { ProcessDriver } from '../src/drivers/process';
import { Fleet } from '../src/fleet';
import type { FleetOptions } from '../src/fleet';
import { FLEET_PREFIX, FleetMetrics } from '../src/metrics/prometheus';
import { createLogger } from '@persona-browser/service-kit';
import { fleetPids, isAlive, workerPid } from '@persona-browser/testkit/fleet-procs';
import {
  ECHO_WORKER,
  KEY,
  call,
  freePort,
  makePersonas,
  sleep,
} from '@persona-browser/testkit/waker';

/**
 * The front door's WebSocket path and its failure answers, with a stand-in worker
 * (the kit's `echo-worker.cjs`): the real worker accepts no WebSocket until the live view is
 * merged. The fleet runs in this process with the process driver; the stand-in is a real child
 * process.
 */
const ECHO = [process.execPath, ECHO_WORKER];
const FAILING = [process.execPath, '-e', 'console.error("no browser here"); process.exit(3)'];
const logger = createLogger({ secrets: [], level: 'error' });
const IDLE_S = 2;

function fleetOf(
  personasDir: string,
  fleetId: string,
  command: string[],
  extra: Partial<FleetOptions> = {},
): Fleet {
  return new Fleet({
    personasDir,
    wakerPort: 1,
    driver: new ProcessDriver({ fleetId, command, wakerPort: 1, logger }),
    logger,
    commit: null,
    tickMs: 200,
    ...extra,
    // The key every call below carries: without one, nothing would wake a persona.
    workerEnv: { SERVICE_KEY: KEY, ...extra.workerEnv },
  });
}

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${KEY}` } });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

const echo = (ws: WebSocket, text: string): Promise<string> =>
  new Promise((resolve) => {
    ws.once('message', (data: Buffer) => resolve(data.toString()));
    ws.send(text);
  });

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

describe('front door', () => {
  const fleetId = `fdtest${process.pid}`;
  let fleet: Fleet;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    const { personasDir } = makePersonas({
      echo: `PORT=${port}\nMODE=sleepy\nIDLE_TIMEOUT=${IDLE_S}\n`,
    });
    fleet = fleetOf(personasDir, fleetId, ECHO);
    await fleet.start();
  });

  afterAll(async () => {
    await fleet?.stop();
  });

  const state = (): string => fleet.get('echo').state;

  // Each test starts from the persona asleep: at first, or IDLE_TIMEOUT after the test before.
  beforeEach(() => waitFor(() => state() === 'sleeping', (IDLE_S + 5) * 1000, 'echo to sleep'));

  test('a WebSocket wakes the sleepy persona and is proxied both ways', async () => {
    expect(state()).toBe('sleeping');
    const ws = await openSocket(`ws://127.0.0.1:${port}/any`);
    expect(state()).toBe('running');
    expect(await echo(ws, 'hello')).toBe('echo:hello');
    ws.close();
    await waitFor(() => state() === 'sleeping', (IDLE_S + 5) * 1000, 'echo to sleep');
  });

  test('an open WebSocket keeps the persona awake past IDLE_TIMEOUT; closing it lets it sleep', async () => {
    const ws = await openSocket(`ws://127.0.0.1:${port}/live`);
    const pid = workerPid(fleetId, 'echo');
    expect(pid).not.toBeNull();
    // Time itself is tested: awake past twice the idle time.
    await sleep((IDLE_S * 2 + 1) * 1000);
    expect(state()).toBe('running');
    expect(fleet.get('echo').info().idle_seconds).toBeNull();
    expect(await echo(ws, 'still there')).toBe('echo:still there');
    const closedAt = Date.now();
    ws.close();
    await waitFor(() => state() === 'sleeping', (IDLE_S + 5) * 1000, 'echo to sleep');
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    expect(isAlive(pid as number)).toBe(false);
  });

  test('a request during the wake waits and is served; requests count as activity', async () => {
    const replies = await Promise.all(
      [1, 2, 3].map((i) => call(`http://127.0.0.1:${port}/req/${i}`)),
    );
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(replies.map((r) => r.body.echo)).toEqual(['/req/1', '/req/2', '/req/3']);
    // One worker served them all.
    expect(new Set(replies.map((r) => r.body.pid)).size).toBe(1);
    // The fleet's instances name it, with the address its metrics can be read at.
    expect(fleet.instances()).toEqual([
      {
        name: 'echo',
        pid: replies[0]?.body.pid,
        worker: { host: '127.0.0.1', port: expect.any(Number) },
      },
    ]);
  });
});

describe('front door failures', () => {
  test('a wake that fails answers 503 in the error envelope, naming the cause', async () => {
    const port = await freePort();
    const { personasDir } = makePersonas({
      broken: `PORT=${port}\nMODE=sleepy\nIDLE_TIMEOUT=5\n`,
    });
    const fleet = fleetOf(personasDir, `fdfail${process.pid}`, FAILING);
    await fleet.start();
    try {
      const r = await call(`http://127.0.0.1:${port}/api/v1/ops/create-page`, { method: 'POST' });
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ success: false, page_id: null });
      expect(r.body.error).toContain('exited with 3');
      expect(r.body.error).toContain('no browser here');
      expect(fleet.get('broken').info()).toMatchObject({ state: 'crashed' });
    } finally {
      await fleet.stop();
    }
  });

  test('an always-on persona that keeps dying is restarted with a growing delay', async () => {
    const port = await freePort();
    const { personasDir } = makePersonas({ loop: `PORT=${port}\nMODE=always-on\n` });
    const starts: number[] = [];
    const driver = new ProcessDriver({
      fleetId: `fdloop${process.pid}`,
      command: FAILING,
      wakerPort: 1,
      logger,
    });
    const start = driver.start.bind(driver);
    driver.start = (spec) => {
      starts.push(Date.now());
      return start(spec);
    };
    const fleet = new Fleet({
      personasDir,
      wakerPort: 1,
      driver,
      logger,
      workerEnv: { SERVICE_KEY: KEY },
      commit: null,
    });
    await fleet.start();
    await waitFor(() => starts.length >= 4, 30_000, 'four starts of the worker that keeps dying');
    await fleet.stop();
    const gaps = starts.slice(1, 4).map((t, i) => t - (starts[i] as number));
    // Not a tight loop: a wait of the first delay (500 ms) at least, each longer than the one
    // before.
    expect(gaps[0]).toBeGreaterThanOrEqual(450);
    for (let i = 1; i < gaps.length; i += 1) {
      expect(gaps[i] as number).toBeGreaterThan(gaps[i - 1] as number);
    }
  });

  test('a call at its port that brings back a crashed always-on persona before its back-off does counts as its restart', async () => {
    const fleetId = `fdcrash${process.pid}`;
    const port = await freePort();
    const { personasDir } = makePersonas({ solid: `PORT=${port}\nMODE=always-on\n` });
    const metrics = new FleetMetrics({ personas: () => [], latest: () => null });
    const fleet = fleetOf(personasDir, fleetId, ECHO, { counters: metrics });
    const total = async (name: string): Promise<number> => {
      const read = await metrics.registry
        .getSingleMetric(`${FLEET_PREFIX}persona_${name}_total`)
        ?.get();
      return read?.values.find((v) => v.labels.persona === 'solid')?.value ?? NaN;
    };
    await fleet.start();
    const persona = fleet.get('solid');
    try {
      // Each crash doubles the back-off's wait (0.5 s, 1 s, 2 s): killed until the wait leaves
      // a call at the port the time to come first.
      let servedBeforeRetry = false;
      for (let crash = 1; crash <= 6 && !servedBeforeRetry; crash += 1) {
        await waitFor(
          () => persona.state === 'running',
          15_000,
          `solid running before crash ${crash}`,
        );
        process.kill(workerPid(fleetId, 'solid') ?? 0, 'SIGKILL');
        await waitFor(() => persona.state !== 'running', 10_000, `crash ${crash} noticed`);
        const retryAt = persona.retryAt?.getTime() ?? 0;
        if (persona.state !== 'crashed' || retryAt - Date.now() < 1_000) continue;
        const r = await call(`http://127.0.0.1:${port}/after-crash`);
        expect(r.status).toBe(200);
        // The call started the worker: the back-off's try had not come yet.
        servedBeforeRetry = Date.now() < retryAt;
      }
      expect(servedBeforeRetry).toBe(true);
      expect(await total('crashes')).toBeGreaterThanOrEqual(3);
      expect(await total('restarts')).toBe(await total('crashes'));
    } finally {
      await fleet.stop();
    }
  });

  test('a worker that stops answering status is restarted after a few failed checks', async () => {
    const fleetId = `fdhang${process.pid}`;
    const port = await freePort();
    const { personasDir } = makePersonas({ hung: `PORT=${port}\nMODE=always-on\n` });
    const fleet = fleetOf(personasDir, fleetId, ECHO, { healthEvery: 1, healthTimeoutMs: 500 });
    await fleet.start();
    try {
      await waitFor(() => fleet.get('hung').state === 'running', 10_000, 'hung running');
      const frozen = workerPid(fleetId, 'hung') as number;
      process.kill(frozen, 'SIGSTOP');
      const frozenAt = Date.now();
      await waitFor(
        () => {
          const pid = workerPid(fleetId, 'hung');
          return pid !== null && pid !== frozen && fleet.get('hung').state === 'running';
        },
        20_000,
        'a new worker of hung running in place of the frozen one',
      );
      // Not on the first missed check: three of them (500 ms each) come first.
      expect(Date.now() - frozenAt).toBeGreaterThanOrEqual(3 * 500);
      expect(isAlive(frozen)).toBe(false);
      const r = await call(`http://127.0.0.1:${port}/after`, { key: null });
      expect(r.body.echo).toBe('/after');
    } finally {
      await fleet.stop();
    }
  });

  test('a commit the first ping could not read is read again by the health checks', async () => {
    const port = await freePort();
    const { personasDir, root } = makePersonas({ late: `PORT=${port}\nMODE=always-on\n` });
    const commit = { hash: 'a'.repeat(40), subject: 'A commit', date: '2026-11-27T00:00:00.000Z' };
    // The stand-in answers its first two pings 503: the one at start and the first check's.
    const fleet = fleetOf(personasDir, `fdcommit${process.pid}`, ECHO, {
      workerEnv: { ECHO_PING_FAILS: '2' },
      commit,
      healthEvery: 1,
    });
    await fleet.start();
    try {
      await waitFor(() => fleet.get('late').state === 'running', 10_000, 'late running');
      expect(fleet.get('late').commit).toBeNull();
      await waitFor(() => fleet.get('late').commit !== null, 10_000, 'the commit of late read');
      expect(fleet.get('late').commit).toEqual(commit);
    } finally {
      await fleet.stop();
    }
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('a restarted waker removes the workers its predecessor left (same fleet id)', async () => {
    const fleetId = `fdstale${process.pid}`;
    const old = makePersonas({ x: `PORT=${await freePort()}\nMODE=sleepy\nIDLE_TIMEOUT=60\n` });
    const first = fleetOf(old.personasDir, fleetId, ECHO);
    const next = makePersonas({ x: `PORT=${await freePort()}\nMODE=always-on\n` });
    const second = fleetOf(next.personasDir, fleetId, ECHO);
    // Both fleets are stopped however the test ends: a fleet left serving its ports keeps jest
    // from exiting (a failed wake here once hung the whole run).
    try {
      await first.start();
      await first.get('x').wake();
      const leftover = workerPid(fleetId, 'x') as number;
      expect(leftover).not.toBeNull();
      // The next waker (a new process after a crash, here a new fleet object) finds it by its mark.
      await second.start();
      expect(isAlive(leftover)).toBe(false);
      await waitFor(
        () => second.get('x').state === 'running',
        10_000,
        'x running in the next fleet',
      );
      expect(fleetPids(fleetId).length).toBe(1);
    } finally {
      await second.stop();
      await first.stop();
    }
    expect(fleetPids(fleetId)).toEqual([]);
    fs.rmSync(old.root, { recursive: true, force: true });
    fs.rmSync(next.root, { recursive: true, force: true });
  });
});
