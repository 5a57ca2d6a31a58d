import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { SUPERVISOR_PATHS } from '@persona-browser/contracts';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { openWithKey } from '@persona-browser/testkit/panel-key';
import { fleetPids, isAlive, workerPid } from '@persona-browser/testkit/fleet-procs';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import {
  EXIT_CODE_RECORDER,
  KEY,
  ROOT,
  WAKER_MAIN,
  call,
  freePort,
  makePersonas,
  sleep,
  until,
  wakerEnv,
} from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';

/**
 * The waker's side of the supervisor: the status relay (`GET /api/supervisor`), the panel's
 * Updates section that reads it, and the watch that ends the waker and its workers when the
 * supervisor that started it is killed.
 */

describe('GET /api/supervisor and the Updates section', () => {
  let alone: RunningWaker;
  let unreachable: RunningWaker;
  let client: { browser: Browser; close(): Promise<void> };

  // The relay with the real supervisor (its body, the panel's Updates section, a frozen
  // supervisor) is shown by supervisor/test/update.test.ts; here, the waker on its own.
  beforeAll(async () => {
    // Fleets with no personas: enough for the relay and the panel.
    ({ waker: alone } = await startFleet({
      driver: 'process',
      fleet: `salone${process.pid}`,
      port: await freePort(),
      personas: {},
    }));
    ({ waker: unreachable } = await startFleet({
      driver: 'process',
      fleet: `sgone${process.pid}`,
      port: await freePort(),
      personas: {},
      // A port nobody listens on: a supervisor that is gone.
      env: { SUPERVISOR_URL: `http://127.0.0.1:${await freePort()}` },
    }));
  });

  afterAll(async () => {
    await client?.close();
    await alone?.stop();
    await unreachable?.stop();
  });

  test('a waker no supervisor started answers 404 saying so, after the key check', async () => {
    const denied = await call(`${alone.url}${SUPERVISOR_PATHS.status}`, { key: null });
    expect(denied).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
    const r = await call(`${alone.url}${SUPERVISOR_PATHS.status}`);
    expect(r).toMatchObject({
      status: 404,
      body: { error: 'no supervisor: this waker was not started by one' },
    });
  });

  describe('the fleet panel', () => {
    beforeAll(async () => {
      client = await launchClientBrowser();
    });

    async function openPanel(url: string): Promise<Page & { errors: string[] }> {
      const page = (await client.browser.newPage()) as Page & { errors: string[] };
      page.errors = [];
      page.on('pageerror', (e) => page.errors.push(String(e)));
      await page.setViewport({ width: 1280, height: 1000 });
      await openWithKey(page, `${url}/`, KEY);
      return page;
    }

    test('stays hidden on a waker no supervisor started', async () => {
      const page = await openPanel(alone.url);
      const answer = await page.waitForResponse((r) => r.url().endsWith(SUPERVISOR_PATHS.status), {
        timeout: 20_000,
      });
      expect(answer.status()).toBe(404);
      await page.waitForSelector('#personas-empty', { visible: true });
      // The card reads again only once it has handled the read before: the 404 is handled.
      const next = await page
        .waitForResponse((r) => r.url().endsWith(SUPERVISOR_PATHS.status) && r !== answer, {
          timeout: 20_000,
        })
        .catch((e: Error) => {
          throw new Error(`the panel never read ${SUPERVISOR_PATHS.status} again: ${e.message}`);
        });
      expect(next.status()).toBe(404);
      expect(await page.$eval('#updates', (e) => (e as HTMLElement).hidden)).toBe(true);
      expect(page.errors).toEqual([]);
      await page.close();
    });

    test('control: shown on a waker a supervisor started, even with that supervisor gone', async () => {
      const page = await openPanel(unreachable.url);
      // The relay answers 502 there: the card shows, saying the read failed.
      await page.waitForSelector('#updates', { visible: true, timeout: 20_000 });
      expect(await page.$eval('#updates-summary', (e) => e.textContent)).toMatch(
        /^Reading the supervisor failed/,
      );
      expect(page.errors).toEqual([]);
      await page.close();
    });
  });

  test('a supervisor port nobody listens on is a 502 naming the refusal', async () => {
    const r = await call(`${unreachable.url}${SUPERVISOR_PATHS.status}`);
    expect(r.status).toBe(502);
    expect(r.body.error).toMatch(/^supervisor unreachable: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });
});

/**
 * A parent in the supervisor's place, reduced to what the rule is about: a node process that
 * starts the waker as its child with PB_SUPERVISOR_PID set to its own pid, passes the waker's
 * output through, and says its pid. (The real supervisor killed mid-update:
 * supervisor/test/guards.test.ts.)
 */
const PARENT = `
const { spawn } = require('node:child_process');
const [main, preload] = process.argv.slice(1);
const waker = spawn(process.execPath, ['--require', preload, main], {
  env: { ...process.env, PB_SUPERVISOR_PID: String(process.pid) },
  stdio: 'inherit',
});
console.log(JSON.stringify({ waker_pid: waker.pid }));
`;

function ppidOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('a waker started by a supervisor', () => {
  const FLEET = `ssup${process.pid}`;
  let parent: ChildProcess | null = null;
  let wakerPid: number | null = null;

  afterAll(async () => {
    parent?.kill('SIGKILL');
    // Whatever a failed run left: the waker first (it stops its workers), then the rest.
    if (wakerPid !== null && isAlive(wakerPid)) {
      process.kill(wakerPid, 'SIGTERM');
      const end = Date.now() + 30_000;
      while (isAlive(wakerPid) && Date.now() < end) await sleep(200);
    }
    for (const pid of fleetPids(FLEET)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });

  test('ends, workers and all, with code 0 when the supervisor is killed', async () => {
    const ports = { waker: await freePort(), alice: await freePort() };
    const { root, personasDir } = makePersonas({
      alice: `PORT=${ports.alice}\nMODE=always-on\n`,
    });
    const exitFile = path.join(root, 'waker.exit');
    const env = wakerEnv({
      WAKER_DRIVER: 'process',
      WAKER_PORT: String(ports.waker),
      PERSONAS_DIR: personasDir,
      FLEET_ID: FLEET,
      REPO_ROOT: ROOT,
      PB_TEST_EXIT_FILE: exitFile,
    });
    const proc = spawn(process.execPath, ['-e', PARENT, WAKER_MAIN, EXIT_CODE_RECORDER], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    parent = proc;
    const logs: string[] = [];
    const reader = (): ((c: Buffer) => void) => {
      let partial = '';
      return (c) => {
        const lines = (partial + c.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) logs.push(line);
        if (process.env.WAKER_LOGS) process.stderr.write(c);
      };
    };
    proc.stdout?.on('data', reader());
    proc.stderr?.on('data', reader());

    const pid = await until(
      async () => {
        const line = logs.find((l) => l.includes('"waker_pid"'));
        return line ? (JSON.parse(line) as { waker_pid: number }).waker_pid : null;
      },
      20_000,
      'the parent to start the waker',
    );
    wakerPid = pid;
    expect(ppidOf(pid)).toBe(proc.pid);
    const url = `http://127.0.0.1:${ports.waker}`;
    await until(
      async () => {
        const r = await call<{ personas: Array<{ name: string; state: string }> }>(
          `${url}/api/personas`,
        );
        return r.body.personas.find((p) => p.name === 'alice' && p.state === 'running');
      },
      90_000,
      'alice running',
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the waker said:\n${logs.slice(-30).join('\n')}`);
    });
    const worker = workerPid(FLEET, 'alice');
    expect(worker).not.toBeNull();
    expect(fleetPids(FLEET).length).toBeGreaterThan(1);

    // While its supervisor lives, the waker stays (two rounds of the one-second watch).
    // Time itself is tested: two rounds of the watch.
    await sleep(2_500);
    expect(isAlive(pid)).toBe(true);
    expect(logs.some((l) => l.includes('supervisor gone'))).toBe(false);

    // SIGKILL: the supervisor says nothing to anyone.
    proc.kill('SIGKILL');
    await until(async () => (isAlive(pid) ? null : true), 90_000, 'the waker to end');
    // The waker wrote to its parent's pipe: it closes once nothing the waker started holds it.
    await until(async () => (proc.stdout?.closed ? true : null), 15_000, 'the output to end');
    expect(fs.readFileSync(exitFile, 'utf8')).toBe('0');
    const gone = logs.findIndex((l) => l.includes('supervisor gone: shutting down'));
    const stopped = logs.findIndex((l) => l.includes('"message":"stopped"'));
    expect(gone).toBeGreaterThanOrEqual(0);
    expect(stopped).toBeGreaterThan(gone);
    expect(isAlive(worker as number)).toBe(false);
    expect(fleetPids(FLEET)).toEqual([]);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
