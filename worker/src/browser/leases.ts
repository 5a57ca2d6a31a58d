import { Locked } from '../errors';
import { safeEqual } from '@persona-browser/service-kit';
import { randomHex } from '../util';

export const DEFAULT_LEASE_TTL_S = 300;
export const MAX_LEASE_TTL_S = 3600;

interface Lease {
  token: string;
  ttlS: number;
  expiresAt: number;
}

/** How a lease ended: released by its holder, its ttl passed, or its page (or browser) went. */
export type LeaseEnd = 'released' | 'expired' | 'closed';

/** A lease taken (not a renewal) or ended, told to the table's watcher. */
export type LeaseEvent =
  | { type: 'start'; pageId: string; token: string }
  | { type: 'end'; pageId: string; token: string; why: LeaseEnd };

/**
 * Exclusive page leases. A lease lasts `ttl` seconds after the last call that used it; an
 * expired lease is simply absent.
 */
export class LeaseTable {
  private readonly leases = new Map<string, Lease>();
  private watcher: ((e: LeaseEvent) => void) | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Tells `fn` of every lease taken and ended (recordings of whole leases). An expiry is seen
   * when the table is next asked about the page: a watcher that must see it soon asks
   * (`isLeased`) on a timer.
   */
  watch(fn: (e: LeaseEvent) => void): void {
    this.watcher = fn;
  }

  private drop(pageId: string, why: LeaseEnd): void {
    const lease = this.leases.get(pageId);
    if (!lease) return;
    this.leases.delete(pageId);
    this.watcher?.({ type: 'end', pageId, token: lease.token, why });
  }

  private current(pageId: string): Lease | null {
    const lease = this.leases.get(pageId);
    if (!lease) return null;
    if (lease.expiresAt <= this.now()) {
      this.drop(pageId, 'expired');
      return null;
    }
    return lease;
  }

  /** Leases standing now (expired ones are dropped as they are counted). */
  held(): number {
    let n = 0;
    for (const pageId of [...this.leases.keys()]) if (this.current(pageId)) n += 1;
    return n;
  }

  isLeased(pageId: string): boolean {
    return this.current(pageId) !== null;
  }

  expiresIn(pageId: string): number | null {
    const lease = this.current(pageId);
    return lease ? (lease.expiresAt - this.now()) / 1000 : null;
  }

  /**
   * The token of the standing lease, or null: for the live view, whose person joins a call
   * that waits for them under the lease that call runs with.
   */
  tokenOf(pageId: string): string | null {
    return this.current(pageId)?.token ?? null;
  }

  /** Whether `presented` is the token of the standing lease (a renewal by its holder). */
  holds(pageId: string, presented: string | undefined): boolean {
    const lease = this.current(pageId);
    return lease !== null && presented !== undefined && safeEqual(presented, lease.token);
  }

  /** Takes the lease, or renews it for its holder with a new ttl; 423 for anyone else. */
  acquire(pageId: string, presented: string | undefined, ttlS: number): Lease {
    const lease = this.current(pageId);
    if (lease) {
      if (!presented || !safeEqual(presented, lease.token)) {
        throw new Locked('Page is leased by another client', pageId);
      }
      lease.ttlS = ttlS;
      lease.expiresAt = this.now() + ttlS * 1000;
      return lease;
    }
    const fresh = { token: randomHex(16), ttlS, expiresAt: this.now() + ttlS * 1000 };
    this.leases.set(pageId, fresh);
    this.watcher?.({ type: 'start', pageId, token: fresh.token });
    return fresh;
  }

  /**
   * Gate for every call on a page: passes when the page is not leased, renews and passes for
   * the holder, 423 otherwise. Returns whether a lease was used.
   */
  check(pageId: string, presented: string | undefined): boolean {
    const lease = this.current(pageId);
    if (!lease) return false;
    if (!presented) throw new Locked('Page is leased: send its token in X-Lease', pageId);
    if (!safeEqual(presented, lease.token)) {
      throw new Locked('Page is leased by another client (X-Lease does not match)', pageId);
    }
    lease.expiresAt = this.now() + lease.ttlS * 1000;
    return true;
  }

  /** Renews without checking, after a call that passed `check` finishes. */
  touch(pageId: string, presented: string | undefined): void {
    const lease = this.current(pageId);
    if (lease && presented && safeEqual(presented, lease.token)) {
      lease.expiresAt = this.now() + lease.ttlS * 1000;
    }
  }

  release(pageId: string, presented: string | undefined): void {
    const lease = this.current(pageId);
    if (!lease || !presented || !safeEqual(presented, lease.token)) {
      throw new Locked('X-Lease does not hold a lease on this page', pageId);
    }
    this.drop(pageId, 'released');
  }

  forget(pageId: string): void {
    this.drop(pageId, 'closed');
  }

  clear(): void {
    for (const pageId of [...this.leases.keys()]) this.drop(pageId, 'closed');
  }
}
