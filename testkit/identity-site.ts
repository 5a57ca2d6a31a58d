import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the probe site served. */
export interface SiteRequest {
  path: string;
  /** `from` query of the request (`page`, `worker`), else null. */
  from: string | null;
  acceptLanguage: string | null;
}

/** One TCP connection the probe site accepted, and whether this test process opened it. */
export interface SiteConnection {
  remotePort: number;
  /** True when the client end belongs to this process (the test's forward proxy). */
  openedHere: boolean;
}

export interface IdentitySite {
  url: string;
  requests: SiteRequest[];
  connections: SiteConnection[];
  close(): Promise<void>;
}

/**
 * Whether the client end of the loopback connection `127.0.0.1:clientPort → 127.0.0.1:serverPort`
 * is a socket of this process: its inode (from /proc/net/tcp) among this process's descriptors.
 */
function openedByThisProcess(clientPort: number, serverPort: number): boolean {
  const hex = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');
  const local = `0100007F:${hex(clientPort)}`;
  const remote = `0100007F:${hex(serverPort)}`;
  const row = fs
    .readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .find((cols) => cols[1] === local && cols[2] === remote);
  const inode = row?.[9];
  if (!inode) throw new Error(`no socket 127.0.0.1:${clientPort} → ${serverPort} in /proc/net/tcp`);
  return fs.readdirSync('/proc/self/fd').some((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === `socket:[${inode}]`;
    } catch {
      return false;
    }
  });
}

/** What the page and its worker each tell about where they are (the same code in both). */
const HERE = `const here = () => ({
  timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  locale: Intl.DateTimeFormat().resolvedOptions().locale,
  offset: new Date().getTimezoneOffset(),
  language: navigator.language,
  languages: [...navigator.languages],
});`;

/**
 * The page a user's browser would show a fingerprinting site: it reads the time zone, offset and
 * languages in the page and in a dedicated worker, asks for the position, gathers WebRTC
 * candidates against `?stun=host:port`, and writes everything as JSON into `#probe` once all
 * parts have answered (`"done": true`).
 */
const PROBE_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>probe</title></head><body>
<pre id="probe">{}</pre>
<script>
const out = { done: false };
const parts = new Set(['worker', 'geo', 'rtc', 'fetch']);
const put = (part, value) => {
  out[part] = value;
  parts.delete(part);
  out.done = parts.size === 0;
  document.getElementById('probe').textContent = JSON.stringify(out);
};
${HERE}
put('page', here());
const worker = new Worker('/probe-worker.js');
worker.onmessage = (e) => put('worker', e.data);
worker.onerror = (e) => put('worker', { error: String(e.message) });
fetch('/seen?from=page').then((r) => r.text()).then((t) => put('fetch', t), (e) => put('fetch', String(e)));
navigator.geolocation.getCurrentPosition(
  (p) => put('geo', { latitude: p.coords.latitude, longitude: p.coords.longitude, accuracy: p.coords.accuracy }),
  (e) => put('geo', { error: e.code + ' ' + e.message }),
  { timeout: 15000 },
);
const stun = new URLSearchParams(location.search).get('stun');
const pc = new RTCPeerConnection({ iceServers: stun ? [{ urls: 'stun:' + stun }] : [] });
pc.createDataChannel('probe');
const candidates = [];
pc.onicecandidate = (e) => {
  if (e.candidate) candidates.push(e.candidate.candidate);
  else put('rtc', candidates);
};
setTimeout(() => { if (parts.has('rtc')) put('rtc', candidates); }, 10000);
pc.createOffer().then((o) => pc.setLocalDescription(o));
</script></body></html>`;

const PROBE_WORKER = `
${HERE}
fetch('/seen?from=worker').then(
  () => postMessage(here()),
  (e) => postMessage({ ...here(), fetchError: String(e) }),
);
`;

/** The probe site on 127.0.0.1: `/probe`, its worker script, `/seen`, and plain pages. */
export async function startIdentitySite(): Promise<IdentitySite> {
  const requests: SiteRequest[] = [];
  const connections: SiteConnection[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({
      path: url.pathname,
      from: url.searchParams.get('from'),
      acceptLanguage: req.headers['accept-language'] ?? null,
    });
    const send = (type: string, body: string, status = 200): void => {
      res.writeHead(status, { 'content-type': `${type}; charset=utf-8` }).end(body);
    };
    if (url.pathname === '/probe') return send('text/html', PROBE_PAGE);
    if (url.pathname === '/probe-worker.js') return send('text/javascript', PROBE_WORKER);
    if (url.pathname === '/seen') return send('text/plain', req.headers['accept-language'] ?? '');
    if (url.pathname === '/favicon.ico') return send('text/plain', '', 404);
    return send(
      'text/html',
      `<!doctype html><title>plain</title><p id="plain">${url.pathname}</p>`,
    );
  });
  server.on('connection', (socket) => {
    const serverPort = (server.address() as AddressInfo).port;
    const remotePort = socket.remotePort ?? 0;
    connections.push({ remotePort, openedHere: openedByThisProcess(remotePort, serverPort) });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface StunServer {
  /** `address:port` for an ICE server URL. */
  hostPort: string;
  /** Binding requests received: any means the browser sent UDP of its own. */
  requests: number;
  close(): Promise<void>;
}

/**
 * A STUN server (RFC 5389 binding requests only) on one of the machine's own addresses: a
 * browser that may use UDP learns its host address from it as a server-reflexive candidate.
 */
export async function startStun(address: string): Promise<StunServer> {
  const family = address.includes(':') ? 'udp6' : 'udp4';
  const socket = dgram.createSocket(family);
  const state = { requests: 0 };
  socket.on('message', (msg, rinfo) => {
    if (msg.length < 20 || msg.readUInt16BE(0) !== 0x0001) return;
    state.requests += 1;
    const cookie = msg.readUInt32BE(4);
    const transaction = msg.subarray(8, 20);
    const attr = Buffer.alloc(12);
    attr.writeUInt16BE(0x0020, 0); // XOR-MAPPED-ADDRESS
    attr.writeUInt16BE(8, 2);
    attr.writeUInt8(0x01, 5); // IPv4
    attr.writeUInt16BE(rinfo.port ^ (cookie >>> 16), 6);
    const ip = rinfo.address.split('.').map(Number);
    const ipNum =
      (((ip[0] ?? 0) << 24) | ((ip[1] ?? 0) << 16) | ((ip[2] ?? 0) << 8) | (ip[3] ?? 0)) >>> 0;
    attr.writeUInt32BE((ipNum ^ cookie) >>> 0, 8);
    const header = Buffer.alloc(20);
    header.writeUInt16BE(0x0101, 0);
    header.writeUInt16BE(attr.length, 2);
    header.writeUInt32BE(cookie, 4);
    transaction.copy(header, 8);
    socket.send(Buffer.concat([header, attr]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  return {
    hostPort: `${address}:${socket.address().port}`,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
