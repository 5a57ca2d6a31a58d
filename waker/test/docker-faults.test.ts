import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import Docker from 'dockerode';
import { DockerFaults, ENGINE_SOCKET } from '@persona-browser/testkit/docker-faults';
import { TEST_IMAGE, ensurePersonaImage } from '@persona-browser/testkit/image';

/**
 * The test kit's fault proxy on the Docker socket, against the real engine: each kind of fault
 * does what it says to the calls it catches and nothing to the others, and what a fleet relies
 * on (the event stream, an upgraded exec connection) flows through it unharmed.
 */
const PREFIX = `pb-faults-${process.pid}-`;
const CONTAINER_JSON = /^\/containers\/[^/]+\/json$/;
/** The engine itself, for setting up and for checking what really happened. */
const engine = new Docker({ socketPath: ENGINE_SOCKET });

let faults: DockerFaults;
/** dockerode through the proxy. */
let docker: Docker;
let idle: Docker.Container;

/** A container of the persona image that only sleeps (tini forwards the stop signal). */
async function runSleeper(name: string): Promise<Docker.Container> {
  const container = await engine.createContainer({
    name: `${PREFIX}${name}`,
    Image: TEST_IMAGE,
    Entrypoint: ['tini', '--'],
    Cmd: ['sleep', '600'],
  });
  await container.start();
  return container;
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The docker CLI with DOCKER_HOST on the proxy; `input` is its stdin. */
function dockerCli(args: string[], input = '', deadlineMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, {
      env: { ...process.env, DOCKER_HOST: faults.dockerHost },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`docker ${args.join(' ')}: no exit within ${deadlineMs} ms (${stderr})`));
    }, deadlineMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

interface EngineEvent {
  Type?: string;
  Action?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
}

