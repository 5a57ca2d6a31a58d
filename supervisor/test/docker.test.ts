import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import type { SupervisorStatus } from '@persona-browser/contracts';
import { DEFAULT_BASE_IMAGE, dockerCli, ensurePersonaImage } from '@persona-browser/testkit/image';
import {
  ROOT,
  call,
  freePort,
  makeFleetRepo,
  marked,
  startSupervisor,
  workerCommit,
} from '@persona-browser/testkit/fleet-repo';
import type { FleetRepo, RunningSupervisor } from '@persona-browser/testkit/fleet-repo';

/**
 * The supervisor of a fleet of persona containers (the waker's docker driver, the real engine):
 * the persona image is named by what it holds, so the image `docker compose` built for the
 * checkout is taken as is, a commit that changes nothing in it reuses the image, and one that
 * changes the worker builds a new one that the containers then run.
 */
const FLEET = `supd${process.pid}`;
const IMAGE_REPO = `persona-browser-sup${process.pid}`;
/** PERSONA_IMAGE: what compose.yaml tags its build with, and the supervisor is told. */
const COMPOSE_IMAGE = `${IMAGE_REPO}:latest`;
const BASE = process.env.PERSONA_BASE_IMAGE ?? DEFAULT_BASE_IMAGE;
const MAIN = 'worker/src/main.ts';
const original = fs.readFileSync(path.join(ROOT, MAIN), 'utf8');
const docker = new Docker();

let repo: FleetRepo;
let sup: RunningSupervisor;
let personaPort: number;

const fleetContainers = (): Promise<Docker.ContainerInfo[]> =>
  docker.listContainers({ all: true, filters: { label: [`persona-browser.fleet=${FLEET}`] } });

/** The commit the persona's worker answers ping with on its port (null: not the worker's). */
const pingHash = (): Promise<string | null> => workerCommit(personaPort);

/** The image the persona's container runs. */
async function personaImage(): Promise<string> {
  const [c] = (await fleetContainers()).filter((x) => x.State === 'running');
  if (!c) throw new Error('no running persona container');
  return c.Image;
}

const idleOn = (hash: string) => (s: SupervisorStatus) =>
  s.healthy_commit === hash && s.commit?.hash === hash && s.state === 'idle';

/** `docker-compose build` (Debian's 1.29) in the server's checkout, as `docker compose up` does. */
function composeBuild(checkout: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'docker-compose',
      ['-p', `pbsup${process.pid}`, '-f', path.join(checkout, 'compose.yaml'), 'build'],
      {
        cwd: checkout,
        env: { ...process.env, PERSONA_IMAGE: COMPOSE_IMAGE, PERSONA_BASE_IMAGE: BASE },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 15 * 60_000,
      },
      (err, stdout, stderr) =>
        err ? reject(new Error(`docker-compose build: ${stderr || err.message}`)) : resolve(),
    );
  });
}

const imageId = async (name: string): Promise<string> => (await docker.getImage(name).inspect()).Id;

beforeAll(async () => {
  // The image the other container tests build: most of this fleet's first build is its cache.
  await ensurePersonaImage();
  personaPort = await freePort();
  repo = makeFleetRepo({ ann: `PORT=${personaPort}\nMODE=always-on\n` });
  await composeBuild(repo.checkout);
  sup = await startSupervisor(repo, {
    WAKER_DRIVER: 'docker',
    PERSONA_IMAGE: COMPOSE_IMAGE,
    PERSONA_BASE_IMAGE: BASE,
    FLEET_ID: FLEET,
    UPDATE_INTERVAL: '2',
    HEALTH_TIMEOUT: '90',
  });
}, 20 * 60_000);

