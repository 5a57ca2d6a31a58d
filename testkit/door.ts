import http from 'node:http';
import { httpRequest } from './image';

/**
 * Calls from a chosen loopback address (127.0.0.2, 127.0.0.3…): the doors count failed
 * credentials per client address, so a test that knocks with wrong keys does it from an address
 * of its own and leaves the others' counts alone, whatever order the tests run in.
 */
export interface FromReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body parsed as JSON where it is JSON, else its text. */
  body: any;
  text: string;
}

export async function callFrom(
  from: string,
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<FromReply> {
  const r = await httpRequest(url, { ...opts, from, timeoutMs: 30_000 });
  return { status: r.status, headers: r.headers, text: r.text, body: r.json ?? r.text };
}

/** `Authorization: Bearer …` for a key or token; none for null. */
export const bearer = (credential: string | null): Record<string, string> =>
  credential === null ? {} : { authorization: `Bearer ${credential}` };

/**
 * A WebSocket handshake that only wants the answer: the HTTP status the door or the worker gives
 * (101 when it is taken; the socket is closed at once then).
 */
export function upgradeStatus(
  from: string,
  url: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      localAddress: from,
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': Buffer.from('persona-browser!').toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 101);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer from ${url} in 30 s`)));
    req.on('error', reject);
    req.end();
  });
}
