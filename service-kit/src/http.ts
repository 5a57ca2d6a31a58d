import type http from 'node:http';
import type net from 'node:net';

/** The API's error envelope (docs/api.md): every application-layer error our services answer. */
export interface ErrorEnvelope {
  success: false;
  error: string;
  page_id: string | null;
}

export const errorEnvelope = (error: string, pageId: string | null = null): ErrorEnvelope => ({
  success: false,
  error,
  page_id: pageId,
});

/** A JSON answer on a plain Node response (express's responses are ones too). */
export function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** The methods a path answers, as an `Allow` header lists them (HEAD comes with GET). */
export function allowHeader(methods: readonly string[]): string {
  const upper = [...new Set(methods.map((m) => m.toUpperCase()))];
  if (upper.includes('GET') && !upper.includes('HEAD')) upper.push('HEAD');
  return upper.join(', ');
}

/**
 * A known path called with a method it does not serve: 405 with `Allow` and the envelope,
 * naming what the path takes. OPTIONS is answered with the same `Allow` and no body.
 */
export function answerWrongMethod(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  methods: readonly string[],
): void {
  const allow = allowHeader(methods);
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { allow });
    res.end();
    return;
  }
  const listed = allow.replace(/, HEAD\b/, '');
  sendJson(
    res,
    405,
    errorEnvelope(`Method ${req.method ?? '?'} not allowed on ${path} (allowed: ${listed})`),
    { allow },
  );
}

/** Starts listening; rejects with a line naming the address when the port cannot be had. */
/** The port a listening server was given (asked for 0, the one the kernel chose). */
export function boundPort(server: net.Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') {
    throw new Error('the server is not listening on a TCP port');
  }
  return address.port;
}

export function listen(server: http.Server, port: number, host?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void =>
      reject(new Error(`cannot listen on ${host ?? '*'}:${port}: ${err.message}`));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
