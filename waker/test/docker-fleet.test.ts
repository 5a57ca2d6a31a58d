import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { personaListSchema } from '@persona-browser/contracts';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import type { RunningWaker } from '@persona-browser/testkit/waker';
import { ensurePersonaImage } from '@persona-browser/testkit/image';
import {
  KEY,
  call,
  freePort,
  makePersonas,
  sleep,
  startWaker,
} from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';
import { step } from '@persona-browser/testkit/steps';
import { pageProblems } from '@persona-browser/testkit/page-problems';

/**
 * The waker with the `docker` driver against the real engine: one container per persona, found
 * again by labels, nothing left behind. The image is built from this checkout
 * (`@persona-browser/testkit/image`).
 */
const FLEET = `dtest${process.pid}`;
const IDLE_S = 3;
const docker = new Docker();
const fleetContainers = (all = true): Promise<Docker.ContainerInfo[]> =>
  docker.listContainers({ all, filters: { label: [`persona-browser.fleet=${FLEET}`] } });

const containerOf = async (persona: string): Promise<Docker.ContainerInspectInfo | null> =>
  docker
    .getContainer(`pb-${FLEET}-${persona}`)
    .inspect()
    .catch(() => null);

let waker: RunningWaker;
let env: Record<string, string>;
let ports: { waker: number; alice: number; bob: number };
let personasDir: string;

beforeAll(async () => {
  const image = await ensurePersonaImage();
  ports = { waker: await freePort(), alice: await freePort(), bob: await freePort() };
  ({ waker, env, personasDir } = await startFleet({
    driver: 'docker',
    fleet: FLEET,
    port: ports.waker,
    image,
    personas: {
      alice: `PORT=${ports.alice}\nMODE=always-on\nMEMORY_LIMIT_MB=1536\nCPUS=1.5\n`,
      bob: `PORT=${ports.bob}\nMODE=sleepy\nIDLE_TIMEOUT=${IDLE_S}\n`,
    },
  }));
}, 16 * 60_000);

afterAll(async () => {
  await waker?.stop();
  for (const c of await fleetContainers()) {
    await docker.getContainer(c.Id).remove({ force: true });
  }
});

