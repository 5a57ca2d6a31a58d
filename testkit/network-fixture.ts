import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import zlib from 'node:zlib';

/**
 * The loopback site of the network-capture tests and bench: pages that fetch JSON, XHR text, a
 * redirect, a body over 2,000,000 characters, a PNG, a single-page app that changes its URL with
 * the history API, and WebSocket pages. The WebSocket endpoint is a minimal RFC 6455 server
 * written here (handshake, masked client frames, text, binary, ping, close): the `ws` package is
 * only a transitive dependency of puppeteer and is not relied upon.
 */

export interface ServedResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface WsMessage {
  /** 1 text, 2 binary. */
  opcode: number;
  data: Buffer;
}

export interface NetworkFixture {
  url: string;
  /** `ws://127.0.0.1:port` */
  wsUrl: string;
  /** The last response served for each path with query (`/api/data.json`, `/slow?ms=50`). */
  served: Map<string, ServedResponse>;
  /** Every request seen, as `METHOD path?query`. */
  seen: string[];
  /** Messages the WebSocket server received from pages and sent to them, in order. */
  ws: { received: WsMessage[]; sent: WsMessage[]; opened: number; closed: number };
  close(): Promise<void>;
}

export const JSON_BODY = JSON.stringify({
  items: [
    { id: 1, name: 'ünïcödé ✓', price: 9.5 },
    { id: 2, name: 'second', price: 12 },
  ],
  total: 2,
});
export const TEXT_BODY = 'plain text from the fixture\nline two';
export const FORM_ECHO_PREFIX = 'echo:';
/** Just over the capture's 2,000,000-character cut, with a multi-byte character near the end. */
export const BIG_BODY_LENGTH = 2_000_321;
export const BIG_BODY = (() => {
  const unit = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const head = unit.repeat(Math.ceil(BIG_BODY_LENGTH / unit.length)).slice(0, BIG_BODY_LENGTH - 2);
  return `${head}é!`;
})();
export const WS_TEXT = 'hello-text from the page';
export const WS_BINARY = [0, 1, 2, 127, 128, 254, 255];
/** Custom header on every API response, to check that headers are captured as served. */
export const FIXTURE_HEADER = 'x-fixture';

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** A real 32×32 RGB PNG (a gradient), built here so the test knows its exact bytes. */
export const PNG = (() => {
  const w = 32;
  const h = 32;
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) {
    const row = y * (w * 3 + 1);
    raw[row] = 0;
    for (let x = 0; x < w; x++) {
      raw[row + 1 + x * 3] = x * 8;
      raw[row + 2 + x * 3] = y * 8;
      raw[row + 3 + x * 3] = 128;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
})();

const html = (title: string, body: string, script = ''): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}${
    script ? `<script>${script}</script>` : ''
  }</body></html>`;

/** Fetches everything the capture must see, in order, then sets the title to `app done`. */
const APP_SCRIPT = `
(async () => {
  await (await fetch('/api/data.json')).text();
  await new Promise((resolve) => {
    const x = new XMLHttpRequest();
    x.open('GET', '/api/text');
    x.onloadend = resolve;
    x.send();
  });
  await (await fetch('/api/redirect')).text();
  await (await fetch('/api/big')).text();
  await (await fetch('/api/image.png')).arrayBuffer();
  await (await fetch('/api/echo', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'a=1&b=two',
  })).text();
  document.title = 'app done';
})();`;

const SPA_SCRIPT = `
(async () => {
  const tick = () => new Promise((r) => setTimeout(r, 50));
  await (await fetch('/api/data.json?spa')).text();
  history.pushState({ step: 1 }, '', '/spa/list');
  await tick();
  location.hash = 'item-2';
  await tick();
  history.replaceState({ step: 3 }, '', '/spa/final?x=1');
  await tick();
  document.title = 'spa done';
})();`;

const WS_SCRIPT = `
const ws = new WebSocket('ws://' + location.host + '/socket');
ws.binaryType = 'arraybuffer';
let replies = 0;
ws.onopen = () => {
  ws.send(${JSON.stringify(WS_TEXT)});
  ws.send(new Uint8Array(${JSON.stringify(WS_BINARY)}));
};
ws.onmessage = () => { if (++replies === 2) ws.close(1000, 'done'); };
ws.onclose = () => { document.title = 'ws done'; };`;

/** A socket whose server breaks the protocol (a frame with a reserved bit set). */
const WS_BAD_SCRIPT = `
const ws = new WebSocket('ws://' + location.host + '/socket?bad=1');
ws.onerror = () => { document.title = 'ws error'; };
ws.onclose = () => { document.title = document.title === 'ws error' ? 'ws bad done' : 'ws closed'; };`;

/** Streams `count` text messages of `size` characters from the server (capture budget tests). */
const wsStreamScript = (count: number, size: number, binary: boolean): string => `
const ws = new WebSocket('ws://' + location.host + '/socket?stream=${count}&size=${size}&binary=${binary ? 1 : 0}');
let got = 0;
ws.onmessage = () => { got++; if (got % 100 === 0 || got === ${count}) document.title = 'got ' + got; };
ws.onclose = () => { document.title = 'stream done ' + got; };`;

/** `n` fetches of small JSON documents, then the title `many done`. */
const manyScript = (n: number): string => `
(async () => {
  const all = [];
  for (let i = 0; i < ${n}; i++) all.push(fetch('/api/item?i=' + i).then((r) => r.text()));
  await Promise.all(all);
  document.title = 'many done';
})();`;

// ---- minimal RFC 6455 server ----

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function frame(opcode: number, payload: Buffer, rsv1 = false): Buffer {
  const len = payload.length;
  let header: Buffer;
  if (len < 126) {
    header = Buffer.alloc(2);
    header[1] = len;
  } else if (len < 65536) {
    header = Buffer.alloc(4);
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  header[0] = 0x80 | (rsv1 ? 0x40 : 0) | opcode;
  return Buffer.concat([header, payload]);
}

interface ParsedFrame {
  fin: boolean;
  opcode: number;
  payload: Buffer;
}

/** Reads complete frames from `buf`; returns them and the bytes left over. */
function parseFrames(buf: Buffer): { frames: ParsedFrame[]; rest: Buffer } {
  const frames: ParsedFrame[] = [];
  let off = 0;
  for (;;) {
    if (buf.length - off < 2) break;
    const b0 = buf[off] as number;
    const b1 = buf[off + 1] as number;
    let len = b1 & 0x7f;
    let pos = off + 2;
    if (len === 126) {
      if (buf.length - pos < 2) break;
      len = buf.readUInt16BE(pos);
      pos += 2;
    } else if (len === 127) {
      if (buf.length - pos < 8) break;
      len = Number(buf.readBigUInt64BE(pos));
      pos += 8;
    }
    const masked = (b1 & 0x80) !== 0;
    const maskLen = masked ? 4 : 0;
    if (buf.length - pos < maskLen + len) break;
    const mask = buf.subarray(pos, pos + maskLen);
    pos += maskLen;
    const payload = Buffer.from(buf.subarray(pos, pos + len));
    if (masked) {
      for (let i = 0; i < payload.length; i++) {
        payload[i] = (payload[i] as number) ^ (mask[i % 4] as number);
      }
    }
    frames.push({ fin: (b0 & 0x80) !== 0, opcode: b0 & 0x0f, payload });
    off = pos + len;
  }
  return { frames, rest: buf.subarray(off) };
}

function streamPayload(i: number, size: number): string {
  const head = `{"n":${i},"kind":"tick","data":"`;
  const fill = 'abcdefghij'.repeat(Math.ceil(size / 10));
  return `${head}${fill.slice(0, Math.max(0, size - head.length - 2))}"}`;
}

