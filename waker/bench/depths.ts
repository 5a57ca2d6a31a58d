/**
 * Each depth of sleep on one server (the docker driver): the memory a sleeping persona's
 * container holds at that depth, and the wake from it to the first answer of a call that needs
 * the browser (create-page through the persona's port, with the key).
 *   - awake: what a running persona with one page holds (the reference);
 *   - paused: the container frozen (WAKER_PAUSE_SECONDS);
 *   - light: the worker kept, its browser closed (LIGHT_SLEEP_SECONDS);
 *   - deep: no container.
 * Memory is read as the sleep call answers (`held_mb`) and once it has settled (`settled_mb`).
 * Each run puts the persona to the depth with `POST /api/personas/{name}/sleep {"depth": …}`.
 * Build and run: npm run build:bench && node waker/dist-bench/bench/depths.js
 * Env: PERSONA_IMAGE (else the image built from this checkout), RUNS (9).
 */
import os from 'node:os';
import Docker from 'dockerode';
import type { SleepDepth } from '@persona-browser/contracts';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import { cgroupHeldMb } from '@persona-browser/testkit/procs';
import { ROOT, call, freePort, makePersonas, startWaker } from '@persona-browser/testkit/waker';

const RUNS = Number(process.env.RUNS ?? 9);
const docker = new Docker();

function stats(xs: number[]): { n: number; p50: number; p90: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  const r = (x: number): number => Math.round(x);
  return { n: s.length, p50: r(at(0.5)), p90: r(at(0.9)), min: r(s[0] ?? NaN), max: r(at(1)) };
}

/** What the container holds by its memory cgroup (anonymous, shared, kernel), MB; 0 if none. */
async function heldMb(name: string): Promise<number> {
  const info = await docker
    .getContainer(name)
    .inspect()
    .catch(() => null);
  if (!info?.State.Running) return 0;
  const held = cgroupHeldMb(info.State.Pid);
  return held ? Math.round((held.anon + held.shmem + held.kernel) * 10) / 10 : NaN;
}

/**
 * What the container holds once a depth has settled: read every second until two readings in a
 * row are within 1 MB (a closed browser's processes take a moment to exit and the worker's heap
 * to shrink), at most 20 s; the last reading.
 */
async function settledMb(name: string): Promise<number> {
  let last = await heldMb(name);
  for (let i = 0; i < 20; i += 1) {
    await new Promise((r) => setTimeout(r, 1_000));
    const now = await heldMb(name);
    if (Math.abs(now - last) < 1) return now;
    last = now;
  }
  return last;
}

async function main(): Promise<void> {
  delete process.env.DISPLAY;
  const image = process.env.PERSONA_IMAGE ?? (await ensurePersonaImage());
  const fleet = `benchdepth${process.pid}`;
  const ports = { waker: await freePort(), d: await freePort() };
  const { personasDir } = makePersonas({ d: `PORT=${ports.d}\nMODE=sleepy\nIDLE_TIMEOUT=3600\n` });
  const w = await startWaker({
    WAKER_DRIVER: 'docker',
    WAKER_PORT: String(ports.waker),
    PERSONAS_DIR: personasDir,
    FLEET_ID: fleet,
    REPO_ROOT: ROOT,
    PERSONA_IMAGE: image,
    // Long enough that no depth changes by itself during a run.
    WAKER_PAUSE_SECONDS: '3600',
    LIGHT_SLEEP_SECONDS: '3600',
    LOG_LEVEL: 'warn',
  });
  const container = `pb-${fleet}-d`;
  const api = `${w.url}/api/personas/d`;
  const ops = `http://127.0.0.1:${ports.d}/api/v1/ops`;
  const report: Record<string, unknown> = { runs: RUNS, cpus: os.cpus().length };
  let page = 0;
  /** A call that needs the browser: a new page (the pool holds 5, so the last is closed). */
  const createPage = async (): Promise<number> => {
    const id = `b${(page += 1)}`;
    const r = await call(`${ops}/create-page`, { method: 'POST', body: { page_id: id } });
    if (r.status !== 200)
      throw new Error(`create-page answered ${r.status}: ${JSON.stringify(r.body)}`);
    await call(`${ops}/${id}/destroy-page`, { method: 'POST' }).catch(() => undefined);
    return r.ms;
  };
  try {
    const woke = await call(`${api}/wake`, { method: 'POST' });
    if (woke.status !== 200) throw new Error(`wake answered ${woke.status}`);
    const awake: number[] = [];
    for (let i = 0; i < RUNS; i += 1) awake.push(await createPage());
    report.awake = { create_page_ms: stats(awake), held_mb: await heldMb(container) };
    for (const depth of ['paused', 'light', 'deep'] as SleepDepth[]) {
      const wakes: number[] = [];
      const held: number[] = [];
      const settled: number[] = [];
      for (let i = 0; i < RUNS; i += 1) {
        const slept = await call(`${api}/sleep`, { method: 'POST', body: { depth } });
        const at = (slept.body as { depth?: string }).depth;
        if (slept.status !== 200 || at !== depth)
          throw new Error(`sleep ${depth} answered ${slept.status}, depth ${String(at)}`);
        held.push(await heldMb(container));
        settled.push(await settledMb(container));
        wakes.push(await createPage());
      }
      report[depth] = {
        wake_to_create_page_ms: stats(wakes),
        held_mb: stats(held),
        settled_mb: stats(settled),
      };
    }
  } finally {
    await w.stop();
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`persona-browser.fleet=${fleet}`] },
    });
    for (const c of left) await docker.getContainer(c.Id).remove({ force: true });
  }
  process.stdout.write(`${JSON.stringify({ depths: report }, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
