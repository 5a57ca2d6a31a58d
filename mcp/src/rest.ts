import type { Answer, PersonaClient, Result } from '@persona-browser/client';
import { createPersonaClient, httpTransport, settle } from '@persona-browser/client';
import { isRecord } from '@persona-browser/service-kit';

/** A call that got no HTTP answer (refused, reset, timed out). */
export { NoAnswer as Unreachable } from '@persona-browser/client';

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

/** What no call waits longer for unless it says so: one call's own limits are below it. */
const DEFAULT_TIMEOUT_MS = 150_000;

/** A fetch bounding each exchange at `ms`: a call's own, longer or shorter than the default. */
export const within = (ms: number): ((request: Request) => Promise<Response>) =>
  httpTransport({ timeoutMs: ms });

/** The `X-Lease` header of a call, none without a token. */
export const leaseHeader = (token: string | undefined): Record<string, string> =>
  token === undefined ? {} : { 'X-Lease': token };

/**
 * A persona's REST API over HTTP, with the service key: the worker's own port from its MCP
 * server, or a persona's front door from the waker's. Its calls go through the typed client
 * (`api`) over Node's http with a deadline, never the global `fetch` (which can wait forever on
 * a socket a container's port proxy accepted and reset).
 */
export class RestTarget {
  /** The persona's routes, typed as its OpenAPI document declares them. */
  readonly api: PersonaClient;

  constructor(
    readonly baseUrl: string,
    private readonly key: string | null,
    /** Sent with every call (the MCP client's own host, see `forwarding`). */
    private readonly extraHeaders: Readonly<Record<string, string>> = {},
  ) {
    this.api = createPersonaClient({
      baseUrl,
      key,
      headers: { ...extraHeaders, accept: 'application/json' },
      fetch: within(DEFAULT_TIMEOUT_MS),
    });
  }

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

  /**
   * A call by path, for what the typed client has no route for: the OpenAPI document itself
   * (`/openapi.json`, which the document does not list), the waker's own API (the fleet's
   * `list_personas`), and plugin routes read from the document a persona serves at run time
   * (a persona may run plugins this client was not generated with). Same key, headers,
   * transport and deadline as the typed calls, and the same Result of the answer.
   */
  async call(c: RestCall): Promise<Result<Json>> {
    const headers: Record<string, string> = {
      ...this.extraHeaders,
      accept: 'application/json',
      ...leaseHeader(c.lease),
    };
    if (this.key !== null) headers.authorization = `Bearer ${this.key}`;
    if (c.body !== undefined) headers['content-type'] = 'application/json';
    const url = new URL(c.path, this.baseUrl);
    for (const [k, v] of Object.entries(c.query ?? {})) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
        url.searchParams.set(k, String(v));
    }
    const request = new Request(url, {
      method: c.method,
      headers,
      body: c.body === undefined ? undefined : JSON.stringify(c.body),
    });
    const res = await within(c.timeoutMs ?? DEFAULT_TIMEOUT_MS)(request);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's page): its text is the failure's message.
    }
    // A JSON answer that is not an object (a list) is kept as `value`, text is no success.
    const body = isRecord(parsed) || typeof parsed === 'string' ? parsed : { value: parsed };
    const answer: Answer<Json> =
      res.ok && isRecord(body) ? { data: body, response: res } : { error: body, response: res };
    return settle(Promise.resolve(answer));
  }
}
