import { PassThrough } from 'node:stream';
import winston from 'winston';
import { Lifecycle, createLogger } from '../src';

/**
 * Steps that retry, and shutdown while a step is still starting, in one process: the program's
 * end (`process.exit`) is a stand-in that records the code, and the log lines are read back.
 */

type Line = Record<string, unknown>;

interface Program {
  life: Lifecycle;
  /** What happened, in order: `stop <value>`, `exit <code>`. */
  events: string[];
  lines: Line[];
}

function program(): Program {
  const events: string[] = [];
  const lines: Line[] = [];
  const logger = createLogger({ secrets: [], level: 'info' });
  for (const t of logger.transports) t.silent = true;
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean))
      lines.push(JSON.parse(line) as Line);
  });
  logger.add(new winston.transports.Stream({ stream }));
  const life = new Lifecycle('test-program', logger, {
    exit: (code) => events.push(`exit ${code}`),
  });
  return { life, events, lines };
}

/** A promise's state without waiting for it: pending until it settles. */
function watch<T>(p: Promise<T>): { state: 'pending' | 'resolved' | 'rejected'; value?: T } {
  const seen: { state: 'pending' | 'resolved' | 'rejected'; value?: T } = { state: 'pending' };
  p.then(
    (value) => Object.assign(seen, { state: 'resolved', value }),
    () => Object.assign(seen, { state: 'rejected' }),
  );
  return seen;
}

/** A start whose result the test hands over when it wants. */
function deferred<T>(): {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: Error) => void;
} {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every callback already due run (promise reactions, stream writes of log lines). */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('a step that retries', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  test('starts at its third try, after pauses that double, each announced by a warn line', async () => {
    const { life, events, lines } = program();
    const tries: number[] = [];
    const began = Date.now();
    const step = watch(
      life.step(
        'display',
        () => {
          tries.push(Date.now() - began);
          if (tries.length < 3) throw new Error(`busy ${tries.length}`);
          return 'display-value';
        },
        (value) => events.push(`stop ${value}`),
        { retryForMs: 10_000, firstDelayMs: 100 },
      ),
    );
    await jest.advanceTimersByTimeAsync(99);
    expect(tries).toEqual([0]);
    await jest.advanceTimersByTimeAsync(1_000);
    await settle();
    expect(tries).toEqual([0, 100, 300]);
    expect(step).toEqual({ state: 'resolved', value: 'display-value' });
    expect(lines.filter((l) => l.level === 'warn')).toEqual([
      expect.objectContaining({
        message: 'start step failed, retrying',
        step: 'display',
        attempt: 1,
        in_ms: 100,
        error: 'busy 1',
      }),
      expect.objectContaining({ attempt: 2, in_ms: 200, error: 'busy 2' }),
    ]);
    expect(events).toEqual([]);
    // It joined the shutdown list like any step.
    await life.shutdown('test');
    expect(events).toEqual(['stop display-value']);
  });

  test('one that never starts within retryForMs stops what started, then exits 2', async () => {
    const { life, events, lines } = program();
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await life.step(
        'profile',
        () => 'profile-value',
        (v) => events.push(`stop ${v}`),
      );
      const tries: number[] = [];
      const began = Date.now();
      const step = watch(
        life.step(
          'browser',
          () => {
            tries.push(Date.now() - began);
            throw new Error('no browser');
          },
          undefined,
          { retryForMs: 1_000, firstDelayMs: 100, maxDelayMs: 300 },
        ),
      );
      await jest.advanceTimersByTimeAsync(999);
      expect(events).toEqual([]);
      await jest.advanceTimersByTimeAsync(10_000);
      await settle();
      // Pauses of 100, 200, 300 (the longest), 300, then the 100 ms left: the last try is at 1 s.
      expect(tries).toEqual([0, 100, 300, 600, 900, 1_000]);
      expect(lines.filter((l) => l.level === 'warn').map((l) => l.in_ms)).toEqual([
        100, 200, 300, 300, 100,
      ]);
      expect(events).toEqual(['stop profile-value', 'exit 2']);
      expect(lines).toContainEqual(
        expect.objectContaining({ message: 'cannot start', error: 'no browser' }),
      );
      expect(stderr).toHaveBeenCalledWith('test-program: no browser\n');
      expect(step.state).toBe('pending');
    } finally {
      stderr.mockRestore();
    }
  });

  test('shutdown while it waits to retry: no further try, and shutdown does not wait for it', async () => {
    const { life, events } = program();
    let tries = 0;
    const step = watch(
      life.step(
        'browser',
        () => {
          tries += 1;
          throw new Error('no browser');
        },
        undefined,
        { retryForMs: 60_000, firstDelayMs: 5_000 },
      ),
    );
    await settle();
    expect(tries).toBe(1);
    void life.exit('SIGTERM');
    await settle();
    expect(events).toEqual(['exit 0']);
    // The pause ended with the shutdown: no timer of it keeps the program alive.
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(120_000);
    expect(tries).toBe(1);
    expect(events).toEqual(['exit 0']);
    expect(step.state).toBe('pending');
  });

  test('without retry, a start that throws fails start-up at once', async () => {
    const { life, events } = program();
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      let tries = 0;
      void life.step('http', () => {
        tries += 1;
        throw new Error('port taken');
      });
      await settle();
      await jest.advanceTimersByTimeAsync(60_000);
      expect(tries).toBe(1);
      expect(events).toEqual(['exit 2']);
      expect(stderr).toHaveBeenCalledWith('test-program: port taken\n');
    } finally {
      stderr.mockRestore();
    }
  });
});

