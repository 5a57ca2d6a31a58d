import createClient from 'openapi-fetch';
import type { Client } from 'openapi-fetch';
import type { BusyWaitOptions } from './busy';
import { untilFree } from './busy';
import type { paths } from './generated/api';
import type { LeaseOptions } from './lease';
import { Lease } from './lease';
import type { Answer, Result } from './result';
import { settle } from './result';

export interface PersonaClientOptions {
  /** The persona's address: `http://localhost:5000`, or the waker's port of a persona. */
  baseUrl: string;
  /** The worker's SERVICE_KEY, sent as `Authorization: Bearer <key>`; none for a worker without one. */
  key: string | null;
  /** Sent with every request besides the key (a proxy's `X-Forwarded-Host`, say). */
  headers?: Readonly<Record<string, string>>;
  /**
   * A fetch of your own (httpTransport's deadline and agent, a test double); the global one
   * otherwise. A call may give its own (`{fetch}` among its options): a longer deadline, say.
   */
  fetch?: (input: Request) => Promise<Response>;
}

/** The helpers every caller needs, beside the typed routes. */
export interface PersonaHelpers {
  /** An answer as a Result: `{ok: true, data}` or `{ok: false, error, status}`, never a throw. */
  result<D>(call: Promise<Answer<D>>): Promise<Result<D>>;
  /** Retries a 409 (page busy) with back-off until `until`; see untilFree. */
  untilFree<D>(attempt: () => Promise<Answer<D>>, options: BusyWaitOptions): Promise<Result<D>>;
  /** Leases a page; the lease renews itself until released (`await using` releases it). */
  lease(pageId: string, options?: LeaseOptions): Promise<Result<Lease>>;
  /** Runs `fn` under a lease of `pageId` and releases it afterwards, whatever `fn` does. */
  withLease<T>(
    pageId: string,
    fn: (lease: Lease) => Promise<T>,
    options?: LeaseOptions,
  ): Promise<Result<T>>;
}

/** openapi-fetch's typed client of every route the worker serves, plugins included. */
export type PersonaClient = Client<paths> & PersonaHelpers;

/**
 * A typed client of one persona's REST API: `pb.POST('/api/v1/ops/create-page', {body})` and
 * every other route of the OpenAPI document, with the bearer key on each request, plus the
 * helpers above.
 */
export function createPersonaClient(options: PersonaClientOptions): PersonaClient {
  const make = (token: () => string): Client<paths> => {
    const client = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: {
        ...options.headers,
        ...(options.key ? { Authorization: `Bearer ${options.key}` } : {}),
      },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    client.use({
      onRequest({ request }) {
        const value = token();
        if (value) request.headers.set('X-Lease', value);
        return request;
      },
    });
    return client;
  };
  const api = make(() => '');
  const lease = (pageId: string, leaseOptions?: LeaseOptions): Promise<Result<Lease>> =>
    Lease.take(pageId, make, leaseOptions);
  return {
    ...api,
    result: settle,
    untilFree,
    lease,
    async withLease(pageId, fn, leaseOptions) {
      const taken = await lease(pageId, leaseOptions);
      if (!taken.ok) return taken;
      try {
        return { ok: true, status: taken.status, data: await fn(taken.data) };
      } finally {
        await taken.data.release();
      }
    },
  };
}
