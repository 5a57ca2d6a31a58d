import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WORKER_NODE_FLAGS } from '@persona-browser/contracts';
import { isRecord } from '@persona-browser/service-kit';
import { cmdlineOf, descendantsOf, isAlive, pidsMatching } from '@persona-browser/testkit/procs';
import { WORKER_MAIN, makeScratch } from '@persona-browser/testkit/spawn';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { browserPids, startWorker, xvfbPid } from '@persona-browser/testkit/worker';

/**
 * However the worker ends, it ends whole: an uncaught exception stops every step in reverse and
 * exits 1 (a page's rejection nothing handled is only logged), a SIGTERM while it is still starting stops what started and what was still starting,
 * and exits 0. Neither leaves its Xvfb or its Chromium behind.
 */

type Entry = Record<string, unknown>;

/** `promise`, or a failure naming `what` once `ms` have passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `done()` holds, looking every 50 ms; false if it still does not after `ms`. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** The worker's JSON log lines (its other output left out). */
const entries = (lines: readonly string[]): Entry[] =>
  lines.flatMap((line): Entry[] => {
    try {
      const v: unknown = JSON.parse(line);
      return isRecord(v) ? [v] : [];
    } catch {
      return [];
    }
  });

/** Where each message first shows in the log, -1 where it does not. */
const positions = (lines: readonly string[], messages: readonly string[]): number[] => {
  const log = entries(lines).map((e) => e.message);
  return messages.map((m) => log.indexOf(m));
};

/** The live processes of a worker's tree that are its display or its browser. */
function displayAndBrowser(workerPid: number): number[] {
  return descendantsOf(workerPid).filter((pid) => /Xvfb|chrom/i.test(cmdlineOf(pid)));
}

describe('an uncaught exception', () => {
  let crashing: RunningWorker;
  let control: RunningWorker;
  let dir: string;
  let crashFile: string;
  let controlFile: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-crash-'));
    crashFile = path.join(dir, 'crash-now');
    controlFile = path.join(dir, 'page-rejection');
    // Both watch for a file; the control's asks for a page's rejection, which crashes nothing.
    [crashing, control] = await Promise.all([
      startWorker({ env: { PB_TEST_CRASH_FILE: crashFile } }),
      startWorker({ env: { PB_TEST_CRASH_FILE: controlFile } }),
    ]);
    await Promise.all([crashing.waitInitialized(), control.waitInitialized()]);
  });
  afterAll(async () => {
    await Promise.all([crashing?.stop(), control?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('stops the browser and the display in order, exits 1 and leaves none of them', async () => {
    expect((await crashing.call('GET', '/api/v1/system/ping')).status).toBe(200);
    const tree = displayAndBrowser(crashing.proc.pid as number);
    const browser = browserPids(crashing);
    // The display and the browser's main process are the worker's own children.
    expect(tree).toEqual(expect.arrayContaining([xvfbPid(crashing), Math.min(...browser)]));
    const pids = [...new Set([...tree, ...browser, xvfbPid(crashing)])];
    expect(pids.length).toBeGreaterThan(2);

    fs.writeFileSync(crashFile, '');
    const code = await within(crashing.exited, 60_000, 'the crashed worker exiting');
    expect(code).toBe(1);
    expect(fs.existsSync(crashFile)).toBe(false);
    const [crash, down, stopped] = positions(crashing.logs, [
      'uncaught exception',
      'shutting down',
      'stopped',
    ]) as [number, number, number];
    expect([0 <= crash, crash < down, down < stopped]).toEqual([true, true, true]);
    const log = entries(crashing.logs);
    expect(log[crash]).toMatchObject({
      level: 'error',
      err: { message: 'test crash: PB_TEST_CRASH_FILE' },
    });
    expect(log[down]).toMatchObject({ reason: 'uncaught exception' });
    expect(log[stopped]).toMatchObject({ reason: 'uncaught exception' });
    expect(await until(() => !pids.some(isAlive), 10_000)).toBe(true);
    // A test calling the dead worker is told why it died, not a bare refused connection.
    await expect(crashing.call('GET', '/api/v1/system/ping')).rejects.toThrow(
      /the worker exited \(1\).*\n.*test crash: PB_TEST_CRASH_FILE/,
    );
  });

  test("a page's rejection nothing handled is logged, and the worker keeps running, browser and display too", async () => {
    const browser = browserPids(control);
    fs.writeFileSync(controlFile, 'page');
    const warning = (): number =>
      positions(control.logs, ['a page went away under a call nothing awaited'])[0] ?? -1;
    expect(await until(() => warning() >= 0, 10_000)).toBe(true);
    expect(fs.existsSync(controlFile)).toBe(false);
    expect(entries(control.logs)[warning()]).toMatchObject({
      level: 'warn',
      err: { name: 'ProtocolError', message: 'Protocol error (Test.call): Target closed' },
    });
    expect((await control.call('GET', '/api/v1/system/ping')).status).toBe(200);
    const status = await control.call('GET', '/api/v1/system/status', { auth: false });
    expect(status.body).toMatchObject({ initialized: true });
    expect(isAlive(xvfbPid(control))).toBe(true);
    expect(browserPids(control)).toEqual(browser);
    expect(positions(control.logs, ['uncaught exception', 'shutting down'])).toEqual([-1, -1]);
  });
});

/** A worker started as spawnWorker does, but watched from before it listens. */
interface Starting {
  proc: ChildProcess;
  logs: string[];
  exited: Promise<number | null>;
  /** Resolves once `message` is logged (true), or the worker has exited without it (false). */
  logged(message: string): Promise<boolean>;
}

function spawnStarting(env: Record<string, string>): Starting {
  const full: Record<string, string | undefined> = { ...process.env, ...env };
  delete full.DISPLAY;
  delete full.VNC_PORT;
  const proc = spawn(process.execPath, [...WORKER_NODE_FLAGS, WORKER_MAIN], {
    env: full,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
  let buf = '';
  const waiting: Array<() => void> = [];
  proc.stdout?.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    logs.push(...lines);
    for (const wake of waiting.splice(0)) wake();
  });
  proc.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString().trimEnd()));
  const has = (message: string): boolean => positions(logs, [message])[0] !== -1;
  const logged = (message: string): Promise<boolean> =>
    new Promise((resolve) => {
      const look = (): void => {
        if (has(message)) resolve(true);
        else waiting.push(look);
      };
      look();
      void exited.then(() => resolve(has(message)));
    });
  return { proc, logs, exited, logged };
}

