/**
 * The overlay gateway: the waker's arm inside a cluster's overlay network. The waker serves
 * every persona's port on the manager's own network, where the overlay's addresses do not
 * route; this small program runs in a container on the manager that is on both networks. Each
 * connection the waker opens starts with one line, `<token> <host> <port>\n`; the gateway
 * connects to that worker (a service name the overlay's DNS resolves) and from then on only
 * copies bytes both ways. A wrong token, a bad line or a worker that does not answer ends the
 * connection at once, so a caller never waits on a dead node longer than the connect timeout.
 *
 *   GATEWAY_TOKEN       the shared secret (required)
 *   GATEWAY_PORT        where it listens (default 7070)
 *   GATEWAY_CONNECT_MS  how long a worker may take to accept (default 3000)
 */
import net from 'node:net';

const MAX_LINE = 512;

export interface GatewayOptions {
  token: string;
  port: number;
  connectTimeoutMs: number;
}

/** `<token> <host> <port>` with the right token, as a target; else null. */
export function parseHello(line: string, token: string): { host: string; port: number } | null {
  const parts = line.trim().split(' ');
  if (parts.length !== 3 || parts[0] !== token) return null;
  const [, host = '', portText = ''] = parts;
  const port = Number(portText);
  if (!/^[a-zA-Z0-9_.-]{1,253}$/.test(host) || !Number.isInteger(port) || port < 1 || port > 65535)
    return null;
  return { host, port };
}

function relay(client: net.Socket, opts: GatewayOptions): void {
  let head = Buffer.alloc(0);
  client.setNoDelay(true);
  client.on('error', () => client.destroy());
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const nl = head.indexOf(10);
    if (nl < 0) {
      if (head.length > MAX_LINE) client.destroy();
      return;
    }
    client.off('data', onData);
    client.pause();
    const target = parseHello(head.subarray(0, nl).toString('latin1'), opts.token);
    if (!target) {
      client.destroy();
      return;
    }
    const rest = head.subarray(nl + 1);
    const upstream = net.connect({ host: target.host, port: target.port });
    upstream.setNoDelay(true);
    const timer = setTimeout(
      () => upstream.destroy(new Error('connect timeout')),
      opts.connectTimeoutMs,
    );
    upstream.once('connect', () => {
      clearTimeout(timer);
      if (rest.length) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    const end = (): void => {
      clearTimeout(timer);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('error', end);
    upstream.on('close', end);
    client.on('close', end);
  };
  client.on('data', onData);
}

export function startGateway(opts: GatewayOptions): net.Server {
  const server = net.createServer((client) => relay(client, opts));
  server.listen(opts.port);
  return server;
}

if (require.main === module) {
  const token = process.env.GATEWAY_TOKEN ?? '';
  if (token.length < 16) {
    process.stderr.write('persona-browser gateway: GATEWAY_TOKEN (16+ characters) is required\n');
    process.exit(2);
  }
  const server = startGateway({
    token,
    port: Number(process.env.GATEWAY_PORT ?? 7070),
    connectTimeoutMs: Number(process.env.GATEWAY_CONNECT_MS ?? 3000),
  });
  server.on('listening', () => process.stdout.write('persona-browser gateway listening\n'));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
