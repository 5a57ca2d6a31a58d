import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PingResult, SupervisorStatus } from '@persona-browser/contracts';
import { supervisorStatusSchema } from '@persona-browser/contracts';
import { KEY, ROOT, call, freePort, sleep, until, wakerEnv } from './waker';

export { KEY, ROOT, call, freePort, sleep, until };
export const SUPERVISOR_MAIN = path.join(ROOT, 'supervisor', 'dist', 'main.js');

export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'persona-browser tests',
      GIT_AUTHOR_EMAIL: 'tests@persona-browser.invalid',
      GIT_COMMITTER_NAME: 'persona-browser tests',
      GIT_COMMITTER_EMAIL: 'tests@persona-browser.invalid',
    },
  }).trim();
}

/** The files of this repository's working tree as it is (the code under test), ignored ones aside. */
function trackedFiles(): string[] {
  return git(ROOT, 'ls-files', '-z', '--cached', '--others', '--exclude-standard')
    .split('\0')
    .filter(Boolean);
}

/**
 * A fleet's git set-up as a server has it: a bare repository as the remote, a developer's clone
 * that pushes to it, and the server's checkout (a clone on `main` tracking `origin/main`) that
 * the supervisor updates. The first commit is this repository's code; the checkout gets its
 * dependencies as hard links of this repository's node_modules (npm ci is the supervisor's job
 * when the lock file changes) and its build as a copy, so its first `tsc -b` is short.
 */
export interface FleetRepo {
  dir: string;
  remote: string;
  dev: string;
  checkout: string;
  personasDir: string;
  /** Commits `change` (files relative to the root: new content, or a function of the old) in
   * the developer's clone and pushes it; answers the commit's hash. */
  push(message: string, change: Record<string, string | ((old: string) => string)>): string;
  /** The checkout's HEAD. */
  head(): string;
  remove(): void;
}

