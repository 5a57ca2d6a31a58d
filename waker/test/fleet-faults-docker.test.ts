import net from 'node:net';
import Docker from 'dockerode';
import type { PersonaInfo } from '@persona-browser/contracts';
import { DockerFaults, ENGINE_SOCKET } from '@persona-browser/testkit/docker-faults';
import type { FaultRule } from '@persona-browser/testkit/docker-faults';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import type { Reply, RunningWaker } from '@persona-browser/testkit/waker';
import { call, freePort, until } from '@persona-browser/testkit/waker';
import { startFleet as startKitFleet } from '@persona-browser/testkit/fleet';

/**
 * The docker fleet under an engine that fails: the waker talks to the real engine through the
 * test kit's fault proxy, which fails chosen calls a set number of times. A failed stop leaves
 * a persona that converges once the engine answers again (never stuck, never two containers,
 * never a 500); a waker started while the engine refuses to list containers retries that step,
 * then runs whole, or gives up, stops what it started and exits non-zero.
 */
const engine = new Docker({ socketPath: ENGINE_SOCKET });
const STOP = /^\/containers\/[^/]+\/stop$/;
const LIST = /^\/containers\/json$/;
const PAUSE = /^\/containers\/[^/]+\/pause$/;
const UNPAUSE = /^\/containers\/[^/]+\/unpause$/;
const failing = (method: string, path: RegExp, times: number): FaultRule => ({
  method,
  path,
  times,
  action: { kind: 'fail', status: 500, message: 'injected: the engine is overloaded' },
});

interface Fleet {
  id: string;
  waker: RunningWaker;
  faults: DockerFaults;
  ports: Record<string, number>;
}
const started: Fleet[] = [];

/** The containers of a fleet, as the engine itself lists them (not through the proxy). */
const containersOf = (fleet: string, persona?: string): Promise<Docker.ContainerInfo[]> =>
  engine.listContainers({
    all: true,
    filters: {
      label: [
        `persona-browser.fleet=${fleet}`,
        ...(persona ? [`persona-browser.persona=${persona}`] : []),
      ],
    },
  });

/**
 * A waker of the docker driver whose engine calls go through a fault proxy; `before` arms
 * faults before it starts.
 */
async function startFleet(
  name: string,
  personas: Record<string, string>,
  env: Record<string, string> = {},
  before: (faults: DockerFaults) => void = () => undefined,
): Promise<Fleet> {
  const image = await ensurePersonaImage();
  const faults = await DockerFaults.start();
  before(faults);
  const wakerPort = await freePort();
  const ports: Record<string, number> = { waker: wakerPort };
  const files: Record<string, string> = {};
  for (const [persona, text] of Object.entries(personas)) {
    ports[persona] = await freePort();
    files[persona] = `PORT=${ports[persona]}\n${text}`;
  }
  const id = `faults${name}${process.pid}`;
  const { waker } = await startKitFleet({
    driver: 'docker',
    fleet: id,
    port: wakerPort,
    image,
    personas: files,
    env: { DOCKER_HOST: faults.dockerHost, ...env },
  });
  const fleet = { id, waker, faults, ports };
  started.push(fleet);
  return fleet;
}

afterAll(async () => {
  for (const { id, waker, faults } of started) {
    await waker.stop();
    await faults.close();
    for (const c of await containersOf(id)) {
      await engine.getContainer(c.Id).remove({ force: true });
    }
  }
});

/** Every answer of the waker's API seen by a test: none may be a 500. */
const answers: Array<{ what: string; status: number }> = [];
async function api<T = unknown>(
  fleet: Fleet,
  path: string,
  method: 'GET' | 'POST' = 'GET',
): Promise<Reply<T>> {
  const r = await call<T>(`${fleet.waker.url}${path}`, { method });
  answers.push({ what: `${method} ${path}`, status: r.status });
  return r;
}

