/**
 * A large fleet on one waker: PERSONAS persona folders (AWAKE always-on, the rest sleepy and
 * asleep), served by the built waker with the process driver, or with BENCH_DRIVER=swarm on a
 * one-node Swarm of this machine's engine (every persona a service pinned to it, the awake ones
 * containers of the persona image; the waker's watch of the cluster runs throughout). Prints
 *   - the time from starting the waker to its API answering and to every persona port listening;
 *   - `GET /api/personas` latency (p50/p90/p99/max): requests one at a time on a kept-alive
 *     connection, then CONCURRENCY at once; and the size of the answer;
 *   - `GET /metrics` latency (Prometheus' scrape of the waker, one at a time on a kept-alive
 *     connection), the size of the exposition and its number of samples;
 *   - the waker's own memory: RSS and its peak from /proc, and the V8 heap (read through the
 *     inspector, opened by SIGUSR1 only after the latency runs);
 *   - a PASS/FAIL line against the goal: p99 at most 50 ms. It exits 0 either way.
 * Build and run: npm run build:bench && node waker/dist-bench/bench/fleet-list.js
 * Env: PERSONAS (500); AWAKE (3: each is a real worker with its Xvfb and Chromium, and more
 * than a few of them load a 2-core host enough to measure the host rather than the waker);
 * SAMPLES (500); CONCURRENCY (10); SETTLE_MS (5000, the wait once the awake ones run);
 * FIRST_PORT (20000: the persona ports are the first free block of PERSONAS from there);
 * BENCH_DRIVER (process, or swarm); PERSONA_IMAGE (swarm: else the image of this checkout).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fleetPids } from '@persona-browser/testkit/fleet-procs';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, ROOT, freePort, sleep, startWaker } from '@persona-browser/testkit/waker';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import type { SwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import { startSwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import { readHeap } from './inspector-heap';
import { accepts, freeBlock } from './port-block';
import { figures, r2 } from './swarm-measure';

const PERSONAS = Number(process.env.PERSONAS ?? 500);
const AWAKE = Number(process.env.AWAKE ?? 3);
const SAMPLES = Number(process.env.SAMPLES ?? 500);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 10);
const FIRST_PORT = Number(process.env.FIRST_PORT ?? 20_000);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 5_000);
const GOAL_P99_MS = 50;
const DRIVER = process.env.BENCH_DRIVER ?? 'process';
if (DRIVER !== 'process' && DRIVER !== 'swarm') throw new Error('BENCH_DRIVER: process or swarm');

/** One GET; resolves with its status, the time taken (ms) and the body's size (bytes). */
function get(
  port: number,
  route: string,
  agent: http.Agent,
): Promise<{ status: number; ms: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const req = http.get(
      { host: '127.0.0.1', port, path: route, agent, headers: { authorization: `Bearer ${KEY}` } },
      (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - t, bytes }),
        );
      },
    );
    req.on('error', reject);
  });
}

/** VmRSS and VmHWM (peak RSS) of `pid`, MB. */
function rss(pid: number): { rss_mb: number; rss_peak_mb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number =>
    Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1]);
  return { rss_mb: r2(kb('VmRSS') / 1024), rss_peak_mb: r2(kb('VmHWM') / 1024) };
}

/** CPU time `pid` has used (user + system), ms. */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The persona folders: `awake-N` always-on, `sleepy-NNN` sleepy, ports from `base` on; each on
 * `node` when one is given.
 */
function makeFleetFolder(base: number, node: string | null): { root: string; personasDir: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-fleet-bench-'));
  const personasDir = path.join(root, 'personas');
  for (let i = 0; i < PERSONAS; i += 1) {
    const awake = i < AWAKE;
    const name = awake ? `awake-${i}` : `sleepy-${String(i).padStart(3, '0')}`;
    const env =
      (awake
        ? `PORT=${base + i}\nMODE=always-on\n`
        : `PORT=${base + i}\nMODE=sleepy\nIDLE_TIMEOUT=600\n`) + (node ? `NODE=${node}\n` : '');
    fs.mkdirSync(path.join(personasDir, name), { recursive: true });
    fs.writeFileSync(path.join(personasDir, name, 'persona.env'), env);
  }
  return { root, personasDir };
}

