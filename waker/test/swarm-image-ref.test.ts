/**
 * What the unit tests of imageReference and startFailure take on trust, on a real one-node
 * swarm (this engine, through the test kit's cluster): a service whose image is given by the
 * local image's id runs (Swarm accepts the id and does not try a pull first), and a node that
 * lacks an image given by id rejects the task with "No such image", which the driver's wake
 * error turns into the image's name, the node and README's copy command.
 */
import Docker from 'dockerode';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import { startSwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import type { SwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import { resolveImage, tasksOf } from '../src/drivers/swarm-engine';
import type { ImageRef } from '../src/drivers/swarm-plan';
import { startFailure } from '../src/drivers/swarm-plan';
import type { TaskInfo } from '../src/drivers/swarm-state';
import { latestTask } from '../src/drivers/swarm-state';

let cluster: SwarmCluster | null = null;
let docker: Docker;
const made: string[] = [];
const RUN = `pbimg${process.pid}`;

beforeAll(async () => {
  const image = await ensurePersonaImage();
  cluster = await startSwarmCluster({ workers: 0 });
  // The manager is this machine's engine (DOCKER_HOST or its socket), as dockerode finds it.
  docker = new Docker();
  expect(image).toBeTruthy();
}, 900_000);

afterAll(async () => {
  for (const id of made)
    await docker
      .getService(id)
      .remove()
      .catch(() => undefined);
  await cluster?.teardown();
}, 300_000);

/** A one-replica service idling on `image`, never restarted; resolves with its id. */
async function idle(name: string, image: string): Promise<string> {
  const { id } = await docker.createService({
    Name: `${RUN}-${name}`,
    TaskTemplate: {
      ContainerSpec: { Image: image, Command: ['tini', '--', 'sleep', 'infinity'] },
      RestartPolicy: { Condition: 'none' },
    },
    Mode: { Replicated: { Replicas: 1 } },
  });
  made.push(id);
  return id;
}

/** The service's latest task once it runs or has ended (or after 60 s). */
async function settled(id: string): Promise<TaskInfo | null> {
  const until = Date.now() + 60_000;
  let last: TaskInfo | null = null;
  while (Date.now() < until) {
    last = latestTask(await tasksOf(docker, [id]), id);
    if (last && ['running', 'failed', 'rejected'].includes(last.state)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  return last;
}

test('an image given by its id runs; a missing id is "No such image", told with the copy command', async () => {
  const name = await ensurePersonaImage();
  const ref: ImageRef = await resolveImage(docker, name);
  expect(ref.how).toBe('id');
  expect(ref.ref).toMatch(/^sha256:[0-9a-f]{64}$/);

  const started = Date.now();
  const ok = await settled(await idle('byid', ref.ref));
  expect(ok?.state).toBe('running');
  process.stderr.write(`task of an image given by id running in ${Date.now() - started} ms\n`);

  const missing: ImageRef = {
    name: 'persona-browser:src-000000000000',
    ref: `sha256:${'0'.repeat(64)}`,
    how: 'id',
  };
  const bad = await settled(await idle('missing', missing.ref));
  expect(bad?.state).toBe('rejected');
  expect(bad?.error).toMatch(/no such image/i);
  const node = cluster?.manager.hostname ?? '';
  expect(startFailure(bad ?? { state: '', error: '' }, node, missing)).toContain(
    `image persona-browser:src-000000000000 is missing on node ${node} (`,
  );
  expect(startFailure(bad ?? { state: '', error: '' }, node, missing)).toContain(
    `docker save persona-browser:src-000000000000 | ssh ${node} docker load`,
  );
}, 180_000);
