import http from 'node:http';
import path from 'node:path';
import Docker from 'dockerode';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage } from '@persona-browser/service-kit';
import { OverlayGateway, TunnelAgent } from './overlay-tunnel';
import {
  ensureOverlay,
  fleetLoad,
  inspectService,
  managerAddress,
  messageOf,
  putService,
  resolveImage,
  scaleToNone,
  serviceSeccomp,
  tasksOf,
} from './swarm-engine';
import { FolderMover } from './swarm-move';
import { StrayCopies } from './swarm-strays';
import { STOP_TIMEOUT_S, WORKER_PORT, containerEnv } from './worker-container';
import type { ImageRef, PlacedPersona } from './swarm-plan';
import {
  FLEET_LABEL,
  UNLIMITED_PERSONA_MB,
  chooseNode,
  copyCommand,
  imageMissing,
  nodeDataDir,
  overlayAnchor,
  personaService,
  placedPersonas,
  serviceName,
  serviceProblem,
  startFailure,
  startTimeout,
  taskPhase,
} from './swarm-plan';
import type { ServiceInfo, SwarmNodeInfo, TaskInfo } from './swarm-state';
import { exitOf, latestTask, nodeList, readNode, readService } from './swarm-state';
import type {
  ExitInfo,
  FolderMoves,
  NodeStatus,
  FoundInstance,
  InstanceHandle,
  InstanceSpec,
  RuntimeDriver,
} from './types';
import { DriverError } from './types';

export interface SwarmDriverOptions {
  fleetId: string;
  image: string;
  repoRoot: string;
  wakerPort: number;
  logger: Logger;
  /** The attachable overlay the workers and the gateway share (made when missing). */
  network: string;
  /** SWARM_DATA_DIR: the personas' folders on each node, `{node}` standing for its hostname. */
  dataDir: string;
  /** Defaults to the local engine, which must be a manager. */
  docker?: Docker;
  /** How often nodes and tasks are read (exits, nodes going down and coming back). */
  pollMs?: number;
  /**
   * How long a task may take to run (an image pulled on a new node takes a while). Below the
   * persona's own deadline for a start (2 min), so that the driver's reason reaches the wake.
   */
  startTimeoutMs?: number;
}

const START_TIMEOUT_MS = 110_000;

/**
 * How long a node stays marked as not answering after the waker's own connection to a worker
 * there failed: one blip blocks it no longer. See `workerUnreachable`.
 */
const NOT_ANSWERING_HOLD_MS = 10_000;
/** How long a probe of a worker on a node marked as not answering may take. */
const PROBE_TIMEOUT_MS = 2_500;

/** A node the waker could not reach a worker on while Swarm still lists it ready. */
interface NotAnswering {
  error: string;
  since: number;
  probing: boolean;
}

interface LiveEntry {
  handle: InstanceHandle;
  memoryMb: number;
  /** Between the service update and its task running: an older ended task is no exit. */
  starting: boolean;
  stopping: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * One Swarm service per persona, pinned to the node that holds its folder, woken by scaling it
 * to one replica and put to sleep by scaling it to none. The waker on a manager reaches each
 * worker by its service's name on an attachable overlay (dnsrr: no IPVS needed) through the
 * overlay gateway.
 */
export class SwarmDriver implements RuntimeDriver {
  readonly kind = 'swarm';
  readonly canPause = false;
  readonly canAdopt = true;
  private readonly exitListeners: Array<(h: InstanceHandle, info: ExitInfo) => void> = [];
  private readonly nodeListeners: Array<(node: string) => void> = [];
  /** Services this waker runs, by service id. */
  private readonly live = new Map<string, LiveEntry>();
  private known = new Map<string, SwarmNodeInfo>();
  private refreshing: Promise<void> | null = null;
  /** Nodes whose workers the waker could not reach, by hostname (see `workerUnreachable`). */
  private readonly notAnswering = new Map<string, NotAnswering>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly mover: FolderMover;
  private readonly strays: StrayCopies;
  /** Starts under way, by persona: counted on their node when another persona is placed. */
  private readonly starting = new Map<string, PlacedPersona>();
  /** Personas whose claim in `starting` was made by `plan`, their start still to come. */
  private readonly planned = new Set<string>();

