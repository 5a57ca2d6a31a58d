/** Why a start did not get its turn: the queue's wait ran out, or the gate closed. */
export class StartTurnRefused extends Error {
  constructor(
    message: string,
    /** When a new try may find a turn (seconds), for `Retry-After`. */
    readonly retryAfterS: number,
  ) {
    super(message);
  }
}

export interface StartGateOptions {
  /**
   * How many workers may start at once on a node (from the driver's start to the worker
   * answering), where `nodeConcurrency` does not say.
   */
  concurrency: number;
  /** A node's own concurrency (its cores), or null where not known: `concurrency` then. */
  nodeConcurrency?: (node: string) => number | null;
  /** How long a start may wait for its turn before it is refused (ms; 0: never waits). */
  queueMs: number;
  /** Told when a start has to wait, with how many wait before it on its node. */
  onWait?: (persona: string, ahead: number, node: string) => void;
}

interface Waiter {
  persona: string;
  grant: (release: () => void) => void;
  refuse: (err: StartTurnRefused) => void;
  timer: NodeJS.Timeout | null;
}

/** One node's starts: those holding a turn there, and those waiting for one. */
interface Lane {
  holding: number;
  queue: Waiter[];
}

/**
 * Each node's concurrency for the gate's `nodeConcurrency`: none of its own where
 * WAKER_WAKE_CONCURRENCY is set (`set`: it holds for every node), else the node's cores as the
 * cluster reports them (null for this server, '', or a node not known or reporting none).
 */
export function coresOfNodes(
  set: number | null,
  nodes: () => readonly { hostname: string; cpus: number }[],
): (node: string) => number | null {
  return (node) => {
    if (set !== null || node === '') return null;
    const cpus = nodes().find((n) => n.hostname === node)?.cpus ?? 0;
    return cpus >= 1 ? cpus : null;
  };
}

/** A start's hold of a turn, before any was measured (seconds): a worker's usual start. */
const FIRST_GUESS_S = 5;

/**
 * The start gate: at most a node's concurrency of workers start at once on it, so a storm of
 * wakes (a cron across the fleet) starts them a few at a time rather than all together, each
 * getting the CPU and disk it needs to come up. Each node has a lane of its own ('' is this
 * server): a cluster starts on each of its nodes as many as that node allows. Starts beyond
 * that wait their turn, first come first served, at most `queueMs`; one whose turn does not
 * come in time is refused (a StartTurnRefused that says when to try again). A turn is held
 * from the driver's start to the worker answering; a resume of a paused worker takes none.
 */
export class StartGate {
  private readonly lanes = new Map<string, Lane>();
  private closedWith: string | null = null;
  /** Moving average of how long a turn is held (seconds): the Retry-After estimate. */
  private holdS = FIRST_GUESS_S;

  constructor(private readonly opts: StartGateOptions) {
    if (!StartGate.valid(opts.concurrency)) {
      throw new Error(`the start concurrency must be a whole number from 1: ${opts.concurrency}`);
    }
  }

  private static valid(n: number): boolean {
    return Number.isInteger(n) && n >= 1;
  }

  /** The concurrency of this server ('') or of `node`. */
  concurrency(node = ''): number {
    const own = this.opts.nodeConcurrency?.(node) ?? null;
    return own !== null && StartGate.valid(own) ? own : this.opts.concurrency;
  }

  /** Starts holding a turn now, on every node. */
  get running(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.holding;
    return n;
  }

  /** Starts waiting for a turn, on every node. */
  get waiting(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += lane.queue.length;
    return n;
  }

  private lane(node: string): Lane {
    let lane = this.lanes.get(node);
    if (!lane) {
      lane = { holding: 0, queue: [] };
      this.lanes.set(node, lane);
    }
    return lane;
  }

  /**
   * Waits for `persona`'s turn to start a worker on `node` ('' on a single server); resolves with
   * the function that ends it (call it once the worker answers or the start failed; calling it
   * again does nothing). Rejects with StartTurnRefused when no turn came within the queue's
   * wait, or the gate closed.
   */
  turn(persona: string, node = ''): Promise<() => void> {
    if (this.closedWith !== null) {
      return Promise.reject(new StartTurnRefused(this.closedWith, this.retryAfterS(node)));
    }
    const lane = this.lane(node);
    if (lane.holding < this.concurrency(node) && lane.queue.length === 0) {
      lane.holding += 1;
      return Promise.resolve(this.releaser(node, lane));
    }
    if (this.opts.queueMs <= 0) return Promise.reject(this.refusal(persona, node, 0));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        persona,
        grant: resolve,
        refuse: reject,
        timer: null,
      };
      waiter.timer = setTimeout(() => {
        const at = lane.queue.indexOf(waiter);
        if (at < 0) return;
        lane.queue.splice(at, 1);
        reject(this.refusal(persona, node, at));
      }, this.opts.queueMs);
      this.opts.onWait?.(persona, lane.queue.length, node);
      lane.queue.push(waiter);
    });
  }

  /**
   * When a start asked now on `node` might get its turn (seconds, at least 1): the queue ahead
   * of it, a turn's usual hold and the node's concurrency.
   */
  retryAfterS(node = ''): number {
    const waiting = this.lanes.get(node)?.queue.length ?? 0;
    const rounds = Math.ceil((waiting + 1) / this.concurrency(node));
    return Math.max(1, Math.ceil(rounds * this.holdS));
  }

  /** No start gets a turn any more (the waker shuts down): every waiting one is refused. */
  close(reason: string): void {
    this.closedWith = reason;
    for (const [node, lane] of this.lanes) {
      for (const waiter of lane.queue.splice(0)) {
        if (waiter.timer) clearTimeout(waiter.timer);
        waiter.refuse(new StartTurnRefused(reason, this.retryAfterS(node)));
      }
    }
  }

  private refusal(persona: string, node: string, ahead: number): StartTurnRefused {
    const waitedS = Number((this.opts.queueMs / 1000).toFixed(1));
    const where = node ? ` on node ${node}` : '';
    return new StartTurnRefused(
      `no start turn for persona ${persona} within ${waitedS} s: ${this.lane(node).holding} ` +
        `workers are starting${where} (at most ${this.concurrency(node)} at once) and ${ahead} ` +
        `wait before it`,
      this.retryAfterS(node),
    );
  }

  /** The end of one turn on `node`: hands it to the first start waiting there, if any. */
  private releaser(node: string, lane: Lane): () => void {
    const since = performance.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const heldS = (performance.now() - since) / 1000;
      this.holdS = this.holdS * 0.8 + heldS * 0.2;
      lane.holding -= 1;
      // As many as the node's concurrency allows now (it may have changed meanwhile).
      while (lane.holding < this.concurrency(node)) {
        const next = lane.queue.shift();
        if (!next) break;
        if (next.timer) clearTimeout(next.timer);
        lane.holding += 1;
        next.grant(this.releaser(node, lane));
      }
    };
  }
}
