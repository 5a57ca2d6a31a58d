import http from 'node:http';
import { isRecord } from '@persona-browser/service-kit';

export type Json = Record<string, unknown>;

export interface RestCall {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Json;
  body?: Json;
  /** The `X-Lease` token to send. */
  lease?: string;
  /** Bound on the whole exchange (ms). */
  timeoutMs?: number;
}

export interface RestReply {
  status: number;
  body: Json;
}

/** A call that got no HTTP answer (refused, reset, timed out). */
export class Unreachable extends Error {}

/** What no call waits longer for unless it says so: one call's own limits are below it. */
const DEFAULT_TIMEOUT_MS = 150_000;

/**
 * A persona's REST API over HTTP, with the service key: the worker's own port from its MCP
 * server, or a persona's front door from the waker's. Node's http with a deadline, never
 * `fetch` (which can wait forever on a socket a container's port proxy accepted and reset).
 */
export class RestTarget {
  constructor(
    readonly baseUrl: string,
    private readonly key: string | null,
    /** Sent with every call (the MCP client's own host, see `forwarding`). */
    private readonly extraHeaders: Readonly<Record<string, string>> = {},
  ) {}

  /**
   * The same API, told which host and scheme the MCP client reached (`X-Forwarded-Host`,
   * `X-Forwarded-Proto`): the links the API makes for a person (ask-person's `live_url`) then
   * name that address, not the loopback one the MCP server calls. Leases are the same target's.
   */
  forwarding(origin: { host: string | null; proto: string | null }): RestTarget {
    const headers: Record<string, string> = { ...this.extraHeaders };
    if (origin.host !== null) headers['x-forwarded-host'] = origin.host;
    if (origin.proto !== null) headers['x-forwarded-proto'] = origin.proto;
    return new RestTarget(this.baseUrl, this.key, headers);
  }

  call(c: RestCall): Promise<RestReply> {
    const url = new URL(c.path, this.baseUrl);
    for (const [k, v] of Object.entries(c.query ?? {})) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
        url.searchParams.set(k, String(v));
    }
    const payload = c.body === undefined ? undefined : JSON.stringify(c.body);
    const headers: http.OutgoingHttpHeaders = { ...this.extraHeaders, accept: 'application/json' };
    if (this.key !== null) headers.authorization = `Bearer ${this.key}`;
    if (c.lease !== undefined) headers['x-lease'] = c.lease;
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    return new Promise<RestReply>((resolve, reject) => {
      const req = http.request(url, { method: c.method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (b: Buffer) => chunks.push(b));
        res.on('error', (err) => reject(new Unreachable(err.message)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Json;
          try {
            const parsed: unknown = JSON.parse(text);
            body = isRecord(parsed) ? parsed : { value: parsed };
          } catch {
            body = { success: false, error: text.slice(0, 500) };
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.setTimeout(c.timeoutMs ?? DEFAULT_TIMEOUT_MS, () =>
        req.destroy(new Unreachable(`no answer from ${url.origin} in time`)),
      );
      req.on('error', (err) =>
        reject(err instanceof Unreachable ? err : new Unreachable(err.message)),
      );
      req.end(payload);
    });
  }
}
