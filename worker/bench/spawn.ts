import fs from 'node:fs';
import { WORKER_NODE_FLAGS } from '@persona-browser/contracts';
import { makeScratch, spawnWorker } from '@persona-browser/testkit/spawn';
import { createClient } from './http';
import type { Client } from './http';
import { sleep } from './stats';

/** The benchmark's workers: the testkit's spawn, plus a keep-alive client and a full sweep. */

export const BENCH_KEY = 'bench-service-key';
const STOP_GRACE_MS = 20_000;

export interface BenchWorker {
  url: string;
  pid: number;
  /** Scratch folder of this worker; the persona folder and the profile live inside. */
  dir: string;
  profileDir: string;
  /** performance.now() at spawn and when the "listening" line arrived. */
  spawnedAt: number;
  listeningAt: number;
  logs: string[];
  client: Client;
  /** Xvfb pid from the worker's "virtual display started" line (null until logged). */
  xvfbPid(): number | null;
  /** The first logged entry whose message is `message`. */
  logEntry(message: string): Record<string, unknown> | null;
  /** SIGTERM, wait for exit (SIGKILL after a grace), sweep leftovers, remove the folder. */
  stop(): Promise<{ exitMs: number; leftovers: number }>;
}

const live = new Set<BenchWorker>();
/** Set once the run is being torn down: no new worker may start after that. */
let closed = false;

/** Runs as persona `bench` inside a scratch folder, so that nothing lands in the checkout. */
export async function startWorker(
  extraEnv: Record<string, string> = {},
  nodeFlags: readonly string[] = WORKER_NODE_FLAGS,
): Promise<BenchWorker> {
  if (closed) throw new Error('the benchmark is shutting down');
  const scratch = makeScratch({ prefix: 'pb-bench-', persona: 'bench' });
  let proc: Awaited<ReturnType<typeof spawnWorker>>;
  try {
    proc = await spawnWorker(
      { ...scratch.env, SERVICE_KEY: BENCH_KEY, ...extraEnv },
      undefined,
      nodeFlags,
    );
  } catch (err) {
    fs.rmSync(scratch.dir, { recursive: true, force: true });
    throw err;
  }
  let stopping: Promise<{ exitMs: number; leftovers: number }> | null = null;
  const worker: BenchWorker = {
    url: proc.url,
    pid: proc.pid,
    dir: scratch.dir,
    profileDir: scratch.profileDir,
    spawnedAt: proc.spawnedAt,
    listeningAt: proc.listeningAt,
    logs: proc.logs,
    client: createClient(proc.url, BENCH_KEY),
    xvfbPid: () => {
      const pid = proc.logEntry('virtual display started')?.pid;
      return typeof pid === 'number' ? pid : null;
    },
    logEntry: (message) => proc.logEntry(message),
    stop: () =>
      (stopping ??= (async () => {
        const { exitMs } = await proc.stop(STOP_GRACE_MS);
        worker.client.close();
        const leftovers = await proc.sweep(scratch.dir);
        fs.rmSync(scratch.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
        live.delete(worker);
        return { exitMs, leftovers };
      })()),
  };
  live.add(worker);
  return worker;
}

/** Polls GET /system/status every `everyMs` until `initialized: true`; resolves with that moment. */
export async function waitInitialized(
  w: BenchWorker,
  everyMs = 20,
  timeoutMs = 60_000,
): Promise<number> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    const r = await w.client.request('GET', '/api/v1/system/status');
    if (r.status === 200 && (JSON.parse(r.text) as { initialized?: boolean }).initialized) {
      return performance.now();
    }
    await sleep(everyMs);
  }
  throw new Error(`worker not initialized after ${timeoutMs} ms:\n${w.logs.slice(-20).join('\n')}`);
}

/** Stops every worker still running (a failed section); `final` also refuses new ones. */
export async function stopAll(final = false): Promise<void> {
  if (final) closed = true;
  await Promise.all([...live].map((w) => w.stop().catch(() => undefined)));
}
