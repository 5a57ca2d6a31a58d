import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** One request the proxy carried (or refused). */
export interface ProxiedRequest {
  /** `CONNECT` for a tunnel, else the HTTP method of a forwarded request. */
  method: string;
  /** `host:port` the client asked for. */
  target: string;
  /** The user named in Proxy-Authorization, or null without one. */
  user: string | null;
  /** 407 when the credentials were refused, 200 for a tunnel, the upstream status otherwise. */
  status: number;
}

export interface ForwardProxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  requests: ProxiedRequest[];
  /** Closes the listener and every open connection: the next connection is refused. */
  close(): Promise<void>;
}

/**
 * A small authenticated HTTP forward proxy on loopback, as residential proxy gateways are:
 * plain requests in absolute form and CONNECT tunnels, Basic credentials checked by `accept`.
 */
export async function startForwardProxy(
  accept: (user: string, password: string) => boolean,
): Promise<ForwardProxy> {
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<net.Socket>();

  const credentials = (header: string | undefined): { user: string; password: string } | null => {
    const m = /^Basic\s+(.+)$/i.exec(header ?? '');
    if (!m) return null;
    const text = Buffer.from(m[1] as string, 'base64').toString('utf8');
    const at = text.indexOf(':');
    return at < 0 ? null : { user: text.slice(0, at), password: text.slice(at + 1) };
  };
  const allowed = (creds: { user: string; password: string } | null): boolean =>
    creds !== null && accept(creds.user, creds.password);

  const server = http.createServer((req, res) => {
    const creds = credentials(req.headers['proxy-authorization']);
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URL required');
      return;
    }
    const hostPort = `${target.hostname}:${target.port || 80}`;
    if (!allowed(creds)) {
      requests.push({
        method: req.method ?? '',
        target: hostPort,
        user: creds?.user ?? null,
        status: 407,
      });
      res.writeHead(407, { 'Proxy-Authenticate': 'Basic realm="proxy"' }).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port || 80,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
      },
      (up) => {
        requests.push({
          method: req.method ?? '',
          target: hostPort,
          user: creds?.user ?? null,
          status: up.statusCode ?? 0,
        });
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      requests.push({
        method: req.method ?? '',
        target: hostPort,
        user: creds?.user ?? null,
        status: 502,
      });
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const creds = credentials(req.headers['proxy-authorization']);
    const target = req.url ?? '';
    if (!allowed(creds)) {
      requests.push({ method: 'CONNECT', target, user: creds?.user ?? null, status: 407 });
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\n' +
          'Proxy-Authenticate: Basic realm="proxy"\r\nContent-Length: 0\r\n\r\n',
      );
      return;
    }
    const colon = target.lastIndexOf(':');
    const upstream = net.connect(Number(target.slice(colon + 1)), target.slice(0, colon), () => {
      requests.push({ method: 'CONNECT', target, user: creds?.user ?? null, status: 200 });
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => {
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
    });
    client.on('error', () => upstream.destroy());
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
