import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * The worker's start-up plan run by the service kit's Lifecycle, in a real child process (a
 * failed start ends the program): steps start in list order, each sees what the earlier ones
 * gave, and every way of stopping runs the started steps' stops in reverse.
 */

const DIST = path.resolve(__dirname, '..', 'dist', 'startup', 'plan.js');
const KIT = path.resolve(__dirname, '..', '..', 'service-kit', 'dist', 'index.js');

/** A plan of four steps; `FAIL_AT` makes that step fail to start, `BAD_STOP` its stop throw. */
const PROGRAM = `
const { StartupPlan } = require(${JSON.stringify(DIST)});
const { Lifecycle, createLogger } = require(${JSON.stringify(KIT)});
const life = new Lifecycle('test-worker', createLogger({ secrets: [], level: 'error' }));
const say = (line) => process.stdout.write(line + '\\n');
const step = (name, needs) => ({
  name,
  start(ready) {
    if (process.env.FAIL_AT === name) throw new Error(name + ' could not start');
    say('started ' + name + (needs ? ' with ' + ready[needs] : ''));
    return { [name]: name + '-value' };
  },
  stop(started) {
    say('stopped ' + started[name]);
    if (process.env.BAD_STOP === name) throw new Error('stop failed');
  },
});
const plan = StartupPlan.begin({ given: 'settings' })
  .then(step('profile', 'given'))
  .then(step('display'))
  .then(step('browser', 'display'))
  .then(step('http', 'browser'));
say('plan ' + plan.names.join(','));
plan.run(life).then((ready) => {
  life.exitOnSignals(['SIGTERM']);
  // What a listening server would do: keep the program alive until it is told to stop.
  setInterval(() => undefined, 60000);
  say('ready ' + Object.keys(ready).join(','));
});
`;

interface Ended {
  code: number | null;
  out: string[];
  err: string;
}

function run(env: Record<string, string>, signalWhenReady?: NodeJS.Signals): Promise<Ended> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['-e', PROGRAM], { env: { ...process.env, ...env } });
    const out: string[] = [];
    let err = '';
    proc.stdout.on('data', (c: Buffer) => {
      for (const line of c.toString().split('\n'))
        if (line && !line.startsWith('{')) out.push(line);
      if (signalWhenReady && out.some((l) => l.startsWith('ready'))) proc.kill(signalWhenReady);
    });
    proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
    proc.on('close', (code) => resolve({ code, out, err }));
  });
}

test('steps start in list order with what the earlier ones gave; SIGTERM stops them in reverse', async () => {
  const ended = await run({}, 'SIGTERM');
  expect(ended.out).toEqual([
    'plan profile,display,browser,http',
    'started profile with settings',
    'started display',
    'started browser with display-value',
    'started http with browser-value',
    'ready given,profile,display,browser,http',
    'stopped http-value',
    'stopped browser-value',
    'stopped display-value',
    'stopped profile-value',
  ]);
  expect(ended.code).toBe(0);
});

test('a step that fails to start stops the steps before it, not itself nor the later ones', async () => {
  const ended = await run({ FAIL_AT: 'browser' });
  expect(ended.out).toEqual([
    'plan profile,display,browser,http',
    'started profile with settings',
    'started display',
    'stopped display-value',
    'stopped profile-value',
  ]);
  expect(ended.code).toBe(2);
  expect(ended.err).toBe('test-worker: browser could not start\n');
});

test('a stop that throws does not keep the other steps from stopping', async () => {
  const ended = await run({ BAD_STOP: 'browser' }, 'SIGTERM');
  expect(ended.out.slice(-4)).toEqual([
    'stopped http-value',
    'stopped browser-value',
    'stopped display-value',
    'stopped profile-value',
  ]);
  expect(ended.code).toBe(0);
});
