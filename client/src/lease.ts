import type { Client } from 'openapi-fetch';
import type { paths } from './generated/api';
import type { Failure, Result } from './result';
import { settle } from './result';

type LeasePath = '/api/v1/ops/{page_id}/lease';
type Granted = paths[LeasePath]['post']['responses'][200]['content']['application/json'];
type Released = paths[LeasePath]['delete']['responses'][200]['content']['application/json'];

export interface LeaseOptions {
  /** Seconds the lease lasts after its last use (the worker's rule: 0 < ttl <= 3600; 300). */
  ttl?: number;
  /** How often it renews itself, ms; a third of the ttl unless said. */
  renewEveryMs?: number;
  /** Told once when a renewal is refused (another client took the page, the page is gone). */
  onLost?: (why: Failure) => void;
}

/** Makes a client whose every request carries the lease's current token. */
export type LeaseClientFactory = (token: () => string) => Client<paths>;

/** A timer that does not keep the process alive on its own. */
function backgroundTimer(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
  const timer = setTimeout(fn, ms);
  if (typeof timer === 'object' && 'unref' in timer) timer.unref();
  return timer;
}

/**
 * A page leased to this client. It renews itself (the lease route again, with its own token)
 * well before its ttl runs out, and `release()` ends it; `await using` releases it when the
 * scope ends, however it ends. Calls through `api` carry the X-Lease header.
 */
export class Lease implements AsyncDisposable {
  /** The typed client of the whole API, with the bearer key and this lease's X-Lease. */
  readonly api: Client<paths>;
  private currentToken: string;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private renewing: Promise<void> | null = null;
  private lostWith: Failure | null = null;
  private released = false;
  private renewalCount = 0;

  private constructor(
    readonly pageId: string,
    granted: Granted,
    makeClient: LeaseClientFactory,
    private readonly options: LeaseOptions,
  ) {
    this.currentToken = granted.lease_token;
    this.api = makeClient(() => this.currentToken);
    this.schedule(granted.ttl);
  }

  /** Takes the lease on `pageId`; a Failure (423 when another client holds it, 404…) if not. */
  static async take(
    pageId: string,
    makeClient: LeaseClientFactory,
    options: LeaseOptions = {},
  ): Promise<Result<Lease>> {
    const plain = makeClient(() => '');
    const taken = await settle(
      plain.POST('/api/v1/ops/{page_id}/lease', {
        params: { path: { page_id: pageId } },
        body: options.ttl === undefined ? {} : { ttl: options.ttl },
      }),
    );
    if (!taken.ok) return taken;
    return {
      ok: true,
      status: taken.status,
      data: new Lease(pageId, taken.data, makeClient, options),
    };
  }

  /** The token the worker knows this lease by (the X-Lease header's value). */
  get token(): string {
    return this.currentToken;
  }

  /** How many times it has renewed itself. */
  get renewals(): number {
    return this.renewalCount;
  }

  /** Why the lease was lost, if a renewal was refused; null while it holds. */
  get lost(): Failure | null {
    return this.lostWith;
  }

  private schedule(ttlS: number): void {
    if (this.released || this.lostWith) return;
    const every = this.options.renewEveryMs ?? (ttlS * 1000) / 3;
    this.timer = backgroundTimer(() => {
      this.renewing = this.renew(ttlS);
    }, every);
  }

  private async renew(ttlS: number): Promise<void> {
    let next = ttlS;
    try {
      const r = await settle(
        this.api.POST('/api/v1/ops/{page_id}/lease', {
          params: { path: { page_id: this.pageId } },
          body: { ttl: ttlS },
        }),
      );
      if (r.ok) {
        this.currentToken = r.data.lease_token;
        this.renewalCount += 1;
        next = r.data.ttl;
      } else if (r.status !== 409 && !this.released) {
        // Refused for good (423: another client holds it; 404: the page is gone). A 409 means
        // a long call of ours holds the page: the next turn tries again.
        this.lostWith = r;
        this.options.onLost?.(r);
      }
    } catch {
      // No connection this time; the next turn tries again while the ttl lasts.
    }
    this.renewing = null;
    this.schedule(next);
  }

  /** Ends the lease: no more renewals, and the worker frees the page for other clients. */
  async release(): Promise<Result<Released>> {
    this.released = true;
    if (this.timer) clearTimeout(this.timer);
    await this.renewing;
    return settle(
      this.api.DELETE('/api/v1/ops/{page_id}/lease', {
        params: { path: { page_id: this.pageId } },
      }),
    );
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}