const personaOf = async (fleet: Fleet, name: string): Promise<PersonaInfo> => {
  const r = await api<{ personas: PersonaInfo[] }>(fleet, '/api/personas');
  const p = r.body.personas.find((x) => x.name === name);
  if (!p) throw new Error(`no persona ${name} in ${JSON.stringify(r.body)}`);
  return p;
};

describe('a sleep whose stops fail', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet('stop', { sam: 'MODE=sleepy\nIDLE_TIMEOUT=600\n' });
  }, 16 * 60_000);

  test('three failed stops: 503 with Retry-After, then the persona sleeps by itself', async () => {
    const woke = await api<PersonaInfo>(fleet, '/api/personas/sam/wake', 'POST');
    expect({ status: woke.status, state: woke.body.state }).toEqual({
      status: 200,
      state: 'running',
    });
    const [container] = await containersOf(fleet.id, 'sam');
    const rule = fleet.faults.inject(failing('POST', STOP, 3));

    const slept = await api<{ error: string }>(fleet, '/api/personas/sam/sleep', 'POST');
    expect(slept.status).toBe(503);
    expect(Number(slept.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(slept.body.error).toMatch(/could not be stopped.*overloaded/);
    // The list says what failed and when the waker tries again.
    const stuck = await personaOf(fleet, 'sam');
    expect(stuck).toMatchObject({ state: 'crashed', error: expect.stringMatching(/^stop failed/) });
    expect(Date.parse(stuck.retry_at ?? '')).toBeGreaterThan(Date.now() - 1000);
    // The container the failed stop left still runs; the waker stops it on its own.
    expect((await engine.getContainer(container?.Id ?? '').inspect()).State.Running).toBe(true);

    const asleep = await until(
      async () => {
        const p = await personaOf(fleet, 'sam');
        return p.state === 'sleeping' ? p : null;
      },
      60_000,
      'sam asleep after the failed stops',
    );
    expect(asleep).toMatchObject({ error: null, retry_at: null });
    expect(rule.remaining()).toBe(0);
    expect(await containersOf(fleet.id, 'sam')).toEqual([]);
    const stops = fleet.faults.calls.filter((c) => c.method === 'POST' && STOP.test(c.path));
    expect(stops.map((c) => c.injected)).toEqual([true, true, true, false]);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
  });

  test('a wake while the old container cannot be stopped: 503, and never a second container', async () => {
    expect((await api(fleet, '/api/personas/sam/wake', 'POST')).status).toBe(200);
    const [first] = await containersOf(fleet.id, 'sam');
    const rule = fleet.faults.inject(failing('POST', STOP, 1000));
    expect((await api(fleet, '/api/personas/sam/sleep', 'POST')).status).toBe(503);

    // The wake must stop the old container first; while it cannot, it is refused, and says when.
    for (let i = 0; i < 3; i++) {
      const again = await api<{ error: string }>(fleet, '/api/personas/sam/wake', 'POST');
      expect(again.status).toBe(503);
      expect(Number(again.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(again.body.error).toMatch(/could not be stopped/);
      expect((await containersOf(fleet.id, 'sam')).map((c) => c.Id)).toEqual([first?.Id]);
    }
    // A call at the persona's own port is refused the same way, with no second container.
    const direct = await call(`http://127.0.0.1:${fleet.ports.sam}/api/v1/system/process-tree`);
    expect(direct.status).toBe(503);
    expect(direct.headers.get('retry-after')).not.toBeNull();
    expect(await containersOf(fleet.id, 'sam')).toHaveLength(1);

    fleet.faults.clear();
    expect(rule.hits).toBeGreaterThanOrEqual(4);
    const woke = await until(
      async () => {
        const r = await api<PersonaInfo>(fleet, '/api/personas/sam/wake', 'POST');
        return r.status === 200 ? r.body : null;
      },
      60_000,
      'the wake once the engine stops failing',
    );
    expect(woke.state).toBe('running');
    const now = await containersOf(fleet.id, 'sam');
    expect(now).toHaveLength(1);
    expect(now[0]?.Id).not.toBe(first?.Id);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
  });
});

describe('a pause or a resume that fails', () => {
  test('a failed resume answers 503 and the next wake starts afresh; a failed pause stops instead', async () => {
    const fleet = await startFleet(
      'pause',
      { pia: 'MODE=sleepy\nIDLE_TIMEOUT=2\n' },
      {
        WAKER_PAUSE_SECONDS: '600',
      },
    );
    const paused = async (): Promise<Docker.ContainerInspectInfo> => {
      await fleet.waker.waitState('pia', 'sleeping', 60_000);
      const [c] = await containersOf(fleet.id, 'pia');
      return engine.getContainer(c?.Id ?? '').inspect();
    };
    expect((await api(fleet, '/api/personas/pia/wake', 'POST')).status).toBe(200);
    // Idle, it is paused, not stopped: its container stays, frozen.
    const first = await paused();
    expect(first.State.Paused).toBe(true);

    fleet.faults.inject(failing('POST', UNPAUSE, 1));
    const refused = await api<{ error: string }>(fleet, '/api/personas/pia/wake', 'POST');
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/could not be resumed.*overloaded/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Neither paused nor running for sure: the next wake stops it and starts a new one.
    const woke = await until(
      async () => {
        const r = await api<PersonaInfo>(fleet, '/api/personas/pia/wake', 'POST');
        return r.status === 200 ? r.body : null;
      },
      60_000,
      'the wake after the failed resume',
    );
    expect(woke.state).toBe('running');
    const now = await containersOf(fleet.id, 'pia');
    expect(now.map((c) => c.Id)).not.toContain(first.Id);
    expect(now).toHaveLength(1);

    fleet.faults.inject(failing('POST', PAUSE, 1));
    await fleet.waker.waitState('pia', 'sleeping', 60_000);
    await until(
      async () => ((await containersOf(fleet.id, 'pia')).length === 0 ? true : null),
      60_000,
      'the container stopped instead of paused',
    );
    expect(fleet.waker.logs.join('\n')).toMatch(/pause failed: stopping instead/);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
  });
});

describe('a waker started while the engine refuses to list containers', () => {
  test('three failed listings: the step is retried, then the fleet runs whole', async () => {
    const fleet = await startFleet(
      'list',
      { ann: 'MODE=always-on\n', bob: 'MODE=sleepy\nIDLE_TIMEOUT=2\n' },
      {},
      (faults) => faults.inject(failing('GET', LIST, 3)),
    );
    const ann = await fleet.waker.waitState('ann', 'running', 120_000);
    expect(ann.error).toBeNull();
    const retries = fleet.waker.logs.filter((l) => l.includes('start step failed, retrying'));
    expect(retries).toHaveLength(3);
    expect(fleet.waker.logs.join('\n')).not.toMatch(/unhandled rejection|cannot start/);
    // Its idle look runs: a woken sleepy persona goes back to sleep after IDLE_TIMEOUT.
    expect((await api(fleet, '/api/personas/bob/wake', 'POST')).status).toBe(200);
    await fleet.waker.waitState('bob', 'sleeping', 60_000);
    expect(await containersOf(fleet.id, 'bob')).toEqual([]);
  });

  test('a listing that keeps failing: the waker stops what it started and exits 2', async () => {
    const fleet = await startFleet(
      'nolist',
      { cat: 'MODE=always-on\n' },
      { WAKER_START_RETRY_S: '3' },
      (faults) => faults.inject(failing('GET', LIST, 100_000)),
    );
    expect(await fleet.waker.exited).toBe(2);
    const logs = fleet.waker.logs.join('\n');
    expect(logs).toMatch(/start step failed, retrying/);
    expect(logs).toMatch(/cannot start/);
    // Its API and the persona's port are closed, and nothing of it runs.
    for (const port of [fleet.ports.waker, fleet.ports.cat]) {
      const refused = await new Promise<boolean>((resolve) => {
        const socket = net.connect(port ?? 0, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(false);
        });
        socket.once('error', () => resolve(true));
      });
      expect(refused).toBe(true);
    }
    expect(await containersOf(fleet.id)).toEqual([]);
  });
});
