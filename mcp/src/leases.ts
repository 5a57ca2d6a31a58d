import type { RestTarget } from './rest';

/** The ttl of a session's leases (s); renewed well before it ends while the session lives. */
export const SESSION_LEASE_TTL_S = 120;

interface Held {
  target: RestTarget;
  pageId: string;
  token: string;
}

const keyOf = (target: RestTarget, pageId: string): string => `${target.baseUrl} ${pageId}`;
const leasePath = (pageId: string): string => `/api/v1/ops/${encodeURIComponent(pageId)}/lease`;

/**
 * The leases one MCP session holds: on the pages it created, and on those it leased by name.
 * Its calls on a page carry the page's token; the tokens are renewed while the session lives
 * and released when it ends, so a page an agent abandoned is free again at once.
 */
export class SessionLeases {
  private readonly held = new Map<string, Held>();

  constructor(private readonly ttlS = SESSION_LEASE_TTL_S) {}

  token(target: RestTarget, pageId: string): string | undefined {
    return this.held.get(keyOf(target, pageId))?.token;
  }

  /** Leases the page (or renews the session's lease on it); the reply as the API gave it. */
  async acquire(
    target: RestTarget,
    pageId: string,
    ttl = this.ttlS,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const lease = this.token(target, pageId);
    const reply = await target.call({
      method: 'POST',
      path: leasePath(pageId),
      body: { ttl },
      lease,
    });
    const token = reply.body.lease_token;
    if (reply.status === 200 && typeof token === 'string') {
      this.held.set(keyOf(target, pageId), { target, pageId, token });
    } else if (reply.status === 404 || reply.status === 423) {
      this.held.delete(keyOf(target, pageId));
    }
    return reply;
  }

  /** Releases the session's lease on the page; the reply, or null when it held none. */
  async release(
    target: RestTarget,
    pageId: string,
  ): Promise<{ status: number; body: Record<string, unknown> } | null> {
    const h = this.held.get(keyOf(target, pageId));
    if (!h) return null;
    this.held.delete(keyOf(target, pageId));
    return target.call({ method: 'DELETE', path: leasePath(pageId), lease: h.token });
  }

  /** The page is gone (destroyed through this session): its lease went with it. */
  forget(target: RestTarget, pageId: string): void {
    this.held.delete(keyOf(target, pageId));
  }

  /** Renews every lease; a page gone or taken meanwhile drops out. */
  async renewAll(): Promise<void> {
    await Promise.all(
      [...this.held.values()].map((h) => this.acquire(h.target, h.pageId).catch(() => undefined)),
    );
  }

  /** Releases every lease (the session ended). */
  async releaseAll(): Promise<void> {
    const all = [...this.held.values()];
    this.held.clear();
    await Promise.all(
      all.map((h) =>
        h.target
          .call({ method: 'DELETE', path: leasePath(h.pageId), lease: h.token, timeoutMs: 10_000 })
          .catch(() => undefined),
      ),
    );
  }

  get size(): number {
    return this.held.size;
  }
}
