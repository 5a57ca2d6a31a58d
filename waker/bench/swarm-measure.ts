/**
 * What the Swarm benchmark's parts share: one timed GET, figures of a set of samples, and the
 * readiness test the waker itself uses (status 200 with `initialized: true`).
 */
import http from 'node:http';

export const STATUS = '/api/v1/system/status';
/**
 * A read with the key that wakes a sleeping persona (a status read never does: the waker
 * answers it for a sleeping persona itself).
 */
export const WAKING_READ = '/api/v1/system/process-tree';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const r1 = (x: number): number => Math.round(x * 10) / 10;
export const r2 = (x: number): number => Math.round(x * 100) / 100;

export interface Answer {
  status: number;
  ms: number;
  body: string;
}

/**
 * One GET of `host:port` + `route` through `agent` (with `headers`); resolves with its status,
 * time and body.
 */
export function get(
  host: string,
  port: number,
  route: string,
  agent: http.Agent,
  timeoutMs = 60_000,
  headers: http.OutgoingHttpHeaders = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const req = http.get({ host, port, path: route, agent, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ms: performance.now() - t, body }),
      );
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

/** Whether a status answer says the worker is ready: what the waker waits for after a start. */
export function initialized(a: Answer): boolean {
  if (a.status !== 200) return false;
  try {
    const body: unknown = JSON.parse(a.body);
    return typeof body === 'object' && body !== null && 'initialized' in body
      ? body.initialized === true
      : false;
  } catch {
    return false;
  }
}

export interface Figures {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank quantiles of `xs`, rounded to 0.01. */
export function figures(xs: number[]): Figures {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return {
    n: s.length,
    min: r2(s[0] ?? NaN),
    p50: r2(at(0.5)),
    p90: r2(at(0.9)),
    p99: r2(at(0.99)),
    max: r2(s[s.length - 1] ?? NaN),
  };
}

/** The median: the mean of the middle two for an even count. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  if (!s.length) return NaN;
  return s.length % 2 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

export const say = (line: string): boolean => process.stdout.write(`${line}\n`);
