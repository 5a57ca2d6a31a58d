/**
 * Wake and proxy figures of the waker (issue 8, "Numbers"), measured on this machine:
 *   - wake of a sleepy persona from a stopped container (and from a stopped child process),
 *     first request on its port to that request's answer (status: no ping delay to subtract);
 *   - wake from a paused container (WAKER_PAUSE_SECONDS);
 *   - proxy overhead: status p50/p99 through the waker's port versus straight to the worker.
 * Build and run: npx tsc -b && npx tsc -p waker/tsconfig.bench.json && node waker/dist-bench/bench/wake.js
 * Env: PERSONA_IMAGE (else /tmp/fleet/image-ready), RUNS (5), SAMPLES (400).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import type { RunningWaker } from '../test/helpers/waker';
import { ROOT, freePort, makePersonas, sleep, startWaker } from '../test/helpers/waker';

const RUNS = Number(process.env.RUNS ?? 5);
const SAMPLES = Number(process.env.SAMPLES ?? 400);
const docker = new Docker();

function image(): string {
  if (process.env.PERSONA_IMAGE) return process.env.PERSONA_IMAGE;
  const text = fs.readFileSync('/tmp/fleet/image-ready', 'utf8');
  const m = /^pinned_tag=(.+)$/m.exec(text) ?? /^tag=(.+)$/m.exec(text);
  if (!m?.[1]) throw new Error('set PERSONA_IMAGE');
  return m[1].trim();
}

/** A REPO_ROOT holding docker/seccomp-chromium.json (this checkout once merged). */
function repoRoot(): string {
  if (fs.existsSync(path.join(ROOT, 'docker', 'seccomp-chromium.json'))) return ROOT;
  const given = process.env.PB_SECCOMP_FILE;
  if (!given) throw new Error('docker/seccomp-chromium.json missing: set PB_SECCOMP_FILE');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-root-'));
  fs.mkdirSync(path.join(root, 'docker'));
  fs.copyFileSync(given, path.join(root, 'docker', 'seccomp-chromium.json'));
  return root;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET with a kept-alive connection; resolves with the status and the time taken (ms). */
function get(host: string, port: number, route: string): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const req = http.get({ host, port, path: route, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t }));
    });
    req.on('error', reject);
  });
}

const STATUS = '/api/v1/system/status';

function stats(xs: number[]): { n: number; p50: number; p99: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  const r = (x: number): number => Math.round(x * 100) / 100;
  return { n: s.length, p50: r(at(0.5)), p99: r(at(0.99)), min: r(s[0] ?? NaN), max: r(at(1)) };
}

async function wakes(
  w: RunningWaker,
  name: string,
  port: number,
  asleep: () => Promise<boolean>,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    await w.waitState(name, 'sleeping', 120_000);
    while (!(await asleep())) await sleep(100);
    const r = await get('127.0.0.1', port, STATUS);
    if (r.status !== 200) throw new Error(`wake answered ${r.status}`);
    out.push(r.ms);
  }
  return out;
}

async function fleetRun(
  driver: 'docker' | 'process',
  pauseS: number,
): Promise<{ w: RunningWaker; port: number; warmPort: number; fleet: string }> {
  const fleet = `bench${process.pid}${driver[0]}${pauseS}`;
  const ports = { waker: await freePort(), sleepy: await freePort(), warm: await freePort() };
  const { personasDir } = makePersonas({
    sleepy: `PORT=${ports.sleepy}\nMODE=sleepy\nIDLE_TIMEOUT=1\n`,
    warm: `PORT=${ports.warm}\nMODE=always-on\n`,
  });
  const w = await startWaker({
    WAKER_DRIVER: driver,
    WAKER_PORT: String(ports.waker),
    PERSONAS_DIR: personasDir,
    FLEET_ID: fleet,
    REPO_ROOT: driver === 'docker' ? repoRoot() : ROOT,
    PERSONA_IMAGE: driver === 'docker' ? image() : 'unused',
    WAKER_PAUSE_SECONDS: String(pauseS),
    LOG_LEVEL: 'warn',
  });
  return { w, port: ports.sleepy, warmPort: ports.warm, fleet };
}

const container = (fleet: string, name: string): Promise<Docker.ContainerInspectInfo | null> =>
  docker
    .getContainer(`pb-${fleet}-${name}`)
    .inspect()
    .catch(() => null);

async function main(): Promise<void> {
  delete process.env.DISPLAY;
  const report: Record<string, unknown> = { runs: RUNS, samples: SAMPLES, cpus: os.cpus().length };

  // Stopped container → first answer.
  const cold = await fleetRun('docker', 0);
  try {
    report.wake_docker_stopped_ms = stats(
      await wakes(
        cold.w,
        'sleepy',
        cold.port,
        async () => !(await container(cold.fleet, 'sleepy')),
      ),
    );
    // Proxy overhead on the always-on persona, alternating the two paths.
    await cold.w.waitState('warm', 'running', 120_000);
    const info = await container(cold.fleet, 'warm');
    const ip = Object.values(info?.NetworkSettings.Networks ?? {})[0]?.IPAddress as string;
    const direct: number[] = [];
    const proxied: number[] = [];
    for (let i = 0; i < 50; i += 1) {
      await get(ip, 5000, STATUS);
      await get('127.0.0.1', cold.warmPort, STATUS);
    }
    for (let i = 0; i < SAMPLES; i += 1) {
      direct.push((await get(ip, 5000, STATUS)).ms);
      proxied.push((await get('127.0.0.1', cold.warmPort, STATUS)).ms);
    }
    const d = stats(direct);
    const p = stats(proxied);
    report.status_direct_ms = d;
    report.status_through_waker_ms = p;
    report.proxy_overhead_p50_ms = Math.round((p.p50 - d.p50) * 100) / 100;
  } finally {
    await cold.w.stop();
  }

  // Paused container → first answer.
  const paused = await fleetRun('docker', 3600);
  try {
    await get('127.0.0.1', paused.port, STATUS);
    report.wake_docker_paused_ms = stats(
      await wakes(
        paused.w,
        'sleepy',
        paused.port,
        async () => (await container(paused.fleet, 'sleepy'))?.State.Paused === true,
      ),
    );
  } finally {
    await paused.w.stop();
  }

  // Child process (a machine without Docker) → first answer.
  const proc = await fleetRun('process', 0);
  try {
    report.wake_process_stopped_ms = stats(
      await wakes(proc.w, 'sleepy', proc.port, async () => true),
    );
  } finally {
    await proc.w.stop();
  }
  agent.destroy();
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
