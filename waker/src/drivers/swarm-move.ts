/**
 * Moves a sleeping persona's folder from one Swarm node to another without a shared file
 * system: a receiver task on the target node listens on the overlay and unpacks into a folder
 * of its own (`<persona>.incoming-<id>`), a sender task on the source node streams a tar of the
 * folder to it by the receiver's service name. Both count and hash what passed; only when the
 * two agree does a third task rename the incoming folder into place, never over an existing
 * one. Any failure removes the incoming folder and leaves the source as it was. The source is
 * removed only on request (removeOld), once the persona answers on its new node. Every
 * one-shot service made here is removed again, also after a failure.
 */
import crypto from 'node:crypto';
import type Docker from 'dockerode';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage, isRecord } from '@persona-browser/service-kit';
import type { OneShotSpec, TaskStatus } from '../folder-pipe/one-shot';
import { OneShot, hasEnded, removePipeServices } from '../folder-pipe/one-shot';
import type { PipeCounts, PipeEnv, PipeMode } from '../folder-pipe/protocol';
import { EXIT_EXISTS, countsOf, isFolderName, resultOf } from '../folder-pipe/protocol';
import { nodeDataDir } from './swarm-plan';

export interface MoveRequest {
  persona: string;
  /** Node hostnames, as `node.hostname==…` constraints name them. */
  from: string;
  to: string;
}

export interface CopyReport extends MoveRequest, PipeCounts {
  ms: number;
}

export interface FolderMoverOptions {
  /** The manager's engine. */
  docker: Docker;
  /** The persona image (it holds the folder pipe). */
  image: string;
  /** The fleet's attachable overlay. */
  network: string;
  /** A node's data folder; `{node}` stands for its hostname. */
  dataDir: string;
  fleetId: string;
  logger: Logger;
  /** How long a copy may take in all (default 10 min). */
  timeoutMs?: number;
  /**
   * Why a node cannot run a step now ("node w2 is down"), else null: a step there ends at once
   * with that reason instead of waiting out its deadline for a task that cannot run.
   */
  nodeProblem?: (node: string) => string | null;
}

/** The step a move failed at. */
export type MoveStep =
  'check' | 'receive' | 'send' | 'verify' | 'commit' | 'remove' | 'make' | 'start';

/**
 * A move that did not happen. `reason`: `exists` (the target already has the folder), `busy`
 * (a copy of that persona is under way), `invalid` (a bad request or node), `timeout`, `failed`.
 */
