import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from './http';
import type { Client } from './http';
import { cmdlineOf, isAlive, killQuietly, pidsMatching, removeDisplayFiles } from './procs';
import { sleep } from './stats';

/** Spawning the built worker for the benchmark: ephemeral port, own Xvfb, fresh profile. */

export const ROOT = path.resolve(__dirname, '..', '..', '..');
const MAIN = path.join(ROOT, 'dist', 'worker', 'src', 'main.js');
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

function parseLog(line: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(line);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Runs as persona `bench` inside a temp folder so that the request log and the profile stay
 * there (without PERSONA_DIR the worker writes its request log into the repository root).
 */
export async function startWorker(extraEnv: Record<string, string> = {}): Promise<BenchWorker> {
  if (closed) throw new Error('the benchmark is shutting down');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-'));
  const personaDir = path.join(dir, 'personas', 'bench');
  fs.mkdirSync(personaDir, { recursive: true });
  fs.mkdirSync(path.join(dir, 'tmp'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    SERVICE_KEY: BENCH_KEY,
    PERSONA_DIR: personaDir,
    BROWSER_PROFILE: path.join(personaDir, 'profile'),
    BROWSER_SLOWMO: '0',
    WAKER_PORT: '1',
    LOG_LEVEL: 'info',
    // Chromium's temp files (its singleton socket folder) go with the scratch folder.
    TMPDIR: path.join(dir, 'tmp'),
  };
  for (const k of ['DISPLAY', 'VNC_PORT', 'WAKER_URL']) delete env[k];
  Object.assign(env, extraEnv);
  const spawnedAt = performance.now();
  const proc: ChildProcess = spawn(process.execPath, [MAIN], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let buf = '';
  let onListening: ((port: number) => void) | null = null;
  let listeningAt = 0;
  proc.stdout?.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      logs.push(line);
      const entry = parseLog(line);
      if (entry?.message === 'listening' && typeof entry.port === 'number' && onListening) {
        listeningAt = performance.now();
        onListening(entry.port);
      }
    }
  });
  proc.stderr?.on('data', (c: Buffer) => logs.push(c.toString().trimEnd()));

  const logEntry = (message: string): Record<string, unknown> | null => {
    for (const line of logs) {
      const entry = parseLog(line);
      if (entry?.message === message) return entry;
    }
    return null;
  };
  const xvfbPid = (): number | null => {
    const pid = logEntry('virtual display started')?.pid;
    return typeof pid === 'number' ? pid : null;
  };
  let stopping: Promise<{ exitMs: number; leftovers: number }> | null = null;
  const worker: BenchWorker = {
    url: '',
    pid: proc.pid ?? -1,
    dir,
    profileDir: path.join(personaDir, 'profile'),
    spawnedAt,
    listeningAt: 0,
    logs,
    client: createClient('http://127.0.0.1:1', BENCH_KEY),
    xvfbPid,
    logEntry,
    stop: () =>
      (stopping ??= (async () => {
        const started = performance.now();
        const xvfb = xvfbPid();
        const display = logEntry('virtual display started')?.display;
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
        const exitMs = performance.now() - started;
        worker.client.close();
        // Whatever outlived the worker (a browser it could not close, its Xvfb) goes now.
        const leftovers = pidsMatching(dir);
        if (xvfb !== null && isAlive(xvfb) && cmdlineOf(xvfb).includes('Xvfb'))
          leftovers.push(xvfb);
        for (const pid of leftovers) killQuietly(pid);
        if (leftovers.length) await sleep(200);
        if (xvfb !== null && typeof display === 'string') removeDisplayFiles(display, xvfb);
        fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
        live.delete(worker);
        return { exitMs, leftovers: leftovers.length };
      })()),
  };
  live.add(worker);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      onListening = resolve;
      void exited.then(() =>
        reject(new Error(`worker exited before listening:\n${logs.slice(-20).join('\n')}`)),
      );
      setTimeout(() => reject(new Error('worker did not listen within 30 s')), 30_000).unref();
    });
    worker.url = `http://127.0.0.1:${port}`;
    worker.listeningAt = listeningAt;
    worker.client = createClient(worker.url, BENCH_KEY);
  } catch (err) {
    await worker.stop();
    throw err;
  }
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
