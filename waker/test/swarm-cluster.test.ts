/**
 * A real three-node Docker Swarm on this machine (the test kit's swarm cluster): this engine as
 * the manager and two namespaced engines as workers. A service pinned to each node answers over
 * an attachable overlay, by name, with the name of the node that served it; a worker's engine
 * stopped shows as Down while the other nodes still answer, and started again it is Ready and
 * serves again. What teardown leaves (nothing) is swarm-leftovers.test.ts's.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_BASE_IMAGE, HOST_CA_BUNDLE, REPO_ROOT } from '@persona-browser/testkit/image';
import { pidsMatching } from '@persona-browser/testkit/procs';
import { startSwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import type { SwarmCluster, SwarmNode } from '@persona-browser/testkit/swarm-cluster';

const PROBE_IMAGE = 'persona-swarm-probe:test';

let cluster: SwarmCluster;
let overlay: string;
let client: string;
/** One service per node, in the order of cluster.nodes. */
const services: string[] = [];

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 300_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

/**
 * A tiny image on the persona image's base that serves, on port 8080, a page holding
 * `$NODE_NAME` (Swarm fills it with the node's hostname). The host's CA bundle goes in for a
 * mirror behind a TLS-intercepting proxy, as the persona image's build does.
 */
async function buildProbeImage(): Promise<void> {
  let base = process.env.PERSONA_BASE_IMAGE;
  if (!base) {
    await run('bash', [path.join(REPO_ROOT, 'scripts', 'base-image.sh'), DEFAULT_BASE_IMAGE]);
    base = DEFAULT_BASE_IMAGE;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swarm-probe-'));
  try {
    const ca = fs.existsSync(HOST_CA_BUNDLE) ? fs.readFileSync(HOST_CA_BUNDLE) : '';
    fs.writeFileSync(path.join(dir, 'host-ca.crt'), ca);
    const serve = 'mkdir -p /srv && echo "$NODE_NAME" > /srv/index.html';
    fs.writeFileSync(
      path.join(dir, 'Dockerfile'),
      [
        `FROM ${base}`,
        'COPY host-ca.crt /etc/ssl/certs/ca-certificates.crt',
        'RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ' +
          '--no-install-recommends busybox >/dev/null && rm -rf /var/lib/apt/lists/*',
        `CMD ${JSON.stringify(['sh', '-c', `${serve} && exec busybox httpd -f -p 8080 -h /srv`])}`,
      ].join('\n'),
    );
    // Parallel runs build one after the other, not over each other.
    const lock = '/tmp/persona-swarm-probe-build.lock';
    await run('flock', [lock, 'docker', 'build', '-q', '-t', PROBE_IMAGE, dir]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** GET / of a service from the client container on the manager, by the service's name. */
async function fetchVia(service: string): Promise<string> {
  // busybox's own -T timeout crashes in this build: coreutils' timeout bounds the call.
  const wget = ['timeout', '5', 'busybox', 'wget', '-q', '-O-', `http://${service}:8080/`];
  return (await cluster.docker(cluster.manager, ['exec', client, ...wget], 15_000)).trim();
}

/** Polls a service until it answers `expected`; rejects after `timeoutMs` with what it saw. */
async function waitAnswer(service: string, expected: string, timeoutMs: number): Promise<void> {
  const started = Date.now();
  let seen = 'nothing yet';
  while (Date.now() - started < timeoutMs) {
    seen = await fetchVia(service).catch((err: unknown) => String(err));
    if (seen === expected) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${service} did not answer "${expected}" within ${timeoutMs} ms: ${seen}`);
}

const engineDir = (node: SwarmNode): string =>
  path.dirname(node.dockerHost.replace(/^unix:\/\//, ''));

beforeAll(async () => {
  await buildProbeImage();
  cluster = await startSwarmCluster({ workers: 2 });
  await cluster.loadImage(PROBE_IMAGE);
  overlay = await cluster.createOverlay('net');
  const m = cluster.manager;
  for (const [i, node] of cluster.nodes.entries()) {
    const name = `${cluster.runId}-n${i}`;
    services.push(name);
    await cluster.docker(m, [
      ...['service', 'create', '-d', '--name', name, '--endpoint-mode', 'dnsrr'],
      ...['--network', overlay, '--constraint', `node.hostname==${node.hostname}`],
      ...['--env', 'NODE_NAME={{.Node.Hostname}}', '--init', '--no-resolve-image', PROBE_IMAGE],
    ]);
  }
  client = `${cluster.runId}-client`;
  const runClient = ['run', '-d', '--init', '--name', client, '--network', overlay];
  await cluster.docker(m, [...runClient, PROBE_IMAGE, 'sleep', '3600']);
}, 300_000);

afterAll(async () => {
  await cluster?.teardown();
});

test('three nodes are Ready: this engine leads, two namespaced engines with their own hostnames work', async () => {
  const format = '{{.ID}} {{.Hostname}} {{.Status}} {{.ManagerStatus}}';
  const rows = await cluster.docker(cluster.manager, ['node', 'ls', '--format', format]);
  const [w1, w2] = cluster.workers;
  expect(
    rows
      .split('\n')
      .filter(Boolean)
      .map((r) => r.trim())
      .sort(),
  ).toEqual(
    [
      `${cluster.manager.id} ${cluster.manager.hostname} Ready Leader`,
      `${w1?.id} ${w1?.hostname} Ready`,
      `${w2?.id} ${w2?.hostname} Ready`,
    ].sort(),
  );
  expect(new Set(cluster.nodes.map((n) => n.hostname)).size).toBe(3);
  for (const node of cluster.workers) {
    const info = await cluster.docker(node, ['info', '--format', '{{.Name}} {{.Swarm.NodeAddr}}']);
    expect(info.trim()).toBe(`${node.hostname} ${node.address}`);
  }
  // The probe image is on every engine, the same image.
  const ids = await Promise.all(
    cluster.nodes.map((n) => cluster.docker(n, ['image', 'inspect', '-f', '{{.Id}}', PROBE_IMAGE])),
  );
  expect(new Set(ids.map((id) => id.trim())).size).toBe(1);
});

test('a second cluster refuses to start on an engine already in a swarm, and makes nothing', async () => {
  const before = await run('ip', ['netns', 'list']);
  await expect(startSwarmCluster({ workers: 1 })).rejects.toThrow(/already in a swarm/);
  expect(await run('ip', ['netns', 'list'])).toBe(before);
  const nodes = await cluster.docker(cluster.manager, ['node', 'ls', '-q']);
  expect(nodes.split('\n').filter(Boolean)).toHaveLength(3);
});

test('a service pinned to each node answers over the overlay, by name, from that node', async () => {
  for (const [i, node] of cluster.nodes.entries()) {
    const service = services[i] ?? '';
    await waitAnswer(service, node.hostname, 60_000);
    const mode = ['service', 'inspect', '-f', '{{.Spec.EndpointSpec.Mode}}', service];
    expect((await cluster.docker(cluster.manager, mode)).trim()).toBe('dnsrr');
  }
});

test("a worker's engine stopped shows as Down while the others answer; started again it is Ready and serves", async () => {
  const down = cluster.workers[1];
  if (!down) throw new Error('the cluster has no second worker');
  const pid = cluster.enginePid(down);
  expect(pid).toEqual(expect.any(Number));
  await cluster.stopEngine(down);
  expect(cluster.enginePid(down)).toBeNull();
  expect(pidsMatching(engineDir(down))).toEqual([]);
  const downMs = await cluster.waitNodeStatus(down, 'Down', 60_000);
  for (const [i, node] of cluster.nodes.entries()) {
    if (node === down) await expect(fetchVia(services[i] ?? '')).rejects.toThrow();
    else expect(await fetchVia(services[i] ?? '')).toBe(node.hostname);
  }
  await cluster.startEngine(down);
  expect(cluster.enginePid(down)).not.toBe(pid);
  const readyMs = await cluster.waitNodeStatus(down, 'Ready', 60_000);
  const started = Date.now();
  await waitAnswer(services[cluster.nodes.indexOf(down)] ?? '', down.hostname, 90_000);
  console.log(
    `swarm node ${down.hostname}: Down ${downMs} ms after its engine stopped, Ready ` +
      `${readyMs} ms after it started, its service answering ${Date.now() - started} ms later`,
  );
}, 240_000);
