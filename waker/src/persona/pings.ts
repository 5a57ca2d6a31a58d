import type { Address } from '../drivers/types';
import { pingWorker } from '../worker-client';

/** What a worker's ping tells the waker. */
export type WorkerPing = Awaited<ReturnType<typeof pingWorker>>;

/**
 * The waker's pings of one persona's worker: its commit once it is up, its `proxy_errors` with
 * the health checks. Whether one is under way lets the health checks skip a ping rather than
 * pile them up on a slow worker.
 */
export class WorkerPings {
  private underWay = false;

  get busy(): boolean {
    return this.underWay;
  }

  /** Pings the worker at `address`: `read` gets the answer, `failed` the reason it failed. */
  send(
    address: Address,
    read: (ping: WorkerPing) => void,
    failed: (err: unknown) => void,
    timeoutMs?: number,
  ): void {
    this.underWay = true;
    pingWorker(address, timeoutMs)
      .then(read)
      .catch(failed)
      .finally(() => {
        this.underWay = false;
      });
  }
}
