/**
 * A thousand personas on one waker: the built waker (`node waker/dist/main.js`, the process
 * driver) with PERSONAS sleepy personas whose workers are the kit's stand-in (echo-worker.cjs:
 * what is measured is the waker, not Chromium). Prints
 *   - the waker's RSS and CPU while idle, with BASELINE personas (a first, small run) and with
 *     PERSONAS, and from the two the waker's cost per defined persona;
 *   - `GET /api/personas` and `GET /metrics` latency (median, p90), one at a time on a kept-alive
 *     connection;
 *   - the front door's overhead per request: the same small GET through a persona's port and
 *     straight to its stand-in, alternated, medians;
 *   - a storm: STORM sleeping personas called at the same moment through their ports, the time
 *     until the last is answered, how many were served (200), refused (503 with Retry-After:
 *     no start turn within WAKER_WAKE_QUEUE_S) or lost (no answer, or any other), at
 *     WAKER_WAKE_CONCURRENCY (the waker's default: this host's cores, unless set);
 *   - the waker's RSS and idle CPU once the storm's workers run.
 * Build and run: npm run build:bench && node waker/dist-bench/bench/thousand.js
 * Env: PERSONAS (1000), BASELINE (10), STORM (100), IDLE_S (20: each idle CPU window),
 * SAMPLES (200), FIRST_PORT (21000), WAKER_WAKE_CONCURRENCY (passed to the waker).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fleetPids, workerPid } from '@persona-browser/testkit/fleet-procs';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, ROOT, freePort, sleep, startWaker } from '@persona-browser/testkit/waker';
import { accepts, freeBlock } from './port-block';

const PERSONAS = Number(process.env.PERSONAS ?? 1000);
const BASELINE = Number(process.env.BASELINE ?? 10);
const STORM = Number(process.env.STORM ?? 100);
const IDLE_S = Number(process.env.IDLE_S ?? 20);
const SAMPLES = Number(process.env.SAMPLES ?? 200);
const FIRST_PORT = Number(process.env.FIRST_PORT ?? 21_000);
const STAND_IN = path.join(ROOT, 'testkit', 'echo-worker.cjs');
if (STORM + 1 > PERSONAS) throw new Error('STORM must leave one persona for the door');

const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

/** Median and p90 of `xs` (ms). */
function spread(xs: number[]): { n: number; median: number; p90: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { n: s.length, median: round(at(0.5), 3), p90: round(at(0.9), 3) };
}

function procStatus(pid: number, key: string): number {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
}

/** Resident memory of `pid` (VmRSS), MB. */
const rssMb = (pid: number): number => round(procStatus(pid, 'VmRSS') / 1024, 1);

