/**
 * The Swarm driver's pure decisions met on a real swarm without a registry: which image
 * reference spares every task start a pull, what a wake's error says when a node lacks the image
 * or is stuck pulling it, and which personas placement counts on a node (starting and
 * crash-looping ones too, not only running ones).
 */
import type Docker from 'dockerode';
import type { NodeRoom, ServiceLoad, TaskSeen } from '../src/drivers/swarm-plan';
import {
  CRASH_WINDOW_MS,
  IMAGE_LABEL,
  UNLIMITED_PERSONA_MB,
  chooseNode,
  imageMissing,
  imageReference,
  namesRegistry,
  overlayAnchor,
  personaService,
  placedPersonas,
  startFailure,
  startTimeout,
} from '../src/drivers/swarm-plan';
import { fleetLoad, resolveImage } from '../src/drivers/swarm-engine';
import { readServiceLoad } from '../src/drivers/swarm-state';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const ago = (ms: number): string => new Date(NOW - ms).toISOString();
const room = (hostname: string, memoryMb: number): NodeRoom => ({
  hostname,
  memoryMb,
  ready: true,
  active: true,
});
const service = (id: string, node: string, over: Partial<ServiceLoad> = {}): ServiceLoad => ({
  id,
  persona: id,
  node,
  replicas: 1,
  memoryMb: 1000,
  ...over,
});
const task = (serviceId: string, state: string, updated: string): TaskSeen => ({
  serviceId,
  state,
  updated,
});

describe('placement counts personas starting and crash-looping on a node', () => {
  // a has the most memory, but holds one persona starting and one crash-looping; b runs one.
  const nodes = [room('a', 4000), room('b', 3000)];
  const services = [
    service('starting', 'a'),
    service('looping', 'a', { replicas: 0 }),
    service('running', 'b'),
  ];
  const tasks = [
    task('starting', 'preparing', ago(5_000)),
    // Its start failed a minute ago (No such image), the service scaled to none: the waker's
    // back-off tries it again there.
    task('looping', 'running', ago(180_000)),
    task('looping', 'rejected', ago(60_000)),
    task('running', 'running', ago(600_000)),
  ];

  test('each with its phase and memory; only running ones would have sent the next persona to a', () => {
    const placed = placedPersonas(services, tasks, NOW);
    expect(placed).toEqual([
      { node: 'a', memoryMb: 1000, persona: 'starting', phase: 'starting' },
      { node: 'a', memoryMb: 1000, persona: 'looping', phase: 'crash-looping' },
      { node: 'b', memoryMb: 1000, persona: 'running', phase: 'running' },
    ]);
    // a: 4000 - 2000 = 2000 left, b: 3000 - 1000 = 2000 left: the tie goes to a by name...
    expect(chooseNode(nodes, placed)).toBe('a');
    // ...and one more start under way on a tips it to b; counting running ones only, a wins.
    const more = [{ node: 'a', memoryMb: 500, persona: 'new-one' }];
    expect(chooseNode(nodes, placedPersonas(services, tasks, NOW, more))).toBe('b');
    const runningOnly = placed.filter((p) => p.phase === 'running');
    expect(chooseNode(nodes, [...runningOnly, ...more])).toBe('a');
  });

  test('a node crash-looping with several personas is not the emptiest any more', () => {
    const crashing = ['p1', 'p2', 'p3'].map((p) => service(p, 'a', { replicas: 0 }));
    const failed = ['p1', 'p2', 'p3'].map((p) => task(p, 'failed', ago(30_000)));
    expect(chooseNode(nodes, [])).toBe('a');
    expect(chooseNode(nodes, placedPersonas(crashing, failed, NOW))).toBe('b');
  });

  test('a service wanting a replica with no task yet is starting; one whose replica still wants to run after a crash counts', () => {
    expect(placedPersonas([service('fresh', 'a')], [], NOW)).toEqual([
      { node: 'a', memoryMb: 1000, persona: 'fresh', phase: 'starting' },
    ]);
    expect(
      placedPersonas([service('died', 'a')], [task('died', 'failed', ago(1000))], NOW),
    ).toEqual([{ node: 'a', memoryMb: 1000, persona: 'died', phase: 'crash-looping' }]);
  });

  test('asleep, failed long ago, or unpinned: not counted', () => {
    const svc = [
      service('asleep', 'a', { replicas: 0 }),
      service('old', 'a', { replicas: 0 }),
      service('completed', 'a', { replicas: 0 }),
      { ...service('nowhere', 'a'), node: null },
    ];
    const t = [
      task('asleep', 'shutdown', ago(1000)),
      task('old', 'failed', ago(CRASH_WINDOW_MS + 1000)),
      task('completed', 'complete', ago(1000)),
      task('nowhere', 'running', ago(1000)),
    ];
    expect(placedPersonas(svc, t, NOW)).toEqual([]);
    expect(placedPersonas([service('asleep', 'a', { replicas: 0 })], [], NOW)).toEqual([]);
  });

  test("a start under way replaces its persona's service (it may be on its way to another node)", () => {
    const placed = placedPersonas(services, tasks, NOW, [
      { node: 'b', memoryMb: 2048, persona: 'looping' },
    ]);
    expect(placed.filter((p) => p.persona === 'looping')).toEqual([
      { node: 'b', memoryMb: 2048, persona: 'looping', phase: 'starting' },
    ]);
  });

  test('read from the engine: memory limit of the service, else UNLIMITED_PERSONA_MB; tasks by their status', async () => {
    const spec = (persona: string, node: string, memoryLimitMb: number | null, replicas: 0 | 1) =>
      personaService({
        fleetId: 'f1',
        persona,
        image: 'img',
        env: {},
        node,
        folder: `/d/${persona}`,
        network: 'net',
        memoryLimitMb,
        cpus: null,
        seccomp: null,
        replicas,
      });
    const raw = [
      { ID: 's1', Version: { Index: 1 }, Spec: spec('ann', 'a', 1536, 1) },
      { ID: 's2', Version: { Index: 1 }, Spec: spec('ben', 'a', null, 0) },
      { ID: 's3', Version: { Index: 1 }, Spec: overlayAnchor('f1', 'img', 'net') },
    ];
    expect(readServiceLoad(raw[0], 'f1')).toEqual({
      id: 's1',
      persona: 'ann',
      node: 'a',
      replicas: 1,
      memoryMb: 1536,
    });
    expect(readServiceLoad(raw[1], 'f1')?.memoryMb).toBe(UNLIMITED_PERSONA_MB);
    expect(readServiceLoad(raw[2], 'f1')).toBeNull();
    const rawTasks = [
      {
        ServiceID: 's1',
        NodeID: 'n1',
        DesiredState: 'running',
        UpdatedAt: ago(2000),
        Status: { State: 'starting', Message: 'starting' },
      },
      {
        ServiceID: 's2',
        NodeID: 'n1',
        DesiredState: 'shutdown',
        UpdatedAt: ago(20_000),
        Status: { State: 'rejected', Err: 'No such image: sha256:0123' },
      },
    ];
    const asked: unknown[] = [];
    const docker = {
      listServices: (opts: unknown) => {
        asked.push(opts);
        return Promise.resolve(raw);
      },
      listTasks: (opts: unknown) => {
        asked.push(opts);
        return Promise.resolve(rawTasks);
      },
    } as unknown as Docker;
    const load = await fleetLoad(docker, 'f1');
    expect(asked).toEqual([
      { filters: { label: ['persona-browser.fleet=f1'] } },
      { filters: { service: ['s1', 's2'] } },
    ]);
    expect(placedPersonas(load.services, load.tasks, NOW).map((p) => [p.persona, p.phase])).toEqual(
      [
        ['ann', 'starting'],
        ['ben', 'crash-looping'],
      ],
    );
  });
});

