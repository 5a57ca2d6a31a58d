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
  /** How many workers may start at once (from the driver's start to the worker answering). */
  concurrency: number;
  /** How long a start may wait for its turn before it is refused (ms; 0: never waits). */
  queueMs: number;
  /** Told when a start has to wait, with how many wait before it. */
  onWait?: (persona: string, ahead: number) => void;
}

interface Waiter {
  persona: string;
  grant: (release: () => void) => void;
  refuse: (err: StartTurnRefused) => void;
  timer: NodeJS.Timeout | null;
}

/** A start's hold of a turn, before any was measured (seconds): a worker's usual start. */
const FIRST_GUESS_S = 5;

/**
 * The node's start gate: at most `concurrency` workers start at once, so a storm of wakes (a
 * cron across the fleet) starts them a few at a time rather than all together, each getting
 * the CPU and disk it needs to come up. Starts beyond that wait their turn, first come first
 * served, at most `queueMs`; one whose turn does not come in time is refused (a StartTurnRefused
 * that says when to try again). A turn is held from the driver's start to the worker answering;
 * a resume of a paused worker takes none.
 */
export class StartGate {
  private holding = 0;
  private readonly queue: Waiter[] = [];
  private closedWith: string | null = null;
  /** Moving average of how long a turn is held (seconds): the Retry-After estimate. */
  private holdS = FIRST_GUESS_S;

  constructor(private readonly opts: StartGateOptions) {
    if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
      throw new Error(`the start concurrency must be a whole number from 1: ${opts.concurrency}`);
    }
  }

  get concurrency(): number {
    return this.opts.concurrency;
  }

  /** Starts holding a turn now. */
  get running(): number {
    return this.holding;
  }

  /** Starts waiting for a turn. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Waits for `persona`'s turn to start a worker; resolves with the function that ends it (call
   * it once the worker answers or the start failed; calling it again does nothing). Rejects with
   * StartTurnRefused when no turn came within the queue's wait, or the gate closed.
   */
  turn(persona: string): Promise<() => void> {
    if (this.closedWith !== null) {
      return Promise.reject(new StartTurnRefused(this.closedWith, this.retryAfterS()));
    }
    if (this.holding < this.opts.concurrency && this.queue.length === 0) {
      this.holding += 1;
      return Promise.resolve(this.releaser());
    }
    if (this.opts.queueMs <= 0) return Promise.reject(this.refusal(persona, 0));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        persona,
        grant: resolve,
        refuse: reject,
        timer: null,
      };
      waiter.timer = setTimeout(() => {
        const at = this.queue.indexOf(waiter);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(this.refusal(persona, at));
      }, this.opts.queueMs);
      this.opts.onWait?.(persona, this.queue.length);
      this.queue.push(waiter);
    });
  }

  /**
   * When a start asked now might get its turn (seconds, at least 1): the queue ahead of it, a
   * turn's usual hold and the concurrency.
   */
  retryAfterS(): number {
    const rounds = Math.ceil((this.queue.length + 1) / this.opts.concurrency);
    return Math.max(1, Math.ceil(rounds * this.holdS));
  }

  /** No start gets a turn any more (the waker shuts down): every waiting one is refused. */
  close(reason: string): void {
    this.closedWith = reason;
    for (const waiter of this.queue.splice(0)) {
      if (waiter.timer) clearTimeout(waiter.timer);
      waiter.refuse(new StartTurnRefused(reason, this.retryAfterS()));
    }
  }

  private refusal(persona: string, ahead: number): StartTurnRefused {
    const waitedS = Number((this.opts.queueMs / 1000).toFixed(1));
    return new StartTurnRefused(
      `no start turn for persona ${persona} within ${waitedS} s: ${this.holding} workers are ` +
        `starting (at most ${this.opts.concurrency} at once) and ${ahead} wait before it`,
      this.retryAfterS(),
    );
  }

  /** The end of one turn: hands it to the first waiting start, if any. */
  private releaser(): () => void {
    const since = performance.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const heldS = (performance.now() - since) / 1000;
      this.holdS = this.holdS * 0.8 + heldS * 0.2;
      const next = this.queue.shift();
      if (!next) {
        this.holding -= 1;
        return;
      }
      if (next.timer) clearTimeout(next.timer);
      next.grant(this.releaser());
    };
  }
}
