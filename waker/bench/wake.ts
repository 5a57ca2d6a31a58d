/**
 * Wake and proxy figures of the waker, measured on this machine:
 *   - wake of a sleepy persona from a stopped container (and from a stopped child process),
 *     first request on its port to that request's answer (status: no ping delay to subtract);
 *   - wake from a paused container (WAKER_PAUSE_SECONDS);
 *   - proxy overhead: status p50/p99 through the waker's port versus straight to the worker.
 * Build and run: npx tsc -b && npx tsc -p waker/tsconfig.bench.json && node waker/dist-bench/bench/wake.js
 *   - memory: host memory added per always-on persona, what each container holds by its memory
 *     cgroup (and its containerd shim), and where it goes inside one container (proportional set
 *     size of each process, grouped by program), read once the personas have been awake
 *     MEMORY_AWAKE_S (240): Chromium starts some helpers minutes after its start.
 * Env: PERSONA_IMAGE (else the image built from this checkout), RUNS (5), SAMPLES (400),
 * MEMORY_PERSONAS (3), MEMORY_AWAKE_S (240),
 * FLEET_SECTIONS (a comma list of docker,paused,process,memory; all by default).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import Docker from 'dockerode';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import { cgroupHeldMb, parentOf } from '@persona-browser/testkit/procs';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { ROOT, freePort, makePersonas, sleep, startWaker } from '@persona-browser/testkit/waker';

const RUNS = Number(process.env.RUNS ?? 5);
const SECTIONS = ['docker', 'paused', 'process', 'memory'];
const only = process.env.FLEET_SECTIONS?.split(',').filter(Boolean) ?? SECTIONS;
const unknown = only.filter((s) => !SECTIONS.includes(s));
if (unknown.length > 0) {
  throw new Error(`unknown FLEET_SECTIONS ${unknown.join(', ')}; known: ${SECTIONS.join(', ')}`);
}
const wanted = (section: string): boolean => only.includes(section);
const SAMPLES = Number(process.env.SAMPLES ?? 400);
const docker = new Docker();

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

let imageTag: string | null = null;

async function fleetRun(
  driver: 'docker' | 'process',
  pauseS: number,
): Promise<{ w: RunningWaker; port: number; warmPort: number; fleet: string }> {
  imageTag ??= process.env.PERSONA_IMAGE ?? (await ensurePersonaImage());
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
    REPO_ROOT: ROOT,
    PERSONA_IMAGE: imageTag,
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

/** Host memory in use (MemTotal − MemAvailable), MB. */
function hostMemUsedMb(): number {
  const info = fs.readFileSync('/proc/meminfo', 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(info)?.[1]);
  return (kb('MemTotal') - kb('MemAvailable')) / 1024;
}

/** What the memory breakdown reads of each process: smaps_rollup's fields, in MB. */
const FIELDS = ['Pss', 'Pss_Anon', 'Pss_Shmem'] as const;
type Field = (typeof FIELDS)[number];