describe('the image the services run: no pull where none can succeed', () => {
  const ID = `sha256:${'ab'.repeat(32)}`;
  const DIGEST = `sha256:${'cd'.repeat(32)}`;

  test("a locally built image (the supervisor's src-<hash>) is run by its id: Swarm skips the pull", () => {
    expect(imageReference('persona-browser:src-0123456789ab', { Id: ID, RepoDigests: [] })).toEqual(
      { name: 'persona-browser:src-0123456789ab', ref: ID, how: 'id' },
    );
  });

  test('a pushed image by its registry digest: a node holding it asks no registry, one without pulls exactly it', () => {
    const name = 'registry.lan:5000/persona-browser:0123456789ab';
    const local = { Id: ID, RepoDigests: [`registry.lan:5000/persona-browser@${DIGEST}`] };
    expect(imageReference(name, local)).toEqual({ name, ref: `${name}@${DIGEST}`, how: 'digest' });
    // A digest of another repository does not name this image there.
    const other = { Id: ID, RepoDigests: [`other.lan/persona-browser@${DIGEST}`] };
    expect(imageReference(name, other)).toEqual({ name, ref: name, how: 'name' });
    // Docker Hub's names compare without their docker.io/library prefixes.
    expect(imageReference('redis:7', { Id: ID, RepoDigests: [`redis@${DIGEST}`] }).ref).toBe(
      `redis:7@${DIGEST}`,
    );
  });

  test('not on the manager: the name, which the nodes pull', () => {
    expect(imageReference('persona-browser:latest', null)).toEqual({
      name: 'persona-browser:latest',
      ref: 'persona-browser:latest',
      how: 'name',
    });
    expect(namesRegistry('registry.lan:5000/pb:1')).toBe(true);
    expect(namesRegistry('localhost/pb:1')).toBe(true);
    expect(namesRegistry('persona-browser:src-1')).toBe(false);
    expect(namesRegistry('someone/persona-browser:1')).toBe(false);
  });

  test("read from the manager's engine; a missing image is no error", async () => {
    const docker = (answer: unknown): Docker =>
      ({
        getImage: () => ({
          inspect: () =>
            answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer),
        }),
      }) as unknown as Docker;
    expect(await resolveImage(docker({ Id: ID, RepoDigests: null }), 'pb:src-1')).toEqual({
      name: 'pb:src-1',
      ref: ID,
      how: 'id',
    });
    const missing = Object.assign(new Error('no such image'), { statusCode: 404 });
    expect((await resolveImage(docker(missing), 'pb:src-1')).how).toBe('name');
    const broken = Object.assign(new Error('boom'), { statusCode: 500 });
    await expect(resolveImage(docker(broken), 'pb:src-1')).rejects.toThrow(/cannot read image/);
  });

  test("services carry the reference, and the image's name as a label for people (docker service inspect)", () => {
    const spec = personaService({
      fleetId: 'f1',
      persona: 'ann',
      image: ID,
      imageName: 'persona-browser:src-0123456789ab',
      env: {},
      node: 's2',
      folder: '/d/ann',
      network: 'net',
      memoryLimitMb: null,
      cpus: null,
      seccomp: null,
      replicas: 1,
    });
    const t = spec.TaskTemplate;
    if (!t || !('ContainerSpec' in t)) throw new Error('no container spec');
    expect(t.ContainerSpec?.Image).toBe(ID);
    expect(spec.Labels?.[IMAGE_LABEL]).toBe('persona-browser:src-0123456789ab');
    const anchor = overlayAnchor('f1', ID, 'net', 'persona-browser:src-0123456789ab');
    expect(anchor.Labels?.[IMAGE_LABEL]).toBe('persona-browser:src-0123456789ab');
  });
});

