/**
 * The stack file as users take it: `docker stack deploy -c stack.yaml` on a swarm (the test
 * kit's cluster with no workers: this engine as a one-node swarm) with this checkout and a
 * scratch personas folder. The supervisor's task runs on the manager, on the host's network;
 * it starts the waker with the Swarm driver, which serves the persona's port there and wakes it
 * as a service on its node; `docker stack rm` takes the stack away and leaves the persona asleep.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { PersonaInfo } from '@persona-browser/contracts';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import { step } from '@persona-browser/testkit/steps';
import { startSwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import type { SwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import { KEY, ROOT, call, freePort, makePersonas, until } from '@persona-browser/testkit/waker';

const STACK = `pbstack${process.pid}`;
const FLEET = `stack${process.pid}`;
const SUPERVISOR_SERVICE = `${STACK}_supervisor`;

let cluster: SwarmCluster | null = null;
let env: NodeJS.ProcessEnv;
let ports: { waker: number; supervisor: number; nap: number };
let personasDir: string;
let network: string;
let deployed = false;

/** The docker CLI against the manager, with the stack's variables; rejects with its stderr. */
function docker(args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('docker', args, { cwd: ROOT, env, timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) reject(new Error(`docker ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

const lines = (out: string): string[] => out.split('\n').filter(Boolean);

const theCluster = (): SwarmCluster => {
  if (!cluster) throw new Error('the cluster did not start');
  return cluster;
};

async function personas(): Promise<PersonaInfo[]> {
  const r = await call<{ personas: PersonaInfo[] }>(`http://127.0.0.1:${ports.waker}/api/personas`);
  expect(r.status).toBe(200);
  return r.body.personas;
}

/** What of the stack is left on the manager: its services, networks and containers. */
async function stackLeft(): Promise<string[]> {
  const label = ['--filter', `label=com.docker.stack.namespace=${STACK}`];
  return [
    ...lines(await docker(['service', 'ls', '-q', ...label])).map((id) => `service ${id}`),
    ...lines(await docker(['network', 'ls', '-q', ...label])).map((id) => `network ${id}`),
    ...lines(await docker(['ps', '-aq', ...label])).map((id) => `container ${id}`),
  ];
}

async function removeStack(): Promise<void> {
  if (!deployed) return;
  await docker(['stack', 'rm', STACK]);
  // The supervisor stops the waker, which puts the personas to sleep, within its grace period.
  await until(async () => ((await stackLeft()).length ? null : true), 150_000, 'the stack to go');
  deployed = false;
}

/** Removes an overlay, a few tries: its last endpoint is released shortly after its container. */
async function removeNetwork(name: string): Promise<void> {
  const listed = async (): Promise<boolean> =>
    lines(await docker(['network', 'ls', '-q', '--filter', `name=^${name}$`])).length > 0;
  await until(
    async () =>
      !(await listed()) || (await docker(['network', 'rm', name]).catch(() => '')) ? true : null,
    60_000,
    `network ${name} to go`,
  );
}

beforeAll(async () => {
  const image = await ensurePersonaImage();
  cluster = await startSwarmCluster({ workers: 0 });
  ports = { waker: await freePort(), supervisor: await freePort(), nap: await freePort() };
  ({ personasDir } = makePersonas({ nap: `PORT=${ports.nap}\nMODE=sleepy\nIDLE_TIMEOUT=600\n` }));
  const dataDir = path.join(cluster.dir, 'data');
  fs.mkdirSync(dataDir);
  network = `${cluster.runId}-fleet`;
  env = {
    ...process.env,
    DOCKER_HOST: cluster.manager.dockerHost,
    PERSONA_IMAGE: image,
    PERSONAS_PATH: personasDir,
    FLEET_ID: FLEET,
    SWARM_NETWORK: network,
    SWARM_DATA_DIR: dataDir,
    SERVICE_KEY: KEY,
    WAKER_PORT: String(ports.waker),
    SUPERVISOR_PORT: String(ports.supervisor),
  };
  await docker(['stack', 'deploy', '-c', path.join(ROOT, 'stack.yaml'), STACK]);
  deployed = true;
}, 40 * 60_000);

afterAll(async () => {
  if (!cluster) return;
  const problems: string[] = [];
  const attempt = (body: () => Promise<unknown>): Promise<unknown> =>
    body().catch((err: unknown) => problems.push(String(err)));
  await attempt(removeStack);
  // What the waker made and leaves on purpose: its personas' services (asleep) and the overlay.
  await attempt(async () => {
    const ids = lines(
      await docker(['service', 'ls', '-q', '--filter', `label=persona-browser.fleet=${FLEET}`]),
    );
    if (ids.length) await docker(['service', 'rm', ...ids]);
  });
  await attempt(() => removeNetwork(network));
  await attempt(() => theCluster().teardown());
  // What the supervisor remembered of this run's checkout.
  fs.rmSync(path.join(ROOT, '.supervisor'), { recursive: true, force: true });
  if (problems.length) throw new Error(`clean-up: ${problems.join('\n')}`);
}, 10 * 60_000);

test(
  'the supervisor runs on the manager, on its network, and the waker answers there',
  async () => {
    const manager = theCluster().manager.hostname;
    await step('1 of 2: the stack has one task, running on the manager', async () => {
      const running = await until(async () => {
        const ps = await docker([
          ...['service', 'ps', SUPERVISOR_SERVICE, '--filter', 'desired-state=running'],
          ...['--format', '{{.Node}} {{.CurrentState}}'],
        ]);
        return lines(ps).find((l) => / Running /.test(` ${l} `)) ?? null;
      }, 180_000);
      expect(running.split(' ')[0]).toBe(manager);
      const services = await docker(['stack', 'services', STACK, '--format', '{{.Name}}']);
      expect(lines(services)).toEqual([SUPERVISOR_SERVICE]);
    });
    await step('2 of 2: the waker answers its health route on the host, as its port', async () => {
      // The supervisor prepares the checkout and its image first, then starts the waker.
      const health = await until(
        async () => {
          const r = await call(`http://127.0.0.1:${ports.waker}/api/health`, { key: null });
          return r.status === 200 ? r : null;
        },
        10 * 60_000,
        'the waker',
      );
      expect(health.body).toEqual({ status: 'ok' });
    });
  },
  15 * 60_000,
);

test(
  'the sleepy persona is listed, and its first call with its key wakes it on the node',
  async () => {
    const manager = theCluster().manager.hostname;
    const before = (await personas()).find((p) => p.name === 'nap');
    expect(before).toMatchObject({ port: ports.nap, mode: 'sleepy', state: 'sleeping' });
    const first = await call(`http://127.0.0.1:${ports.nap}/api/v1/system/process-tree`);
    expect(first.status).toBe(200);
    // Awake, the ping is its worker's own answer (asleep, the waker's, with persona_state).
    const ping = await call(`http://127.0.0.1:${ports.nap}/api/v1/system/ping`, { key: null });
    expect(ping.status).toBe(200);
    expect(ping.body).toMatchObject({ status: 'alive', persona: 'nap' });
    expect(ping.body.persona_state).toBeUndefined();
    const after = (await personas()).find((p) => p.name === 'nap');
    expect(after).toMatchObject({ state: 'running', node: manager, error: null });
    // Its own service, on the node that now holds its folder, recorded in its definition.
    const task = await docker([
      ...['service', 'ps', `pb-${FLEET}-nap`, '--filter', 'desired-state=running'],
      ...['--format', '{{.Node}} {{.CurrentState}}'],
    ]);
    expect(lines(task).some((l) => l.startsWith(`${manager} Running`))).toBe(true);
    const definition = fs.readFileSync(path.join(personasDir, 'nap', 'persona.env'), 'utf8');
    expect(definition).toContain(`NODE=${manager}\n`);
  },
  5 * 60_000,
);

test(
  'docker stack rm takes the stack away and leaves the persona asleep',
  async () => {
    await removeStack();
    expect(await stackLeft()).toEqual([]);
    const replicas = await docker([
      ...['service', 'ls', '--filter', `label=persona-browser.fleet=${FLEET}`],
      ...['--format', '{{.Name}} {{.Replicas}}'],
    ]);
    expect(lines(replicas)).toEqual([`pb-${FLEET}-nap 0/0`]);
    const gateway = await docker(['ps', '-aq', '--filter', `name=pb-${FLEET}-gateway`]);
    expect(gateway.trim()).toBe('');
  },
  5 * 60_000,
);
