import WebSocket from 'ws';

/** A minimal RFB 3.8 viewer over the worker's WebSocket bridge (raw encoding only). */
export interface ServerInit {
  width: number;
  height: number;
  bitsPerPixel: number;
  name: string;
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
  encoding: number;
  pixels: Buffer;
}

/** The HTTP answer to an upgrade the worker refused. */
export interface Refusal {
  status: number;
  body: string;
}

export class RfbClient {
  private buf = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  closed: { code: number; reason: string } | null = null;
  init: ServerInit | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      this.buf = Buffer.concat([this.buf, data]);
      this.wake?.();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake?.();
    });
  }

  /** Opens the WebSocket; resolves with the client, or with the refusal's status and body. */
  static open(url: string, cookie?: string): Promise<RfbClient | Refusal> {
    const ws = new WebSocket(url, { headers: cookie ? { cookie } : {} });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RfbClient(ws)));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.once('error', reject);
    });
  }

  static async connect(url: string, cookie: string): Promise<RfbClient> {
    const c = await RfbClient.open(url, cookie);
    if (!(c instanceof RfbClient)) throw new Error(`upgrade refused: ${c.status} ${c.body}`);
    return c;
  }

  /** Resolves once `n` bytes are buffered, and takes them. */
  async read(n: number, timeoutMs = 15_000): Promise<Buffer> {
    const until = Date.now() + timeoutMs;
    while (this.buf.length < n) {
      if (this.closed) throw new Error(`closed (${this.closed.code} ${this.closed.reason})`);
      const left = until - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${n} bytes (have ${this.buf.length})`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  send(bytes: Buffer | number[]): void {
    this.ws.send(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes));
  }

  /** ProtocolVersion, security type None, ClientInit, ServerInit; then raw encoding only. */
  async handshake(): Promise<{ version: string; securityTypes: number[]; init: ServerInit }> {
    const version = (await this.read(12)).toString('latin1');
    this.send(Buffer.from('RFB 003.008\n', 'latin1'));
    const n = (await this.read(1))[0] as number;
    if (n === 0) throw new Error('server refused the connection');
    const securityTypes = [...(await this.read(n))];
    this.send([1]);
    const result = (await this.read(4)).readUInt32BE(0);
    if (result !== 0) throw new Error(`security result ${result}`);
    this.send([1]); // ClientInit: shared
    const head = await this.read(24);
    const name = (await this.read(head.readUInt32BE(20))).toString('latin1');
    this.init = {
      width: head.readUInt16BE(0),
      height: head.readUInt16BE(2),
      bitsPerPixel: head[4] as number,
      name,
    };
    // SetEncodings: Raw only, so updates are easy to read here.
    this.send([2, 0, 0, 1, 0, 0, 0, 0]);
    return { version, securityTypes, init: this.init };
  }

  requestUpdate(incremental: boolean, x: number, y: number, w: number, h: number): void {
    const b = Buffer.alloc(10);
    b[0] = 3;
    b[1] = incremental ? 1 : 0;
    b.writeUInt16BE(x, 2);
    b.writeUInt16BE(y, 4);
    b.writeUInt16BE(w, 6);
    b.writeUInt16BE(h, 8);
    this.send(b);
  }

  /** Reads server messages until a FramebufferUpdate, and returns its rectangles. */
  async readUpdate(timeoutMs = 20_000): Promise<Rect[]> {
    const bpp = (this.init?.bitsPerPixel ?? 32) / 8;
    for (;;) {
      const type = (await this.read(1, timeoutMs))[0];
      if (type === 0) {
        const count = (await this.read(3, timeoutMs)).readUInt16BE(1);
        const rects: Rect[] = [];
        for (let i = 0; i < count; i++) {
          const r = await this.read(12, timeoutMs);
          const rect = {
            x: r.readUInt16BE(0),
            y: r.readUInt16BE(2),
            w: r.readUInt16BE(4),
            h: r.readUInt16BE(6),
            encoding: r.readInt32BE(8),
          };
          if (rect.encoding !== 0) throw new Error(`unexpected encoding ${rect.encoding}`);
          rects.push({ ...rect, pixels: await this.read(rect.w * rect.h * bpp, timeoutMs) });
        }
        return rects;
      } else if (type === 1) {
        const h = await this.read(5, timeoutMs);
        await this.read(6 * h.readUInt16BE(3), timeoutMs);
      } else if (type === 2) {
        // Bell
      } else if (type === 3) {
        const h = await this.read(7, timeoutMs);
        await this.read(h.readUInt32BE(3), timeoutMs);
      } else {
        throw new Error(`unexpected server message ${type}`);
      }
    }
  }

  pointer(x: number, y: number, mask: number): void {
    const b = Buffer.alloc(6);
    b[0] = 5;
    b[1] = mask;
    b.writeUInt16BE(x, 2);
    b.writeUInt16BE(y, 4);
    this.send(b);
  }

  /** Move there, press and release the left button. */
  click(x: number, y: number): void {
    this.pointer(x, y, 0);
    this.pointer(x, y, 1);
    this.pointer(x, y, 0);
  }

  key(keysym: number, down: boolean): void {
    const b = Buffer.alloc(8);
    b[0] = 4;
    b[1] = down ? 1 : 0;
    b.writeUInt32BE(keysym, 4);
    this.send(b);
  }

  /** Resolves once the server side closed the WebSocket. */
  async waitClosed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    const until = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    if (!this.closed) throw new Error('still open');
    return this.closed;
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}