describe("a wake's error when the image is missing on a node or still being pulled", () => {
  const local = {
    name: 'persona-browser:src-0123456789ab',
    ref: 'sha256:ab12',
    how: 'id' as const,
  };
  const tagged = {
    name: 'persona-browser:src-0123456789ab',
    ref: 'persona-browser:src-0123456789ab',
    how: 'name' as const,
  };

  test('"No such image" names the image, the node and the command that copies it there', () => {
    const msg = startFailure(
      { state: 'rejected', error: 'No such image: sha256:ab12' },
      's2',
      local,
    );
    expect(msg).toBe(
      'image persona-browser:src-0123456789ab is missing on node s2 (No such image: sha256:ab12): ' +
        'copy it there (no registry needed): ' +
        'docker save persona-browser:src-0123456789ab | ssh s2 docker load ' +
        '(README, "A fleet across servers")',
    );
    // The folder's one-shot step fails the same way before the service is even made.
    expect(
      imageMissing('make on s3: task rejected: No such image: sha256:ab12', 's3', local),
    ).toMatch(/^image persona-browser:src-0123456789ab is missing on node s3 .*ssh s3 docker load/);
  });

  test('with a registry it says to check the pull, and still how to copy it', () => {
    const pushed = {
      name: 'reg.lan:5000/pb:0123',
      ref: 'reg.lan:5000/pb:0123@sha256:cd',
      how: 'digest' as const,
    };
    const msg = startFailure(
      { state: 'rejected', error: 'No such image: reg.lan:5000/pb:0123@sha256:cd' },
      's3',
      pushed,
    );
    expect(msg).toContain('check that node s3 can pull it from its registry');
    expect(msg).toContain('docker save reg.lan:5000/pb:0123 | ssh s3 docker load');
  });

  test('any other failure is told as before', () => {
    expect(startFailure({ state: 'failed', error: 'task: non-zero exit (1)' }, 's2', local)).toBe(
      'task failed on node s2: task: non-zero exit (1)',
    );
    expect(startFailure({ state: 'rejected', error: '' }, 's2', local)).toBe(
      'task rejected on node s2: no reason',
    );
  });

  test('a wake that times out with its task still preparing a tagged image names the pull', () => {
    const msg = startTimeout({ state: 'preparing', error: 'preparing' }, 's2', 110, tagged);
    expect(msg).toMatch(/^no task running on node s2 after 110 s \(task preparing: preparing\): /);
    expect(msg).toContain(
      'node s2 is most likely still pulling image persona-browser:src-0123456789ab',
    );
    expect(msg).toContain('docker save persona-browser:src-0123456789ab | ssh s2 docker load');
    expect(msg).toContain('PERSONA_REGISTRY');
    // A status that says pull is a pull whatever the reference.
    expect(startTimeout({ state: 'assigned', error: 'pulling image' }, 's2', 110, local)).toContain(
      'still pulling',
    );
  });

  test('no pull to blame: an image given by id, a task waiting for a node, or no task at all', () => {
    expect(startTimeout({ state: 'preparing', error: 'preparing' }, 's2', 110, local)).toBe(
      'no task running on node s2 after 110 s (task preparing: preparing)',
    );
    expect(
      startTimeout(
        { state: 'pending', error: 'no suitable node (scheduling constraints)' },
        's2',
        110,
        tagged,
      ),
    ).toBe(
      'no task running on node s2 after 110 s (task pending: no suitable node (scheduling constraints))',
    );
    expect(startTimeout(null, 's2', 110, tagged)).toBe('no task running on node s2 after 110 s');
  });
});
