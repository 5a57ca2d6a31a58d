import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const MAIN = path.join(ROOT, 'dist', 'worker', 'src', 'main.js');
export const KEY = 'test-service-key';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
  ms: number;
}

export interface CallOptions {
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  auth?: boolean;
  lease?: string;
}

export interface RunningWorker {
  url: string;
  port: number;
  proc: ChildProcess;
  /** Every line the worker printed (JSON log lines). */
  logs: string[];
  /** A scratch folder of this worker: profile, request log (it is the repository root's stand-in for data). */
  dir: string;
  dataDir: string;
  /** The browser profile folder in use (`PERSONA_DIR/profile`, else BROWSER_PROFILE). */
  profileDir: string;
  call<T = Record<string, unknown>>(
    method: string,
    route: string,
    opts?: CallOptions,
  ): Promise<ApiResponse<T>>;
  waitInitialized(timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  /**
   * Run as a persona: a folder `<dir>/personas/<name>` becomes PERSONA_DIR (default `tester`,
   * so request logs stay in the test's scratch folder). `null` runs without a persona.
   */
  persona?: string | null;
  personaEnv?: string;
}

/** Starts the built worker on an ephemeral port with its own Xvfb and a fresh profile. */
export async function startWorker(opts: StartOptions = {}): Promise<RunningWorker> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-worker-'));
  const env: Record<string, string | undefined> = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    SERVICE_KEY: KEY,
    BROWSER_PROFILE: path.join(dir, 'profile'),
    BROWSER_SLOWMO: '0',
    WAKER_PORT: '1',
    DISPLAY: undefined,
    LOG_LEVEL: 'info',
    ...opts.env,
  };
  let dataDir = ROOT;
  const persona = opts.persona === undefined ? 'tester' : opts.persona;
  if (persona) {
    const personaDir = path.join(dir, 'personas', persona);
    fs.mkdirSync(personaDir, { recursive: true });
    if (opts.personaEnv) fs.writeFileSync(path.join(personaDir, 'persona.env'), opts.personaEnv);
    env.PERSONA_DIR = personaDir;
    dataDir = personaDir;
  }
  const profileDir = persona ? path.join(dataDir, 'profile') : (env.BROWSER_PROFILE as string);
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
  const proc = spawn(process.execPath, [MAIN], {
    env: env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => resolve(code)),
  );
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    const onData = (chunk: Buffer): void => {
      buf += chunk.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        logs.push(line);
        try {
          const entry = JSON.parse(line) as { message?: string; port?: number };
          if (entry.message === 'listening' && entry.port) resolve(entry.port);
        } catch {
          /* not a log line */
        }
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', (c: Buffer) => logs.push(c.toString()));
    void exited.then((code) => reject(new Error(`worker exited with ${code}: ${logs.join('\n')}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const call = async <T>(
    method: string,
    route: string,
    o: CallOptions = {},
  ): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.auth !== false) headers.authorization ??= `Bearer ${KEY}`;
    if (o.lease) headers['x-lease'] = o.lease;
    let body: string | undefined = o.rawBody;
    if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const started = performance.now();
    const res = await fetch(url + route, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* raw body */
    }
    return {
      status: res.status,
      body: parsed as T,
      headers: res.headers,
      ms: performance.now() - started,
    };
  };
  const worker: RunningWorker = {
    url,
    port,
    proc,
    logs,
    dir,
    dataDir,
    profileDir,
    call,
    exited,
    waitInitialized: async (timeoutMs = 30_000) => {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const r = await call<{ initialized: boolean }>('GET', '/api/v1/system/status');
        if (r.body.initialized) return;
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error('worker did not initialize');
    },
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  return worker;
}

/** Pids of live processes whose command line contains `needle` (read from /proc). */
export function pidsMatching(needle: string): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (/\) Z /.test(stat)) continue; // a zombie has already exited
      if (cmd.includes(needle)) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
