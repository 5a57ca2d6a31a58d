import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Docker from 'dockerode';
import WebSocket from 'ws';
import type { PersonaInfo } from '@persona-browser/contracts';
import { personaListSchema } from '@persona-browser/contracts';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, call, freePort, startWaker, until } from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';

/**
 * Depths of sleep on the real engine: an idle persona goes paused → light → deep, each after
 * its own time; a call wakes it from light sleep in the container that stayed, its profile
 * intact; the API puts a persona to a depth and lists it.
 */
const FLEET = `ltest${process.pid}`;
const IDLE_S = 2;
const PAUSE_S = 3;
const LIGHT_S = 5;
const docker = new Docker();

let waker: RunningWaker;
let wakerEnv: Record<string, string>;
let ports: Record<string, number>;
let site: http.Server;
let sitePort: number;
/** The Cookie header of each request to the site's `/check`. */
const cookiesSeen: string[] = [];

const containerOf = (persona: string): Promise<Docker.ContainerInspectInfo | null> =>
  docker
    .getContainer(`pb-${FLEET}-${persona}`)
    .inspect()
    .catch(() => null);

/** The commands running in a persona's container. */
async function processesIn(persona: string): Promise<string[]> {
  // dockerode types `top` as any: the shape is Docker's /containers/{id}/top reply.
  const top = (await docker
    .getContainer(`pb-${FLEET}-${persona}`)
    .top({ ps_args: '-eo pid,comm' })) as { Processes: string[][] };
  return top.Processes.map((p) => p[1] ?? '');
}

/** The container's memory as `docker stats` shows it (usage less inactive file cache), MiB. */
async function memoryMib(persona: string): Promise<number> {
  const s = (await docker
    .getContainer(`pb-${FLEET}-${persona}`)
    .stats({ stream: false })) as unknown as {
    memory_stats: { usage: number; stats: Record<string, number> };
  };
  const m = s.memory_stats;
  return (m.usage - (m.stats.inactive_file ?? 0)) / 1024 / 1024;
}

