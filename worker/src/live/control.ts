import type { Navigator } from '../browser/navigator';
import { Locked } from '../errors';
import type { Logger } from '@persona-browser/service-kit';
import { PageConfinement } from './confine';

export interface ControlOptions {
  navigator: Navigator;
  logger: Logger;
  /** How long control survives its viewer's last WebSocket closing. */
  graceMs: number;
  /** The lease's ttl; renewed every `renewMs` while control lasts. */
  leaseTtlS: number;
  renewMs: number;
  /** Open WebSockets of a viewer session. */
  socketsOf: (sessionId: string) => number;
  /** Called whenever control starts, ends or moves. */
  onChange?: () => void;
  /** Called when a person takes a page over (not when they take the page they hold again). */
  onTakeover?: () => void;
}

export interface Held {
  pageId: string;
  sessionId: string;
  token: string;
  since: Date;
  /** Control shares the lease of an API client whose call waits for the person: kept at the end. */
  shared: boolean;
  /** A viewer limited to this page is kept on it (its session's token names the page). */
  confinement: PageConfinement | null;
}

export interface ControlView {
  controlled: boolean;
  page_id: string | null;
  /** The asking viewer session holds it. */
  by_you: boolean;
  since: string | null;
  lease_expires_in: number | null;
}

/**
 * A person's control of one page through the live view: a lease from the worker's own lease
 * table (so API calls to that page meet the API's 423), held by one viewer session, renewed while
 * that viewer stays connected and handed back when its last WebSocket has been gone for the
 * grace period. One page at a time: there is one display and one pointer.
 */
export class LiveControl {
  private held: Held | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  private readonly renewTimer: NodeJS.Timeout;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly watchers = new Set<() => void>();

  constructor(private readonly o: ControlOptions) {
    this.renewTimer = setInterval(() => this.tick(), o.renewMs);
    this.renewTimer.unref();
  }

