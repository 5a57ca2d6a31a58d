import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AuthGuard, createLogger } from '@persona-browser/service-kit';
import { fleetPids } from '@persona-browser/testkit/fleet-procs';
import type { Reply } from '@persona-browser/testkit/waker';
import { KEY, ROOT, call, freePort, makePersonas, until } from '@persona-browser/testkit/waker';
import { ProcessDriver } from '../src/drivers/process';
import { Fleet } from '../src/fleet';
import { FleetMetrics } from '../src/metrics/prometheus';

/**
 * A wake storm: every persona of a fleet called at the same moment (a cron at 09:00), each
 * asleep. The workers are the kit's stand-in, started slowly (`ECHO_START_DELAY_MS`, as a real
 * worker's Xvfb and Chromium take) and traced from their own processes (traced-echo-worker.cjs):
 * how many were starting at once is read from those lines, not from the waker. The start gate
 * must hold it to WAKER_WAKE_CONCURRENCY while every caller is answered; with a queue wait too
 * short to serve them all, the callers beyond it meet 503 with Retry-After and the reason.
 *
 * WAKE_STORM_OPEN_GATE=1 (the control) opens the gate wide: the concurrency check then fails.
 */
const STORM = 20;
const CONCURRENCY = 3;
const TRACED_WORKER = path.join(ROOT, 'testkit', 'traced-echo-worker.cjs');
const OPEN_GATE = process.env.WAKE_STORM_OPEN_GATE === '1';
/** The gate both storms meet (WAKE_STORM_OPEN_GATE=1 opens it: the control, which must fail). */
const STORM_GATE = { concurrency: OPEN_GATE ? 1000 : CONCURRENCY, queueS: 120, delayMs: 300 };

interface TraceLine {
  persona: string;
  pid: number;
  /** A worker's process booted, and listened; a kept worker's browser started, and was up. */
  event: 'boot' | 'listening' | 'start' | 'started';
}

/** The trace's lines in the order they were written, which is the order they happened in. */
function readTrace(file: string): TraceLine[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TraceLine);
}

/**
 * The most workers that were starting (booted, not yet listening) at one moment, from the
 * trace, or with `browsers` the most kept workers starting their browser: a count kept along the
 * lines in their order (each process's clock is its own; the file's order is shared).
 */
function mostStartingAtOnce(lines: TraceLine[], browsers = false): number {
  const [begin, end] = browsers ? ['start', 'started'] : ['boot', 'listening'];
  let now = 0;
  let most = 0;
  for (const l of lines) {
    if (l.event === begin) now += 1;
    else if (l.event === end) now -= 1;
    most = Math.max(most, now);
  }
  return most;
}

interface Storm {
  fleet: Fleet;
  fleetId: string;
  ports: string[];
  trace: string;
  /** The waker's log lines (their messages). */
  logs: string[];
}

async function startStorm(
  tag: string,
  opts: { concurrency: number; queueS: number; delayMs: number },
): Promise<Storm> {
  const fleetId = `storm${process.pid}${tag}`;
  const trace = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pb-storm-')), 'trace.jsonl');
  const files: Record<string, string> = {};
  const ports: string[] = [];
  for (let i = 0; i < STORM; i++) {
    const port = await freePort();
    ports.push(String(port));
    // Idle for longer than the test: every worker that woke stays up until the fleet stops.
    files[`p${String(i).padStart(2, '0')}`] = `PORT=${port}\nMODE=sleepy\nIDLE_TIMEOUT=600\n`;
  }
  const { personasDir } = makePersonas(files);
  const logs: string[] = [];
  const logger = createLogger({ secrets: [], level: 'info' });
  // Read here, never printed: the console transport stays quiet.
  for (const t of logger.transports) t.silent = true;
  logger.on('data', (info: { message?: unknown }) => logs.push(String(info.message)));
  const fleet = new Fleet({
    personasDir,
    wakerPort: 1,
    driver: new ProcessDriver({
      fleetId,
      command: [process.execPath, TRACED_WORKER],
      wakerPort: 1,
      logger,
    }),
    logger,
    commit: null,
    tickMs: 200,
    readyTimeoutMs: 30_000,
    guard: new AuthGuard({ serviceKey: KEY, failuresPerMinute: 0 }),
    workerEnv: {
      SERVICE_KEY: KEY,
      PB_TRACE_FILE: trace,
      ECHO_START_DELAY_MS: String(opts.delayMs),
    },
    wakeConcurrency: opts.concurrency,
    wakeQueueS: opts.queueS,
  });
  await fleet.start();
  return { fleet, fleetId, ports, trace, logs };
}

/** Every persona called at its port at the same moment (a credential: each call wakes). */
function callAll(storm: Storm): Promise<Reply[]> {
  return Promise.all(
    storm.ports.map((port) =>
      call(`http://127.0.0.1:${port}/api/v1/storm`).catch((err: unknown): Reply => ({
        status: 0,
        body: String(err),
        headers: new Headers(),
        ms: 0,
      })),
    ),
  );
}

/** Each reply's status, and its body where it is not 200: what a failure names. */
const statuses = (replies: Reply[]): Array<number | string> =>
  replies.map((r) => (r.status === 200 ? 200 : `${r.status} ${JSON.stringify(r.body)}`));

let running: Storm | null = null;

afterEach(async () => {
  const storm = running;
  running = null;
  if (!storm) return;
  await storm.fleet.stop();
  // Nothing of the fleet outlives its stop.
  expect(fleetPids(storm.fleetId)).toEqual([]);
});

