import http from 'node:http';

/** Where an HTTP service answers. */
export interface HostPort {
  host: string;
  port: number;
  /**
   * How to reach it when a plain connection cannot (a worker on an overlay network the caller
   * is not on): an agent whose connections go through a tunnel. Absent: a direct connection.
   */
  agent?: http.Agent;
}

/** A JSON service answered with something other than 200. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}`);
  }
}

/**
 * GET of a JSON route with `http.request` and a hard timeout: Node's fetch can hang forever on
 * a connection Docker's port proxy accepts and resets, and a frozen service must fail the
 * check rather than hold it. Rejects with HttpStatusError on any status but 200.
 */
export function getJson(
  address: HostPort,
  route: string,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<unknown> {
  return requestJson(address, 'GET', route, undefined, timeoutMs, headers);
}

/** A JSON call of any method, with a body or none, under the same rules as `getJson`. */
export function requestJson(
  address: HostPort,
  method: string,
  route: string,
  body: unknown,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const sent: Record<string, string> = { ...headers };
  if (payload !== undefined) {
    sent['content-type'] = 'application/json';
    sent['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: address.host,
        port: address.port,
        path: route,
        method,
        agent: address.agent ?? false,
        headers: sent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode !== 200) return reject(new HttpStatusError(res.statusCode ?? 0, text));
          try {
            resolve(JSON.parse(text));
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