/** Those fields of one host process, MB (0 once it is gone). */
function rollupMb(pid: number): Record<Field, number> {
  let rollup = '';
  try {
    rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    // Gone: nothing left of it.
  }
  const mb = (f: Field): number =>
    Number(new RegExp(`^${f}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0) / 1024;
  return { Pss: mb('Pss'), Pss_Anon: mb('Pss_Anon'), Pss_Shmem: mb('Pss_Shmem') };
}

/** Proportional set size of one host process, MB (0 once it is gone). */
const pssMb = (pid: number): number => rollupMb(pid).Pss;

/** A program's group in the breakdown: Chromium's processes by their --type, others by name. */
function programOf(cmd: string): string {
  const type = /--type=([\w-]+)/.exec(cmd)?.[1];
  if (/chrom/i.test(cmd.split(' ')[0] ?? '')) return type ? `chromium ${type}` : 'chromium browser';
  return (cmd.split(' ')[0] ?? '').split('/').pop() ?? cmd;
}

/** Per program, rounded to 0.1 MB and largest first, with the total. */
function perProgram(out: Record<string, number>): Record<string, number> {
  const rounded = Object.fromEntries(
    Object.entries(out)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, Math.round(v * 10) / 10]),
  );
  return { ...rounded, total: Math.round(Object.values(out).reduce((a, b) => a + b, 0)) };
}

/**
 * Where a container's memory goes, per program (MB): its PSS, and of that the anonymous and the
 * shared memory, the part no cache reclaim can give back (what the host's used memory counts);
 * the rest of PSS is files (Chromium's and node's code), shared by every container of the image.
 */
async function breakdown(name: string): Promise<Record<Field, Record<string, number>>> {
  // dockerode types `top` as any: the shape is Docker's /containers/{id}/top reply.
  const top = (await docker.getContainer(name).top({ ps_args: '-eo pid,args' })) as {
    Titles: string[];
    Processes: string[][];
  };
  const pidAt = top.Titles.indexOf('PID');
  const cmdAt = top.Titles.findIndex((t) => t === 'COMMAND' || t === 'CMD');
  const out: Record<Field, Record<string, number>> = { Pss: {}, Pss_Anon: {}, Pss_Shmem: {} };
  for (const row of top.Processes) {
    const program = programOf(row[cmdAt] ?? '');
    const mb = rollupMb(Number(row[pidAt]));
    for (const f of FIELDS) out[f][program] = (out[f][program] ?? 0) + mb[f];
  }
  return {
    Pss: perProgram(out.Pss),
    Pss_Anon: perProgram(out.Pss_Anon),
    Pss_Shmem: perProgram(out.Pss_Shmem),
  };
}

/** A container's memory as `docker stats` shows it: usage less its inactive file cache, MB. */
async function dockerStatsMb(name: string): Promise<number> {
  const st: { memory_stats: { usage?: number; stats?: Record<string, number> } } = await docker
    .getContainer(name)
    .stats({ stream: false });
  const m = st.memory_stats;
  const inactive = m.stats?.inactive_file ?? m.stats?.total_inactive_file ?? 0;
  return Math.round(((m.usage ?? 0) - inactive) / 1024 / 1024);
}

/**
 * Host memory added per running persona: MEMORY_PERSONAS always-on containers, each with its
 * blank page and awake for `awakeS` seconds, against the host before the waker started (median
 * of readings over 10 s each); per_container_mb leaves out the waker's own process. That count
 * moves with the host's caches and daemons; held_mb does not: what each container holds by its
 * own memory cgroup (anonymous, shared and kernel memory) and its containerd shim.
 */
async function memoryPerPersona(n: number, awakeS: number): Promise<Record<string, unknown>> {
  imageTag ??= process.env.PERSONA_IMAGE ?? (await ensurePersonaImage());
  const settle = async (): Promise<number> => {
    const xs: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      xs.push(hostMemUsedMb());
      await sleep(1_000);
    }
    return stats(xs).p50;
  };
  const before = await settle();
  const ports: number[] = [];
  for (let i = 0; i <= n; i += 1) ports.push(await freePort());
  const folders: Record<string, string> = {};
  for (let i = 1; i <= n; i += 1) folders[`m${i}`] = `PORT=${ports[i]}\nMODE=always-on\n`;
  const { personasDir } = makePersonas(folders);
  const w = await startWaker({
    WAKER_DRIVER: 'docker',
    WAKER_PORT: String(ports[0]),
    PERSONAS_DIR: personasDir,
    FLEET_ID: `benchmem${process.pid}`,
    REPO_ROOT: ROOT,
    PERSONA_IMAGE: imageTag,
    LOG_LEVEL: 'warn',
  });
  const started = Date.now();
  try {
    for (let i = 1; i <= n; i += 1) await w.waitState(`m${i}`, 'running', 120_000);
    await sleep(Math.max(10_000, awakeS * 1000 - (Date.now() - started)));
    const awakeFor = Math.round((Date.now() - started) / 1000);
    const after = await settle();
    const wakerMb = pssMb(w.proc.pid ?? 0);
    const fleet = `benchmem${process.pid}`;
    const pss: Record<string, Record<string, number>> = {};
    const anon: Record<string, Record<string, number>> = {};
    const shmem: Record<string, Record<string, number>> = {};
    const held: Record<string, Record<string, number>> = {};
    const statsMb: number[] = [];
    for (let i = 1; i <= n; i += 1) {
      const name = `pb-${fleet}-m${i}`;
      const b = await breakdown(name);
      pss[`m${i}`] = b.Pss;
      anon[`m${i}`] = b.Pss_Anon;
      shmem[`m${i}`] = b.Pss_Shmem;
      statsMb.push(await dockerStatsMb(name));
      const pid = (await docker.getContainer(name).inspect()).State.Pid;
      const cg = cgroupHeldMb(pid);
      const shim = rollupMb(parentOf(pid) ?? 0);
      const shimMb = Math.round((shim.Pss_Anon + shim.Pss_Shmem) * 10) / 10;
      if (cg) {
        const total = cg.anon + cg.shmem + cg.kernel + shimMb;
        held[`m${i}`] = { ...cg, shim: shimMb, total: Math.round(total * 10) / 10 };
      }
    }
    const heldTotals = Object.values(held).map((h) => h.total ?? 0);
    return {
      pss_mb: pss,
      anon_pss_mb: anon,
      shmem_pss_mb: shmem,
      held_mb: held,
      held_total_mb: heldTotals.length > 0 ? stats(heldTotals) : null,
      docker_stats_mb: statsMb,
      personas: n,
      awake_s: awakeFor,
      host_used_before_mb: Math.round(before),
      host_used_after_mb: Math.round(after),
      waker_pss_mb: Math.round(wakerMb),
      per_persona_mb: Math.round((after - before) / n),
      per_container_mb: Math.round((after - before - wakerMb) / n),
    };
  } finally {
    await w.stop();
  }
}

async function main(): Promise<void> {
  delete process.env.DISPLAY;
  const report: Record<string, unknown> = { runs: RUNS, samples: SAMPLES, cpus: os.cpus().length };

  if (wanted('docker')) {
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
  }
  if (wanted('paused')) {
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
  }
  if (wanted('process')) {
    // Child process (a machine without Docker) → first answer.
    const proc = await fleetRun('process', 0);
    try {
      report.wake_process_stopped_ms = stats(
        await wakes(proc.w, 'sleepy', proc.port, async () => true),
      );
    } finally {
      await proc.w.stop();
    }
  }
  if (wanted('memory')) {
    report.memory = await memoryPerPersona(
      Number(process.env.MEMORY_PERSONAS ?? 3),
      Number(process.env.MEMORY_AWAKE_S ?? 240),
    );
  }
  agent.destroy();
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
