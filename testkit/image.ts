/**
 * Test helpers for the persona image: build it once per process against the real Docker
 * engine, run persona containers the way the plan says the waker does (labels, bind mount,
 * shared memory, seccomp profile as content, host-gateway, stop timeout), and poll a worker's
 * readiness at the container's bridge address. Test helpers only: the waker's own docker driver
 * lives in waker/src.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import Docker from 'dockerode';
import { ROOT } from './waker';

/** The repository the tests run from (its Dockerfile is built), also from the built benchmark. */
export const REPO_ROOT = ROOT;
export const TEST_IMAGE = 'persona-browser:test';
export const DEFAULT_BASE_IMAGE = 'persona-base:bookworm';
export const SECCOMP_FILE = path.join(REPO_ROOT, 'docker', 'seccomp-chromium.json');
export const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
export const WORKER_PORT = 5000;
export const SHM_BYTES = 512 * 1024 * 1024;
export const STOP_TIMEOUT_S = 20;
export const LABEL_PERSONA = 'persona-browser.persona';
export const LABEL_FLEET = 'persona-browser.fleet';

let docker: Docker | null = null;

/** One dockerode client on the local socket (DOCKER_HOST is honoured by dockerode). */
export function dockerClient(): Docker {
  docker ??= new Docker();
  return docker;
}

/** Resolves when the Docker engine answers; otherwise rejects saying why (never skips). */
export async function assertDocker(): Promise<void> {
  try {
    await dockerClient().ping();
  } catch (err) {
    throw new Error(
      `Docker is not reachable (${(err as Error).message}): these tests need a running Docker ` +
        'engine (apt-get install docker.io; start dockerd; .ci/run does both)',
    );
  }
}

interface RunResult {
  code: number | null;
  output: string;
}

/** Runs a command, collecting its output; never throws for a non-zero exit. */
function run(cmd: string, args: string[], opts: { cwd?: string } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.length > 200_000) output = output.slice(-100_000);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', (err) => resolve({ code: -1, output: `${output}\n${err.message}` }));
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** How long the last build of this process took (ms), for reports. */
export let lastBuildMs: number | null = null;
let building: Promise<string> | null = null;

/**
 * Builds the persona image from this repository (once per process; Docker's layer cache makes
 * a repeated build quick) and returns its tag. The base is `PERSONA_BASE_IMAGE` when set, else
 * the offline debootstrap image of scripts/base-image.sh (built when missing). The host's CA
 * bundle is handed to the build (docker/certs/), for a registry behind a TLS-intercepting proxy.
 */
export function ensurePersonaImage(): Promise<string> {
  building ??= buildImage();
  return building;
}

async function buildImage(): Promise<string> {
  await assertDocker();
  const started = Date.now();
  let base = process.env.PERSONA_BASE_IMAGE;
  if (!base) {
    const script = path.join(REPO_ROOT, 'scripts', 'base-image.sh');
    const r = await run('bash', [script, DEFAULT_BASE_IMAGE]);
    if (r.code !== 0) {
      throw new Error(`scripts/base-image.sh failed (exit ${r.code}):\n${r.output.slice(-3000)}`);
    }
    base = DEFAULT_BASE_IMAGE;
  }
  // The script copies the host's CA bundle in and builds under a lock that parallel test
  // processes, worktrees and .ci/run's own build of the image share.
  const r = await run('bash', [
    path.join(REPO_ROOT, 'scripts', 'build-test-image.sh'),
    base,
    TEST_IMAGE,
  ]);
  if (r.code !== 0) {
    throw new Error(
      `docker build of ${TEST_IMAGE} failed (exit ${r.code}):\n${r.output.slice(-4000)}`,
    );
  }
  lastBuildMs = Date.now() - started;
  return TEST_IMAGE;
}

/** The seccomp profile as Docker's API takes it: the file's content. */
export function seccompOption(): string {
  return `seccomp=${fs.readFileSync(SECCOMP_FILE, 'utf8')}`;
}

export interface PersonaContainerOptions {
  image: string;
  /** Fleet id label: unique per test run, so parallel runs never touch each other. */
  fleet: string;
  persona: string;
  /** Host folder bind-mounted at /persona. */
  dir: string;
  env?: Record<string, string>;
  /** Command instead of the image's default (the worker). */
  cmd?: string[];
  memoryMb?: number;
  cpus?: number;
  /** Our seccomp profile (default); false leaves Docker's default profile in force. */
  seccompProfile?: boolean;
}

