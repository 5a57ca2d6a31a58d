import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * A program's start-up and shutdown as the services run them, in a real child process: steps
 * stop in reverse on a signal, a failing stop does not keep the rest from stopping, and a step
 * that fails to start stops what already started and exits 2 with its reason.
 */

const KIT = path.resolve(__dirname, '..', 'dist', 'index.js');

/** A program of three steps; `FAIL_AT` makes that step fail to start, `BAD_STOP` its stop. */
const PROGRAM = `
const { Lifecycle, createLogger } = require(${JSON.stringify(KIT)});
const logger = createLogger({ secrets: [], level: 'error' });
const life = new Lifecycle('test-program', logger);
const say = (line) => process.stdout.write(line + '\\n');
(async () => {
  for (const name of ['display', 'browser', 'http']) {
    await life.step(
      name,
      async () => {
        if (process.env.FAIL_AT === name) throw new Error(name + ' could not start');
        say('started ' + name);
        return name;
      },
      async (value) => {
        say('stopped ' + value);
        if (process.env.BAD_STOP === value) throw new Error('stop failed');
      },
    );
  }
  life.exitOnSignals(['SIGTERM']);
  // What a listening server would do: keep the program alive until it is told to stop.
  setInterval(() => undefined, 60000);
  say('ready');
})();
`;

interface Ended {
  code: number | null;
  /** What the program said, in order. */
  out: string[];
  /** Its JSON log lines (the logger writes them to stdout too). */
  logs: Array<Record<string, unknown>>;
  err: string;
}

function run(env: Record<string, string>, signalWhenReady?: NodeJS.Signals): Promise<Ended> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['-e', PROGRAM], { env: { ...process.env, ...env } });
    const out: string[] = [];
    const logs: Array<Record<string, unknown>> = [];
    let err = '';
    proc.stdout.on('data', (c: Buffer) => {
      for (const line of c.toString().split('\n')) {
        if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
        else if (line) out.push(line);
      }
      if (signalWhenReady && out.includes('ready')) proc.kill(signalWhenReady);
    });
    proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
    proc.on('close', (code) => resolve({ code, out, logs, err }));
  });
}

test('SIGTERM stops every step in reverse order, then exits 0', async () => {
  const ended = await run({}, 'SIGTERM');
  expect(ended.out).toEqual([
    'started display',
    'started browser',
    'started http',
    'ready',
    'stopped http',
    'stopped browser',
    'stopped display',
  ]);
  expect(ended.code).toBe(0);
});

test('a stop that fails is passed over: the steps before it still stop', async () => {
  const ended = await run({ BAD_STOP: 'browser' }, 'SIGTERM');
  expect(ended.out.slice(-3)).toEqual(['stopped http', 'stopped browser', 'stopped display']);
  expect(ended.logs).toContainEqual(
    expect.objectContaining({ level: 'error', message: 'stop failed', step: 'browser' }),
  );
  expect(ended.code).toBe(0);
});

test('a step that cannot start stops what started, then exits 2 with its reason', async () => {
  const ended = await run({ FAIL_AT: 'http' });
  expect(ended.out).toEqual([
    'started display',
    'started browser',
    'stopped browser',
    'stopped display',
  ]);
  expect(ended.code).toBe(2);
  expect(ended.err).toBe('test-program: http could not start\n');
  expect(ended.logs).toContainEqual(
    expect.objectContaining({ message: 'cannot start', error: 'http could not start' }),
  );
});
