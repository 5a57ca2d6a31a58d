import { makeScratch, spawnWorker } from './spawn';
import type { WorkerProcess } from './spawn';

import { isAlive, pidsMatching } from './procs';
import { ROOT } from './root';

export { ROOT, pidsMatching };

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
  proc: WorkerProcess['proc'];
  /** Every line the worker printed (JSON log lines). */
  logs: string[];
  /** The scratch folder of this worker: profile, persona folder, REPO_ROOT. */
  dir: string;
  /** Where the request log goes: the persona folder, else the scratch folder. */
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
  /** Run as this persona (default `tester`); `null` runs without a persona. */
  persona?: string | null;
  personaEnv?: string;
  /** Reuse the scratch folder of an earlier worker (same profile and persona folder). */
  dir?: string;
}

/**
 * Starts the built worker on an ephemeral port with its own Xvfb and a fresh profile. Every
 * response it sends is checked against its declared schema (VALIDATE_RESPONSES).
 */
export async function startWorker(opts: StartOptions = {}): Promise<RunningWorker> {
  const scratch = makeScratch({
    prefix: 'pb-worker-',
    persona: opts.persona === undefined ? 'tester' : opts.persona,
    personaEnv: opts.personaEnv,
    dir: opts.dir,
  });
  const w = await spawnWorker({
    ...scratch.env,
    SERVICE_KEY: KEY,
    VALIDATE_RESPONSES: 'true',
    ...opts.env,
  });
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
    let res: Response;
    try {
      res = await fetch(w.url + route, { method, headers, body });
    } catch (err) {
      throw await unreachable(err, method, route);
    }
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
  /**
   * A call the worker did not answer: a failure that says whether the worker process is gone
   * (its exit code or signal) and what it logged last, so a worker that died mid-test tells why.
   */
  const unreachable = async (err: unknown, method: string, route: string): Promise<Error> => {
    const gone = await Promise.race([
      w.exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 500)),
    ]);
    const state = gone
      ? `the worker exited (${w.proc.signalCode ?? w.proc.exitCode})`
      : 'the worker is still running';
    const errors = w.logs.filter((l) => l.includes('"level":"error"')).slice(-5);
    const last = w.logs.slice(-8).filter((l) => !errors.includes(l));
    const lines = [...errors, ...last].join('\n');
    return new Error(
      `${method} ${route}: ${String(err)}; ${state}; its errors and last lines:\n${lines}`,
      {
        cause: err,
      },
    );
  };
  return {
    url: w.url,
    port: w.port,
    proc: w.proc,
    logs: w.logs,
    dir: scratch.dir,
    dataDir: scratch.dataDir,
    profileDir: scratch.profileDir,
    call,
    exited: w.exited,
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
      await w.stop();
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The processes of a worker's browser: every one that opens its profile. */
export const browserPids = (w: RunningWorker): number[] =>
  pidsMatching(`--user-data-dir=${w.profileDir}`);

/** The pid of the Xvfb the worker started, from its log. */
export function xvfbPid(w: RunningWorker): number {
  const line = w.logs.find((l) => l.includes('virtual display started'));
  return (JSON.parse(line as string) as { pid: number }).pid;
}

/** A process that is still running (a zombie counts as gone). */
export const alive = isAlive;