/** Resolves with the first event on the engine's stream that `accept` takes. */
function nextEvent(
  stream: NodeJS.ReadableStream,
  accept: (event: EngineEvent) => boolean,
  deadlineMs: number,
  what: string,
): Promise<EngineEvent> {
  return new Promise((resolve, reject) => {
    let pending = '';
    const done = (): void => {
      clearTimeout(timer);
      stream.off('data', onData);
    };
    const onData = (chunk: Buffer | string): void => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        // The engine's own JSON, read only for the few fields the tests check.
        const event = JSON.parse(line) as EngineEvent;
        if (!accept(event)) continue;
        done();
        resolve(event);
        return;
      }
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${what}: no such event within ${deadlineMs} ms`));
    }, deadlineMs);
    stream.on('data', onData);
  });
}

beforeAll(async () => {
  // The sleepers run the persona image: built here when this file runs first, or alone.
  await ensurePersonaImage();
  faults = await DockerFaults.start();
  docker = new Docker({ socketPath: faults.socketPath });
  idle = await runSleeper('idle');
}, 20 * 60_000);

afterEach(() => faults.clear());

afterAll(async () => {
  await faults?.close();
  const left = await engine.listContainers({ all: true, filters: { name: [`^/${PREFIX}`] } });
  await Promise.all(left.map((c) => engine.getContainer(c.Id).remove({ force: true })));
}, 60_000);

test('a fail rule answers its status to the next three stops; the fourth stops the container', async () => {
  const target = await runSleeper('stop');
  const viaProxy = docker.getContainer(target.id);
  const rule = faults.inject({
    method: 'POST',
    path: /^\/containers\/[^/]+\/stop$/,
    times: 3,
    action: { kind: 'fail', status: 503, message: 'the engine is busy' },
  });

  for (let attempt = 1; attempt <= 3; attempt += 1) {
    await expect(viaProxy.stop({ t: 2 })).rejects.toMatchObject({
      statusCode: 503,
      json: { message: 'the engine is busy' },
    });
    expect(rule.hits).toBe(attempt);
  }
  expect(rule.remaining()).toBe(0);
  expect((await target.inspect()).State.Running).toBe(true);

  await viaProxy.stop({ t: 2 });
  expect((await target.inspect()).State.Running).toBe(false);
  expect(rule.hits).toBe(3);
  const stops = faults.calls
    .filter((c) => c.method === 'POST' && c.path === `/containers/${target.id}/stop`)
    .map((c) => [c.status, c.injected]);
  expect(stops).toEqual([
    [503, true],
    [503, true],
    [503, true],
    [204, false],
  ]);
}, 60_000);

test('a delay rule forwards the call after at least the delay, and only the calls it catches', async () => {
  const DELAY_MS = 400;
  const viaProxy = docker.getContainer(idle.id);
  const rule = faults.inject({
    method: 'GET',
    path: CONTAINER_JSON,
    times: 1,
    action: { kind: 'delay', ms: DELAY_MS },
  });

  const delayedStart = performance.now();
  const info = await viaProxy.inspect();
  const delayedMs = performance.now() - delayedStart;
  const straightStart = performance.now();
  await viaProxy.inspect();
  const straightMs = performance.now() - straightStart;

  expect(info.Id).toBe(idle.id);
  expect(delayedMs).toBeGreaterThanOrEqual(DELAY_MS);
  expect(straightMs).toBeLessThan(delayedMs);
  expect(rule.remaining()).toBe(0);
  const inspects = faults.calls.filter((c) => c.path === `/containers/${idle.id}/json`);
  expect(inspects.slice(-2).map((c) => [c.status, c.injected])).toEqual([
    [200, true],
    [200, false],
  ]);
}, 60_000);

test('a hang rule leaves a call unanswered until the client gives up; other calls are answered', async () => {
  const GIVE_UP_MS = 1500;
  faults.inject({ method: 'GET', path: CONTAINER_JSON, times: 1, action: { kind: 'hang' } });

  const started = performance.now();
  const hung = docker
    .getContainer(idle.id)
    .inspect({ abortSignal: AbortSignal.timeout(GIVE_UP_MS) })
    .then(
      () => ({ answered: true, error: null, at: performance.now() }),
      (error: unknown) => ({ answered: false, error, at: performance.now() }),
    );
  await faults.waitFor((c) => c.status === 'hang', 10_000, 'the hung inspect');

  expect(String(await docker.ping())).toBe('OK');
  const pingAnsweredAt = performance.now();
  const outcome = await hung;

  expect(outcome).toMatchObject({ answered: false, error: { name: 'AbortError' } });
  expect(outcome.at - started).toBeGreaterThanOrEqual(GIVE_UP_MS);
  expect(pingAnsweredAt).toBeLessThan(outcome.at);
  expect(faults.calls.filter((c) => c.path === '/_ping').at(-1)).toMatchObject({
    status: 200,
    injected: false,
  });
}, 60_000);

test('a reset rule drops the connection: the client sees a connection error', async () => {
  const rule = faults.inject({
    method: 'GET',
    path: CONTAINER_JSON,
    times: 1,
    action: { kind: 'reset' },
  });
  const viaProxy = docker.getContainer(idle.id);

  await expect(viaProxy.inspect()).rejects.toMatchObject({ code: 'ECONNRESET' });
  expect(rule.hits).toBe(1);
  expect((await viaProxy.inspect()).State.Running).toBe(true);
  const inspects = faults.calls.filter((c) => c.path === `/containers/${idle.id}/json`);
  expect(inspects.slice(-2).map((c) => [c.status, c.injected])).toEqual([
    ['reset', true],
    [200, false],
  ]);
}, 60_000);

test("the engine's event stream flows through the proxy: a container's die event arrives", async () => {
  const name = `${PREFIX}events`;
  const events = await docker.getEvents({ filters: { type: ['container'], container: [name] } });
  try {
    const died = nextEvent(
      events,
      (e) => e.Action === 'die' && e.Actor?.Attributes?.name === name,
      30_000,
      `the die event of ${name}`,
    );
    const brief = await docker.createContainer({
      name,
      Image: TEST_IMAGE,
      Entrypoint: ['true'],
      Cmd: [],
    });
    await brief.start();

    const event = await died;
    expect(event.Actor?.Attributes?.exitCode).toBe('0');
    expect(faults.calls.find((c) => c.path === '/events')).toMatchObject({
      method: 'GET',
      status: 200,
      injected: false,
    });
  } finally {
    if (events instanceof Readable) events.destroy();
  }
}, 60_000);

test('docker exec (an upgraded connection) carries stdin and stdout through the proxy', async () => {
  const idleName = `${PREFIX}idle`;
  const echoed = await dockerCli(
    ['exec', '-i', idleName, 'sh', '-c', 'read line; echo "got: $line"'],
    'through the proxy\n',
  );
  expect(echoed).toMatchObject({ code: 0, stdout: 'got: through the proxy\n' });
  const start = await faults.waitFor(
    (c) => c.method === 'POST' && /^\/exec\/[^/]+\/start$/.test(c.path),
    10_000,
    'the exec start',
  );
  expect(start).toMatchObject({ status: 101, injected: false });

  // The same start, failed by a rule: the CLI gives up. It names the status of a refused
  // upgrade ("unable to upgrade to tcp, received 500") or the engine's message.
  const rule = faults.inject({
    method: 'POST',
    path: /^\/exec\/[^/]+\/start$/,
    times: 1,
    action: { kind: 'fail', status: 500, message: 'exec refused for this test' },
  });
  const refused = await dockerCli(['exec', idleName, 'true']);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/received 500|exec refused for this test/);
  expect(rule.hits).toBe(1);
  expect(faults.calls.at(-1)).toMatchObject({ status: 500, injected: true });
}, 60_000);
