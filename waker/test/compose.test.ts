import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import {
  metricsBodySchema,
  personaListSchema,
  supervisorStatusSchema,
} from '@persona-browser/contracts';
import type { PersonaInfo, SupervisorStatus } from '@persona-browser/contracts';
import { DEFAULT_BASE_IMAGE, ensurePersonaImage } from '@persona-browser/testkit/image';
import { KEY, ROOT, call, freePort, makePersonas, until } from '@persona-browser/testkit/waker';

/**
 * The server path as users take it: `docker-compose up --build` (Debian's 1.29) on compose.yaml
 * of this checkout builds the image and starts the supervisor in a container; it prepares this
 * checkout and runs the waker, which starts one container per persona folder and serves each
 * persona's port on this host; `down` leaves nothing behind.
 */
const PROJECT = `pbcompose${process.pid}`;
const FLEET = `compose${process.pid}`;
const IMAGE = `persona-browser:compose-${process.pid}`;
const docker = new Docker();

let env: NodeJS.ProcessEnv;
let ports: { waker: number; supervisor: number; always: number; sleepy: number };

function compose(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'docker-compose',
      ['-p', PROJECT, '-f', path.join(ROOT, 'compose.yaml'), ...args],
      { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`docker-compose ${args.join(' ')}: ${stderr || err.message}`));
        else resolve(`${stdout}${stderr}`);
      },
    );
  });
}

const fleetContainers = (): Promise<Docker.ContainerInfo[]> =>
  docker.listContainers({ all: true, filters: { label: [`persona-browser.fleet=${FLEET}`] } });

async function personas(): Promise<PersonaInfo[]> {
  const r = await call<{ personas: PersonaInfo[] }>(`http://127.0.0.1:${ports.waker}/api/personas`);
  expect(r.status).toBe(200);
  return r.body.personas;
}

beforeAll(async () => {
  // The same image build the other container tests use: compose's build then hits the cache.
  await ensurePersonaImage();
  ports = {
    waker: await freePort(),
    supervisor: await freePort(),
    always: await freePort(),
    sleepy: await freePort(),
  };
  const { personasDir } = makePersonas({
    ann: `PORT=${ports.always}\nMODE=always-on\n`,
    bob: `PORT=${ports.sleepy}\nMODE=sleepy\nIDLE_TIMEOUT=4\n`,
  });
  env = {
    ...process.env,
    PERSONA_BASE_IMAGE: process.env.PERSONA_BASE_IMAGE ?? DEFAULT_BASE_IMAGE,
    PERSONA_IMAGE: IMAGE,
    PERSONAS_PATH: personasDir,
    FLEET_ID: FLEET,
    SERVICE_KEY: KEY,
    WAKER_PORT: String(ports.waker),
    SUPERVISOR_PORT: String(ports.supervisor),
    METRICS_INTERVAL: '1',
    METRICS_WINDOW: '30',
  };
  await compose(['up', '-d', '--build']);
  // The supervisor checks the build of the checkout and its persona image, then starts the waker.
  await until(
    async () => {
      const r = await call(`http://127.0.0.1:${ports.waker}/api/health`, { key: null });
      return r.status === 200 ? r : null;
    },
    10 * 60_000,
    'the waker',
  );
}, 30 * 60_000);

/** The persona image the supervisor built for this checkout (named by its content). */
let contentImage: string | null = null;

afterAll(async () => {
  if (!env) return;
  const out = await compose(['down', '--timeout', '60']).catch((e: Error) => e.message);
  if (!/Removing/.test(out)) process.stderr.write(`compose down: ${out}\n`);
  for (const c of await fleetContainers()) {
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => undefined);
  }
  for (const image of [IMAGE, contentImage]) {
    if (!image) continue;
    await docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
  }
  // What the supervisor remembered of this run's checkout.
  fs.rmSync(path.join(ROOT, '.supervisor'), { recursive: true, force: true });
}, 120_000);