describe('waker with the docker driver', () => {
  test('the always-on persona runs in its own labelled container and answers through its port', async () => {
    await waker.waitState('alice', 'running', 90_000);
    const list = await call(`${waker.url}/api/personas`);
    expect(personaListSchema.validate(list.body).error).toBeUndefined();
    const status = await call(`http://127.0.0.1:${ports.alice}/api/v1/system/status`, {
      key: null,
    });
    expect(status).toMatchObject({ status: 200, body: { initialized: true } });
    const created = await call(`http://127.0.0.1:${ports.alice}/api/v1/ops/create-page`, {
      method: 'POST',
      body: { page_id: 'in-container' },
    });
    expect(created).toMatchObject({
      status: 200,
      body: { success: true, page_id: 'in-container' },
    });
    const ping = await call(`http://127.0.0.1:${ports.alice}/api/v1/system/ping`, { key: null });
    // Inside the container the persona folder is /persona, so the worker names itself after
    // that folder: the persona's own name needs a worker change (reported to the lead).
    expect(ping.body).toMatchObject({ status: 'alive' });

    const c = await containerOf('alice');
    expect(c?.State.Running).toBe(true);
    expect(c?.Config.Labels).toMatchObject({
      'persona-browser.persona': 'alice',
      'persona-browser.fleet': FLEET,
    });
    expect(c?.HostConfig.Memory).toBe(1536 * 1024 * 1024);
    expect(c?.HostConfig.NanoCpus).toBe(1.5e9);
    expect(c?.HostConfig.ShmSize).toBe(512 * 1024 * 1024);
    expect(c?.HostConfig.ExtraHosts).toEqual(['host.docker.internal:host-gateway']);
    expect(c?.HostConfig.SecurityOpt?.[0]).toMatch(/^seccomp=\{/);
    expect(c?.Mounts).toEqual([
      expect.objectContaining({ Source: path.join(personasDir, 'alice'), Destination: '/persona' }),
    ]);
    // The persona folder is the worker's: its profile lands there.
    expect(fs.existsSync(path.join(personasDir, 'alice', 'profile'))).toBe(true);
  });

  test('a site on the host opens at host.docker.internal; 127.0.0.1 is refused with a hint saying so', async () => {
    // The site listens on every address: the container comes in over the Docker bridge.
    const site = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>Host site</title><p>served by the host</p>');
    });
    await new Promise<void>((r) => site.listen(0, '0.0.0.0', r));
    const port = (site.address() as AddressInfo).port;
    await waker.waitState('alice', 'running', 90_000);
    const ops = `http://127.0.0.1:${ports.alice}/api/v1/ops`;
    const navigate = (url: string) =>
      call(`${ops}/host-site/navigate`, { method: 'POST', body: { url } });
    try {
      const created = await call(`${ops}/create-page`, {
        method: 'POST',
        body: { page_id: 'host-site' },
      });
      expect(created.status).toBe(200);
      const onHost = await navigate(`http://host.docker.internal:${port}/`);
      expect(onHost.body).toMatchObject({ success: true, status_code: 200 });
      const seen = await call(`${ops}/host-site/extract-content`, { method: 'POST', body: {} });
      expect(seen.body).toMatchObject({ success: true, title: 'Host site' });
      expect(seen.body.content).toContain('served by the host');
      // The same port on 127.0.0.1 is the container itself, where nothing listens on it.
      const local = await navigate(`http://127.0.0.1:${port}/`);
      expect(local.body).toMatchObject({ success: false, page_id: 'host-site' });
      const error = local.body.error as string;
      expect(error).toContain(`net::ERR_CONNECTION_REFUSED at http://127.0.0.1:${port}/`);
      expect(error).toContain('inside a container 127.0.0.1 is the container itself');
      expect(error).toContain(
        `reached at host.docker.internal (http://host.docker.internal:${port}/)`,
      );
    } finally {
      site.close();
      await call(`${ops}/host-site/destroy-page`, { method: 'DELETE' });
    }
  });

  test('the sleepy persona wakes on its first call with its key (answered), then sleeps and its container goes', async () => {
    expect((await waker.persona('bob')).state).toBe('sleeping');
    expect(await containerOf('bob')).toBeNull();
    const first = await call(`http://127.0.0.1:${ports.bob}/api/v1/system/process-tree`);
    expect(first.status).toBe(200);
    const doneAt = Date.now();
    expect((await containerOf('bob'))?.State.Running).toBe(true);
    const status = await call(`http://127.0.0.1:${ports.bob}/api/v1/system/status`, { key: null });
    expect(status).toMatchObject({ status: 200, body: { initialized: true } });
    await waker.waitState('bob', 'sleeping', 60_000);
    expect(Date.now() - doneAt).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    const until = Date.now() + 30_000;
    while ((await containerOf('bob')) !== null && Date.now() < until) await sleep(200);
    expect(await containerOf('bob')).toBeNull();
  });

  test('a profile cookie survives a sleep and the wake after it (the folder is a bind mount)', async () => {
    // A site on the host that the container reaches as host.docker.internal.
    const value = `v${Date.now()}`;
    const site = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      if (req.url === '/set') res.setHeader('set-cookie', `pb_test=${value}; Max-Age=3600; Path=/`);
      res.end(`<html><body><pre id="c">cookie=${req.headers.cookie ?? ''}</pre></body></html>`);
    });
    await new Promise<void>((r) => site.listen(0, '0.0.0.0', r));
    const sitePort = (site.address() as AddressInfo).port;
    const bob = `http://127.0.0.1:${ports.bob}/api/v1/ops`;
    const visit = async (page: string, route: string): Promise<string> => {
      expect(
        (await call(`${bob}/create-page`, { method: 'POST', body: { page_id: page } })).status,
      ).toBe(200);
      const nav = await call(`${bob}/${page}/navigate`, {
        method: 'POST',
        body: { url: `http://host.docker.internal:${sitePort}${route}` },
      });
      expect(nav.body).toMatchObject({ success: true });
      const got = await call(`${bob}/${page}/extract-content`, { method: 'POST', body: {} });
      return got.body.content as string;
    };
    try {
      await visit('before', '/set');
      const slept = await call(`${waker.url}/api/personas/bob/sleep`, { method: 'POST' });
      expect(slept.body.state).toBe('sleeping');
      expect(await containerOf('bob')).toBeNull();
      // The next request wakes a new container on the same folder.
      expect(await visit('after', '/read')).toContain(`cookie=pb_test=${value}`);
    } finally {
      site.close();
    }
  });

  test('the live view through the port draws the screen and keeps a sleepy persona awake', async () => {
    // A person opens the viewer link of the fleet panel in a browser: noVNC completes the RFB
    // handshake over the WebSocket the waker forwards, and the screen arrives.
    const client = await launchClientBrowser();
    const viewer = client.browser;
    try {
      const page = await viewer.newPage();
      const problems = pageProblems(page);
      await page.goto(`http://127.0.0.1:${ports.bob}/vnc/#key=${KEY}`);
      const screen = await page
        .waitForFunction(
          () => {
            const c = document.querySelector<HTMLCanvasElement>('#screen canvas');
            if (!c || c.width < 100) return null;
            const data = (c.getContext('2d') as CanvasRenderingContext2D).getImageData(
              0,
              0,
              c.width,
              c.height,
            ).data;
            const colours = new Set<number>();
            for (let i = 0; i < data.length; i += 4 * 997)
              colours.add(data[i]! * 65536 + data[i + 1]! * 256 + data[i + 2]!);
            return colours.size > 1 ? { w: c.width, h: c.height } : null;
          },
          { timeout: 90_000, polling: 500 },
        )
        .catch(async (err: unknown) => {
          // What the person would have seen instead of the screen, and where bob was meanwhile.
          const shown = await page.evaluate(() => document.body.innerText).catch(String);
          const state = (await waker.persona('bob')).state;
          throw new Error(
            `no screen drawn in 90 s (${String(err)}); bob is ${state}; the page shows: ${shown.slice(0, 300)}; on the way: ${problems.lines().join('; ') || 'nothing failed'}`,
          );
        });
      expect(await screen.jsonValue()).toEqual({ w: 1920, h: 1080 });
      // The open viewer is activity: well past IDLE_TIMEOUT, bob is still up.
      // Time itself is tested: awake past the idle time.
      await sleep((IDLE_S + 3) * 1000);
      const info = await waker.persona('bob');
      expect(info.state).toBe('running');
      expect(info.idle_seconds).toBeNull();
      // Closed, bob sleeps again.
      await page.close();
      await waker.waitState('bob', 'sleeping', 60_000);
    } finally {
      await client.close();
    }
  });

  test('a container killed from outside comes back', async () => {
    await waker.waitState('alice', 'running', 90_000);
    const before = await containerOf('alice');
    await docker.getContainer(before?.Id as string).kill();
    await waker.waitState('alice', ['crashed', 'waking'], 15_000);
    await waker.waitState('alice', 'running', 90_000);
    const after = await containerOf('alice');
    expect(after?.Id).not.toBe(before?.Id);
    const status = await call(`http://127.0.0.1:${ports.alice}/api/v1/system/status`, {
      key: null,
    });
    expect(status.body.initialized).toBe(true);
  });

  test('a restarted waker finds its running container again by labels; with pausing on, a paused persona then wakes faster than a stopped one', async () => {
    await waker.waitState('alice', 'running', 90_000);
    await step(
      '1 of 2: a restarted waker finds its running container again by labels',
      async () => {
        const before = await containerOf('alice');
        waker.proc.kill('SIGKILL');
        await waker.exited;
        expect((await containerOf('alice'))?.State.Running).toBe(true);
        // This time sleepy personas pause first: a paused one wakes without a cold start.
        waker = await startWaker({ ...env, WAKER_PAUSE_SECONDS: '120' });
        const alice = await waker.persona('alice');
        expect(alice.state).toBe('running');
        expect((await containerOf('alice'))?.Id).toBe(before?.Id);
        expect(waker.logs.some((l) => l.includes('worker taken over'))).toBe(true);
      },
    );
    await step('2 of 2: a paused persona wakes faster than a stopped one', async () => {
      // Stopped first (an API sleep always stops; only the idle sleep pauses).
      await call(`${waker.url}/api/personas/bob/sleep`, { method: 'POST' });
      expect(await containerOf('bob')).toBeNull();
      // Each wake is a call with the key (a status read is the waker's answer: it wakes nothing).
      const wakingCall = `http://127.0.0.1:${ports.bob}/api/v1/system/process-tree`;
      let t = performance.now();
      const cold = await call(wakingCall);
      const coldMs = performance.now() - t;
      expect(cold).toMatchObject({ status: 200 });
      await waker.waitState('bob', 'sleeping', 60_000);
      expect((await containerOf('bob'))?.State.Paused).toBe(true);
      t = performance.now();
      const warm = await call(wakingCall);
      const warmMs = performance.now() - t;
      expect(warm).toMatchObject({ status: 200 });
      expect((await containerOf('bob'))?.State.Paused).toBe(false);
      const status = await call(`http://127.0.0.1:${ports.bob}/api/v1/system/status`, {
        key: null,
      });
      expect(status).toMatchObject({ status: 200, body: { initialized: true } });
      expect(warmMs).toBeLessThan(coldMs);
    });
  }, 300_000);

  test('stopping the waker removes every container of the fleet', async () => {
    expect((await fleetContainers()).length).toBeGreaterThan(0);
    expect(await waker.stop()).toBe(0);
    expect(await fleetContainers()).toEqual([]);
  });
});