export class MoveError extends Error {
  constructor(
    readonly step: MoveStep,
    readonly node: string,
    readonly reason: 'exists' | 'busy' | 'invalid' | 'timeout' | 'failed',
    detail: string,
  ) {
    super(`${step} on ${node}: ${detail}`);
  }
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** A cleanup or commit step: a rename or a removal. */
const SHORT_STEP_MS = 120_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class FolderMover {
  private readonly inFlight = new Set<string>();

  constructor(private readonly opts: FolderMoverOptions) {}

  /** A node's data folder. */
  dataDirOf(node: string): string {
    return nodeDataDir(this.opts.dataDir, node);
  }

  /** Copies the folder to `to` and checks it arrived whole; the source stays as it was. */
  async copy(req: MoveRequest): Promise<CopyReport> {
    const started = Date.now();
    await this.check(req);
    if (this.inFlight.has(req.persona)) {
      throw new MoveError('check', req.from, 'busy', `${req.persona} is being moved already`);
    }
    this.inFlight.add(req.persona);
    const id = crypto.randomBytes(4).toString('hex');
    const incoming = `${req.persona}.incoming-${id}`;
    const made: OneShot[] = [];
    const start = async (mode: PipeMode, node: string, env: PipeEnv, network?: string) => {
      const shot = await OneShot.start(this.opts.docker, this.spec(id, mode, node, env, network));
      made.push(shot);
      return shot;
    };
    const log = `folder of ${req.persona} from ${req.from} to ${req.to}`;
    this.opts.logger.info(`moving the ${log} (incoming folder ${incoming})`);
    try {
      const counts = await this.stream(req, incoming, start, started + this.timeoutMs);
      const commit = await start('commit', req.to, {
        PIPE_PERSONA: req.persona,
        PIPE_INCOMING: incoming,
      });
      await this.expectDone(commit, 'commit', Date.now() + SHORT_STEP_MS);
      const report = { ...req, ...counts, ms: Date.now() - started };
      this.opts.logger.info(
        `moved the ${log}: ${report.files} files, ${report.bytes} bytes in ${report.ms} ms`,
      );
      return report;
    } catch (err) {
      await Promise.all(made.splice(0).map((s) => this.removeService(s)));
      // A receiver that refused made nothing; else what arrived goes (the receiver may not
      // have lived to remove it).
      const refused = err instanceof MoveError && err.step === 'receive' && err.reason === 'exists';
      if (!refused) await this.cleanUp(id, req.to, incoming, start);
      this.opts.logger.warn(`moving the ${log} failed: ${errorMessage(err)}`);
      throw err;
    } finally {
      await Promise.all(made.map((s) => this.removeService(s)));
      this.inFlight.delete(req.persona);
    }
  }

  /** Removes the folder on `from` (after the persona answers on `to`); says if it was there. */
  async removeOld(req: MoveRequest): Promise<{ existed: boolean }> {
    await this.check(req);
    const id = crypto.randomBytes(4).toString('hex');
    const env = { PIPE_PERSONA: req.persona, PIPE_TARGET: req.persona };
    const shot = await OneShot.start(this.opts.docker, this.spec(id, 'remove', req.from, env));
    try {
      const result = await this.expectDone(shot, 'remove', Date.now() + SHORT_STEP_MS);
      return { existed: result?.existed === true };
    } finally {
      await this.removeService(shot);
    }
  }

  /** Makes a new persona's folder on the node that will hold it (there already: nothing). */
  async make(persona: string, node: string): Promise<void> {
    if (!isFolderName(persona)) {
      throw new MoveError('make', node, 'invalid', `"${persona}" is no persona name`);
    }
    const id = crypto.randomBytes(4).toString('hex');
    const shot = await OneShot.start(
      this.opts.docker,
      this.spec(id, 'make', node, { PIPE_PERSONA: persona }),
    );
    try {
      await this.expectDone(shot, 'make', Date.now() + SHORT_STEP_MS);
    } finally {
      await this.removeService(shot);
    }
  }

  /** Removes one-shot services of this fleet an interrupted waker left behind. */
  removeLeftovers(): Promise<number> {
    return removePipeServices(this.opts.docker, this.opts.fleetId);
  }

  private get timeoutMs(): number {
    return this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  private spec(id: string, mode: PipeMode, node: string, env: PipeEnv, network?: string) {
    // A DNS label of at most 63 characters, as Swarm wants service names.
    const fleet = this.opts.fleetId.replace(/[^a-zA-Z0-9-]/g, '-').slice(0, 40);
    const short = { receive: 'rx', send: 'tx', commit: 'ok', remove: 'rm', make: 'mk' }[mode];
    return {
      name: `pbmv-${fleet}-${id}-${short}`,
      mode,
      node,
      dataDir: this.dataDirOf(node),
      image: this.opts.image,
      fleetId: this.opts.fleetId,
      env,
      network,
    } satisfies OneShotSpec;
  }

  /** A valid request between two different nodes of the swarm that can run tasks. */
  private async check(req: MoveRequest): Promise<void> {
    if (!isFolderName(req.persona)) {
      throw new MoveError('check', req.from, 'invalid', `"${req.persona}" is no persona name`);
    }
    if (req.from === req.to) {
      throw new MoveError('check', req.to, 'invalid', `${req.persona} is on ${req.to} already`);
    }
    const nodes: unknown[] = await this.opts.docker.listNodes();
    for (const name of [req.from, req.to]) {
      const node = nodes.filter(isRecord).find((n) => {
        return isRecord(n.Description) && n.Description.Hostname === name;
      });
      if (!node) throw new MoveError('check', name, 'invalid', 'no such node in the swarm');
      const state = isRecord(node.Status) ? node.Status.State : undefined;
      const availability = isRecord(node.Spec) ? node.Spec.Availability : undefined;
      if (state !== 'ready') {
        throw new MoveError('check', name, 'failed', `the node is ${String(state)}`);
      }
      if (availability !== 'active') {
        const why = `the node's availability is ${String(availability)}: no task can start there`;
        throw new MoveError('check', name, 'invalid', why);
      }
    }
  }

  /** Runs the receiver and the sender; resolves with the counts both ends agree on. */
  private async stream(
    req: MoveRequest,
    incoming: string,
    start: (mode: PipeMode, node: string, env: PipeEnv, net?: string) => Promise<OneShot>,
    deadline: number,
  ): Promise<PipeCounts> {
    const token = crypto.randomBytes(16).toString('hex');
    const wait = String(Math.max(1000, deadline - Date.now()));
    const common = { PIPE_PERSONA: req.persona, PIPE_TOKEN: token, PIPE_WAIT_MS: wait };
    const net = this.opts.network;
    const receiver = await start('receive', req.to, { ...common, PIPE_INCOMING: incoming }, net);
    const sender = await start('send', req.from, { ...common, PIPE_PEER: receiver.spec.name }, net);
    const ends = [
      { shot: receiver, step: 'receive' as const, node: req.to },
      { shot: sender, step: 'send' as const, node: req.from },
    ];
    for (;;) {
      // A node lost under an end: named, rather than the other end's broken connection.
      for (const end of ends) this.checkNode(end.step, end.node);
      const states: TaskStatus[] = await Promise.all(ends.map((e) => e.shot.status()));
      // The first end that failed says why; the other one is stopped by the caller.
      for (const [i, s] of states.entries()) {
        const end = ends[i];
        if (end && hasEnded(s) && s.state !== 'complete') {
          const reason = end.step === 'receive' && s.exitCode === EXIT_EXISTS ? 'exists' : 'failed';
          throw new MoveError(end.step, end.node, reason, await end.shot.failure(s));
        }
      }
      if (states.every((s) => s.state === 'complete')) break;
      if (Date.now() > deadline) {
        const where = states.map((s, i) => `${ends[i]?.step}: ${s.state} ${s.err}`.trim());
        const slow = states.findIndex((s) => s.state !== 'complete');
        const end = ends[slow] ?? ends[0];
        const detail = `not done within ${this.timeoutMs} ms (${where.join('; ')})`;
        throw new MoveError(end?.step ?? 'send', end?.node ?? req.from, 'timeout', detail);
      }
      await sleep(250);
    }
    const sent = countsOf(resultOf((await sender.output()).stdout));
    const got = countsOf(resultOf((await receiver.output()).stdout));
    if (!sent) throw new MoveError('send', req.from, 'failed', 'its task reported no result');
    if (!got) throw new MoveError('receive', req.to, 'failed', 'its task reported no result');
    const keys: Array<keyof PipeCounts> = ['bytes', 'sha256', 'entries', 'files', 'fileBytes'];
    const differ = keys.filter((k) => sent[k] !== got[k]);
    if (differ.length) {
      const what = differ.map((k) => `${k} sent ${sent[k]}, received ${got[k]}`).join('; ');
      throw new MoveError('verify', req.to, 'failed', `the copy is not whole: ${what}`);
    }
    return got;
  }

  /** Throws the step's failure when its node cannot run it now. */
  private checkNode(step: MoveStep, node: string): void {
    const problem = this.opts.nodeProblem?.(node);
    if (problem) throw new MoveError(step, node, 'failed', problem);
  }

  /** A step that must end `complete`; resolves with its result. */
  private async expectDone(shot: OneShot, step: MoveStep, deadline: number) {
    let s = await shot.status();
    while (!hasEnded(s) && Date.now() <= deadline) {
      this.checkNode(step, shot.spec.node);
      await sleep(250);
      s = await shot.status();
    }
    const node = shot.spec.node;
    if (!hasEnded(s)) {
      throw new MoveError(step, node, 'timeout', `task still ${s.state} ${s.err}`.trim());
    }
    if (s.state !== 'complete') {
      const reason = s.exitCode === EXIT_EXISTS ? 'exists' : 'failed';
      throw new MoveError(step, node, reason, await shot.failure(s));
    }
    return resultOf((await shot.output()).stdout);
  }

  /** Removes the incoming folder on the target; a failure here is logged, not thrown. */
  private async cleanUp(
    id: string,
    node: string,
    incoming: string,
    start: (mode: PipeMode, node: string, env: PipeEnv) => Promise<OneShot>,
  ): Promise<void> {
    const problem = this.opts.nodeProblem?.(node);
    if (problem) {
      // A receiver removes what it unpacked when stopped: its node stops it when it is back.
      this.opts.logger.warn(`${incoming} on ${node} is not removed now: ${problem}`);
      return;
    }
    try {
      const env = { PIPE_PERSONA: incoming, PIPE_TARGET: incoming };
      const shot = await start('remove', node, env);
      await this.expectDone(shot, 'remove', Date.now() + SHORT_STEP_MS);
    } catch (err) {
      this.opts.logger.error(
        `could not remove ${incoming} on ${node} (move ${id}): ${errorMessage(err)}`,
      );
    }
  }

  /** Stops and removes a step's service; a failure here is logged, not thrown. */
  private async removeService(shot: OneShot): Promise<void> {
    const started = Date.now();
    try {
      if (this.opts.nodeProblem?.(shot.spec.node)) {
        // Its task cannot be waited for there: the service goes, its node ends the task.
        await this.opts.docker.getService(shot.spec.name).remove();
        return;
      }
      const last = await shot.remove();
      const task = last ? `its task ${last.state}` : 'gone already';
      this.opts.logger.debug(`removed ${shot.spec.name} (${task}) in ${Date.now() - started} ms`);
    } catch (err) {
      this.opts.logger.warn(`could not remove the service ${shot.spec.name}: ${errorMessage(err)}`);
    }
  }
}
