import http from 'node:http';
import https from 'node:https';

/** A call that got no HTTP answer: refused, reset, or past its deadline. */
export class NoAnswer extends Error {}

export interface HttpTransportOptions {
  /** Bound on the whole exchange (ms), unless the request's own signal ends it sooner. */
  timeoutMs: number;
  /**
   * How connections are made: a tunnel's agent (a worker on an overlay network the caller is
   * not on); a fresh connection per call when absent.
   */
  agent?: http.Agent;
}

/** The statuses whose answers carry no body (a Response refuses one). */
const NO_BODY = new Set([204, 205, 304]);

/**
 * A `fetch` for `createPersonaClient` over Node's http with a deadline for the whole exchange:
 * Node's own fetch can wait forever on a connection a container's port proxy accepted and reset.
 * No answer in time, a refused or reset connection, reject with NoAnswer; the request's signal,
 * when it aborts, rejects with its reason (a TimeoutError reason is a NoAnswer too).
 */
export function httpTransport(o: HttpTransportOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    const payload = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const headers: http.OutgoingHttpHeaders = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    if (payload !== undefined) headers['content-length'] = payload.length;
    const send = url.protocol === 'https:' ? https.request : http.request;
    const late = (): NoAnswer => new NoAnswer(`no answer from ${url.origin} in time`);
    return new Promise<Response>((resolve, reject) => {
      const signal = request.signal;
      const fail = (err: Error): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        req.destroy();
        reject(err);
      };
      const aborted = (): void => {
        const reason: unknown = signal.reason;
        if (reason instanceof Error && reason.name === 'TimeoutError') return fail(late());
        fail(reason instanceof Error ? reason : new Error(String(reason)));
      };
      const req = send(url, { method: request.method, headers, agent: o.agent ?? false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => fail(new NoAnswer(err.message)));
        res.on('end', () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', aborted);
          const status = res.statusCode ?? 0;
          const answer = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v])
              answer.append(k, one);
          }
          const body = NO_BODY.has(status) ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, statusText: res.statusMessage, headers: answer }));
        });
      });
      const timer = setTimeout(() => fail(late()), o.timeoutMs);
      if (signal.aborted) return aborted();
      signal.addEventListener('abort', aborted);
      req.on('error', (err) => fail(err instanceof NoAnswer ? err : new NoAnswer(err.message)));
      req.end(payload);
    });
  };
}