/** CPU seconds `pid` has used so far (user + system). */
function cpuS(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime: fields 14 and 15 of stat, in clock ticks of 1/100 s.
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** The waker's share of one core over `seconds` of idling (nothing called), percent. */
async function idleCpu(pid: number, seconds: number): Promise<number> {
  const before = cpuS(pid);
  const t = performance.now();
  await sleep(seconds * 1000);
  return round(((cpuS(pid) - before) / ((performance.now() - t) / 1000)) * 100, 2);
}

/** One GET with the key; its status and time (ms). */
function get(
  port: number,
  route: string,
  agent: http.Agent | false,
): Promise<{ status: number; ms: number }> {
  return new Promise((resolve) => {
    const t = performance.now();
    const req = http.get(
      { host: '127.0.0.1', port, path: route, agent, headers: { authorization: `Bearer ${KEY}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t }));
  });
}

/**
 * A repository root whose worker is the stand-in: the process driver runs
 * `<REPO_ROOT>/worker/dist/main.js`, here a link to echo-worker.cjs (Node runs the file it
 * points to, which finds its own modules in this checkout).
 */
function standInRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-thousand-'));
  fs.mkdirSync(path.join(root, 'worker', 'dist'), { recursive: true });
  fs.symlinkSync(STAND_IN, path.join(root, 'worker', 'dist', 'main.js'));
  return root;
}

function personaFolders(root: string, count: number, base: number): string {
  const dir = path.join(root, `personas-${count}`);
  for (let i = 0; i < count; i += 1) {
    const name = `p${String(i).padStart(4, '0')}`;
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    // Idle longer than the bench: what woke stays up until the waker stops.
    fs.writeFileSync(
      path.join(dir, name, 'persona.env'),
      `PORT=${base + i}\nMODE=sleepy\nIDLE_TIMEOUT=3600\n`,
    );
  }
  return dir;
}

interface Fleet {
  waker: RunningWaker;
  pid: number;
  base: number;
  fleetId: string;
  startedMs: number;
}

async function startFleet(root: string, count: number, tag: string): Promise<Fleet> {
  const base = await freeBlock(FIRST_PORT, count);
  const fleetId = `thousand${process.pid}${tag}`;
  const t = performance.now();
  const waker = await startWaker({
    WAKER_DRIVER: 'process',
    WAKER_PORT: String(await freePort()),
    PERSONAS_DIR: personaFolders(root, count, base),
    FLEET_ID: fleetId,
    REPO_ROOT: root,
    LOG_LEVEL: 'warn',
    // A stand-in holds tens of MB, not a browser's hundreds: the budget admits the storm.
    FLEET_MEMORY_DEFAULT_MB: '60',
    ...(process.env.WAKER_WAKE_CONCURRENCY
      ? { WAKER_WAKE_CONCURRENCY: process.env.WAKER_WAKE_CONCURRENCY }
      : {}),
  });
  const pid = waker.proc.pid;
  if (pid === undefined) throw new Error('the waker has no pid');
  let waiting = Array.from({ length: count }, (_, i) => base + i);
  while (waiting.length) {
    const up = await Promise.all(waiting.map(accepts));
    waiting = waiting.filter((_, i) => !up[i]);
    if (waiting.length && performance.now() - t > 120_000) {
      throw new Error(`${waiting.length} persona ports not listening after 120 s`);
    }
    if (waiting.length) await sleep(50);
  }
  return { waker, pid, base, fleetId, startedMs: Math.round(performance.now() - t) };
}

/** The stand-in's own port: the PORT the process driver gave the worker process. */
function workerPort(fleetId: string, persona: string): number {
  const pid = workerPid(fleetId, persona);
  if (pid === null) throw new Error(`no worker for ${persona}`);
  const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return Number(env.find((kv) => kv.startsWith('PORT='))?.slice(5));
}

async function main(): Promise<void> {
  delete process.env.DISPLAY;
  const root = standInRoot();
  const report: Record<string, unknown> = {
    personas: PERSONAS,
    baseline_personas: BASELINE,
    cpus: os.availableParallelism(),
    host_memory_mb: Math.round(os.totalmem() / 1024 / 1024),
    wake_concurrency: Number(process.env.WAKER_WAKE_CONCURRENCY ?? os.availableParallelism()),
  };
  /** The figures so far on stderr (a run that fails half-way keeps them); at the end, stdout. */
  const progress = (): void => console.error(`so far: ${JSON.stringify(report)}`);

  // The small fleet first: what the waker holds with next to no personas.
  const small = await startFleet(root, BASELINE, 'b');
  try {
    await sleep(5_000);
    report.baseline = {
      rss_mb: rssMb(small.pid),
      idle_cpu_pct_of_a_core: await idleCpu(small.pid, IDLE_S),
    };
  } finally {
    await small.waker.stop();
  }

  const big = await startFleet(root, PERSONAS, 'k');
  try {
    report.start_to_all_ports_ms = big.startedMs;
    // Settled: the first ticks, the first metrics sample, the first garbage collections.
    await sleep(5_000);
    const idle = {
      rss_mb: rssMb(big.pid),
      idle_cpu_pct_of_a_core: await idleCpu(big.pid, IDLE_S),
    };
    report.idle_all_asleep = idle;
    const baseline = report.baseline as { rss_mb: number };
    report.waker_rss_per_defined_persona_kb = round(
      ((idle.rss_mb - baseline.rss_mb) * 1024) / (PERSONAS - BASELINE),
      1,
    );
    progress();

    // The API a panel and Prometheus read: one at a time on a kept-alive connection.
    const wakerPort = big.waker.port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const timed = async (route: string, n: number): Promise<ReturnType<typeof spread>> => {
      const ms: number[] = [];
      for (let i = 0; i < n; i += 1) {
        const r = await get(wakerPort, route, agent);
        if (r.status !== 200) throw new Error(`${route} answered ${r.status}`);
        ms.push(r.ms);
      }
      return spread(ms);
    };
    report.api_personas_ms = await timed('/api/personas', SAMPLES);
    report.metrics_ms = await timed('/metrics', Math.max(20, Math.round(SAMPLES / 2)));
    agent.destroy();

    // The door: the last persona woken, then the same GET through its port and straight to its
    // stand-in, alternated so that the machine's load falls on both alike.
    const doorName = `p${String(PERSONAS - 1).padStart(4, '0')}`;
    const doorPort = big.base + PERSONAS - 1;
    const first = await get(doorPort, '/api/v1/door', false);
    if (first.status !== 200) throw new Error(`the door's first call answered ${first.status}`);
    const standIn = workerPort(big.fleetId, doorName);
    const viaDoor = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const direct = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const through: number[] = [];
    const straight: number[] = [];
    for (let i = 0; i < SAMPLES * 2; i += 1) {
      through.push((await get(doorPort, '/api/v1/door', viaDoor)).ms);
      straight.push((await get(standIn, '/api/v1/door', direct)).ms);
    }
    viaDoor.destroy();
    direct.destroy();
    const t = spread(through);
    const s = spread(straight);
    report.front_door = {
      first_call_wake_ms: round(first.ms, 1),
      through_port_ms: t,
      straight_to_stand_in_ms: s,
      overhead_median_ms: round(t.median - s.median, 3),
    };
    progress();

    // The storm: STORM sleeping personas called at one moment, each through its port.
    const stormStart = performance.now();
    const answers = await Promise.all(
      Array.from({ length: STORM }, (_, i) =>
        get(big.base + i, '/api/v1/storm', false).then((r) => ({
          ...r,
          at: performance.now() - stormStart,
        })),
      ),
    );
    const statuses: Record<string, number> = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    const ats = answers.map((a) => a.at);
    report.storm = {
      wakes: STORM,
      statuses,
      // Refused: told 503 with Retry-After (no start turn within WAKER_WAKE_QUEUE_S). Lost: no
      // answer at all, or any other.
      refused_503: answers.filter((a) => a.status === 503).length,
      lost: answers.filter((a) => a.status !== 200 && a.status !== 503).length,
      first_answered_ms: Math.round(Math.min(...ats)),
      median_answered_ms: Math.round(spread(ats).median),
      last_answered_ms: Math.round(Math.max(...ats)),
      workers_running_after: fleetPids(big.fleetId).length,
    };
    progress();
    await sleep(5_000);
    report.idle_after_storm = {
      awake: STORM + 1,
      rss_mb: rssMb(big.pid),
      idle_cpu_pct_of_a_core: await idleCpu(big.pid, IDLE_S),
    };
  } finally {
    await big.waker.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
  console.log(JSON.stringify(report, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