describe('shutdown while a step is starting', () => {
  test("the step's stop runs once its start resolves, before shutdown resolves; the step never does", async () => {
    const { life, events, lines } = program();
    await life.step(
      'display',
      () => 'display-value',
      (v) => events.push(`stop ${v}`),
    );
    const browser = deferred<string>();
    const step = watch(
      life.step(
        'browser',
        () => browser.promise,
        (v) => events.push(`stop ${v}`),
      ),
    );
    const down = watch(life.shutdown('SIGTERM'));
    await settle();
    // What had started stops at once; the shutdown waits for the step under way.
    expect(events).toEqual(['stop display-value']);
    expect(down.state).toBe('pending');

    browser.resolve('browser-value');
    await settle();
    expect(events).toEqual(['stop display-value', 'stop browser-value']);
    expect(down.state).toBe('resolved');
    expect(step.state).toBe('pending');
    expect(lines).toContainEqual(
      expect.objectContaining({
        message: 'stopping a step that started during shutdown',
        step: 'browser',
      }),
    );
    // Stopped once: a second shutdown has nothing left to stop.
    await life.shutdown('again');
    expect(events).toEqual(['stop display-value', 'stop browser-value']);
  });

  test('exit ends the process only after that stop has finished', async () => {
    const { life, events } = program();
    const browser = deferred<string>();
    const closing = deferred<void>();
    void life.step(
      'browser',
      () => browser.promise,
      async (v) => {
        events.push(`stopping ${v}`);
        await closing.promise;
        events.push(`stopped ${v}`);
      },
    );
    void life.exit('SIGTERM');
    await settle();
    expect(events).toEqual([]);
    browser.resolve('browser-value');
    await settle();
    expect(events).toEqual(['stopping browser-value']);
    closing.resolve();
    await settle();
    expect(events).toEqual(['stopping browser-value', 'stopped browser-value', 'exit 0']);
  });

  test('a start that throws once shutdown has begun is logged, not taken for a start-up failure', async () => {
    const { life, events, lines } = program();
    const browser = deferred<string>();
    const step = watch(
      life.step(
        'browser',
        () => browser.promise,
        () => events.push('stop'),
      ),
    );
    void life.exit('SIGTERM');
    browser.reject(new Error('closed under it'));
    await settle();
    expect(events).toEqual(['exit 0']);
    expect(lines).not.toContainEqual(expect.objectContaining({ message: 'cannot start' }));
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        message: 'start step ended during shutdown',
        step: 'browser',
        error: 'closed under it',
      }),
    );
    expect(step.state).toBe('pending');
  });

  test('a step begun after shutdown never starts', async () => {
    const { life } = program();
    await life.shutdown('SIGTERM');
    const start = jest.fn(() => 'value');
    const step = watch(life.step('late', start));
    await settle();
    expect(start).not.toHaveBeenCalled();
    expect(step.state).toBe('pending');
  });
});
