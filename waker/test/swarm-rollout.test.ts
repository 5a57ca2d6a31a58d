/**
 * Updates of a fleet across servers: the supervisor as users run it on the manager of a real
 * three-node Swarm (the test kit's cluster), on a checkout with a real upstream, with a real
 * registry (Debian's docker-registry, over HTTPS) on the manager's bridge address. Each commit's
 * image is pushed there under the commit's name and every node pulls it by that name; the update
 * rolls node by node, each node's personas held to the health gate before the next node's turn,
 * and a bad commit stops at the first node and is rolled back, so every node ends on the last
 * good commit.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PersonaList, SupervisorStatus } from '@persona-browser/contracts';
import {
  BREAK,
  ROOT,
  call,
  freePort,
  makeFleetRepo,
  startSupervisor,
  workerCommit,
} from '@persona-browser/testkit/fleet-repo';
import type { FleetRepo, RunningSupervisor } from '@persona-browser/testkit/fleet-repo';
import { DEFAULT_BASE_IMAGE, dockerCli, ensurePersonaImage } from '@persona-browser/testkit/image';
import { startRegistry } from '@persona-browser/testkit/registry';
import type { TestRegistry } from '@persona-browser/testkit/registry';
import { startSwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import type { SwarmCluster, SwarmNode } from '@persona-browser/testkit/swarm-cluster';

const FLEET = `ro${process.pid}`;
/** PERSONA_IMAGE: the supervisor names its builds `<this>:src-<hash>`, pushes `<name>:<commit>`. */
const IMAGE_REPO = `persona-browser-ro${process.pid}`;
const BASE = process.env.PERSONA_BASE_IMAGE ?? DEFAULT_BASE_IMAGE;
/** Long enough for a node's first pull of the whole image and three browsers starting at once. */
const HEALTH_S = 150;
const MAIN = 'worker/src/main.ts';
const original = fs.readFileSync(path.join(ROOT, MAIN), 'utf8');
const PERSONAS = ['ann', 'ben', 'cat'] as const;
type Persona = (typeof PERSONAS)[number];

let cluster: SwarmCluster;
let registry: TestRegistry | null = null;
let repo: FleetRepo | null = null;
let sup: RunningSupervisor | null = null;
let ports: Record<string, number> = {};

const running = (): RunningSupervisor => {
  if (!sup) throw new Error('the supervisor did not start');
  return sup;
};
const fleetRepo = (): FleetRepo => {
  if (!repo) throw new Error('no checkout');
  return repo;
};
const reg = (): TestRegistry => {
  if (!registry) throw new Error('no registry');
  return registry;
};

/** The node each persona is placed on: one persona per node, the manager first. */
const home = (persona: Persona): SwarmNode => {
  const n = cluster.nodes[PERSONAS.indexOf(persona)];
  if (!n) throw new Error(`no node for ${persona}`);
  return n;
};

/** The registry's name of a commit's image, as the nodes pull it. */
const pushedName = (commit: string): string => `${reg().host}/${IMAGE_REPO}:${commit.slice(0, 12)}`;

/** The image the persona's container runs, read from the engine of the node it runs on. */
async function containerImage(persona: Persona): Promise<string> {
  const out = await cluster.docker(home(persona), [
    ...['ps', '--filter', `label=com.docker.swarm.service.name=pb-${FLEET}-${persona}`],
    ...['--format', '{{.Image}}'],
  ]);
  const lines = out.split('\n').filter(Boolean);
  if (lines.length !== 1) throw new Error(`${persona}: ${lines.length} containers running`);
  // Swarm pins the tag to the digest the registry answered: `<name>@sha256:…`.
  return (lines[0] ?? '').replace(/@sha256:[0-9a-f]+$/, '');
}

/** What the waker's list and each persona's own port say about every persona. */
async function fleetView(): Promise<
  Record<string, { node: string | null; commit: string | null; ping: string | null }>
> {
  const s = running();
  const list = await call<PersonaList>(`http://127.0.0.1:${s.wakerPort}/api/personas`);
  const view: Record<string, { node: string | null; commit: string | null; ping: string | null }> =
    {};
  for (const p of list.body.personas) {
    view[p.name] = {
      node: p.node,
      commit: p.commit?.hash ?? null,
      ping: await workerCommit(p.port),
    };
  }
  return view;
}