async function main(): Promise<void> {
  delete process.env.DISPLAY;
  const report: Record<string, unknown> = {
    personas: PERSONAS,
    awake: AWAKE,
    cpus: os.cpus().length,
    open_files_limit: Number(
      /Max open files\s+(\d+)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'))?.[1],
    ),
  };
  report.driver = DRIVER;
  const base = await freeBlock(FIRST_PORT, PERSONAS);
  const fleetId = `benchlist${process.pid}`;
  const [wakerPort, inspectPort] = [await freePort(), await freePort()];
  let w: RunningWaker | null = null;
  let cluster: SwarmCluster | null = null;
  let root: string | null = null;
  try {
    const driverEnv: Record<string, string> = { WAKER_DRIVER: DRIVER };
    if (DRIVER === 'swarm') {
      const image = process.env.PERSONA_IMAGE ?? (await ensurePersonaImage());
      cluster = await startSwarmCluster({ workers: 0 });
      const dataDir = path.join(cluster.dir, 'data');
      fs.mkdirSync(dataDir);
      Object.assign(driverEnv, {
        PERSONA_IMAGE: image,
        SWARM_NETWORK: await cluster.createOverlay('fleet'),
        SWARM_DATA_DIR: dataDir,
      });
    }
    const fleet = makeFleetFolder(base, cluster ? cluster.manager.hostname : null);
    root = fleet.root;
    const { personasDir } = fleet;
    const started = performance.now();
    const waker = await startWaker({
      ...driverEnv,
      WAKER_PORT: String(wakerPort),
      PERSONAS_DIR: personasDir,
      FLEET_ID: fleetId,
      REPO_ROOT: ROOT,
      // Opens nothing until SIGUSR1; then the heap is read through it.
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect-port=127.0.0.1:${inspectPort}`,
    });
    w = waker;
    const { pid } = waker.proc;
    if (pid === undefined) throw new Error('the waker has no pid');
    report.start_api_ms = Math.round(performance.now() - started);
    let waiting = Array.from({ length: PERSONAS }, (_, i) => base + i);
    while (waiting.length) {
      const up = await Promise.all(waiting.map(accepts));
      waiting = waiting.filter((_, i) => !up[i]);
      if (waiting.length && performance.now() - started > 120_000) {
        throw new Error(`${waiting.length} persona ports not listening after 120 s`);
      }
      // Polling more often would take CPU from the waker it times.
      if (waiting.length) await sleep(20);
    }
    report.start_all_ports_ms = Math.round(performance.now() - started);
    report.memory_at_start = rss(pid);

    const awake = Array.from({ length: AWAKE }, (_, i) => `awake-${i}`);
    const t = performance.now();
    const states = await Promise.all(
      awake.map((name) => waker.waitState(name, ['running', 'crashed'], 180_000)),
    );
    report.awake_running = states.filter((s) => s.state === 'running').length;
    report.awake_ready_ms = Math.round(performance.now() - t);
    // Running is ready to answer; the browsers still load their first pages for a few seconds.
    await sleep(SETTLE_MS);

    const one = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const first = await get(wakerPort, '/api/personas', one);
    report.first_request_ms = r2(first.ms);
    report.response_bytes = first.bytes;
    for (let i = 0; i < 50; i += 1) await get(wakerPort, '/api/personas', one);
    const sequential: number[] = [];
    const cpuBefore = cpuMs(pid);
    for (let i = 0; i < SAMPLES; i += 1) {
      const r = await get(wakerPort, '/api/personas', one);
      if (r.status !== 200) throw new Error(`GET /api/personas answered ${r.status}`);
      sequential.push(r.ms);
    }
    one.destroy();
    report.list_sequential_ms = figures(sequential);
    // The waker's own work per call, which the load of other programs on the host does not add
    // to (its periodic ticks over the same span are included).
    report.waker_cpu_ms_per_request = r2((cpuMs(pid) - cpuBefore) / SAMPLES);

    const many = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const concurrent: number[] = [];
    let issued = 0;
    const lane = async (): Promise<void> => {
      while (issued < SAMPLES) {
        issued += 1;
        concurrent.push((await get(wakerPort, '/api/personas', many)).ms);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    many.destroy();
    report[`list_${CONCURRENCY}_concurrent_ms`] = figures(concurrent);

    // Prometheus' scrape of the waker: one scraper, one request at a time.
    const scraper = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const exposition = await fetch(`http://127.0.0.1:${wakerPort}/metrics`, {
      headers: { authorization: `Bearer ${KEY}` },
    }).then((r) => r.text());
    const metricsBytes = Buffer.byteLength(exposition);
    const metricsSamples = exposition.split('\n').filter((l) => l && !l.startsWith('#')).length;
    report.metrics_bytes = metricsBytes;
    report.metrics_samples = metricsSamples;
    const scrapes: number[] = [];
    for (let i = 0; i < Math.min(SAMPLES, 200); i += 1) {
      const r = await get(wakerPort, '/metrics', scraper);
      if (r.status !== 200) throw new Error(`GET /metrics answered ${r.status}`);
      scrapes.push(r.ms);
    }
    scraper.destroy();
    report.metrics_sequential_ms = figures(scrapes);
    const memory = rss(pid);
    report.memory_after_requests = memory;
    const heap = await readHeap(pid, inspectPort).catch((err: unknown) => String(err));
    report.heap = heap;

    // The goal is the latency of one client's call; the concurrent run shows queueing on top.
    const p99 = figures(sequential).p99;
    const verdict = p99 <= GOAL_P99_MS ? 'PASS' : 'FAIL';
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(
      `${verdict}: GET /api/personas with ${PERSONAS} personas (${DRIVER} driver): p99 ${p99} ms one at a time ` +
        `(goal at most ${GOAL_P99_MS} ms), ${figures(concurrent).p99} ms with ${CONCURRENCY} ` +
        `at once; ${first.bytes} bytes; waker RSS ${memory.rss_mb} MB (peak ` +
        `${memory.rss_peak_mb} MB), heap ` +
        `${typeof heap === 'string' ? 'unread' : `${heap.used_after_gc_mb} MB used after GC`}; ` +
        `GET /metrics p50 ${figures(scrapes).p50} ms, p99 ${figures(scrapes).p99} ms ` +
        `(${metricsSamples} samples, ${metricsBytes} bytes)\n`,
    );
  } finally {
    await w?.stop();
    await cluster?.teardown();
    if (root) fs.rmSync(root, { recursive: true, force: true });
    const left = fleetPids(fleetId);
    if (left.length) process.stderr.write(`processes left by the fleet: ${left.join(' ')}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