export function makeFleetRepo(personas: Record<string, string>): FleetRepo {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-supervisor-'));
  const remote = path.join(dir, 'remote.git');
  const dev = path.join(dir, 'dev');
  const checkout = path.join(dir, 'checkout');
  git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', remote);
  fs.mkdirSync(dev);
  git(dev, 'init', '--quiet', '--initial-branch=main');
  for (const file of trackedFiles()) {
    const from = path.join(ROOT, file);
    if (!fs.existsSync(from)) continue;
    const to = path.join(dev, file);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    fs.chmodSync(to, fs.statSync(from).mode);
  }
  git(dev, 'add', '-A');
  git(dev, 'commit', '--quiet', '-m', 'The product as it is');
  git(dev, 'remote', 'add', 'origin', remote);
  git(dev, 'push', '--quiet', '-u', 'origin', 'main');
  git(dir, 'clone', '--quiet', remote, checkout);
  execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(checkout, 'node_modules')]);
  // The lock file as old as this repository's, so the supervisor judges the linked install as
  // it would here (installed after the lock file changed: kept), not as older than a fresh copy.
  const lock = fs.statSync(path.join(ROOT, 'package-lock.json'));
  fs.utimesSync(path.join(checkout, 'package-lock.json'), lock.atime, lock.mtime);
  for (const pkg of fs.readdirSync(ROOT)) {
    const dist = path.join(ROOT, pkg, 'dist');
    if (fs.existsSync(path.join(checkout, pkg)) && fs.existsSync(dist)) {
      execFileSync('cp', ['-a', dist, path.join(checkout, pkg, 'dist')]);
    }
  }
  // The image build's extra CA (docker/certs is local, like on a server behind a proxy).
  for (const cert of fs.readdirSync(path.join(ROOT, 'docker', 'certs'))) {
    if (cert.endsWith('.crt')) {
      fs.copyFileSync(
        path.join(ROOT, 'docker', 'certs', cert),
        path.join(checkout, 'docker', 'certs', cert),
      );
    }
  }
  const personasDir = path.join(dir, 'personas');
  for (const [name, env] of Object.entries(personas)) {
    fs.mkdirSync(path.join(personasDir, name), { recursive: true });
    fs.writeFileSync(path.join(personasDir, name, 'persona.env'), env);
  }
  return {
    dir,
    remote,
    dev,
    checkout,
    personasDir,
    push(message, change) {
      for (const [file, content] of Object.entries(change)) {
        const target = path.join(dev, file);
        const next =
          typeof content === 'function' ? content(fs.readFileSync(target, 'utf8')) : content;
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.writeFileSync(target, next);
      }
      git(dev, 'add', '-A');
      git(dev, 'commit', '--quiet', '-m', message);
      git(dev, 'push', '--quiet', 'origin', 'main');
      return git(dev, 'rev-parse', 'HEAD');
    },
    head: () => git(checkout, 'rev-parse', 'HEAD'),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The commit the persona's worker answers ping with on the persona's own port, as a user asks
 * it, else null (no answer). While the worker is not running the waker answers the ping itself,
 * saying so in `persona_state`, with the commit a wake would run: not the worker's word, so null.
 */
export async function workerCommit(port: number): Promise<string | null> {
  const r = await call<PingResult & { persona_state?: string }>(
    `http://127.0.0.1:${port}/api/v1/system/ping`,
    { key: null },
  ).catch(() => null);
  if (r?.status !== 200 || r.body.persona_state !== undefined) return null;
  return r.body.commit?.hash ?? null;
}

/** worker/src/main.ts with a mark the built worker carries (a good commit that builds). */
export const marked = (src: string, label: string): string =>
  `${src}\nexport const BUILD_MARK = '${label}';\n`;

/** Changes to worker/src/main.ts that make the two kinds of bad commit. */
export const BREAK = {
  /** The worker exits at once, with a message. */
  exitsAtStart: (src: string): string =>
    replaceOnce(
      src,
      'async function main(): Promise<void> {\n',
      "async function main(): Promise<void> {\n  if (process.env.PERSONA_DIR !== undefined) {\n    process.stderr.write('this build is broken on purpose\\n');\n    process.exit(2);\n  }\n",
    ),
  /**
   * The worker listens but never starts its browser, so it never becomes initialized: applied
   * to its browser launch step (worker/src/startup/browser-steps.ts).
   */
  neverInitialized: (src: string): string =>
    replaceOnce(
      src,
      "    navigator.start().catch((err: unknown) => logger.error('browser failed to start', { err }));\n",
      "    logger.warn('this build never starts its browser');\n",
    ),
};

/** The worker's ping route (worker/src/routes/system.ts), whose answers a commit may slow. */
export const PING_ROUTE = 'worker/src/routes/system.ts';

/**
 * The worker answers its first ping after 8 s (later ones after the usual 2 s), as a worker
 * busy just after its start might: the waker's own read of the commit comes in last.
 */
export const lateFirstPing = (src: string): string =>
  replaceOnce(
    replaceOnce(
      src,
      'export const PING_DELAY_MS = 2_000;\n',
      'export const PING_DELAY_MS = 2_000;\nlet pingsAnswered = 0;\n',
    ),
    '        await sleep(about(PING_DELAY_MS));\n',
    '        await sleep(pingsAnswered++ === 0 ? 8_000 : about(PING_DELAY_MS));\n',
  );

function replaceOnce(src: string, from: string, to: string): string {
  if (!src.includes(from)) throw new Error(`the worker's source no longer holds: ${from}`);
  return src.replace(from, to);
}

export interface RunningSupervisor {
  proc: ChildProcess;
  port: number;
  wakerPort: number;
  logs: string[];
  exited: Promise<number | null>;
  status(): Promise<SupervisorStatus>;
  /** Polls the status until `test` holds; throws with the last status and log lines. */
  waitFor(
    what: string,
    test: (s: SupervisorStatus) => boolean,
    ms?: number,
  ): Promise<SupervisorStatus>;
  stop(): Promise<number | null>;
}

/**
 * Starts the built supervisor as `node supervisor/dist/main.js` on the fleet repo's checkout, in
 * the environment a test waker gets (no display: each worker starts its own Xvfb).
 */
export async function startSupervisor(
  repo: FleetRepo,
  env: Record<string, string>,
  ports?: { port: number; wakerPort: number },
): Promise<RunningSupervisor> {
  const port = ports?.port ?? (await freePort());
  const wakerPort = ports?.wakerPort ?? (await freePort());
  const full = wakerEnv({
    REPO_ROOT: repo.checkout,
    PERSONAS_DIR: repo.personasDir,
    SUPERVISOR_PORT: String(port),
    WAKER_PORT: String(wakerPort),
    ...env,
  });
  const proc = spawn(process.execPath, [SUPERVISOR_MAIN], {
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const onData = (c: Buffer): void => {
    for (const line of c.toString().split('\n')) if (line.trim()) logs.push(line);
    if (process.env.SUPERVISOR_LOGS) process.stderr.write(c);
  };
  proc.stdout.on('data', onData);
  proc.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  const url = `http://127.0.0.1:${port}`;
  const status = async (): Promise<SupervisorStatus> => {
    const r = await call<SupervisorStatus>(`${url}/api/supervisor`);
    if (r.status !== 200) throw new Error(`status ${r.status}: ${JSON.stringify(r.body)}`);
    const v = supervisorStatusSchema.validate(r.body);
    if (v.error) throw new Error(`invalid status body: ${v.error.message}`);
    return r.body;
  };
  await until(
    () => (proc.exitCode !== null ? Promise.resolve(true) : status().then(() => true)),
    20_000,
    'the supervisor to listen',
  );
  if (proc.exitCode !== null) throw new Error(`supervisor exited:\n${logs.join('\n')}`);
  return {
    proc,
    port,
    wakerPort,
    logs,
    exited,
    status,
    waitFor: async (what, test, ms = 120_000) => {
      let last: SupervisorStatus | null = null;
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (proc.exitCode !== null) break;
        last = await status().catch(() => last);
        if (last && test(last)) return last;
        await sleep(250);
      }
      throw new Error(
        `supervisor: not ${what} within ${ms} ms; last status ${JSON.stringify(last)}\n` +
          logs.slice(-40).join('\n'),
      );
    },
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 90_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
