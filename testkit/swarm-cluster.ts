/**
 * A real Docker Swarm of several nodes on one machine, for the tests of the fleet across
 * servers. This machine's dockerd is the manager; each worker is another dockerd in a network
 * namespace of its own (and a UTS namespace, so that every node has its own hostname), joined
 * over a bridge made for the run. Every name the cluster makes holds the run's id, and
 * teardown() removes all of it, also after a failure. Needs root (namespaces, veth, iptables).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { listed, runCommand } from './command';
import { freeBlock, rangesInUse } from './free-addresses';
import { holdClusterLock } from './cluster-lock';
import { keepImages, savedImage, takeKeptImages } from './swarm-images';
import type { ClusterLock } from './cluster-lock';
import { descendantsOf, killQuietly, pidsMatching } from './procs';
import {
  RUN_LABEL,
  clearLeftoverCluster,
  removeGatewayBridge,
  swarmRunId,
} from './swarm-leftovers';

export interface SwarmNode {
  /** The node's hostname, as `node.hostname==…` placement constraints name it. */
  hostname: string;
  role: 'manager' | 'worker';
  /** The Swarm node id. */
  id: string;
  /** The node's address on the run's bridge (its Swarm advertise address). */
  address: string;
  /** `DOCKER_HOST` of the node's engine. */
  dockerHost: string;
  /** The network namespace a worker's engine runs in; null for the manager (the host's). */
  netns: string | null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const MANAGER_HOST = process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
/** The runs of this process's clusters not torn down yet. */
const LIVE = new Set<string>();

/** Runs a command with a hard timeout; resolves with stdout, rejects with stderr. */
const run = (cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000) =>
  runCommand(cmd, args, { env, timeoutMs });

interface WorkerEngine {
  node: SwarmNode;
  /** The host's end of the veth pair (the other end is in the node's namespace). */
  hostVeth: string;
  dir: string;
  child: ChildProcess | null;
  exited: Promise<void>;
  /** Whether the engine had to be killed (its data may be half written). */
  killed: boolean;
}