  /** Calls `listener` whenever control starts, ends or moves; returns the unsubscribe. */
  watch(listener: () => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  private changed(): void {
    this.o.onChange?.();
    for (const w of [...this.watchers]) w();
  }

  /** The current holder, after checking its lease still stands. */
  current(): Held | null {
    const h = this.held;
    if (h && !this.leaseStands(h))
      this.drop('lease lost (page closed, browser restarted or expired)');
    return this.held;
  }

  /** Whether this viewer session may send input now (renews the lease as a call would). */
  canInput(sessionId: string): boolean {
    const h = this.current();
    return h !== null && h.sessionId === sessionId;
  }

  /**
   * While this viewer session holds a confined control: the screen row where its page's content
   * begins (its presses above, on the browser's bars, are dropped); null otherwise.
   */
  confinedTop(sessionId: string): number | null {
    const h = this.held;
    return h?.sessionId === sessionId && h.confinement ? h.confinement.contentTop : null;
  }

  view(sessionId: string | null): ControlView {
    const h = this.current();
    return {
      controlled: h !== null,
      page_id: h?.pageId ?? null,
      by_you: h !== null && sessionId !== null && h.sessionId === sessionId,
      since: h ? h.since.toISOString() : null,
      lease_expires_in: h ? this.o.navigator.leases.expiresIn(h.pageId) : null,
    };
  }

  /**
   * Leases `pageId` for this viewer session and brings it to the front. 423 when an API client
   * holds its lease (unless its call waits for the person: then the two share it) or another
   * viewer is in control; the same viewer moving to another page hands the first one back.
   * `confined`: the viewer may drive this page only (a page-limited token): it is kept on it
   * (PageConfinement) for as long as it holds it.
   */
  take(sessionId: string, pageId: string, confined = false): Promise<Held> {
    return this.serial(async () => {
      const pool = this.o.navigator.requirePool();
      const page = pool.get(pageId);
      const h = this.current();
      if (h && h.sessionId !== sessionId) {
        throw new Locked(
          `Another viewer is in control of page ${h.pageId}; it must be handed back first`,
          pageId,
        );
      }
      if (h && h.pageId === pageId) {
        await page.page.bringToFront().catch(() => undefined);
        this.socketsChanged(sessionId);
        return h;
      }
      // Holding the page's lock, as POST /ops/{id}/lease does: a call already running finishes
      // first, and the calls queued behind it meet the lease. A call that waits for the person
      // (a code to type) is not waited for: the person is what it waits for. When an API client
      // leased the page for that call, the person works under the same lease.
      const leases = this.o.navigator.leases;
      const shared = page.awaitingPerson ? leases.tokenOf(page.id) : null;
      const token = page.awaitingPerson
        ? (shared ?? leases.acquire(page.id, undefined, this.o.leaseTtlS).token)
        : await page.run('live-control', { anyState: true }, async (call) => {
            const granted = leases.acquire(page.id, undefined, this.o.leaseTtlS);
            await page.bringToFront(call).catch(() => undefined);
            return granted.token;
          });
      if (page.awaitingPerson) await page.page.bringToFront().catch(() => undefined);
      if (h) this.drop(`moved to page ${pageId}`);
      let confinement: PageConfinement | null = null;
      try {
        if (confined) confinement = await PageConfinement.start(pool, page, this.o.logger);
      } catch (err) {
        // Not confined, not taken: a lease of its own goes back.
        if (shared === null) leases.release(page.id, token);
        throw err;
      }
      this.held = {
        pageId,
        sessionId,
        token,
        since: new Date(),
        shared: shared !== null,
        confinement,
      };
      pool.holdScreen(pageId);
      this.o.logger.info('live view control taken', { page_id: pageId });
      this.o.onTakeover?.();
      this.socketsChanged(sessionId);
      this.changed();
      return this.held;
    });
  }

  /** Hands control back (releases the lease). Returns the page that was controlled. */
  release(reason: string): string | null {
    const h = this.held;
    if (!h) return null;
    this.drop(reason);
    return h.pageId;
  }

  /** A viewer session's WebSockets changed: the holder's last one going starts the grace. */
  socketsChanged(sessionId: string): void {
    const h = this.held;
    if (!h || h.sessionId !== sessionId) return;
    if (this.o.socketsOf(sessionId) > 0) {
      this.clearGrace();
      return;
    }
    if (this.graceTimer) return;
    this.graceTimer = setTimeout(() => {
      this.graceTimer = null;
      const now = this.held;
      if (now === h && this.o.socketsOf(sessionId) === 0) this.drop('viewer disconnected');
    }, this.o.graceMs);
    this.graceTimer.unref();
  }

  /** A viewer session ended (logout): its control ends now. */
  sessionEnded(sessionId: string): void {
    if (this.held?.sessionId === sessionId) this.drop('viewer session ended');
  }

  close(): void {
    clearInterval(this.renewTimer);
    this.release('worker stopping');
  }

  /**
   * Renews the lease like a call using it would, while control lasts: the viewer is connected
   * or within its grace (which ends control itself). current() renews it as it checks it.
   */
  private tick(): void {
    this.current();
  }

  /** Whether the lease is still ours (renewing it); false once gone or taken by another. */
  private leaseStands(h: Held): boolean {
    const leases = this.o.navigator.leases;
    if (!leases.isLeased(h.pageId)) return false;
    try {
      return leases.check(h.pageId, h.token);
    } catch {
      return false;
    }
  }

  private drop(reason: string): void {
    const h = this.held;
    if (!h) return;
    this.held = null;
    this.clearGrace();
    h.confinement?.stop();
    try {
      this.o.navigator.requirePool().holdScreen(null);
    } catch {
      // no pool: the browser is stopped, and a new pool starts with a free screen
    }
    try {
      // A shared lease stays its client's.
      if (!h.shared) this.o.navigator.leases.release(h.pageId, h.token);
    } catch {
      // already gone (page closed, browser restarted, expired)
    }
    this.o.logger.info('live view control handed back', { page_id: h.pageId, reason });
    this.changed();
  }

  private clearGrace(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = null;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}