export interface PersonaContainer {
  id: string;
  name: string;
  container: Docker.Container;
  /** The container's address on Docker's default bridge. */
  ip: string;
  /** `http://<ip>:5000` */
  url: string;
}

export function containerName(fleet: string, persona: string): string {
  return `pb-${fleet}-${persona}`;
}

/** Creates and starts a persona container with the plan's labels and options. */
export async function startPersonaContainer(o: PersonaContainerOptions): Promise<PersonaContainer> {
  const name = containerName(o.fleet, o.persona);
  const env = Object.entries(o.env ?? {}).map(([k, v]) => `${k}=${v}`);
  const container = await dockerClient().createContainer({
    name,
    Image: o.image,
    Cmd: o.cmd,
    Env: env,
    Labels: { [LABEL_PERSONA]: o.persona, [LABEL_FLEET]: o.fleet },
    StopTimeout: STOP_TIMEOUT_S,
    HostConfig: {
      Binds: [`${o.dir}:/persona`],
      ShmSize: SHM_BYTES,
      SecurityOpt: o.seccompProfile === false ? [] : [seccompOption()],
      ExtraHosts: ['host.docker.internal:host-gateway'],
      Memory: o.memoryMb ? o.memoryMb * 1024 * 1024 : undefined,
      NanoCpus: o.cpus ? Math.round(o.cpus * 1e9) : undefined,
    },
  });
  await container.start();
  const info = await container.inspect();
  const networks = info.NetworkSettings.Networks ?? {};
  const ip = networks.bridge?.IPAddress ?? Object.values(networks)[0]?.IPAddress;
  if (!ip) throw new Error(`container ${name} has no bridge address`);
  return { id: info.Id, name, container, ip, url: `http://${ip}:${WORKER_PORT}` };
}

/** Stops (SIGTERM, then the container's StopTimeout) and removes every container of a fleet. */
export async function removeFleet(fleet: string): Promise<void> {
  const list = await dockerClient().listContainers({
    all: true,
    filters: { label: [`${LABEL_FLEET}=${fleet}`] },
  });
  await Promise.all(
    list.map(async (c) => {
      const container = dockerClient().getContainer(c.Id);
      await container.remove({ force: true }).catch(() => undefined);
    }),
  );
}

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or null when it is not JSON. */
  json: unknown;
}

/** One HTTP request with a hard timeout (fetch can hang on Docker's networking). */
export function httpRequest(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    timeoutMs?: number;
    /** The local address to call from (127.0.0.x: the doors count failures per address). */
    from?: string;
  } = {},
): Promise<HttpAnswer> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { ...opts.headers };
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const where = opts.from === undefined ? {} : { localAddress: opts.from, agent: false as const };
    const req = http.request(url, { method: opts.method ?? 'GET', headers, ...where }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = JSON.parse(text);
        } catch {
          json = null;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.setTimeout(opts.timeoutMs ?? 5_000, () =>
      req.destroy(new Error(`timed out after ${opts.timeoutMs ?? 5_000} ms: ${url}`)),
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/**
 * Polls `GET /api/v1/system/status` until the worker answers with its browser initialized;
 * resolves with the milliseconds it took. Rejects after `timeoutMs` with the last answer or error.
 */
export async function waitWorkerReady(url: string, timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  let last = 'no answer yet';
  while (Date.now() - started < timeoutMs) {
    try {
      const r = await httpRequest(`${url}/api/v1/system/status`, { timeoutMs: 2_000 });
      if (r.status === 200 && (r.json as { initialized?: unknown } | null)?.initialized === true) {
        return Date.now() - started;
      }
      last = `HTTP ${r.status} ${r.text.slice(0, 200)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`worker at ${url} not ready after ${timeoutMs} ms: ${last}`);
}

/** Host pids of the processes in a container's cgroup (empty once it has stopped). */
export function containerPids(containerId: string): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cgroup`, 'utf8').includes(containerId)) {
        out.push(Number(entry));
      }
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/** The container's log (stdout and stderr) as text. */
export async function containerLogs(container: Docker.Container): Promise<string> {
  const raw = await container.logs({ stdout: true, stderr: true, follow: false });
  // Docker multiplexes the two streams with 8-byte frame headers (no TTY).
  const buf = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw));
  let text = '';
  for (let i = 0; i + 8 <= buf.length;) {
    const size = buf.readUInt32BE(i + 4);
    text += buf.subarray(i + 8, i + 8 + size).toString('utf8');
    i += 8 + size;
  }
  return text;
}

/** `docker` CLI with a result, for what dockerode does not cover simply. */
export function dockerCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('docker', args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`docker ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}