/** Every persona on its own node, on `commit`, running the registry's image of `commit`. */
async function expectEveryNodeOn(commit: string): Promise<void> {
  const view = await fleetView();
  for (const p of PERSONAS) {
    expect({ persona: p, ...view[p] }).toEqual({
      persona: p,
      node: home(p).hostname,
      commit,
      ping: commit,
    });
    expect({ persona: p, image: await containerImage(p) }).toEqual({
      persona: p,
      image: pushedName(commit),
    });
  }
}

/** The personas in the order their nodes' turns come: by the node's name. */
const rollOrder = (): Persona[] =>
  [...PERSONAS].sort((a, b) => home(a).hostname.localeCompare(home(b).hostname));

/**
 * Watches, until stopped, the image each persona's service is set to run (read from the manager
 * every second): every image each service was given on the way.
 */
function watchSpecs(): { stop(): Promise<Record<Persona, Set<string>>> } {
  const seen: Record<Persona, Set<string>> = { ann: new Set(), ben: new Set(), cat: new Set() };
  let on = true;
  const look = async (p: Persona): Promise<void> => {
    const format = '{{.Spec.TaskTemplate.ContainerSpec.Image}}';
    const image = await cluster
      .docker(cluster.manager, ['service', 'inspect', '--format', format, `pb-${FLEET}-${p}`])
      .catch(() => '');
    if (image.trim()) seen[p].add(image.trim().replace(/@sha256:[0-9a-f]+$/, ''));
  };
  const loop = (async () => {
    while (on) {
      await Promise.all(PERSONAS.map(look));
      await new Promise((r) => setTimeout(r, 1_000));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return seen;
    },
  };
}

/** When the persona's running container was created, on its node's engine (ms since 1970). */
async function containerCreated(persona: Persona): Promise<number> {
  const filter = `label=com.docker.swarm.service.name=pb-${FLEET}-${persona}`;
  const id = (await cluster.docker(home(persona), ['ps', '-q', '--filter', filter])).trim();
  const at = await cluster.docker(home(persona), ['inspect', '--format', '{{.Created}}', id]);
  return Date.parse(at.trim());
}

type Sample = Record<Persona, string | null> & { at: number };

/**
 * Samples, until stopped, the commit each persona's worker answers ping with on its own port
 * (null while it does not answer): the update as a user of each port sees it.
 */
function watchPings(): { stop(): Promise<Sample[]> } {
  const samples: Sample[] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      const [ann, ben, cat] = await Promise.all(PERSONAS.map((p) => workerCommit(ports[p] ?? 0)));
      samples.push({ ann: ann ?? null, ben: ben ?? null, cat: cat ?? null, at: Date.now() });
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return samples;
    },
  };
}

const idleOn = (hash: string) => (s: SupervisorStatus) =>
  s.healthy_commit === hash && s.commit?.hash === hash && s.state === 'idle';

beforeAll(async () => {
  // The image the other container tests build: most of the checkout's first build is its cache.
  await ensurePersonaImage();
  cluster = await startSwarmCluster({ workers: 2 });
  registry = await startRegistry(cluster.manager.address);
  const overlay = await cluster.createOverlay('fleet');
  const dataRoot = path.join(cluster.dir, 'data');
  for (const n of cluster.nodes) fs.mkdirSync(path.join(dataRoot, n.hostname), { recursive: true });
  ports = { ann: await freePort(), ben: await freePort(), cat: await freePort() };
  const definitions: Record<string, string> = {};
  for (const p of PERSONAS) {
    definitions[p] = `PORT=${ports[p]}\nMODE=always-on\nNODE=${home(p).hostname}\n`;
  }
  repo = makeFleetRepo(definitions);
  sup = await startSupervisor(repo, {
    WAKER_DRIVER: 'swarm',
    PERSONA_IMAGE: `${IMAGE_REPO}:latest`,
    PERSONA_BASE_IMAGE: BASE,
    PERSONA_REGISTRY: registry.host,
    FLEET_ID: FLEET,
    UPDATE_INTERVAL: '2',
    HEALTH_TIMEOUT: String(HEALTH_S),
    SWARM_NETWORK: overlay,
    SWARM_DATA_DIR: path.join(dataRoot, '{node}'),
  });
}, 25 * 60_000);

afterAll(async () => {
  const code = await sup?.stop();
  await cluster?.teardown();
  const host = registry?.host;
  await registry?.stop();
  repo?.remove();
  const names = await dockerCli(['images', '--format', '{{.Repository}}:{{.Tag}}']);
  for (const name of names.split('\n')) {
    if (name.includes(IMAGE_REPO)) await dockerCli(['rmi', '-f', name]).catch(() => undefined);
  }
  expect(code).toBe(0);
  // The registry's trust for the engines went with it.
  if (host) expect(fs.existsSync(path.join('/etc/docker/certs.d', host))).toBe(false);
}, 10 * 60_000);