export async function startNetworkFixture(): Promise<NetworkFixture> {
  const served = new Map<string, ServedResponse>();
  const seen: string[] = [];
  const ws = { received: [] as WsMessage[], sent: [] as WsMessage[], opened: 0, closed: 0 };
  const sockets = new Set<Socket>();
  const pending = new Set<http.ServerResponse>();

  const server = http.createServer((req, res) => {
    const full = req.url ?? '/';
    const url = new URL(full, 'http://x');
    seen.push(`${req.method} ${full}`);
    const send = (status: number, headers: Record<string, string>, body: Buffer | string): void => {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      const all = { ...headers, 'content-length': String(bytes.length) };
      served.set(full, { status, headers: all, body: bytes });
      res.writeHead(status, all);
      res.end(bytes);
    };
    const page = (body: string): void =>
      send(200, { 'content-type': 'text/html; charset=utf-8' }, body);
    const api = (type: string, body: Buffer | string, extra: Record<string, string> = {}): void =>
      send(200, { 'content-type': type, [FIXTURE_HEADER]: url.pathname, ...extra }, body);
    switch (url.pathname) {
      case '/app':
        return page(
          html(
            'app',
            '<h1>app</h1><img src="/api/image.png?as=img" alt=""><link rel="stylesheet" href="/style.css">',
            APP_SCRIPT,
          ),
        );
      case '/style.css':
        return send(200, { 'content-type': 'text/css' }, 'h1{color:#333}');
      case '/api/data.json':
        return api('application/json; charset=utf-8', JSON_BODY, { 'cache-control': 'no-store' });
      case '/api/text':
        return api('text/plain; charset=utf-8', TEXT_BODY);
      case '/api/redirect':
        res.setHeader(FIXTURE_HEADER, url.pathname);
        served.set(full, {
          status: 302,
          headers: { location: '/api/target', [FIXTURE_HEADER]: url.pathname },
          body: Buffer.alloc(0),
        });
        res.writeHead(302, { location: '/api/target', 'content-length': '0' });
        return res.end();
      case '/api/target':
        return api('application/json', '{"redirected":true}');
      case '/api/big':
        return api('text/plain; charset=utf-8', BIG_BODY);
      case '/api/image.png':
        return api('image/png', PNG);
      case '/api/echo': {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () =>
          api(
            'application/x-www-form-urlencoded',
            FORM_ECHO_PREFIX + Buffer.concat(chunks).toString('utf8'),
          ),
        );
        return;
      }
      case '/api/item':
        return api(
          'application/json',
          JSON.stringify({ i: Number(url.searchParams.get('i')), ok: true }),
        );
      case '/spa':
        return page(html('spa', '<h1>spa</h1>', SPA_SCRIPT));
      case '/ws':
        return page(html('ws', '<h1>ws</h1>', WS_SCRIPT));
      case '/ws-bad':
        return page(html('ws bad', '<h1>ws bad</h1>', WS_BAD_SCRIPT));
      case '/ws-stream': {
        const count = Number(url.searchParams.get('count') ?? '100');
        const size = Number(url.searchParams.get('size') ?? '100');
        return page(
          html(
            'ws stream',
            '<h1>stream</h1>',
            wsStreamScript(count, size, url.searchParams.get('binary') === '1'),
          ),
        );
      }
      case '/many':
        return page(
          html('many', '<h1>many</h1>', manyScript(Number(url.searchParams.get('n') ?? '200'))),
        );
      case '/link':
        return page(html('link', '<a id="next" href="/second-doc">to the second document</a>'));
      case '/second-doc':
        return page(html('second', '<p id="second">second document</p>'));
      case '/doc-redirect':
        served.set(full, {
          status: 302,
          headers: { location: '/second-doc' },
          body: Buffer.alloc(0),
        });
        res.writeHead(302, { location: '/second-doc', 'content-length': '0' });
        return res.end();
      case '/slow': {
        const ms = Number(url.searchParams.get('ms') ?? '1000');
        pending.add(res);
        const timer = setTimeout(() => {
          pending.delete(res);
          page(html('slow', `<p>after ${ms} ms</p>`));
        }, ms);
        res.on('close', () => {
          clearTimeout(timer);
          pending.delete(res);
        });
        return;
      }
      default:
        return send(404, { 'content-type': 'text/plain' }, `no fixture at ${url.pathname}`);
    }
  });

  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(`UPGRADE ${req.url ?? '/'}`);
    const key = req.headers['sec-websocket-key'];
    if (url.pathname !== '/socket' || typeof key !== 'string') {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    const accept = crypto
      .createHash('sha1')
      .update(key + WS_GUID)
      .digest('base64');
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    ws.opened += 1;
    let closing = false;
    const send = (opcode: number, data: Buffer): void => {
      if (socket.destroyed) return;
      if (opcode === 1 || opcode === 2) ws.sent.push({ opcode, data });
      socket.write(frame(opcode, data));
    };
    const closeWith = (code: number): void => {
      if (closing) return;
      closing = true;
      const payload = Buffer.alloc(2);
      payload.writeUInt16BE(code);
      socket.write(frame(8, payload));
      socket.end();
    };
    socket.on('close', () => {
      ws.closed += 1;
    });
    socket.on('error', () => undefined);

    if (url.searchParams.get('bad') === '1') {
      // RSV1 set without a negotiated extension: the browser must fail the connection.
      socket.write(frame(1, Buffer.from('bad frame'), true));
      return;
    }
    const streamCount = Number(url.searchParams.get('stream') ?? '0');
    if (streamCount > 0) {
      const size = Number(url.searchParams.get('size') ?? '100');
      const binary = url.searchParams.get('binary') === '1';
      let i = 0;
      const pump = (): void => {
        // Writes in batches and waits for the socket to drain, so a long stream stays in order
        // without buffering everything in memory.
        while (i < streamCount && !socket.destroyed) {
          // Text is JSON-like and compressible; binary is random bytes, which no codec shrinks.
          const payload = binary ? crypto.randomBytes(size) : Buffer.from(streamPayload(i, size));
          i += 1;
          // Not recorded in `ws.sent`: a stream of thousands would only cost memory.
          if (!socket.write(frame(binary ? 2 : 1, payload))) {
            socket.once('drain', pump);
            return;
          }
        }
        if (i >= streamCount) closeWith(1000);
      };
      pump();
    }

    let buf: Buffer = Buffer.from(head);
    let fragments: Buffer[] = [];
    let fragmentOpcode = 0;
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const { frames, rest } = parseFrames(buf);
      buf = Buffer.from(rest);
      for (const f of frames) {
        if (f.opcode === 8) {
          closeWith(f.payload.length >= 2 ? f.payload.readUInt16BE(0) : 1000);
          return;
        }
        if (f.opcode === 9) {
          send(10, f.payload);
          continue;
        }
        if (f.opcode === 10) continue;
        if (f.opcode === 1 || f.opcode === 2) {
          fragmentOpcode = f.opcode;
          fragments = [];
        }
        fragments.push(f.payload);
        if (!f.fin) continue;
        const data = Buffer.concat(fragments);
        fragments = [];
        ws.received.push({ opcode: fragmentOpcode, data });
        // Echo: text comes back prefixed, binary comes back reversed.
        if (fragmentOpcode === 1) send(1, Buffer.from(`echo:${data.toString('utf8')}`));
        else send(2, Buffer.from(data).reverse());
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    served,
    seen,
    ws,
    close: async () => {
      for (const res of pending) res.destroy();
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
