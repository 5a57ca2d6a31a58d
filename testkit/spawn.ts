import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WORKER_NODE_FLAGS } from '@persona-browser/contracts';
import { cmdlineOf, isAlive, killQuietly, pidsMatching, removeDisplayFiles } from './procs';
import { until } from './waker';

/**
 * Starts the built worker the way a user does, for the tests and the benchmarks alike: its own
 * process on an ephemeral port, its own Xvfb, a scratch folder for the profile and request log.
 */

/** The worker package (its built program), found as Node finds it. */
const WORKER_ROOT = path.dirname(require.resolve('@persona-browser/worker/package.json'));

export const WORKER_MAIN = path.join(WORKER_ROOT, 'dist', 'main.js');

export interface ScratchOptions {
  /** Prefix of the scratch folder under the system temp folder. */
  prefix: string;
  /** Run as this persona (`<dir>/personas/<name>`); null runs without one. */
  persona: string | null;
  /** Written as the persona's `persona.env`. */
  personaEnv?: string;
  /** Reuse this folder (a restart on the same profile) instead of making a new one. */
  dir?: string;
}

export interface Scratch {
  dir: string;
  personaDir: string | null;
  /** Where the request log goes: the persona folder, else the repository root stand-in. */
  dataDir: string;
  profileDir: string;
  env: Record<string, string>;
}

/**
 * A scratch folder and the environment that keeps everything of the worker inside it: the
 * profile, the request log, Chromium's temp files, and `REPO_ROOT` (so `.update-trigger` and
 * a persona-less request log never land in the checkout).
 */
export function makeScratch(opts: ScratchOptions): Scratch {
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), opts.prefix));
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp, { recursive: true });
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    REPO_ROOT: dir,
    BROWSER_PROFILE: path.join(dir, 'profile'),
    BROWSER_SLOWMO: '0',
    WAKER_URL: 'http://127.0.0.1:1',
    LOG_LEVEL: 'info',
    TMPDIR: tmp,
  };
  let personaDir: string | null = null;
  if (opts.persona) {
    personaDir = path.join(dir, 'personas', opts.persona);
    fs.mkdirSync(personaDir, { recursive: true });
    if (opts.personaEnv) fs.writeFileSync(path.join(personaDir, 'persona.env'), opts.personaEnv);
    env.PERSONA_DIR = personaDir;
  }
  return {
    dir,
    personaDir,
    dataDir: personaDir ?? dir,
    profileDir: personaDir ? path.join(personaDir, 'profile') : env.BROWSER_PROFILE!,
    env,
  };
}

export interface WorkerProcess {
  proc: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** Every line the worker printed (JSON log lines, and stderr text). */
  logs: string[];
  /** performance.now() at spawn and when the "listening" line arrived. */
  spawnedAt: number;
  listeningAt: number;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** The first logged entry whose message is `message`. */
  logEntry(message: string): Record<string, unknown> | null;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(graceMs?: number): Promise<{ exitMs: number }>;
  /**
   * Kills whatever outlived the worker among the processes that name `scratchDir` on their
   * command line and the worker's Xvfb, then removes the display's socket file. Returns how
   * many were found.
   */
  sweep(scratchDir: string): Promise<number>;
}

function parseLog(line: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(line);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Spawns `dist/main.js` with `env` on top of this process's environment (an undefined value
 * removes a variable; DISPLAY and VNC_PORT are removed unless given, so the worker starts its
 * own display), and node started with `nodeFlags` (the image's, by default). Resolves once the
 * worker logs the port it listens on.
 */
export async function spawnWorker(
  env: Record<string, string | undefined>,
  listenTimeoutMs = 30_000,
  nodeFlags: readonly string[] = WORKER_NODE_FLAGS,
): Promise<WorkerProcess> {
  const full: Record<string, string | undefined> = {
    ...process.env,
    DISPLAY: undefined,
    VNC_PORT: undefined,
    ...env,
  };
  for (const k of Object.keys(full)) if (full[k] === undefined) delete full[k];
  const spawnedAt = performance.now();
  const proc = spawn(process.execPath, [...nodeFlags, WORKER_MAIN], {
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code, signal) => {
      if (process.env.WORKER_LOGS) {
        process.stderr.write(`[worker ${proc.pid}] exited: ${signal ?? code}\n`);
      }
      resolve(code);
    }),
  );
  let listeningAt = 0;
  let listenTimer: NodeJS.Timeout | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        logs.push(line);
        if (process.env.WORKER_LOGS) process.stderr.write(`[worker ${proc.pid}] ${line}\n`);
        const entry = parseLog(line);
        if (entry?.message === 'listening' && typeof entry.port === 'number') {
          listeningAt = performance.now();
          resolve(entry.port);
        }
      }
    });
    proc.stderr.on('data', (c: Buffer) => {
      logs.push(c.toString().trimEnd());
      if (process.env.WORKER_LOGS) process.stderr.write(c);
    });
    void exited.then((code) =>
      reject(new Error(`worker exited with ${code} before listening:\n${logs.join('\n')}`)),
    );
    listenTimer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`worker did not listen within ${listenTimeoutMs} ms`));
    }, listenTimeoutMs);
  }).finally(() => clearTimeout(listenTimer));
  const logEntry = (message: string): Record<string, unknown> | null => {
    for (const line of logs) {
      const entry = parseLog(line);
      if (entry?.message === message) return entry;
    }
    return null;
  };
  const display = (): { pid: number; display: string } | null => {
    const entry = logEntry('virtual display started');
    return typeof entry?.pid === 'number' && typeof entry.display === 'string'
      ? { pid: entry.pid, display: entry.display }
      : null;
  };
  return {
    proc,
    pid: proc.pid ?? -1,
    port,
    url: `http://127.0.0.1:${port}`,
    logs,
    spawnedAt,
    listeningAt,
    exited,
    logEntry,
    stop: async (graceMs = 15_000) => {
      const started = performance.now();
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      return { exitMs: performance.now() - started };
    },
    sweep: async (scratchDir: string) => {
      const xvfb = display();
      const leftovers = pidsMatching(scratchDir);
      if (xvfb && isAlive(xvfb.pid) && cmdlineOf(xvfb.pid).includes('Xvfb'))
        leftovers.push(xvfb.pid);
      for (const pid of leftovers) killQuietly(pid);
      await until(
        async () => (leftovers.some(isAlive) ? null : true),
        10_000,
        `the leftover processes ${leftovers.join(', ')} to end after SIGKILL`,
      );
      if (xvfb) removeDisplayFiles(xvfb.display, xvfb.pid);
      return leftovers.length;
    },
  };
}