  private constructor(
    private readonly opts: SwarmDriverOptions,
    private readonly docker: Docker,
    /** The profile where services take one, else null (see personaService). */
    private readonly seccomp: string | null,
    private readonly gateway: OverlayGateway,
    private readonly wakerUrl: string,
    /** What services run: the image by id or registry digest, so that no node pulls in vain. */
    private readonly image: ImageRef,
  ) {
    this.mover = new FolderMover({
      docker,
      image: image.ref,
      network: opts.network,
      dataDir: opts.dataDir,
      fleetId: opts.fleetId,
      logger: opts.logger,
      nodeProblem: (node) => this.nodeProblem(node),
    });
    this.strays = new StrayCopies(async (persona, node, keptOn) => {
      await this.mover.removeOld({ persona, from: node, to: keptOn });
    }, opts.logger);
  }

  static async create(opts: SwarmDriverOptions): Promise<SwarmDriver> {
    const docker = opts.docker ?? new Docker();
    const manager = await managerAddress(docker);
    const seccomp = await serviceSeccomp(docker, opts.repoRoot, opts.logger);
    await ensureOverlay(docker, opts.network, opts.fleetId);
    const gateway = new OverlayGateway({
      docker,
      image: opts.image,
      name: `pb-${opts.fleetId}-gateway`,
      network: opts.network,
      labels: { [FLEET_LABEL]: opts.fleetId },
    });
    await gateway.start();
    const image = await resolveImage(docker, opts.image);
    opts.logger.info(
      image.how === 'name'
        ? `persona image ${image.name} is not on the manager: each node pulls it`
        : `persona image ${image.name}: services run it as ${image.ref}; a node without a ` +
            `registry needs it copied: ${copyCommand(image.name, '<node>')}`,
    );
    await putService(docker, overlayAnchor(opts.fleetId, image.ref, opts.network, image.name));
    const driver = new SwarmDriver(
      opts,
      docker,
      seccomp,
      gateway,
      `http://${manager}:${opts.wakerPort}`,
      image,
    );
    await driver.refreshNodes();
    // A move this fleet's last waker was running when it ended: its one-shot tasks go (the
    // source folder was never removed before the new copy answered, so nothing is lost).
    const left = await driver.mover.removeLeftovers();
    if (left) opts.logger.warn(`removed ${left} folder-move task(s) a stopped waker left behind`);
    driver.timer = setInterval(() => void driver.watch(), opts.pollMs ?? 1_000);
    return driver;
  }

  // --- nodes ---------------------------------------------------------------------------------

