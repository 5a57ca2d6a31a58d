/**
 * What the test kit's Swarm clusters leave behind. Teardown leaves nothing: no service,
 * container, network, namespace, link, rule, process or folder. A cluster whose process is
 * killed before its teardown leaves this engine in the swarm, a worker engine running in its
 * namespace, the bridge, the rule and its folder: the next cluster clears all of it and starts (a
 * CI run once failed every Swarm file on such a leftover). A swarm the test kit did not make is
 * refused and left as it was: the control.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { holdClusterLock } from '@persona-browser/testkit/cluster-lock';
import { runCommand } from '@persona-browser/testkit/command';
import { DEFAULT_BASE_IMAGE, REPO_ROOT } from '@persona-browser/testkit/image';
import { pidsMatching } from '@persona-browser/testkit/procs';
import { startSwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import { until } from '@persona-browser/testkit/waker';
import type { SwarmCluster } from '@persona-browser/testkit/swarm-cluster';
import { RUN_LABEL, tracesOf } from '@persona-browser/testkit/swarm-leftovers';

const BASE = process.env.PERSONA_BASE_IMAGE ?? DEFAULT_BASE_IMAGE;
const networkNames = async (): Promise<string[]> =>
  (await runCommand('docker', ['network', 'ls', '--format', '{{.Name}}'])).split('\n');
const swarmState = async (): Promise<string> =>
  (await runCommand('docker', ['info', '--format', '{{.Swarm.LocalNodeState}}'])).trim();

/** Starts a cluster of one worker in another process; resolves with its run id and folder once
 * it is up, that process killed with SIGKILL (no teardown runs). */
function killedCluster(): Promise<{ runId: string; dir: string }> {
  const kit = path.join(REPO_ROOT, 'testkit', 'dist', 'swarm-cluster.js');
  const script = [
    `require(${JSON.stringify(kit)}).startSwarmCluster({ workers: 1 }).then(`,
    '  (c) => { console.log(JSON.stringify({ runId: c.runId, dir: c.dir })); setInterval(() => {}, 1e6); },',
    '  (err) => { console.error(err); process.exit(1); });',
  ].join('\n');
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the cluster of the process to kill was not up within 120 s'));
    }, 120_000);
    child.stdout.once('data', (chunk: Buffer) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(JSON.parse(chunk.toString()) as { runId: string; dir: string });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the cluster's process exited with ${code} before it was up`));
    });
  });
}

let cluster: SwarmCluster | null = null;

afterEach(async () => {
  const c = cluster;
  cluster = null;
  await c?.teardown();
});

test('a cluster whose process was killed is cleared whole by the next one, which starts', async () => {
  const dead = await killedCluster();
  // The leftover is real: the engine in the dead run's swarm, its worker engine running.
  expect(await swarmState()).toBe('active');
  const label = `{{index .Spec.Labels "${RUN_LABEL}"}}`;
  const node = await runCommand('docker', ['node', 'inspect', 'self', '--format', label]);
  expect(node.trim()).toBe(dead.runId);
  expect(pidsMatching(dead.dir).length).toBeGreaterThan(0);
  expect(await tracesOf(dead.runId)).toEqual(
    expect.arrayContaining([`netns ${dead.runId}-w1`, `link ${dead.runId}br`]),
  );

  cluster = await startSwarmCluster({ workers: 0 });
  expect(await tracesOf(dead.runId)).toEqual([]);
  expect(fs.existsSync(dead.dir)).toBe(false);
  const nodes = await cluster.docker(cluster.manager, ['node', 'ls', '--format', '{{.Hostname}}']);
  expect(nodes.trim()).toBe(cluster.manager.hostname);
}, 300_000);

test('a swarm the test kit did not make is refused, and left as it was', async () => {
  const lock = await holdClusterLock();
  const docker0 = await runCommand('ip', ['-4', '-o', 'addr', 'show', 'docker0']);
  const address = /inet (\d+\.\d+\.\d+\.\d+)/.exec(docker0)?.[1];
  if (!address) throw new Error(`docker0 has no IPv4 address: ${docker0}`);
  const hadGwBridge = (await networkNames()).includes('docker_gwbridge');
  try {
    await runCommand('docker', ['swarm', 'init', '--advertise-addr', address]);
    const id = await runCommand('docker', ['info', '--format', '{{.Swarm.NodeID}}']);
    await expect(startSwarmCluster({ workers: 1 })).rejects.toThrow(/already in a swarm/);
    expect(await swarmState()).toBe('active');
    expect(await runCommand('docker', ['info', '--format', '{{.Swarm.NodeID}}'])).toBe(id);
  } finally {
    await runCommand('docker', ['swarm', 'leave', '-f']).catch(() => '');
    if (!hadGwBridge)
      await runCommand('docker', ['network', 'rm', 'docker_gwbridge']).catch(() => '');
    lock.release();
  }
}, 120_000);

test('teardown leaves no service, container, network, namespace, bridge, veth, rule or engine', async () => {
  const hadGwBridge = (await networkNames()).includes('docker_gwbridge');
  cluster = await startSwarmCluster({ workers: 1 });
  const { runId, dir, manager } = cluster;
  // A service with its task, and a container of the test's own, on the run's overlay.
  const overlay = await cluster.createOverlay('net');
  const sleeper = [BASE, 'sleep', '3600'];
  await cluster.docker(manager, [
    ...['service', 'create', '-d', '--name', `${runId}-svc`, '--network', overlay],
    ...['--constraint', 'node.role==manager', '--no-resolve-image', ...sleeper],
  ]);
  await cluster.docker(manager, [
    'run',
    '-d',
    '--name',
    `${runId}-client`,
    '--network',
    overlay,
    ...sleeper,
  ]);
  const tasks = ['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${runId}-svc`];
  await until(
    async () => (await cluster?.docker(manager, tasks))?.trim() || null,
    60_000,
    "the service's task",
  );
  expect(await tracesOf(runId)).toEqual(
    expect.arrayContaining([
      `container ${runId}-client`,
      `network ${overlay}`,
      `netns ${runId}-w1`,
    ]),
  );

  await cluster.teardown();
  expect(await swarmState()).toBe('inactive');
  expect(await tracesOf(runId)).toEqual([]);
  const networks = await networkNames();
  expect(networks.includes('ingress')).toBe(false);
  expect(networks.includes('docker_gwbridge')).toBe(hadGwBridge);
  expect(pidsMatching(dir)).toEqual([]);
  expect(fs.existsSync(dir)).toBe(false);
  // A second teardown (afterEach's) finds nothing to do and does not fail.
  await expect(cluster.teardown()).resolves.toBeUndefined();
}, 180_000);
