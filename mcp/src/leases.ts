import type { paths, Result } from '@persona-browser/client';
import { settle } from '@persona-browser/client';
import type { RestTarget } from './rest';
import { leaseHeader, within } from './rest';

/** The ttl of a session's leases (s); renewed well before it ends while the session lives. */
export const SESSION_LEASE_TTL_S = 120;

interface Held {
  target: RestTarget;
  pageId: string;
  token: string;
}

const keyOf = (target: RestTarget, pageId: string): string => `${target.baseUrl} ${pageId}`;
type LeaseRoute = paths['/api/v1/ops/{page_id}/lease'];
type Granted = LeaseRoute['post']['responses'][200]['content']['application/json'];
type Released = LeaseRoute['delete']['responses'][200]['content']['application/json'];

/** The lease route's parameters: the page, and the token the session holds on it if any. */
const leaseParams = (pageId: string, token: string | undefined) => ({
  params: { path: { page_id: pageId } },
  // Not among the route's documented parameters: the lease routes take the header all the same.
  headers: leaseHeader(token),
});

/** How long a session that ends waits for each of its leases to be given back (ms). */
const RELEASE_AT_END_MS = 10_000;

/** Gives a lease back (DELETE with its token), within `timeoutMs` when said. */
function giveBack(h: Held, timeoutMs?: number): Promise<Result<Released>> {
  return settle(
    h.target.api.DELETE('/api/v1/ops/{page_id}/lease', {
      ...leaseParams(h.pageId, h.token),
      ...(timeoutMs === undefined ? {} : { fetch: within(timeoutMs) }),
    }),
  );
}

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
  async acquire(target: RestTarget, pageId: string, ttl = this.ttlS): Promise<Result<Granted>> {
    const r = await settle(
      target.api.POST('/api/v1/ops/{page_id}/lease', {
        ...leaseParams(pageId, this.token(target, pageId)),
        body: { ttl },
      }),
    );
    if (r.ok) {
      this.held.set(keyOf(target, pageId), { target, pageId, token: r.data.lease_token });
    } else if (r.status === 404 || r.status === 423) {
      this.held.delete(keyOf(target, pageId));
    }
    return r;
  }

  /** Releases the session's lease on the page; the answer, or null when it held none. */
  async release(target: RestTarget, pageId: string): Promise<Result<Released> | null> {
    const h = this.held.get(keyOf(target, pageId));
    if (!h) return null;
    this.held.delete(keyOf(target, pageId));
    return giveBack(h);
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
    await Promise.all(all.map((h) => giveBack(h, RELEASE_AT_END_MS).catch(() => undefined)));
  }

  get size(): number {
    return this.held.size;
  }
}
