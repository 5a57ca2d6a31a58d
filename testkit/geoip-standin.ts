import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/** One lookup the stand-in answered. */
export interface GeoipLookup {
  /** The request path without its query. */
  path: string;
  /** The `token` query parameter, or null without one. */
  token: string | null;
  headers: http.IncomingHttpHeaders;
}

/** What the stand-in answers next: a status and a JSON body (or raw text). */
export interface GeoipReply {
  status: number;
  body: unknown;
  /** Wait this long before answering (a slow service). */
  delayMs?: number;
}

export interface GeoipStandin {
  /** `http://127.0.0.1:PORT` (`https://` with a certificate), for GEOIP_BASE_URL. */
  url: string;
  port: number;
  lookups: GeoipLookup[];
  /** Changes what `/json` answers from now on. */
  answer(reply: GeoipReply): void;
  close(): Promise<void>;
}

/** What ipinfo.io's `/json` answers for an address in Berlin (the fields the waker reads, and more). */
export const BERLIN = {
  ip: '203.0.113.45',
  hostname: 'exit.example.net',
  city: 'Berlin',
  region: 'Berlin',
  country: 'DE',
  loc: '52.5244,13.4105',
  org: 'AS64500 Example Residential',
  postal: '10117',
  timezone: 'Europe/Berlin',
};

/**
 * A GeoIP service on 127.0.0.1 answering `GET /json[?token=…]` like ipinfo.io, recording every
 * lookup (its token and headers). Any other path is a 404. With `tls` (a key and certificate
 * in PEM) it speaks https.
 */
export async function startGeoipStandin(
  first: GeoipReply = { status: 200, body: BERLIN },
  tls?: { key: string; cert: string },
): Promise<GeoipStandin> {
  let reply = first;
  const lookups: GeoipLookup[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://standin');
    if (url.pathname !== '/json') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    lookups.push({
      path: url.pathname,
      token: url.searchParams.get('token'),
      headers: req.headers,
    });
    const { status, body, delayMs } = reply;
    const send = (): void => {
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(text);
    };
    if (!delayMs) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, delayMs);
    timers.add(timer);
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    lookups,
    answer: (next) => {
      reply = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
