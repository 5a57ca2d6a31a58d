import http from 'node:http';
import type net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@persona-browser/service-kit';

export interface RelayOptions {
  /** `http://host:port` of the upstream proxy (the identity's gateway). */
  upstream: string;
  username: string;
  password: string;
  logger: Logger;
  /** How long the upstream may take to accept the connection, and to answer a CONNECT. */
  timeoutMs?: number;
  /** At most one `proxy failing` line this often, unless the error changes. */
  warnEveryMs?: number;
}

export interface ProxyRelay {
  /** The loopback port Chromium's `--proxy-server` points at. */
  readonly port: number;
  /** Browser requests the relay could not carry because of the upstream, since start. */
  readonly failures: number;
  /** Stops listening and cuts every connection and tunnel. */
  close(): Promise<void>;
}

/** Hop-by-hop headers: each leg has its own (RFC 9110 §7.6.1), and the credentials are ours. */
const HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/** Raw headers (name, value, name, value…) without the hop-by-hop ones, order and case kept. */
function endToEnd(raw: string[]): string[] {
  const named = new Set(HOP);
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const [name, value] = [raw[i], raw[i + 1]];
    if (name !== undefined && value !== undefined && !named.has(name.toLowerCase())) {
      out.push(name, value);
    }
  }
  return out;
}

/** The port of a server listening on TCP (a pipe or a closed server has none). */
function portOf(address: AddressInfo | string | null): number {
  if (address === null || typeof address === 'string') {
    throw new Error('the relay is not listening on a TCP port');
  }
  return address.port;
}

const BAD_GATEWAY = 'HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n';

/**
 * A forward proxy on 127.0.0.1 (ephemeral port) in front of the identity's upstream proxy:
 * Chromium cannot be given proxy credentials on its command line, and answering its auth
 * challenges through the DevTools protocol would intercept every request of every page. The
 * relay carries plain requests (absolute form) and CONNECT tunnels to the upstream and adds
 * `Proxy-Authorization: Basic` with the session's credentials.
 *
 * It is the one place that knows when the proxy fails: a request it cannot carry because the
 * upstream refused or dropped the connection, timed out, refused the credentials (407), or
 * answered a CONNECT with a 5xx counts once in `failures`, and Chromium gets a 502, never a
 * direct connection (it has none: `--proxy-bypass-list=<-loopback>`). A plain request's 5xx is
 * passed on as it is: it may be the site's own. A 407 is never passed on: Chromium would ask
 * the person at the screen for a password.
 */
export async function startRelay(opts: RelayOptions): Promise<ProxyRelay> {
  const upstream = new URL(opts.upstream);
  const host = upstream.hostname.replace(/^\[|\]$/g, '');
  const port = Number(upstream.port || 80);
  const where = `${upstream.hostname}:${port}`;
  const authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const warnEveryMs = opts.warnEveryMs ?? 30_000;
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  let failures = 0;
  let lastWarn = -Infinity;
  let lastError = '';
  /** A `proxy failing` line went out and no request has been carried since. */
  let warned = false;
  const failed = (target: string, error: string): void => {
    failures += 1;
    const now = Date.now();
    if (now - lastWarn < warnEveryMs && error === lastError) return;
    lastWarn = now;
    lastError = error;
    warned = true;
    opts.logger.warn('proxy failing', { upstream: where, error, target, failures });
  };
  const carried = (): void => {
    if (!warned) return;
    warned = false;
    opts.logger.info('proxy recovered', { upstream: where, failures });
  };

  /** A request to the upstream whose TCP connection must come up within the deadline. */
  const toUpstream = (method: string, path: string, headers: string[]): http.ClientRequest => {
    const up = http.request({
      host,
      port,
      method,
      path,
      headers: [...headers, 'Proxy-Authorization', authorization],
      // One connection per request: a reused one the upstream has dropped meanwhile would
      // fail a request that a fresh connection carries.
      agent: false,
      setHost: false,
    });
    up.on('socket', (s) => {
      track(s);
      const timer = setTimeout(
        () => up.destroy(new Error(`no connection within ${timeoutMs} ms`)),
        timeoutMs,
      );
      s.once('connect', () => clearTimeout(timer));
      s.once('close', () => clearTimeout(timer));
    });
    return up;
  };

  const server = http.createServer({ requestTimeout: 0 }, (req, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('absolute http URL required\n');
      return;
    }
    let settled = false;
    const up = toUpstream(req.method ?? 'GET', req.url ?? '', endToEnd(req.rawHeaders));
    res.once('close', () => {
      settled = true;
      if (!res.writableFinished) up.destroy();
    });
    up.once('response', (upRes) => {
      settled = true;
      if (upRes.statusCode === 407) {
        upRes.resume();
        failed(target.host, 'upstream refused the credentials (407)');
        res.writeHead(502, { connection: 'close' }).end();
        return;
      }
      carried();
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, endToEnd(upRes.rawHeaders));
      upRes.pipe(res);
      upRes.on('error', () => res.destroy());
    });
    up.on('error', (err) => {
      if (settled) return;
      settled = true;
      failed(target.host, err.message);
      if (!res.headersSent) res.writeHead(502, { connection: 'close' }).end();
      else res.destroy();
    });
    req.on('error', () => up.destroy());
    req.pipe(up);
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? '';
    let settled = false;
    const up = toUpstream('CONNECT', target, endToEnd(req.rawHeaders));
    const answerTimer = setTimeout(
      () => up.destroy(new Error(`no answer to CONNECT within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const refuse = (error: string | null): void => {
      clearTimeout(answerTimer);
      if (error !== null) failed(target, error);
      if (!client.destroyed) client.end(BAD_GATEWAY);
    };
    client.on('error', () => undefined);
    client.once('close', () => {
      clearTimeout(answerTimer);
      if (!settled) {
        settled = true;
        up.destroy();
      }
    });
    up.once('connect', (upRes, tunnel, upHead) => {
      settled = true;
      clearTimeout(answerTimer);
      const status = upRes.statusCode ?? 0;
      if (status < 200 || status > 299) {
        tunnel.destroy();
        refuse(status === 407 || status >= 500 ? `upstream answered ${status} to CONNECT` : null);
        return;
      }
      carried();
      track(tunnel);
      tunnel.on('error', () => client.destroy());
      client.on('error', () => tunnel.destroy());
      client.once('close', () => tunnel.destroy());
      tunnel.once('close', () => client.destroy());
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (upHead.length) client.write(upHead);
      if (head.length) tunnel.write(head);
      tunnel.pipe(client);
      client.pipe(tunnel);
    });
    up.on('error', (err) => {
      if (settled) return;
      settled = true;
      refuse(err.message);
    });
    up.end();
  });
  server.on('connection', track);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: portOf(server.address()),
    get failures() {
      return failures;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