function swarmNode(hostname: string, address: string, host: string, ns: string | null): SwarmNode {
  const role = ns ? 'worker' : 'manager';
  return { hostname, role, id: '', address, dockerHost: host, netns: ns };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** A running cluster, as a test holds it. */
export class SwarmCluster {
  readonly manager: SwarmNode;
  readonly workers: SwarmNode[] = [];
  /** The manager first. */
  readonly nodes: SwarmNode[];
  /** The bridge's /24, e.g. `172.16.42.0/24`. */
  readonly subnet: string;
  /** In every name the run makes: interfaces, namespaces, hostnames, overlays. */
  readonly runId = `sw${crypto.randomBytes(3).toString('hex')}`;
  /** Where the worker engines keep their data, sockets and logs (a short path: containerd's
   * socket under it must stay under 108 bytes). */
  readonly dir = fs.mkdtempSync(`/tmp/${this.runId}-`);
  readonly bridge = `${this.runId}br`;
  private readonly engines: WorkerEngine[] = [];
  private readonly overlays: string[] = [];
  /** The ids of the images loadImage put on the workers (what a kept store keeps). */
  private readonly loaded = new Set<string>();
  /** Docker sets FORWARD's policy to drop: traffic between the namespaces needs this rule. */
  private readonly forwardRule = ['FORWARD', '-i', this.bridge, '-o', this.bridge, '-j', 'ACCEPT'];
  private ownsSwarm = false;
  /** Holds the machine's cluster lock (see holdClusterLock) until teardown. */
  lock: ClusterLock | null = null;
  private ruleAdded = false;
  private tornDown: Promise<void> | null = null;

  constructor(
    private readonly prefix: string,
    private readonly hadGwBridge: boolean,
    hostname: string,
    /** Where Swarm takes overlay subnets from. */
    private readonly addrPool: string,
    /** Whether the worker engines keep their images for the next cluster (see KEPT_STORE). */
    private readonly keepImages = false,
  ) {
    this.subnet = `${prefix}.0/24`;
    this.manager = swarmNode(hostname, `${prefix}.1`, MANAGER_HOST, null);
    this.nodes = [this.manager];
  }

  /** The `docker` CLI against one node's engine; rejects with its stderr. */
  docker(node: SwarmNode, args: string[], timeoutMs?: number): Promise<string> {
    return run('docker', args, { DOCKER_HOST: node.dockerHost }, timeoutMs);
  }

  /** The pid of a worker's dockerd while it runs, else null (always null for the manager). */
  enginePid(node: SwarmNode): number | null {
    const e = this.engines.find((w) => w.node === node);
    return e && running(e) ? (e.child?.pid ?? null) : null;
  }

  /** The bridge, one namespace and veth pair per worker, their engines, the swarm. */
  async start(workers: number): Promise<void> {
    await run('ip', ['link', 'add', this.bridge, 'type', 'bridge']);
    await run('ip', ['addr', 'add', `${this.manager.address}/24`, 'dev', this.bridge]);
    await run('ip', ['link', 'set', this.bridge, 'up']);
    await run('iptables', ['-I', ...this.forwardRule]);
    this.ruleAdded = true;
    for (let i = 1; i <= workers; i++) await this.addWorker(i);
    await Promise.all(this.workers.map((node) => this.startEngine(node)));
    const m = this.manager;
    // A 1 s heartbeat (Swarm's default is 5 s): a node whose engine stops is Down in seconds.
    const init = ['swarm', 'init', '--advertise-addr', m.address];
    init.push('--listen-addr', `${m.address}:2377`, '--dispatcher-heartbeat', '1s');
    init.push('--default-addr-pool', this.addrPool, '--default-addr-pool-mask-length', '24');
    await this.docker(m, init).finally(async () => {
      // Ours only when it advertises the run's address (another may have made one meanwhile).
      const addr = await this.docker(m, ['info', '--format', '{{.Swarm.NodeAddr}}']);
      this.ownsSwarm = addr.trim() === m.address;
    });
    // The label marks the swarm as this test kit's: a cluster whose process dies before its
    // teardown is cleared by the next one (swarm-leftovers.ts), any other swarm refused.
    const self = (await this.docker(m, ['info', '--format', '{{.Swarm.NodeID}}'])).trim();
    await this.docker(m, ['node', 'update', '--label-add', `${RUN_LABEL}=${this.runId}`, self]);
    const token = (await this.docker(m, ['swarm', 'join-token', '-q', 'worker'])).trim();
    for (const node of this.workers) {
      const join = ['swarm', 'join', '--token', token, '--advertise-addr', node.address];
      await this.docker(node, [...join, `${m.address}:2377`]);
    }
    for (const node of this.nodes) {
      node.id = (await this.docker(node, ['info', '--format', '{{.Swarm.NodeID}}'])).trim();
      await this.waitNodeStatus(node, 'Ready', 30_000);
    }
  }

  private async addWorker(i: number): Promise<void> {
    const ns = `${this.runId}-w${i}`;
    const dir = path.join(this.dir, `w${i}`);
    const node = swarmNode(ns, `${this.prefix}.${i + 1}`, `unix://${dir}/docker.sock`, ns);
    const hostVeth = `${this.runId}v${i}`;
    const peer = `${this.runId}p${i}`;
    this.engines.push({
      node,
      hostVeth,
      dir,
      child: null,
      exited: Promise.resolve(),
      killed: false,
    });
    this.workers.push(node);
    this.nodes.push(node);
    fs.mkdirSync(dir);
    if (this.keepImages) takeKeptImages(i, path.join(dir, 'data'));
    await run('ip', ['netns', 'add', ns]);
    await run('ip', ['link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', peer]);
    await run('ip', ['link', 'set', peer, 'netns', ns]);
    await run('ip', ['link', 'set', hostVeth, 'master', this.bridge, 'up']);
    await run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    await run('ip', ['-n', ns, 'addr', 'add', `${node.address}/24`, 'dev', peer]);
    await run('ip', ['-n', ns, 'link', 'set', peer, 'up']);
  }

  private engineOf(node: SwarmNode): WorkerEngine {
    const e = this.engines.find((w) => w.node === node);
    if (!e) throw new Error(`${node.hostname} is the manager: this machine's own engine`);
    return e;
  }

  /** Starts a worker's engine (again: on the same data, and it rejoins the swarm by itself). */
  async startEngine(node: SwarmNode): Promise<void> {
    const e = this.engineOf(node);
    if (running(e)) return;
    const logFile = path.join(e.dir, 'dockerd.log');
    const log = fs.openSync(logFile, 'a');
    const tail = (): string => fs.readFileSync(logFile, 'utf8').slice(-3000);
    const dockerd = [
      ...['--data-root', path.join(e.dir, 'data'), '--exec-root', path.join(e.dir, 'x')],
      ...['--pidfile', path.join(e.dir, 'dockerd.pid'), '-H', node.dockerHost],
      ...['--bridge=none', '--iptables=false'],
    ];
    // nsenter, not `ip netns exec`: that remounts /sys, and dockerd then finds no cgroups. A
    // UTS namespace gives the node its own hostname. Each step execs the next: the child's pid
    // is dockerd's.
    const shell = ['sh', '-c', 'hostname "$0" && exec dockerd "$@"', node.hostname, ...dockerd];
    const nsenter = [`--net=/var/run/netns/${node.netns ?? ''}`, 'unshare', '--uts', ...shell];
    const child = spawn('nsenter', nsenter, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    child.unref();
    e.child = child;
    e.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (!running(e)) throw new Error(`dockerd of ${node.hostname} exited:\n${tail()}`);
      const id = await this.docker(node, ['info', '--format', '{{.ID}}'], 5_000).catch(() => '');
      if (id.trim()) return;
      if (Date.now() > deadline) throw new Error(`dockerd of ${node.hostname} never answered`);
      await sleep(250);
    }
  }

  /** Stops a worker's engine as a machine shutting down does: its containers stop with it. */
  async stopEngine(node: SwarmNode): Promise<void> {
    const e = this.engineOf(node);
    if (running(e) && e.child) {
      // dockerd stops its containers first, each within its own stop timeout.
      e.child.kill('SIGTERM');
      // Held (ref) while it stops, so this process waits for it; the grace timer does not.
      e.child.ref();
      const grace = new Promise<false>((r) => setTimeout(r, 45_000, false).unref());
      const stopped = await Promise.race([e.exited.then(() => true), grace]);
      if (!stopped) {
        e.child.kill('SIGKILL');
        e.killed = true;
        await e.exited;
      }
    }
    // What a killed engine leaves: its containerd, the shims and their containers.
    for (const pid of pidsMatching(e.dir))
      [...descendantsOf(pid), pid].forEach((p) => killQuietly(p));
  }

  /** Polls the manager until the node has this status; resolves with the ms it took. */
  async waitNodeStatus(node: SwarmNode, status: 'Ready' | 'Down', timeoutMs: number) {
    const started = Date.now();
    let seen = 'no answer';
    while (Date.now() - started < timeoutMs) {
      const ls = ['node', 'ls', '--format', '{{.Hostname}} {{.Status}}'];
      seen = await this.docker(this.manager, ls, 10_000)
        .then((out) => listed(out).find((l) => l.startsWith(`${node.hostname} `)) ?? 'not listed')
        .catch(message);
      if (seen === `${node.hostname} ${status}`) return Date.now() - started;
      await sleep(200);
    }
    throw new Error(`${node.hostname} not ${status} after ${timeoutMs} ms: ${seen}`);
  }

  /**
   * Copies an image of this machine's engine onto every running worker engine that does not
   * hold it (by id) yet. The `docker save` archive is made once per image and name on this
   * machine (savedImage): the test files of one run share it.
   */
  async loadImage(image: string): Promise<void> {
    const started = Date.now();
    const want = (
      await this.docker(this.manager, ['image', 'inspect', '-f', '{{.Id}}', image])
    ).trim();
    const live = this.engines.filter(running).map((e) => e.node);
    const holds = async (n: SwarmNode): Promise<boolean> =>
      (
        await this.docker(n, ['image', 'inspect', '-f', '{{.Id}}', image]).catch(() => '')
      ).trim() === want;
    const missing = (
      await Promise.all(live.map(async (n) => ((await holds(n)) ? null : n)))
    ).filter((n): n is SwarmNode => n !== null);
    if (missing.length) {
      const tar = await savedImage(image);
      await Promise.all(missing.map((n) => this.docker(n, ['load', '-q', '-i', tar], 300_000)));
    }
    this.loaded.add(want);
    process.stderr.write(
      `${image} on ${live.length} engines (${missing.length} loaded) in ${Date.now() - started} ms\n`,
    );
  }

  /** Creates an attachable overlay network `<runId>-<name>`; resolves with that name. */
  async createOverlay(name: string): Promise<string> {
    const full = `${this.runId}-${name}`;
    this.overlays.push(full);
    await this.docker(this.manager, ['network', 'create', '-d', 'overlay', '--attachable', full]);
    return full;
  }

  /** Removes everything the run made, even after a failure; calling it again is harmless. */
  teardown(): Promise<void> {
    this.tornDown ??= this.removeAll();
    return this.tornDown;
  }

  /** Each step is tried whatever the ones before did; what failed is reported at the end. */
  private async removeAll(): Promise<void> {
    const problems: string[] = [];
    const attempt = (what: string, body: () => Promise<unknown>): Promise<unknown> =>
      body().catch((err: unknown) => problems.push(`${what}: ${message(err)}`));
    const m = this.manager;
    if (this.ownsSwarm) {
      // The swarm is the run's own: every service in it is the run's.
      await attempt('remove services', async () => {
        const ids = listed(await this.docker(m, ['service', 'ls', '-q']));
        if (ids.length) await this.docker(m, ['service', 'rm', ...ids]);
      });
    }
    await attempt('remove containers', () => this.removeContainers());
    for (const net of this.overlays) {
      await attempt(`remove network ${net}`, () => this.removeNetwork(net));
    }
    const leave = (n: SwarmNode): Promise<unknown> =>
      attempt(`${n.hostname} leaves`, () => this.docker(n, ['swarm', 'leave', '-f']));
    await Promise.all(this.engines.filter(running).map((e) => leave(e.node)));
    if (this.ownsSwarm) {
      await leave(m);
      // Made by the first container on an overlay; a bridge of the host's, so it stays behind.
      if (!this.hadGwBridge) {
        await attempt('remove docker_gwbridge', removeGatewayBridge);
      }
    }
    if (this.keepImages) {
      // Only what loadImage put there is kept: images pulled or built meanwhile go.
      const prune = async (n: SwarmNode): Promise<void> => {
        const ids = listed(await this.docker(n, ['image', 'ls', '-q', '--no-trunc']));
        const other = [...new Set(ids)].filter((id) => !this.loaded.has(id));
        if (other.length) await this.docker(n, ['rmi', '-f', ...other]);
      };
      await Promise.all(
        this.engines
          .filter(running)
          .map((e) => attempt(`prune ${e.node.hostname}`, () => prune(e.node))),
      );
    }
    const stop = (n: SwarmNode): Promise<unknown> =>
      attempt(`stop ${n.hostname}`, () => this.stopEngine(n));
    await Promise.all(this.workers.map(stop));
    for (const ns of this.workers.map((n) => n.netns ?? '')) {
      if (fs.existsSync(`/var/run/netns/${ns}`)) {
        await attempt(`delete namespace ${ns}`, () => run('ip', ['netns', 'delete', ns]));
      }
    }
    // A veth pair goes with its namespace (the kernel may take a moment after the delete); the
    // host's end is removed when it did not go by itself.
    const gone = (link: string): boolean => !fs.existsSync(`/sys/class/net/${link}`);
    for (const link of [...this.engines.map((e) => e.hostVeth), this.bridge]) {
      if (gone(link)) continue;
      await attempt(`delete ${link}`, () =>
        run('ip', ['link', 'delete', link]).catch((err: unknown) => {
          if (!gone(link)) throw err;
        }),
      );
    }
    if (this.ruleAdded) {
      await attempt('remove the FORWARD rule', () => run('iptables', ['-D', ...this.forwardRule]));
    }
    await attempt(`remove ${this.dir}`, async () => {
      // Mounts a killed engine left behind (overlay2 layers, netns bind mounts), deepest first.
      const mounts = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n');
      const under = mounts.map((l) => l.split(' ')[1] ?? '').filter((p) => p.startsWith(this.dir));
      for (const p of under.sort().reverse()) await run('umount', ['-l', p]).catch(() => '');
      // Kept only from a teardown that went cleanly: no problem, no mount left behind.
      if (this.keepImages && !problems.length && !under.length) {
        this.engines.forEach((e, i) => {
          if (!e.killed && !running(e)) keepImages(i + 1, path.join(e.dir, 'data'));
        });
      }
      fs.rmSync(this.dir, { recursive: true, force: true });
    });
    LIVE.delete(this.runId);
    this.lock?.release();
    this.lock = null;
    if (problems.length)
      throw new Error(`swarm teardown left work undone:\n${problems.join('\n')}`);
  }

  /**
   * Swarm's task containers (they go as their services do; forced after a while) and any other
   * container on the run's overlays (the tests' own clients), on every engine still running.
   */
  private async removeContainers(): Promise<void> {
    const nets = this.overlays.flatMap((net) => ['--filter', `network=${net}`]);
    const started = Date.now();
    for (;;) {
      let left = 0;
      for (const node of [this.manager, ...this.engines.filter(running).map((e) => e.node)]) {
        const tasks = ['ps', '-aq', '--filter', 'label=com.docker.swarm.service.id'];
        const ids = new Set(this.ownsSwarm ? listed(await this.docker(node, tasks)) : []);
        const onNets = nets.length ? listed(await this.docker(node, ['ps', '-aq', ...nets])) : [];
        const all = [...new Set([...ids, ...onNets])];
        const force = all.filter((id) => !ids.has(id) || Date.now() - started > 15_000);
        // A removal Swarm has begun meanwhile makes `rm -f` fail: the next round sees the result.
        if (force.length) await this.docker(node, ['rm', '-f', ...force]).catch(() => '');
        left += all.length;
      }
      if (!left) return;
      if (Date.now() - started > 60_000) throw new Error(`${left} containers still there`);
      await sleep(500);
    }
  }

  private async removeNetwork(name: string): Promise<void> {
    const ls = ['network', 'ls', '-q', '--filter', `name=^${name}$`];
    // An overlay's last endpoint is released shortly after its container goes: a few tries.
    for (let i = 0; listed(await this.docker(this.manager, ls)).length; i++) {
      const rm = this.docker(this.manager, ['network', 'rm', name]);
      await (i < 20 ? rm.catch(() => sleep(500)) : rm);
    }
  }
}

const running = (e: WorkerEngine): boolean =>
  e.child !== null && e.child.exitCode === null && e.child.signalCode === null;

/**
 * Starts a cluster: the manager (this machine's engine, which must not be in a swarm yet) and
 * `workers` namespaced engines, all Ready. The bridge takes a free 172.16.x.0/24, and Swarm
 * hands out overlay subnets from a free 10.x.0.0/16: no interface or route of this machine
 * is in either.
 */
export async function startSwarmCluster(
  opts: {
    workers?: number;
    /** Worker engines start with the images the last such cluster loaded (loadImage), and
     * keep theirs for the next: a test file loads only what the one before did not. */
    keepImages?: boolean;
  } = {},
): Promise<SwarmCluster> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      'a Swarm cluster on one machine needs root: network namespaces, veth, iptables',
    );
  }
  const lock = await holdClusterLock();
  let cluster: SwarmCluster;
  try {
    const state = (await run('docker', ['info', '--format', '{{.Swarm.LocalNodeState}}'])).trim();
    if (state !== 'inactive') {
      // Holding the lock, no other process has a cluster: a labeled swarm that is not one of
      // this process's is what a dead run left.
      const left = await swarmRunId();
      if (!left || LIVE.has(left)) {
        throw new Error(
          `this machine's Docker engine is already in a swarm (state "${state}"): ` +
            'refusing to touch it',
        );
      }
      const removed = await clearLeftoverCluster(left);
      process.stderr.write(
        `cleared the test cluster a dead run left (${left}): ${removed.join(', ')}\n`,
      );
    }
    const used = await rangesInUse();
    const prefix = freeBlock(used, (x) => `172.16.${x}.0`, 24).slice(0, -2);
    const pool = `${freeBlock(used, (x) => `10.${x}.0.0`, 16)}/16`;
    const networks = listed(await run('docker', ['network', 'ls', '--format', '{{.Name}}']));
    const hostname = (await run('hostname', [])).trim();
    cluster = new SwarmCluster(
      prefix,
      networks.includes('docker_gwbridge'),
      hostname,
      pool,
      opts.keepImages ?? false,
    );
  } catch (err) {
    lock.release();
    throw err;
  }
  cluster.lock = lock;
  LIVE.add(cluster.runId);
  try {
    await cluster.start(opts.workers ?? 2);
    return cluster;
  } catch (err) {
    await cluster.teardown().catch(() => undefined);
    throw err;
  }
}