test('the supervisor runs in the container and reports the checkout healthy', async () => {
  const head = execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const s = await until(async () => {
    const r = await call<SupervisorStatus>(`http://127.0.0.1:${ports.supervisor}/api/supervisor`);
    return r.status === 200 && r.body.healthy_commit === head ? r.body : null;
  }, 180_000);
  expect(supervisorStatusSchema.validate(s).error).toBeUndefined();
  expect(s).toMatchObject({ state: 'idle', commit: { hash: head }, waker: { running: true } });
});

test('the waker runs in a container and lists both personas', async () => {
  const list = await personas();
  expect(personaListSchema.validate({ personas: list }).error).toBeUndefined();
  expect(list.map((p) => [p.name, p.port, p.mode])).toEqual([
    ['ann', ports.always, 'always-on'],
    ['bob', ports.sleepy, 'sleepy'],
  ]);
  // One compose container (the supervisor, running the waker); the personas run apart.
  const services = await docker.listContainers({
    filters: { label: [`com.docker.compose.project=${PROJECT}`] },
  });
  expect(services.map((c) => [c.Labels['com.docker.compose.service'], c.Image])).toEqual([
    ['supervisor', IMAGE],
  ]);
});

test('the always-on persona answers on its host port, in a container of its own', async () => {
  // Until its worker runs, the waker answers the status read itself (initialized: false).
  const status = await until(async () => {
    const r = await call(`http://127.0.0.1:${ports.always}/api/v1/system/status`, { key: null });
    return r.status === 200 && r.body.initialized === true ? r : null;
  }, 120_000);
  expect(status.body).toMatchObject({ initialized: true });
  const ping = await call(`http://127.0.0.1:${ports.always}/api/v1/system/ping`, { key: null });
  expect(ping.body).toMatchObject({ status: 'alive', persona: 'ann' });
  // The waker read the commit of the checkout compose mounted, and handed it to the worker.
  const head = execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
  expect(ping.body.commit?.hash).toBe(head.trim());
  const containers = await fleetContainers();
  const ann = containers.find((c) => c.Labels['persona-browser.persona'] === 'ann');
  // Its image is the one the supervisor named by this checkout's content.
  expect(ann?.Image).toMatch(/^persona-browser:src-[0-9a-f]{12}$/);
  contentImage = ann?.Image ?? null;
});

test('the sleepy persona wakes on its first call with its key and sleeps when idle', async () => {
  expect((await personas()).find((p) => p.name === 'bob')?.state).toBe('sleeping');
  const r = await call(`http://127.0.0.1:${ports.sleepy}/api/v1/system/process-tree`);
  expect(r.status).toBe(200);
  expect((await personas()).find((p) => p.name === 'bob')?.state).toBe('running');
  await until(async () =>
    (await personas()).find((p) => p.name === 'bob')?.state === 'sleeping' ? true : null,
  );
});

test('metrics carry the numbers of the running persona, sampled from the host', async () => {
  const body = await until(async () => {
    const r = await call(`http://127.0.0.1:${ports.waker}/api/metrics`);
    // A sample of ann's whole tree: tini, the worker, its display and the browser.
    const last = r.body?.samples?.at(-1);
    return (last?.instances?.ann?.procs ?? 0) >= 3 ? r.body : null;
  });
  expect(metricsBodySchema.validate(body).error).toBeUndefined();
  const ann = body.samples.at(-1).instances.ann;
  expect(ann.procs).toBeGreaterThanOrEqual(3);
  expect(ann.rss_mb).toBeGreaterThan(50);
  // The worker relays the same body to its own clients.
  const relayed = await call(`http://127.0.0.1:${ports.always}/api/v1/system/metrics`);
  expect(relayed.status).toBe(200);
  expect(relayed.body.window_s).toBe(30);
});

test('down stops the supervisor and the waker and leaves no persona container behind', async () => {
  await compose(['down', '--timeout', '60']);
  expect(await fleetContainers()).toEqual([]);
  expect(
    await docker.listContainers({
      all: true,
      filters: { label: [`com.docker.compose.project=${PROJECT}`] },
    }),
  ).toEqual([]);
});