test(
  'the fleet comes up on every node from the image the registry holds for its commit',
  async () => {
    const s = running();
    const head = fleetRepo().head();
    await s.waitFor('healthy on HEAD', idleOn(head), 20 * 60_000);
    expect(await reg().tags(IMAGE_REPO)).toContain(head.slice(0, 12));
    await expectEveryNodeOn(head);
  },
  21 * 60_000,
);

test(
  'a good commit is pushed and rolled out to every node',
  async () => {
    const s = running();
    const before = fleetRepo().head();
    await s.waitFor('healthy on HEAD', idleOn(before), 20 * 60_000);
    // Tests stay out of the image: the content is the same, only the commit is new.
    const pings = watchPings();
    const next = fleetRepo().push('Tests: a note', { 'worker/test/note.txt': 'A note.\n' });
    const after = await s.waitFor('updated', idleOn(next), 10 * 60_000);
    const samples = await pings.stop();
    console.log(`good commit rolled out, step ms: ${JSON.stringify(after.last_update?.timings)}`);
    expect(after.last_update).toMatchObject({ from: before, to: next, result: 'ok' });
    expect(after.last_update?.timings.image).toBeUndefined();
    expect(after.last_update?.timings.push).toEqual(expect.any(Number));
    expect(await reg().tags(IMAGE_REPO)).toEqual(
      expect.arrayContaining([before.slice(0, 12), next.slice(0, 12)]),
    );
    await expectEveryNodeOn(next);
    // Node by node: the last node's worker was started on the new image only after the first
    // node's persona answered on the new commit; each node's turn follows the one before it.
    const order = rollOrder();
    const first = order[0] ?? 'ann';
    const last = order[2] ?? 'cat';
    const firstNew = samples.find((x) => x[first] === next);
    if (!firstNew) throw new Error(`${first} never answered on ${next}`);
    expect(await containerCreated(last)).toBeGreaterThan(firstNew.at);
    const turns = order.map((p) => samples.findIndex((x) => x[p] === next));
    expect([...turns].sort((a, b) => a - b)).toEqual(turns);
  },
  31 * 60_000,
);

test(
  'a commit whose workers fail their health check is rolled back on every node',
  async () => {
    const s = running();
    const good = fleetRepo().head();
    await s.waitFor('healthy on HEAD', idleOn(good), 20 * 60_000);
    const specs = watchSpecs();
    const bad = fleetRepo().push('Worker: exits at start', {
      [MAIN]: BREAK.exitsAtStart(original),
    });
    const after = await s.waitFor(
      'rolled back',
      (x) =>
        x.last_update?.to === bad && x.last_update.result === 'rolled_back' && x.state === 'idle',
      25 * 60_000,
    );
    const given = await specs.stop();
    console.log(`bad commit rolled back, step ms: ${JSON.stringify(after.last_update?.timings)}`);
    // The bad commit's image was built and pushed, and only the first node ran it: its gate
    // failed there, naming it, and the nodes after it never ran the bad commit.
    expect(after.last_update?.timings.image).toEqual(expect.any(Number));
    expect(await reg().tags(IMAGE_REPO)).toContain(bad.slice(0, 12));
    const [first, ...rest] = rollOrder();
    if (!first) throw new Error('no personas');
    expect(after.last_update?.reason).toContain(`${first} on node ${home(first).hostname}`);
    // Its crash loop failed the gate without waiting out the timeout.
    expect(after.last_update?.reason).toMatch(/crashed 3 times/);
    expect(after.last_update?.timings.health).toBeLessThan(HEALTH_S * 1000);
    expect([...given[first]]).toContain(pushedName(bad));
    for (const p of rest) {
      expect(after.last_update?.reason).not.toContain(`on node ${home(p).hostname}`);
      expect({ persona: p, images: [...given[p]] }).toEqual({
        persona: p,
        images: [pushedName(good)],
      });
    }
    expect(after.bad_commits.map((b) => b.hash)).toContain(bad);
    expect(after.healthy_commit).toBe(good);
    expect(fleetRepo().head()).toBe(good);
    await expectEveryNodeOn(good);
  },
  26 * 60_000,
);
