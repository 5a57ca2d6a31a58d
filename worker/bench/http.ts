import http from 'node:http';
import { text } from 'node:stream/consumers';

/** A minimal keep-alive HTTP client: the benchmark times the wire, not a client library. */

export interface HttpResult {
  status: number;
  text: string;
  /** From the request being issued to the last byte of the response body. */
  ms: number;
}

export interface Client {
  agent: http.Agent;
  request(method: string, route: string, body?: unknown): Promise<HttpResult>;
  /** Like request, then JSON-parses the body (after the clock stopped). */
  json<T = Record<string, unknown>>(
    method: string,
    route: string,
    body?: unknown,
  ): Promise<{ status: number; body: T; ms: number }>;
  close(): void;
}

export function createClient(baseUrl: string, serviceKey: string, maxSockets = 32): Client {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const { hostname, port } = new URL(baseUrl);
  const request = (method: string, route: string, body?: unknown): Promise<HttpResult> => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { authorization: `Bearer ${serviceKey}` };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const req = http.request(
        { agent, hostname, port: Number(port), method, path: route, headers },
        (res) => {
          text(res).then(
            (body) =>
              resolve({ status: res.statusCode ?? 0, text: body, ms: performance.now() - started }),
            reject,
          );
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  };
  return {
    agent,
    request,
    json: async <T>(method: string, route: string, body?: unknown) => {
      const r = await request(method, route, body);
      let parsed: unknown;
      try {
        parsed = JSON.parse(r.text);
      } catch {
        throw new Error(
          `${method} ${route}: ${r.status} with a non-JSON body: ${r.text.slice(0, 200)}`,
        );
      }
      return { status: r.status, body: parsed as T, ms: r.ms };
    },
    close: () => agent.destroy(),
  };
}

/**
 * `total` requests of `method route` from `concurrency` clients that each send their next
 * request as soon as the previous one answered. Returns every latency; throws on a non-200.
 */
export async function loadTest(
  client: Client,
  route: string,
  total: number,
  concurrency: number,
): Promise<number[]> {
  const latencies: number[] = [];
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (issued < total) {
      issued += 1;
      const r = await client.request('GET', route);
      if (r.status !== 200) throw new Error(`GET ${route} answered ${r.status}: ${r.text}`);
      latencies.push(r.ms);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return latencies;
}