describe('a wake storm', () => {
  it('starts the workers at most WAKER_WAKE_CONCURRENCY at a time, and answers every caller', async () => {
    const storm = await startStorm('a', STORM_GATE);
    running = storm;
    // Prometheus' view of the gate, scraped all through the storm.
    const metrics = new FleetMetrics({
      personas: () => storm.fleet.rows(),
      latest: () => null,
      starts: () => ({
        running: storm.fleet.startGate.running,
        waiting: storm.fleet.startGate.waiting,
      }),
    });
    const gauge = (text: string, name: string): number =>
      Number(new RegExp(`^persona_browser_fleet_${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    const scraped: { running: number; waiting: number }[] = [];
    let storming = true;
    const scraping = (async () => {
      while (storming) {
        const { text } = await metrics.scrape();
        scraped.push({
          running: gauge(text, 'starts_running'),
          waiting: gauge(text, 'starts_waiting'),
        });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const replies = await callAll(storm).finally(() => (storming = false));
    await scraping;
    const after = (await metrics.scrape()).text;
    expect([gauge(after, 'starts_running'), gauge(after, 'starts_waiting')]).toEqual([0, 0]);
    const mostRunning = Math.max(...scraped.map((m) => m.running));
    expect(mostRunning).toBeLessThanOrEqual(CONCURRENCY);
    expect(mostRunning).toBeGreaterThan(1);
    expect(Math.max(...scraped.map((m) => m.waiting))).toBeGreaterThan(0);

    // None lost, none refused: every caller reached its own persona's worker.
    expect(statuses(replies)).toEqual(replies.map(() => 200));
    for (const r of replies) expect(r.body).toMatchObject({ echo: '/api/v1/storm' });
    const trace = readTrace(storm.trace);
    const booted = trace.filter((l) => l.event === 'boot');
    expect(new Set(booted.map((l) => l.persona)).size).toBe(STORM);
    expect(booted).toHaveLength(STORM);

    // What the workers' own lines say: never more than the concurrency starting at once, and
    // the storm did fill the turns (the bound was reached, not merely not exceeded).
    const most = mostStartingAtOnce(trace);
    expect(most).toBeLessThanOrEqual(CONCURRENCY);
    expect(most).toBeGreaterThan(1);
    // The waker said so too: those beyond the concurrency waited for a turn.
    const waited = storm.logs.filter((m) => m === 'start waits its turn');
    expect(waited.length).toBeGreaterThanOrEqual(STORM - CONCURRENCY);
  });

  it('wakes from light sleep take turns too: at most WAKER_WAKE_CONCURRENCY browsers start at once, in the workers that stayed', async () => {
    const storm = await startStorm('l', STORM_GATE);
    running = storm;
    expect(statuses(await callAll(storm))).toEqual(storm.ports.map(() => 200));
    const names = storm.fleet.list().map((p) => p.name);
    await Promise.all(names.map((name) => storm.fleet.get(name).sleep('light')));
    expect(storm.fleet.list().map((p) => p.depth)).toEqual(names.map(() => 'light'));
    const before = readTrace(storm.trace).length;

    const replies = await callAll(storm);
    expect(statuses(replies)).toEqual(replies.map(() => 200));
    const trace = readTrace(storm.trace).slice(before);
    // Every persona's browser started in the worker it kept: no worker booted anew.
    expect(trace.filter((l) => l.event === 'boot')).toEqual([]);
    // Each persona's browser started once.
    const starts = trace.filter((l) => l.event === 'start').map((l) => l.persona);
    expect(starts.sort()).toEqual([...new Set(starts)].sort());
    expect(starts).toHaveLength(STORM);
    const most = mostStartingAtOnce(trace, true);
    expect(most).toBeLessThanOrEqual(CONCURRENCY);
    expect(most).toBeGreaterThan(1);
  });

  it('with a queue wait too short for the storm, the callers beyond it meet 503, Retry-After and the reason', async () => {
    const storm = await startStorm('b', { concurrency: 2, queueS: 0.2, delayMs: 1_500 });
    running = storm;
    const replies = await callAll(storm);

    const served = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 503);
    // Every caller had an answer: served, or told to come back; nothing else (no 500, no 502).
    expect(served.length + refused.length).toBe(STORM);
    expect(served.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify(r.body)).toMatch(/no start turn for persona p\d+ within 0.2 s/);
      expect(JSON.stringify(r.body)).toMatch(/at most 2 at once/);
    }
    // A refused persona sleeps again, saying why, and started nothing.
    const refusedPort = storm.ports[replies.findIndex((r) => r.status === 503)];
    const name = storm.fleet.list().find((p) => String(p.port) === refusedPort)?.name ?? '';
    const info = storm.fleet.list().find((p) => p.name === name);
    expect(info).toMatchObject({ state: 'sleeping' });
    expect(info?.error).toMatch(/no start turn/);
    expect(fleetPids(storm.fleetId, name)).toEqual([]);
    // Its caller, coming back once the storm has passed, is served.
    const again = await until(
      async () => {
        const r = await call(`http://127.0.0.1:${refusedPort}/api/v1/again`);
        return r.status === 200 ? r : null;
      },
      60_000,
      `${name} served on a later call`,
    );
    expect(again.body).toMatchObject({ echo: '/api/v1/again' });
  });
});