  /** Reads Swarm's node list; a read under way is joined, so a node comes back only once. */
  private refreshNodes(): Promise<void> {
    if (!this.refreshing) {
      this.refreshing = this.readNodes().finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  private async readNodes(): Promise<void> {
    const list = (await this.docker.listNodes()).map(readNode);
    const before = this.known;
    this.known = new Map(list.map((n) => [n.hostname, n]));
    for (const n of list) {
      // Swarm's own word takes over: down, it says so; ready again, the node answers anew.
      if (!n.ready) this.notAnswering.delete(n.hostname);
      const was = before.get(n.hostname);
      if (!was || was.ready || !n.ready) continue;
      for (const l of this.nodeListeners) l(n.hostname);
      void this.strays.removeReady((node) => !this.nodeProblem(node));
    }
  }

  nodeProblem(node: string): string | null {
    const listed = this.swarmProblem(node);
    if (listed) return listed;
    const mark = this.notAnswering.get(node);
    if (!mark) return null;
    if (Date.now() - mark.since >= NOT_ANSWERING_HOLD_MS) {
      this.notAnswering.delete(node);
      return null;
    }
    return (
      `node ${node} is not answering: ${mark.error} ` +
      '(seen by the waker; Swarm still lists it ready)'
    );
  }

  async nodeProblemNow(node: string): Promise<string | null> {
    if (this.swarmProblem(node)) await this.refreshNodes();
    return this.nodeProblem(node);
  }

  /** What Swarm's node list says against the node, the waker's own failed connections aside. */
  private swarmProblem(node: string): string | null {
    const n = this.known.get(node);
    if (!n) return `node ${node} is not part of the swarm`;
    if (!n.ready) return `node ${node} is down (${n.message})`;
    if (!n.active) return `node ${node} is not active (drained or paused)`;
    return null;
  }

  /**
   * The front door's connection to a worker on `node` failed before any answer. Swarm lists a
   * node down only after its heartbeat (12.5 s with its defaults); until then every call there
   * would wait and fail on its own. The node is marked as not answering: `nodeProblem` names
   * it, so calls, wakes, starts and moves there are refused at once. The mark clears, whichever
   * comes first, when
   * - a probe of a worker there answers (any HTTP answer; sent at each look at the nodes),
   * - Swarm reports one of this waker's tasks there ended (the node's engine reported it),
   * - Swarm lists the node down (its own reason takes over, and ready again is a fresh start),
   * - NOT_ANSWERING_HOLD_MS have passed: one blip blocks a node that briefly, and a node still
   *   gone is marked again by the next call that fails there.
   * A failed connection to the gateway itself is the waker's side, never the node's.
   */
  workerUnreachable(node: string, error: NodeJS.ErrnoException): void {
    if (this.closed || this.swarmProblem(node)) return;
    const gateway = this.gatewayHost();
    const at: unknown = Reflect.get(error, 'address');
    if (gateway !== null && at === gateway) return;
    const had = this.notAnswering.get(node);
    if (!had) {
      this.opts.logger.warn('node not answering (seen by the waker)', {
        node,
        error: error.message,
      });
    }
    const message =
      error.code && !error.message.includes(error.code)
        ? `${error.message} (${error.code})`
        : error.message;
    this.notAnswering.set(node, { error: message, since: Date.now(), probing: false });
  }

  private gatewayHost(): string | null {
    try {
      return this.gateway.current().host;
    } catch {
      return null;
    }
  }

  private clearNotAnswering(node: string, why: string): void {
    if (!this.notAnswering.delete(node)) return;
    this.opts.logger.info('node answers again', { node, why });
  }

  /** Probes the workers on each node marked as not answering; one that answers clears it. */
  private probeNotAnswering(): void {
    for (const [node, mark] of this.notAnswering) {
      if (mark.probing) continue;
      const handles = [...this.live.values()]
        .filter((e) => e.handle.node === node && !e.starting && !e.stopping)
        .map((e) => e.handle);
      if (!handles.length) continue;
      mark.probing = true;
      void Promise.all(handles.map((h) => this.answers(h))).then((answered) => {
        mark.probing = false;
        if (answered.some(Boolean) && this.notAnswering.get(node) === mark)
          this.clearNotAnswering(node, 'a worker there answered a probe');
      });
    }
  }

  /** Whether the worker gives any HTTP answer within PROBE_TIMEOUT_MS (a fresh connection). */
  private answers(handle: InstanceHandle): Promise<boolean> {
    const agent = new TunnelAgent(() => this.gateway.current(), this.gateway.token, {
      keepAlive: false,
    });
    return new Promise<boolean>((resolve) => {
      try {
        const req = http.request(
          {
            host: handle.address.host,
            port: handle.address.port,
            path: '/api/v1/system/ping',
            agent,
          },
          (res) => {
            resolve(true);
            res.resume();
            req.destroy();
          },
        );
        req.setTimeout(PROBE_TIMEOUT_MS, () => req.destroy());
        req.on('error', () => resolve(false));
        req.on('close', () => resolve(false));
        req.end();
      } catch {
        resolve(false);
      }
    }).finally(() => agent.destroy());
  }

  nodes(): NodeStatus[] {
    return nodeList([...this.known.values()]);
  }

  onNodeReady(listener: (node: string) => void): void {
    this.nodeListeners.push(listener);
  }

  /**
   * Where a new persona goes: the node with the most memory left for personas, counting those
   * running, starting and crash-looping there (placedPersonas), never the persona itself.
   */
  private async place(persona: string, memoryMb: number): Promise<PlacedPersona> {
    let placed: PlacedPersona[];
    try {
      const { services, tasks } = await fleetLoad(this.docker, this.opts.fleetId);
      // Read after the engine answered: a start placed meanwhile counts (no await from here on).
      placed = placedPersonas(services, tasks, Date.now(), [...this.starting.values()]);
    } catch (err) {
      // The engine's list unread: this waker's own workers and starts are what it knows.
      this.opts.logger.warn("placement reads only this waker's workers", {
        error: messageOf(err),
      });
      placed = [
        ...[...this.live.values()].map((e) => ({
          node: e.handle.node ?? '',
          memoryMb: e.memoryMb,
        })),
        ...this.starting.values(),
      ];
    }
    const others = placed.filter((p) => p.persona !== persona);
    const node = chooseNode([...this.known.values()], others);
    if (!node) throw new DriverError('no node of the swarm is ready to take a persona');
    return this.claim(persona, node, memoryMb);
  }

  /** A start under way on `node`: counted there by placement until it ends. */
  private claim(persona: string, node: string, memoryMb: number): PlacedPersona {
    const claim: PlacedPersona = { node, memoryMb, persona, phase: 'starting' };
    this.starting.set(persona, claim);
    return claim;
  }

  // --- start and stop ------------------------------------------------------------------------

  async plan(spec: InstanceSpec): Promise<string> {
    const memoryMb = spec.memoryLimitMb ?? UNLIMITED_PERSONA_MB;
    const claim = spec.node
      ? this.claim(spec.name, spec.node, memoryMb)
      : await this.place(spec.name, memoryMb);
    this.planned.add(spec.name);
    return claim.node;
  }

  unplan(persona: string): void {
    if (this.planned.delete(persona)) this.starting.delete(persona);
  }

  async start(spec: InstanceSpec): Promise<InstanceHandle> {
    const refused = serviceProblem(this.workerEnv(spec));
    if (refused) {
      this.unplan(spec.name);
      throw new DriverError(refused);
    }
    // Where it was planned to go (and counted since), else placed now.
    const planned = this.planned.delete(spec.name) ? this.starting.get(spec.name) : undefined;
    const memoryMb = spec.memoryLimitMb ?? UNLIMITED_PERSONA_MB;
    const claim =
      planned ??
      (spec.node
        ? this.claim(spec.name, spec.node, memoryMb)
        : await this.place(spec.name, memoryMb));
    const node = claim.node;
    try {
      const problem = await this.nodeProblemNow(node);
      if (problem) throw new DriverError(problem);
      return await this.startOn(spec, node, memoryMb);
    } finally {
      if (this.starting.get(spec.name) === claim) this.starting.delete(spec.name);
    }
  }

  private async startOn(
    spec: InstanceSpec,
    node: string,
    memoryMb: number,
  ): Promise<InstanceHandle> {
    // Its folder there is the one it runs on (NODE set there by hand): never a stray to remove.
    this.strays.forget(spec.name, node);
    const name = serviceName(this.opts.fleetId, spec.name);
    const existing = await this.inspectService(name);
    if (!existing || existing.node !== node) await this.makeFolder(node, spec.name);
    const body = personaService({
      fleetId: this.opts.fleetId,
      persona: spec.name,
      image: this.image.ref,
      imageName: this.image.name,
      env: this.workerEnv(spec),
      node,
      folder: path.posix.join(nodeDataDir(this.opts.dataDir, node), spec.name),
      network: this.opts.network,
      memoryLimitMb: spec.memoryLimitMb,
      cpus: spec.cpus,
      seccomp: this.seccomp,
      replicas: 1,
    });
    let id: string;
    try {
      if (existing) {
        // A new task even when the count is already one (a worker that died in place).
        const template = { ...body.TaskTemplate, ForceUpdate: existing.forceUpdate + 1 };
        await this.docker
          .getService(existing.id)
          .update({ version: existing.version, ...body, TaskTemplate: template });
        id = existing.id;
      } else {
        id = (await this.docker.createService(body)).id;
      }
    } catch (err) {
      throw new DriverError(`cannot run service ${name}: ${messageOf(err)}`);
    }
    const handle: InstanceHandle = {
      id,
      persona: spec.name,
      address: { host: name, port: WORKER_PORT, agent: this.agent() },
      pid: null,
      node,
    };
    const entry: LiveEntry = {
      handle,
      memoryMb,
      starting: true,
      stopping: false,
    };
    this.live.set(id, entry);
    try {
      await this.waitRunning(id, node);
      entry.starting = false;
      return handle;
    } catch (err) {
      await this.stop(handle).catch(() => undefined);
      throw err;
    }
  }

  private agent(): TunnelAgent {
    return new TunnelAgent(() => this.gateway.current(), this.gateway.token);
  }

  /** The worker's environment: the persona's (the fleet's and its persona.env), then the driver's. */
  private workerEnv(spec: InstanceSpec): Record<string, string> {
    return { ...spec.env, ...containerEnv(spec.name, this.wakerUrl) };
  }

  /** Creates the persona's folder on its node (a bind mount's source must exist). */
  private async makeFolder(node: string, persona: string): Promise<void> {
    try {
      await this.mover.make(persona, node);
    } catch (err) {
      const dataDir = nodeDataDir(this.opts.dataDir, node);
      const message = errorMessage(err);
      throw new DriverError(
        /bind source path does not exist/.test(message)
          ? `the data folder ${dataDir} does not exist on node ${node}: create it there ` +
              '(SWARM_DATA_DIR)'
          : (imageMissing(message, node, this.image) ??
              `cannot make the folder of ${persona} on node ${node}: ${message}`),
      );
    }
  }

  private tasksOf(serviceIds: string[]): Promise<TaskInfo[]> {
    return tasksOf(this.docker, serviceIds);
  }

  /** Until the service's newest task runs; a failed task or a node going down ends the wait. */
  private async waitRunning(serviceId: string, node: string): Promise<void> {
    const timeoutMs = this.opts.startTimeoutMs ?? START_TIMEOUT_MS;
    const until = Date.now() + timeoutMs;
    let last: TaskInfo | null = null;
    while (Date.now() < until) {
      if (this.closed) throw new DriverError('the waker is shutting down');
      const tasks = (await this.tasksOf([serviceId])).filter((t) => t.desired === 'running');
      last = latestTask(tasks, serviceId);
      if (last && taskPhase(last.state) === 'running') return;
      if (last && taskPhase(last.state) === 'ended') {
        throw new DriverError(startFailure(last, node, this.image));
      }
      const problem = this.nodeProblem(node);
      if (problem) throw new DriverError(problem);
      await sleep(200);
    }
    throw new DriverError(startTimeout(last, node, Math.round(timeoutMs / 1000), this.image));
  }

  private inspectService(name: string): Promise<ServiceInfo | null> {
    return inspectService(this.docker, name, this.opts.fleetId);
  }

  /** Scales the service to none and waits until its task has ended (or its node is gone). */
  async stop(handle: InstanceHandle): Promise<void> {
    const entry = this.live.get(handle.id);
    if (entry) entry.stopping = true;
    try {
      if (!(await scaleToNone(this.docker, handle.id))) return;
      const until = Date.now() + (STOP_TIMEOUT_S + 15) * 1000;
      while (Date.now() < until) {
        const tasks = await this.tasksOf([handle.id]);
        if (tasks.every((t) => taskPhase(t.state) === 'ended')) return;
        if (handle.node && this.swarmProblem(handle.node)) return;
        await sleep(250);
      }
      throw new DriverError(`service ${handle.address.host} still had a task after its stop`);
    } finally {
      this.live.delete(handle.id);
      handle.address.agent?.destroy();
    }
  }

  // --- moving ----------------------------------------------------------------------------

  readonly moves: FolderMoves = {
    copy: async (persona, from, to) => {
      // A copy an earlier move left there would refuse this one: it goes first.
      await this.strays.removeOn(to, persona);
      const report = await this.mover.copy({ persona, from, to });
      return { entries: report.entries, files: report.files, bytes: report.bytes, ms: report.ms };
    },
    // On a node that is down (or with the kept copy's node down), the removal waits for both.
    remove: async (persona, node, keptOn) => {
      if (this.nodeProblem(node) || this.nodeProblem(keptOn))
        this.strays.add(persona, node, keptOn);
      else await this.mover.removeOld({ persona, from: node, to: keptOn });
    },
  };

  // --- finding, watching ---------------------------------------------------------------------

  async findExisting(): Promise<FoundInstance[]> {
    const raw = await this.docker.listServices({
      filters: { label: [`${FLEET_LABEL}=${this.opts.fleetId}`] },
    });
    // A sleeping persona's service (no replica) is no instance: nothing to adopt or to stop.
    const services = raw
      .map((s) => readService(s, this.opts.fleetId))
      .filter((s): s is ServiceInfo => s !== null && s.replicas > 0);
    const tasks = await this.tasksOf(services.map((s) => s.id));
    const found: FoundInstance[] = [];
    for (const s of services) {
      const running = tasks.some(
        (t) => t.serviceId === s.id && t.state === 'running' && t.desired === 'running',
      );
      const handle: InstanceHandle = {
        id: s.id,
        persona: s.persona,
        address: { host: s.name, port: WORKER_PORT, agent: this.agent() },
        pid: null,
        ...(s.node ? { node: s.node } : {}),
      };
      const usable = s.replicas > 0 && running && !(s.node && this.nodeProblem(s.node));
      if (usable) {
        this.live.set(s.id, {
          handle,
          memoryMb: UNLIMITED_PERSONA_MB,
          starting: false,
          stopping: false,
        });
      }
      found.push({ handle, running: usable, paused: false });
    }
    return found;
  }

  onExit(listener: (h: InstanceHandle, info: ExitInfo) => void): void {
    this.exitListeners.push(listener);
  }

  /** One look at the nodes and at the tasks of the services this waker runs. */
  private async watch(): Promise<void> {
    if (this.closed) return;
    try {
      await this.refreshNodes();
      const watched = [...this.live.values()].filter((e) => !e.starting && !e.stopping);
      this.probeNotAnswering();
      const tasks = await this.tasksOf(watched.map((e) => e.handle.id));
      for (const entry of watched) {
        const { handle } = entry;
        // Swarm's word only: a node the waker merely failed to reach still runs its tasks.
        const listed = handle.node ? this.swarmProblem(handle.node) : null;
        const ended = exitOf(handle.id, listed, tasks);
        if (ended && handle.node && !listed)
          this.clearNotAnswering(handle.node, `its engine reported a task ended (${ended.reason})`);
        if (ended && this.live.get(entry.handle.id) === entry && !entry.stopping) {
          this.live.delete(entry.handle.id);
          for (const l of this.exitListeners) l(entry.handle, ended);
        }
      }
      await this.gateway.check();
    } catch (err) {
      this.opts.logger.warn('swarm watch failed', { error: messageOf(err) });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const e of this.live.values()) e.handle.address.agent?.destroy();
    await this.gateway.stop();
    await this.docker
      .getService(`pb-${this.opts.fleetId}-anchor`)
      .remove()
      .catch(() => undefined);
  }
}