describe('docker driver bad input', () => {
  test('a missing seccomp profile stops the waker at start with the file named', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-waker-noseccomp-'));
    await expect(
      startWaker({ ...env, WAKER_PORT: String(await freePort()), REPO_ROOT: root }),
    ).rejects.toThrow(path.join(root, 'docker', 'seccomp-chromium.json'));
  });

  test('a broken image name is a clear error; the API keeps running', async () => {
    const fleet = `${FLEET}bad`;
    const p = { waker: await freePort(), lost: await freePort() };
    const dirs = makePersonas({ lost: `PORT=${p.lost}\nMODE=sleepy\nIDLE_TIMEOUT=5\n` });
    const bad = await startWaker({
      ...env,
      WAKER_PORT: String(p.waker),
      PERSONAS_DIR: dirs.personasDir,
      FLEET_ID: fleet,
      PERSONA_IMAGE: 'persona-browser:no-such-tag',
    });
    try {
      // A call with the key wakes it, and the wake fails.
      const r = await call(`http://127.0.0.1:${p.lost}/api/v1/system/process-tree`);
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ success: false, page_id: null });
      expect(r.body.error).toContain('persona-browser:no-such-tag');
      const lost = await bad.persona('lost');
      expect(lost.state).toBe('crashed');
      expect(lost.error).toContain('image persona-browser:no-such-tag not found');
      expect((await call(`${bad.url}/api/health`, { key: null })).status).toBe(200);
    } finally {
      expect(await bad.stop()).toBe(0);
    }
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`persona-browser.fleet=${fleet}`] },
    });
    expect(left).toEqual([]);
  });
});
