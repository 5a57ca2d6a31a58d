import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { PersonaInfo, PersonaState } from '@persona-browser/contracts';
import { ROOT } from './root';

export { ROOT };
export const WAKER_MAIN = path.join(ROOT, 'waker', 'dist', 'main.js');
export const KEY = 'waker-test-key';

/** A stand-in worker for the process driver: answers HTTP and echoes on a WebSocket. */
export const ECHO_WORKER = path.join(__dirname, '..', 'echo-worker.cjs');
/** Preloaded into a process to write the code it exits with to PB_TEST_EXIT_FILE. */
export const EXIT_CODE_RECORDER = path.join(__dirname, '..', 'exit-code.cjs');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The ports freePort handed out in this process. */
const handedOut = new Set<number>();

/**
 * A port free on this host right now, and never one this process was given before: ports taken
 * one after the other and bound only later (a persona's PORT, then the supervisor's own) were
 * seen to be the same port, and the persona's front door then could not bind it.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = net.createServer();
      srv.once('error', reject);
      srv.listen(0, () => {
        const { port: p } = srv.address() as net.AddressInfo;
        srv.close(() => resolve(p));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
  ms: number;
}

/** One HTTP call; the body parsed as JSON where it is JSON. */
export async function call<T = any>(
  url: string,
  opts: { method?: string; key?: string | null; body?: unknown } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = {};
  if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? KEY}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const started = performance.now();
  const res = await fetch(url, {
    method: opts.method ?? 'GET',
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return {
    status: res.status,
    body: body as T,
    headers: res.headers,
    ms: performance.now() - started,
  };
}

/**
 * A scratch repository root with a personas folder (made even when empty): `{name: persona.env
 * text or null}`.
 */
export function makePersonas(personas: Record<string, string | null>): {
  root: string;
  personasDir: string;
} {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-waker-'));
  const personasDir = path.join(root, 'personas');
  fs.mkdirSync(personasDir);
  for (const [name, env] of Object.entries(personas)) {
    fs.mkdirSync(path.join(personasDir, name), { recursive: true });
    if (env !== null) fs.writeFileSync(path.join(personasDir, name, 'persona.env'), env);
  }
  return { root, personasDir };
}

export interface RunningWaker {
  proc: ChildProcess;
  port: number;
  url: string;
  logs: string[];
  exited: Promise<number | null>;
  personas(): Promise<PersonaInfo[]>;
  persona(name: string): Promise<PersonaInfo>;
  /** Polls GET /api/personas until `name` is in `state` (or one of them). */
  waitState(
    name: string,
    state: PersonaState | PersonaState[],
    timeoutMs?: number,
  ): Promise<PersonaInfo>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** The environment a test waker runs with: this one's, no display, the test key, then `env`. */
export function wakerEnv(env: Record<string, string>): Record<string, string> {
  const full: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) full[k] = v;
  delete full.DISPLAY;
  delete full.VNC_PORT;
  return Object.assign(full, { SERVICE_KEY: KEY, BROWSER_SLOWMO: '0', LOG_LEVEL: 'info' }, env);
}

/**
 * Starts the built waker as users do (`node waker/dist/main.js`), with DISPLAY removed so each
 * worker starts its own Xvfb. Resolves once its API listens.
 */
export async function startWaker(env: Record<string, string>): Promise<RunningWaker> {
  const port = Number(env.WAKER_PORT);
  const proc = spawn(process.execPath, [WAKER_MAIN], {
    env: wakerEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const onData = (c: Buffer): void => {
    for (const line of c.toString().split('\n')) if (line.trim()) logs.push(line);
    if (process.env.WAKER_LOGS) process.stderr.write(c);
  };
  proc.stdout.on('data', onData);
  proc.stderr.on('data', onData);
  let stopping = false;
  let up = false;
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code, signal) => {
      // A waker that ends on its own is a fault: its last lines say why.
      if (up && !stopping && signal !== 'SIGKILL') {
        process.stderr.write(
          `waker exited unexpectedly (${code ?? signal}); its last lines:\n${logs.slice(-40).join('\n')}\n`,
        );
      }
      resolve(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`waker exited:\n${logs.join('\n')}`);
    const ok = await call(`${url}/api/health`, { key: null }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) {
      up = true;
      break;
    }
    if (Date.now() > until) {
      // Not left behind: a waker that listens late would answer for the next one on its port
      // and keep jest running (one still starting may not heed SIGTERM).
      proc.kill('SIGKILL');
      throw new Error(`waker did not listen within 20 s:\n${logs.join('\n')}`);
    }
    await sleep(100);
  }
  // The API listens before the start ends (the workers an earlier waker left taken over): until
  // then a wake is a 503 and an adopted persona shows as waking. A waker that exits instead
  // (a start step that keeps failing) is handed back as it is: `exited` tells.
  await fleetStarted(logs, proc, START_TIMEOUT_MS).catch((err: unknown) => {
    proc.kill('SIGKILL');
    throw err;
  });
  const personas = async (): Promise<PersonaInfo[]> =>
    (await call<{ personas: PersonaInfo[] }>(`${url}/api/personas`)).body.personas;
  const persona = async (name: string): Promise<PersonaInfo> => {
    const p = (await personas()).find((x) => x.name === name);
    if (!p) throw new Error(`no persona ${name}`);
    return p;
  };
  return {
    proc,
    port,
    url,
    logs,
    exited,
    personas,
    persona,
    waitState: async (name, state, timeoutMs = 60_000) => {
      const wanted = Array.isArray(state) ? state : [state];
      const deadline = Date.now() + timeoutMs;
      let last: PersonaInfo | null = null;
      while (Date.now() < deadline) {
        last = await persona(name);
        if (wanted.includes(last.state)) return last;
        await sleep(100);
      }
      throw new Error(
        `${name} not ${wanted.join('|')} within ${timeoutMs} ms: ${JSON.stringify(last)}`,
      );
    },
    stop: async () => {
      stopping = true;
      if (proc.exitCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** How long a waker's start may take, from its first line to "fleet started". */
const START_TIMEOUT_MS = 180_000;

/**
 * Waits for the waker's "fleet started" line, or for it to exit; throws, with its last lines,
 * when neither came within `timeoutMs`.
 */
async function fleetStarted(logs: string[], proc: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!logs.some((l) => l.includes('"message":"fleet started"'))) {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    if (Date.now() > deadline) {
      throw new Error(
        `the waker's fleet did not start within ${timeoutMs / 1000} s; its last lines:\n` +
          logs.slice(-10).join('\n'),
      );
    }
    await sleep(50);
  }
}

/** Polls `probe` every 250 ms until it gives a value (not null or undefined); throws after `ms`. */
export async function until<T>(
  probe: () => Promise<T | null | undefined>,
  ms = 60_000,
  what = 'the condition',
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v !== null && v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(250);
  }
}
