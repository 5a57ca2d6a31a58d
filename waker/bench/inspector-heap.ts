import http from 'node:http';
import WebSocket from 'ws';

/**
 * The V8 heap of a running Node process, read through its inspector: the process is started
 * with `--inspect-port=HOST:PORT` (which opens nothing) and SIGUSR1 opens the inspector on that
 * port only when this is called, after the measurements it could disturb.
 */
export interface HeapReading {
  used_mb: number;
  total_mb: number;
  /** Used heap after a full garbage collection: what the process really keeps. */
  used_after_gc_mb: number;
}

const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

/** The WebSocket address of the first inspector target on `port`, or undefined. */
function firstTarget(port: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/json/list' }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let list: unknown;
          try {
            list = JSON.parse(text);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
            return;
          }
          const first: unknown = Array.isArray(list) ? list[0] : undefined;
          const url =
            typeof first === 'object' && first !== null && 'webSocketDebuggerUrl' in first
              ? first.webSocketDebuggerUrl
              : undefined;
          resolve(typeof url === 'string' ? url : undefined);
        });
      })
      .on('error', reject);
  });
}

async function debuggerUrl(pid: number, port: number): Promise<string> {
  process.kill(pid, 'SIGUSR1');
  const until = Date.now() + 10_000;
  for (;;) {
    const url = await firstTarget(port).catch(() => undefined);
    if (url) return url;
    if (Date.now() > until) throw new Error(`no inspector on port ${port} for pid ${pid}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Opens the inspector of `pid` (listening on `port` once signalled) and reads its heap. */
export async function readHeap(pid: number, port: number): Promise<HeapReading> {
  const ws = new WebSocket(await debuggerUrl(pid, port));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let next = 0;
  const send = (method: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      next += 1;
      const id = next;
      // ws hands a message as one Buffer with its default binaryType ('nodebuffer').
      const onMessage = (data: Buffer): void => {
        const msg = JSON.parse(data.toString('utf8')) as {
          id?: number;
          result?: Record<string, unknown>;
          error?: { message: string };
        };
        if (msg.id !== id) return;
        ws.off('message', onMessage);
        if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
        else resolve(msg.result ?? {});
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id, method }));
    });
  try {
    const before = await send('Runtime.getHeapUsage');
    await send('HeapProfiler.collectGarbage');
    const after = await send('Runtime.getHeapUsage');
    return {
      used_mb: mb(Number(before.usedSize)),
      total_mb: mb(Number(before.totalSize)),
      used_after_gc_mb: mb(Number(after.usedSize)),
    };
  } finally {
    ws.close();
  }
}