/** The first `xprop` on PATH that is not in `dir`. */
function realXprop(dir: string): string {
  for (const d of (process.env.PATH ?? '').split(':')) {
    const file = path.join(d, 'xprop');
    if (d !== dir && fs.existsSync(file)) return file;
  }
  throw new Error('xprop is not installed');
}

/**
 * A stand-in for xprop, first on the worker's PATH, that holds the display step while it is
 * under way: Xvfb runs already, and the step ends once xprop has set the work area. It says it
 * is there (`held`), waits for the test's word on a FIFO (`go`), then runs the real xprop.
 */
function holdingXprop(): {
  pathDir: string;
  held: string;
  release: () => void;
  remove: () => void;
} {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-hold-'));
  const held = path.join(dir, 'held');
  const go = path.join(dir, 'go');
  execFileSync('mkfifo', [go]);
  fs.writeFileSync(
    path.join(dir, 'xprop'),
    `#!/bin/sh\n: > '${held}'\nread word < '${go}'\nexec '${realXprop(dir)}' "$@"\n`,
    { mode: 0o755 },
  );
  const release = (): void => {
    let fd: number;
    try {
      // Not blocking: a stand-in no longer waiting (its worker gone) has no reader open.
      fd = fs.openSync(go, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    } catch {
      return;
    }
    fs.writeSync(fd, 'go\n');
    fs.closeSync(fd);
  };
  const remove = (): void => fs.rmSync(dir, { recursive: true, force: true });
  return { pathDir: dir, held, release, remove };
}

describe('SIGTERM during start-up', () => {
  test('while the display step is under way: it stops what started and the display, exits 0', async () => {
    const hold = holdingXprop();
    const scratch = makeScratch({ prefix: 'pb-worker-', persona: 'early' });
    const w = spawnStarting({
      ...scratch.env,
      SERVICE_KEY: 'test-service-key',
      PATH: `${hold.pathDir}:${process.env.PATH ?? ''}`,
    });
    try {
      expect(await until(() => fs.existsSync(hold.held) || w.proc.exitCode !== null, 30_000)).toBe(
        true,
      );
      expect(w.proc.exitCode).toBeNull();
      // Xvfb runs; the step that started it has not ended, and the worker does not listen yet.
      const tree = descendantsOf(w.proc.pid as number);
      const xvfb = tree.filter((pid) => cmdlineOf(pid).startsWith('Xvfb'));
      expect(xvfb).toHaveLength(1);
      expect(positions(w.logs, ['virtual display started', 'listening'])).toEqual([-1, -1]);

      w.proc.kill('SIGTERM');
      await within(w.logged('shutting down'), 10_000, "the worker's shutdown");
      hold.release();
      const code = await within(w.exited, 30_000, 'the worker exiting');

      // The worker stopped its display itself before it exited (not the kernel after it).
      expect({ code, xvfbAlive: isAlive(xvfb[0] as number) }).toEqual({
        code: 0,
        xvfbAlive: false,
      });
      const [down, display, late, stopped, listening] = positions(w.logs, [
        'shutting down',
        'virtual display started',
        'stopping a step that started during shutdown',
        'stopped',
        'listening',
      ]) as [number, number, number, number, number];
      // The display came up after the signal, and was stopped at once, before the worker ended.
      expect({ down, display, late, stopped, listening }).toEqual({
        down: expect.any(Number),
        display: expect.any(Number),
        late: expect.any(Number),
        stopped: expect.any(Number),
        listening: -1,
      });
      expect([0 <= down, down < display, display < late, late < stopped]).toEqual([
        true,
        true,
        true,
        true,
      ]);
      expect(entries(w.logs)[late]).toMatchObject({ step: 'display' });
      const leftovers = (): number[] => [
        ...tree.filter(isAlive),
        ...pidsMatching(scratch.dir),
        ...pidsMatching(`--user-data-dir=${scratch.profileDir}`),
      ];
      expect(await until(() => leftovers().length === 0, 10_000)).toBe(true);
    } finally {
      hold.release();
      if (w.proc.exitCode === null && w.proc.signalCode === null) w.proc.kill('SIGKILL');
      await w.exited;
      hold.remove();
    }
  });

  test('while Chromium is being launched: the browser that comes up is closed, exits 0', async () => {
    const w = await startWorker({ persona: 'launching' });
    // The worker listens; the browser's launch has begun and has not ended.
    w.proc.kill('SIGTERM');
    expect(positions(w.logs, ['browser started'])).toEqual([-1]);
    const code = await within(w.exited, 30_000, 'the worker exiting');
    expect(code).toBe(0);
    const leftovers = (): number[] => [
      ...pidsMatching(`--user-data-dir=${w.profileDir}`),
      ...pidsMatching(w.dir),
      ...(isAlive(xvfbPid(w)) ? [xvfbPid(w)] : []),
    ];
    expect(await until(() => leftovers().length === 0, 10_000)).toBe(true);
  });
});