afterAll(async () => {
  expect(await sup?.stop()).toBe(0);
  expect(await fleetContainers()).toEqual([]);
  repo?.remove();
  // By name, never by id: an image of the same content as the other tests' persona image is
  // that very image, and removing its id would untag theirs and drop its build cache with it.
  const images = await docker.listImages({ filters: { reference: [`${IMAGE_REPO}:*`] } });
  const names = images.flatMap((i) => i.RepoTags ?? []).filter((t) => t.startsWith(IMAGE_REPO));
  for (const name of names) {
    await docker
      .getImage(name)
      .remove()
      .catch(() => undefined);
  }
}, 180_000);

/** The image the fleet runs once it is healthy on the checkout's HEAD. */
async function imageOnHead(): Promise<string> {
  await sup.waitFor('healthy', idleOn(repo.head()), 20 * 60_000);
  return personaImage();
}

test(
  'the fleet comes up on the image docker compose built, named by its content, not built again',
  async () => {
    const head = repo.head();
    const s = await sup.waitFor('healthy', idleOn(head), 20 * 60_000);
    expect(await pingHash()).toBe(head);
    const firstImage = await personaImage();
    expect(firstImage).toMatch(new RegExp(`^${IMAGE_REPO}:src-[0-9a-f]{12}$`));
    // One build: the content-named tag is compose's image itself.
    expect(await imageId(firstImage)).toBe(await imageId(COMPOSE_IMAGE));
    const messages = s.log.map((l) => l.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        `image: ${COMPOSE_IMAGE} (as docker compose built it) holds this content: reused as ${firstImage}, no build`,
      ]),
    );
    expect(messages.filter((m) => m.startsWith('image: built'))).toEqual([]);
  },
  20 * 60_000,
);

test(
  'a commit that changes nothing the image holds (a test file) reuses the image',
  async () => {
    const before = await imageOnHead();
    // Tests stay out of the image (.dockerignore): this commit maps to the same content.
    const next = repo.push('Tests: a note', { 'worker/test/note.txt': 'A note.\n' });
    const s = await sup.waitFor('updated', idleOn(next), 5 * 60_000);
    expect(s.last_update).toMatchObject({ to: next, result: 'ok' });
    expect(s.last_update?.timings.image).toBeUndefined();
    expect(await pingHash()).toBe(next);
    expect(await personaImage()).toBe(before);
  },
  26 * 60_000,
);

test(
  'a commit that changes the worker builds a new image, which the containers run',
  async () => {
    const before = await imageOnHead();
    const next = repo.push('Worker: a comment', { [MAIN]: marked(original, 'in the image') });
    const s = await sup.waitFor('updated', idleOn(next), 15 * 60_000);
    expect(s.last_update?.timings.image).toEqual(expect.any(Number));
    expect(await pingHash()).toBe(next);
    const image = await personaImage();
    expect(image).not.toBe(before);
    expect(image).toMatch(new RegExp(`^${IMAGE_REPO}:src-[0-9a-f]{12}$`));
    // Compose's image holds the old content: it was not taken, a new one was built.
    expect(await imageId(image)).not.toBe(await imageId(COMPOSE_IMAGE));
    expect(s.log.map((l) => l.message)).toEqual(expect.arrayContaining([`image: built ${image}`]));
    // The build recorded the very hash the supervisor named it by.
    const recorded = await dockerCli([
      'run',
      '--rm',
      '--entrypoint',
      'cat',
      image,
      '/app/.build-context',
    ]);
    expect(`${IMAGE_REPO}:src-${recorded.trim().slice(0, 12)}`).toBe(image);
  },
  36 * 60_000,
);

test(
  'the update route of a persona in its container reaches the supervisor',
  async () => {
    await imageOnHead();
    // The worker touches the file in its image; the waker's front door touches the checkout's.
    const r = await call(`http://127.0.0.1:${personaPort}/api/v1/system/update`);
    expect(r.status).toBe(200);
    await sup.waitFor(
      'the trigger seen',
      (s) => s.log.some((l) => l.message.startsWith('update trigger found')),
      30_000,
    );
    expect(fs.existsSync(path.join(repo.checkout, '.update-trigger'))).toBe(false);
  },
  21 * 60_000,
);