/** Records each persona's state and depth as the API lists them, every 100 ms. */
function sampleDepths(name: string): { seen: { at: number; p: PersonaInfo }[]; stop: () => void } {
  const seen: { at: number; p: PersonaInfo }[] = [];
  let on = true;
  void (async () => {
    while (on) {
      const p = await waker.persona(name).catch(() => null);
      if (p) seen.push({ at: Date.now(), p });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return { seen, stop: () => (on = false) };
}

const firstAt = (seen: { at: number; p: PersonaInfo }[], depth: string, after = 0): number =>
  seen.find((s) => s.at >= after && s.p.depth === depth)?.at ?? NaN;

const ops = (persona: string): string => `http://127.0.0.1:${ports[persona]}/api/v1/ops`;

beforeAll(async () => {
  const image = await ensurePersonaImage();
  site = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    if (req.url === '/set') res.setHeader('set-cookie', 'pb=kept; Max-Age=86400; Path=/');
    if (req.url === '/check') cookiesSeen.push(req.headers.cookie ?? '');
    // A page slower than the idle time: the navigation is a request in flight all along.
    const wait = req.url === '/slow' ? (IDLE_S + 3) * 1000 : 0;
    setTimeout(() => res.end('<!doctype html><title>Site</title><p>site</p>'), wait);
  });
  await new Promise<void>((r) => site.listen(0, '0.0.0.0', r));
  sitePort = (site.address() as AddressInfo).port;
  const own = { waker: await freePort(), lena: await freePort(), mona: await freePort() };
  ports = own;
  ({ waker, env: wakerEnv } = await startFleet({
    driver: 'docker',
    fleet: FLEET,
    port: own.waker,
    image,
    personas: {
      lena: `PORT=${ports.lena}\nMODE=sleepy\nIDLE_TIMEOUT=${IDLE_S}\n`,
      mona: `PORT=${ports.mona}\nMODE=sleepy\nIDLE_TIMEOUT=600\n`,
    },
    env: { WAKER_PAUSE_SECONDS: String(PAUSE_S), LIGHT_SLEEP_SECONDS: String(LIGHT_S) },
  }));
}, 16 * 60_000);

afterAll(async () => {
  await waker?.stop();
  const left = await docker.listContainers({
    all: true,
    filters: { label: [`persona-browser.fleet=${FLEET}`] },
  });
  for (const c of left) await docker.getContainer(c.Id).remove({ force: true });
  site?.close();
});

test('an idle persona goes paused, then light, then deep, each at its time; a call wakes it from light sleep in the same container, its cookie kept', async () => {
  const created = await call(`${ops('lena')}/create-page`, {
    method: 'POST',
    body: { page_id: 'p1' },
  });
  expect(created).toMatchObject({ status: 200, body: { success: true } });
  const set = await call(`${ops('lena')}/p1/navigate`, {
    method: 'POST',
    body: { url: `http://host.docker.internal:${sitePort}/set` },
  });
  expect(set).toMatchObject({ status: 200, body: { success: true } });
  const lastCall = Date.now();
  const first = await containerOf('lena');
  expect(first?.State.Running).toBe(true);

  const sampler = sampleDepths('lena');
  try {
    await until(
      async () => (Number.isFinite(firstAt(sampler.seen, 'light')) ? true : null),
      60_000,
      'lena in light sleep',
    );
    const pausedAt = firstAt(sampler.seen, 'paused');
    const lightAt = firstAt(sampler.seen, 'light');
    // Idle for IDLE_TIMEOUT, paused for WAKER_PAUSE_SECONDS, then light (the tick is 1 s).
    expect(pausedAt - lastCall).toBeGreaterThanOrEqual(IDLE_S * 1000);
    expect(lightAt - pausedAt).toBeGreaterThanOrEqual(PAUSE_S * 1000 - 200);
    expect(
      sampler.seen.filter((s) => s.p.depth === 'paused').every((s) => s.p.state === 'sleeping'),
    ).toBe(true);

    // Light sleep: the same container runs (not paused), its browser closed.
    const light = await containerOf('lena');
    expect(light?.Id).toBe(first?.Id);
    expect(light?.State).toMatchObject({ Running: true, Paused: false });
    const procs = await processesIn('lena');
    expect(procs).toContain('node');
    expect(procs).not.toContain('chromium');

    // A call wakes it: the page pool is new (the browser restarted), the profile is the same.
    const woken = await call(`${ops('lena')}/create-page`, {
      method: 'POST',
      body: { page_id: 'p2' },
    });
    expect(woken).toMatchObject({ status: 200, body: { success: true, page_id: 'p2' } });
    expect((await waker.persona('lena')).depth).toBeNull();
    expect((await containerOf('lena'))?.Id).toBe(first?.Id);
    expect(await processesIn('lena')).toContain('chromium');
    const check = await call(`${ops('lena')}/p2/navigate`, {
      method: 'POST',
      body: { url: `http://host.docker.internal:${sitePort}/check` },
    });
    expect(check).toMatchObject({ status: 200, body: { success: true } });
    expect(cookiesSeen.at(-1)).toContain('pb=kept');
    const wokeAt = Date.now();

    // Down the ladder again, to the bottom: no container left.
    await until(
      async () => (Number.isFinite(firstAt(sampler.seen, 'deep', wokeAt)) ? true : null),
      60_000,
      'lena in deep sleep',
    );
    const light2 = firstAt(sampler.seen, 'light', wokeAt);
    const deep2 = firstAt(sampler.seen, 'deep', wokeAt);
    expect(firstAt(sampler.seen, 'paused', wokeAt)).toBeLessThan(light2);
    expect(deep2 - light2).toBeGreaterThanOrEqual(LIGHT_S * 1000 - 200);
    const gone = await containerOf('lena');
    expect(gone?.State.Running ?? false).toBe(false);
  } finally {
    sampler.stop();
  }
}, 240_000);

test('the API puts a persona to a depth, lists it, and refuses one it does not know', async () => {
  const url = `${waker.url}/api/personas/mona`;
  const woke = await call(`${url}/wake`, { method: 'POST' });
  expect(woke).toMatchObject({ status: 200, body: { state: 'running', depth: null } });
  await call(`${ops('mona')}/create-page`, { method: 'POST', body: { page_id: 'm1' } });
  const awakeMib = await memoryMib('mona');

  const bad = await call(`${url}/sleep`, { method: 'POST', body: { depth: 'shallow' } });
  expect(bad.status).toBe(400);
  expect(bad.body).toMatchObject({ success: false });
  expect(JSON.stringify(bad.body)).toMatch(/depth/);
  expect((await waker.persona('mona')).state).toBe('running');

  const light = await call(`${url}/sleep`, { method: 'POST', body: { depth: 'light' } });
  expect(light).toMatchObject({ status: 200, body: { state: 'sleeping', depth: 'light' } });
  const list = await call(`${waker.url}/api/personas`);
  expect(personaListSchema.validate(list.body).error).toBeUndefined();
  expect(await processesIn('mona')).not.toContain('chromium');
  // The browser's memory is given back; the worker's is kept.
  const lightMib = await memoryMib('mona');
  expect(lightMib).toBeLessThan(awakeMib * 0.75);
  const metrics = await call(`${waker.url}/metrics`);
  expect(String(metrics.body)).toMatch(/persona_sleep_depth\{persona="mona",depth="light"\} 1\b/);

  // A lighter depth than the one it sleeps at leaves it there.
  const paused = await call(`${url}/sleep`, { method: 'POST', body: { depth: 'paused' } });
  expect(paused).toMatchObject({ status: 200, body: { depth: 'light' } });

  // A request at its port wakes it.
  const status = await call(`${ops('mona')}/create-page`, {
    method: 'POST',
    body: { page_id: 'm2' },
  });
  expect(status).toMatchObject({ status: 200, body: { success: true } });
  expect((await waker.persona('mona')).depth).toBeNull();

  const deep = await call(`${url}/sleep`, { method: 'POST' });
  expect(deep).toMatchObject({ status: 200, body: { state: 'sleeping', depth: 'deep' } });
  expect((await containerOf('mona'))?.State.Running ?? false).toBe(false);
  const stays = await call(`${url}/sleep`, { method: 'POST', body: { depth: 'light' } });
  expect(stays).toMatchObject({ status: 200, body: { depth: 'deep' } });
}, 240_000);

test('a request in flight keeps an idle persona awake past its idle time; the ladder starts when it ends', async () => {
  await call(`${ops('lena')}/create-page`, { method: 'POST', body: { page_id: 'slow' } });
  const sampler = sampleDepths('lena');
  try {
    const started = Date.now();
    const slow = await call(`${ops('lena')}/slow/navigate`, {
      method: 'POST',
      body: { url: `http://host.docker.internal:${sitePort}/slow` },
    });
    const ended = Date.now();
    expect(slow).toMatchObject({ status: 200, body: { success: true } });
    // Longer than the idle time, and awake all along.
    expect(ended - started).toBeGreaterThan(IDLE_S * 1000 + 2000);
    const during = sampler.seen.filter((x) => x.at > started + 500 && x.at < ended - 500);
    expect(during.length).toBeGreaterThan(5);
    expect(during.every((x) => x.p.state === 'running' && x.p.depth === null)).toBe(true);
    // Control: once it ended, the persona goes down the ladder.
    await until(
      async () => (Number.isFinite(firstAt(sampler.seen, 'paused', ended)) ? true : null),
      30_000,
      'lena paused after the slow request',
    );
    expect(firstAt(sampler.seen, 'paused', ended) - ended).toBeGreaterThanOrEqual(
      IDLE_S * 1000 - 200,
    );
  } finally {
    sampler.stop();
  }
}, 120_000);

test('an open live view keeps a persona off the ladder; closed, the ladder starts', async () => {
  // A person opens the live view: a viewer session for the key, then the RFB WebSocket, which
  // carries the screen's first bytes from the persona's VNC server.
  const session = await call(`http://127.0.0.1:${ports.lena}/vnc/session`, { method: 'POST' });
  expect(session.status).toBe(200);
  const cookie = (session.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  expect(cookie).toMatch(/=/);
  const ws = new WebSocket(`ws://127.0.0.1:${ports.lena}/vnc/websockify`, {
    headers: { cookie, authorization: `Bearer ${KEY}` },
  });
  const banner = await new Promise<string>((resolve, reject) => {
    ws.once('message', (data: Buffer) => resolve(data.toString('latin1')));
    ws.once('error', reject);
  });
  expect(banner).toMatch(/^RFB \d{3}\.\d{3}\n/);
  const sampler = sampleDepths('lena');
  try {
    const opened = Date.now();
    // Time itself is tested: well past idle, pause and light times together.
    await new Promise((r) => setTimeout(r, (IDLE_S + PAUSE_S + 2) * 1000));
    const watched = sampler.seen.filter((x) => x.at > opened);
    expect(watched.length).toBeGreaterThan(20);
    expect(watched.every((x) => x.p.state === 'running' && x.p.depth === null)).toBe(true);
    // Control: closed, the persona goes down the ladder after its idle time, counted from the
    // end of the view's connection (its closing handshake may take a while on a busy machine).
    const ended = new Promise<number>((resolve) => ws.once('close', () => resolve(Date.now())));
    ws.close();
    const closed = await ended;
    await until(
      async () => (Number.isFinite(firstAt(sampler.seen, 'paused', closed)) ? true : null),
      30_000,
      'lena paused after the live view closed',
    );
    expect(firstAt(sampler.seen, 'paused', closed) - closed).toBeGreaterThanOrEqual(
      IDLE_S * 1000 - 200,
    );
  } finally {
    ws.terminate();
    sampler.stop();
  }
}, 120_000);

test('a waker started again takes over a lightly sleeping worker as it is, and a call wakes it', async () => {
  const url = `${waker.url}/api/personas/mona`;
  await call(`${ops('mona')}/create-page`, { method: 'POST', body: { page_id: 'r1' } });
  const light = await call(`${url}/sleep`, { method: 'POST', body: { depth: 'light' } });
  expect(light).toMatchObject({ status: 200, body: { depth: 'light' } });
  const before = await containerOf('mona');
  waker.proc.kill('SIGKILL');
  await waker.exited;
  waker = await startWaker(wakerEnv);
  const again = await until(
    async () => {
      const p = await waker.persona('mona');
      return p.depth === 'light' ? p : null;
    },
    30_000,
    'mona taken over in light sleep',
  );
  expect(again.state).toBe('sleeping');
  expect(waker.logs.join('\n')).toContain('worker taken over in light sleep');
  expect((await containerOf('mona'))?.Id).toBe(before?.Id);
  const woken = await call(`${ops('mona')}/create-page`, {
    method: 'POST',
    body: { page_id: 'r2' },
  });
  expect(woken).toMatchObject({ status: 200, body: { success: true } });
  expect((await containerOf('mona'))?.Id).toBe(before?.Id);
  expect(await processesIn('mona')).toContain('chromium');
}, 120_000);
