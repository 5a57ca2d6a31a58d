import type http from 'node:http';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage } from '@persona-browser/service-kit';
import type { InstanceHandle, RuntimeDriver } from '../drivers/types';
import { recordNode } from './node-record';
import { WorkerAgent } from '../drivers/worker-agent';

/** The part of a persona's folder that placement reads and records (a `PersonaSpec`). */
export interface PlacedFolder {
  /** Absolute path of the persona folder. */
  dir: string;
  /** NODE: the cluster node that holds the folder, once known. */
  node?: string;
}

/**
 * Where a persona's worker is and how it is reached, beside the persona's lifecycle: the node
 * that holds it in a cluster (recorded in persona.env once the driver has placed it) and the
 * connections to its worker.
 */
export class PersonaPlacement {
  /** Keep-alive connections to the current worker; replaced with each instance. */
  private own: http.Agent = new WorkerAgent();

  constructor(
    private readonly spec: PlacedFolder,
    private readonly driver: RuntimeDriver,
    private readonly log: () => Logger,
  ) {}

  /** The node that holds the persona in a cluster, else null. */
  node(handle: InstanceHandle | null): string | null {
    return handle?.node ?? this.spec.node ?? null;
  }

  /** Why the persona's node cannot serve it now ("node w2 is down"), else null. */
  problem(handle: InstanceHandle | null): string | null {
    const node = this.node(handle);
    return node ? (this.driver.nodeProblem?.(node) ?? null) : null;
  }

  /** The door's connection to the worker failed before any answer: told to the driver. */
  unreachable(handle: InstanceHandle | null, error: NodeJS.ErrnoException): void {
    const node = this.node(handle);
    if (node) this.driver.workerUnreachable?.(node, error);
  }

  /** The driver's agent where its address needs one (a tunnel into an overlay), else ours. */
  agent(handle: InstanceHandle | null): http.Agent {
    return handle?.address.agent ?? this.own;
  }

  /** Connections kept alive to an earlier instance lead nowhere now. */
  renewAgent(): void {
    this.own.destroy();
    this.own = new WorkerAgent();
  }

  close(): void {
    this.own.destroy();
  }

  /** A new instance started: where the driver placed a persona without NODE is recorded. */
  started(handle: InstanceHandle): void {
    const node = handle.node;
    if (!node || node === this.spec.node) return;
    this.spec.node = node;
    try {
      recordNode(this.spec.dir, node);
      this.log().info('persona placed', { node });
    } catch (err) {
      this.log().error('cannot record NODE in persona.env', { node, error: errorMessage(err) });
    }
  }
}
