import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { startXvfb } from '@persona-browser/xvfb';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { freePort } from '@persona-browser/testkit/fixture';
import type { Refusal } from '@persona-browser/testkit/rfb-client';
import { RfbClient } from '@persona-browser/testkit/rfb-client';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, alive, pidsMatching, sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * Where the live view's VNC server comes from: the worker's own Xvfb gets one on a free
 * localhost port; VNC_PORT names it; an external display without VNC_PORT has none (503).
 */

type Body = Record<string, any>;

function parentOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}
let display: VirtualDisplay;

beforeAll(async () => {
  display = await startXvfb();
});
afterAll(async () => {
  await display?.stop();
});

async function cookieOf(w: RunningWorker): Promise<string> {
  const r = await fetch(`${w.url}/vnc/session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(r.status).toBe(200);
  return (r.headers.get('set-cookie') as string).split(';')[0] as string;
}

/** Whether a port answers on this machine's first non-loopback IPv4 address. */
function reachableFromOutside(port: number): Promise<boolean> {
  const address = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  if (!address) return Promise.resolve(false);
  return new Promise((resolve) => {
    const s = net.connect({ host: address, port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

const ws = (w: RunningWorker): string => `${w.url.replace('http', 'ws')}/vnc/websockify`;

test('an external DISPLAY without VNC_PORT: /vnc/, its WebSocket and control answer 503 and say why', async () => {
  const w = await startWorker({ env: { DISPLAY: display.display } });
  try {
    await w.waitInitialized();
    const page = await fetch(`${w.url}/vnc/`);
    expect(page.status).toBe(503);
    const body = (await page.json()) as Body;
    expect(body).toEqual({ success: false, error: expect.any(String), page_id: null });
    expect(body.error).toMatch(/^Live view unavailable: .*external display .*VNC_PORT/);

    const cookie = await cookieOf(w);
    const refused = (await RfbClient.open(ws(w), cookie)) as Refusal;
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ success: false, page_id: null });

    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'p' } });
    const take = await w.call<Body>('POST', '/vnc/control', { body: { page_id: 'p' } });
    expect(take.status).toBe(503);
    expect(take.body).toMatchObject({ success: false, page_id: 'p' });
    // Nothing leased: the API keeps the page.
    const nav = await w.call('POST', '/api/v1/ops/p/navigate', { body: { url: 'about:blank' } });
    expect(nav.status).toBe(200);
    // The worker started no x11vnc (other tests on this machine may run their own).
    expect(w.logs.filter((l) => l.includes('vnc for the live view'))).toEqual([]);
    const children = pidsMatching('x11vnc').filter((pid) => parentOf(pid) === w.proc.pid);
    expect(children).toEqual([]);
  } finally {
    await w.stop();
  }
});

test('an external DISPLAY with VNC_PORT: the live view bridges to the x11vnc on that port', async () => {
  const port = await freePort();
  const w = await startWorker({ env: { DISPLAY: display.display, VNC_PORT: String(port) } });
  try {
    const c = await RfbClient.connect(ws(w), await cookieOf(w));
    const hs = await c.handshake();
    expect(hs.init).toMatchObject({ width: 1920, height: 1080 });
    c.requestUpdate(false, 0, 0, 32, 32);
    expect((await c.readUpdate()).length).toBeGreaterThan(0);
    await c.close();
  } finally {
    await w.stop();
  }
});

/** The worker's "vnc for the live view …" log entries so far. */
function vncEntries(w: RunningWorker): Body[] {
  return w.logs
    .map((l) => {
      try {
        return JSON.parse(l) as Body;
      } catch {
        return {};
      }
    })
    .filter((e) => typeof e.message === 'string' && e.message.startsWith('vnc for the live view'));
}

const vncChildren = (w: RunningWorker): number[] =>
  pidsMatching('x11vnc').filter((pid) => parentOf(pid) === w.proc.pid);

async function until(what: () => boolean, ms: number): Promise<void> {
  for (const end = Date.now() + ms; !what() && Date.now() < end;) await sleep(100);
}

test("the worker's own display gets an x11vnc on a free localhost port only while someone watches", async () => {
  const w = await startWorker();
  const pids: number[] = [];
  try {
    await w.waitInitialized();
    // Nobody watches: no VNC server (the memory an idle persona holds).
    expect(vncChildren(w)).toEqual([]);
    expect(vncEntries(w)).toEqual([]);

    const cookie = await cookieOf(w);
    const c = await RfbClient.connect(ws(w), cookie);
    await c.handshake();
    const started = vncEntries(w)[0];
    expect(started).toMatchObject({
      message: 'vnc for the live view listening on localhost',
      port: expect.any(Number),
      pid: expect.any(Number),
    });
    pids.push(started!.pid as number);
    expect(vncChildren(w)).toEqual(pids);
    // Bound to the loopback only.
    expect(await reachableFromOutside(started!.port as number)).toBe(false);
    await c.close();

    // The last viewer left: it stops after the linger (5 s).
    await until(() => !alive(pids[0]!), 10_000);
    expect(alive(pids[0]!)).toBe(false);
    expect(vncEntries(w).at(-1)).toMatchObject({
      message: 'vnc for the live view stopped',
      reason: 'no viewer',
    });

    // The next viewer starts it again, on the same port.
    const again = await RfbClient.connect(ws(w), cookie);
    const hs = await again.handshake();
    expect(hs.init).toMatchObject({ width: 1920, height: 1080 });
    const restarted = vncEntries(w).at(-1);
    expect(restarted).toMatchObject({ port: started!.port, pid: expect.any(Number) });
    pids.push(restarted!.pid as number);
    expect(vncChildren(w)).toEqual([pids[1]]);
  } finally {
    await w.stop();
  }
  // Gone with the worker, viewer or not.
  for (const pid of pids) {
    await until(() => !alive(pid), 2_000);
    expect(alive(pid)).toBe(false);
  }
});
