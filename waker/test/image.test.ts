/**
 * The persona image against the real Docker engine: a container with a bind-mounted persona
 * folder serves the worker from its bridge address, runs it as a non-root user with Chromium's
 * sandbox on, stops cleanly on `docker stop`, and keeps the profile (a cookie) across removal.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WORKER_NODE_FLAGS } from '@persona-browser/contracts';
import {
  STOP_TIMEOUT_S,
  containerLogs,
  containerPids,
  dockerCli,
  dockerClient,
  ensurePersonaImage,
  httpRequest,
  lastBuildMs,
  removeFleet,
  startPersonaContainer,
  waitWorkerReady,
} from '@persona-browser/testkit/image';
import type { PersonaContainer } from '@persona-browser/testkit/image';
import { step } from '@persona-browser/testkit/steps';
import { until } from '@persona-browser/testkit/waker';

const KEY = 'image-test-key';
const FLEET = `imgtest-${process.pid}-${crypto.randomBytes(3).toString('hex')}`;
const COOKIE = `v${crypto.randomBytes(6).toString('hex')}`;

let image: string;
let dir: string;
let fixture: http.Server;
let fixturePort: number;

/** A tiny site on the host, reached from containers through host.docker.internal. */
function startFixture(): Promise<void> {
  fixture = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/set') {
      res.writeHead(200, {
        'content-type': 'text/html',
        'set-cookie': `persona_cookie=${url.searchParams.get('v') ?? ''}; Max-Age=86400; Path=/`,
      });
      res.end('<!doctype html><title>set</title><p>cookie set</p>');
      return;
    }
    if (url.pathname === '/echo') {
      const cookie = (req.headers.cookie ?? '').replace(/[<>&]/g, '');
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>echo</title><p id="cookie">cookie=[${cookie}]</p>`);
      return;
    }
    res.writeHead(404).end();
  });
  return new Promise((resolve) => {
    fixture.listen(0, '0.0.0.0', () => {
      fixturePort = (fixture.address() as AddressInfo).port;
      resolve();
    });
  });
}

function call(
  c: PersonaContainer,
  method: string,
  route: string,
  body?: unknown,
): ReturnType<typeof httpRequest> {
  return httpRequest(`${c.url}${route}`, {
    method,
    body,
    headers: { authorization: `Bearer ${KEY}` },
    timeoutMs: 90_000,
  });
}

function start(): Promise<PersonaContainer> {
  return startPersonaContainer({
    image,
    fleet: FLEET,
    persona: 'alice',
    dir,
    env: { SERVICE_KEY: KEY },
  });
}

/**
 * Host pid → the fields of /proc that the sandbox and user checks read. Chromium's child
 * processes rewrite their command line as one space-separated string, so words are split on
 * both NUL and space (flags are all these checks look at).
 */
function procInfo(pid: number): {
  uid: number;
  argv: string[];
  userNs: string;
  pidNs: string;
  seccompFilters: number;
} {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
    // Docker's profile is one filter; Chromium's sandbox adds one of its own to a process.
    seccompFilters: Number(/^Seccomp_filters:\s+(\d+)/m.exec(status)?.[1]),
    argv: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/).filter(Boolean),
    userNs: fs.readlinkSync(`/proc/${pid}/ns/user`),
    pidNs: fs.readlinkSync(`/proc/${pid}/ns/pid`),
  };
}

function exitType(): unknown {
  const prefs = JSON.parse(
    fs.readFileSync(path.join(dir, 'profile', 'Default', 'Preferences'), 'utf8'),
  ) as { profile?: { exit_type?: unknown } };
  return prefs.profile?.exit_type;
}

/** Every file and folder under `root` with its owner. */
function owners(root: string): Array<{ file: string; uid: number }> {
  const out: Array<{ file: string; uid: number }> = [];
  const walk = (p: string): void => {
    const st = fs.lstatSync(p);
    out.push({ file: path.relative(root, p) || '.', uid: st.uid });
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e));
  };
  walk(root);
  return out;
}

beforeAll(async () => {
  const t0 = Date.now();
  image = await ensurePersonaImage();
  process.stdout.write(`image ${image} ready in ${lastBuildMs ?? Date.now() - t0} ms\n`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-image-persona-'));
  await startFixture();
}, 900_000);

afterAll(async () => {
  await removeFleet(FLEET);
  await new Promise((r) => fixture?.close(r));
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe('persona image', () => {
  test('one folder, two containers in turn: the first serves, sets a cookie as non-root with its sandbox and stops cleanly; the next has the cookie', async () => {
    const c = await step(
      '1 of 5: a container serves status, ping, the panel and the docs from its bridge address',
      async () => {
        const first = await start();
        const readyMs = await waitWorkerReady(first.url, 90_000);
        process.stdout.write(`container start to status ready: ${readyMs} ms\n`);

        const status = await httpRequest(`${first.url}/api/v1/system/status`);
        expect(status.status).toBe(200);
        expect(status.json).toMatchObject({ initialized: true, browser_context_active: true });

        // Memory as `docker stats` counts it (page cache that can be dropped left out), idle:
        // once two readings in a row are within 5 MiB.
        const usedMib = async (): Promise<number> => {
          const stats = (await first.container.stats({ stream: false })) as unknown as {
            memory_stats: { usage: number; stats: Record<string, number> };
          };
          const m = stats.memory_stats;
          const cache = m.stats.total_inactive_file ?? m.stats.inactive_file ?? 0;
          return (m.usage - cache) / 2 ** 20;
        };
        let previous = await usedMib();
        const idleMib = await until(
          async () => {
            const now = await usedMib();
            const steady = Math.abs(now - previous) < 5;
            previous = now;
            return steady ? now : null;
          },
          60_000,
          "the container's memory to hold steady (two readings within 5 MiB)",
        );
        process.stdout.write(`container idle memory: ${Math.round(idleMib)} MiB\n`);

        const ping = await httpRequest(`${first.url}/api/v1/system/ping`, { timeoutMs: 10_000 });
        expect(ping.status).toBe(200);
        expect(ping.json).toMatchObject({ status: 'alive', persona: 'persona' });

        const panel = await httpRequest(`${first.url}/`);
        expect(panel.status).toBe(200);
        expect(panel.headers['content-type']).toMatch(/text\/html/);
        const docs = await httpRequest(`${first.url}/docs`);
        expect(docs.status).toBe(200);
        expect(docs.text).toMatch(/swagger|openapi/i);
        // The image carries the plugins, built, and every one of them loads.
        const plugins = await httpRequest(`${first.url}/api/v1/plugins`);
        expect(plugins.json).toMatchObject({ success: true, skipped: [] });
        const names = (plugins.json as { plugins: Array<{ name: string }> }).plugins.map(
          (p) => p.name,
        );
        expect(names).toEqual(expect.arrayContaining(['archive/check', 'misc/news-search']));
        return first;
      },
    );
    await step(
      '2 of 5: a page sets a cookie; the worker runs as non-root and Chromium keeps its sandbox',
      async () => {
        expect((await call(c, 'POST', '/api/v1/ops/create-page', { page_id: 'c' })).status).toBe(
          200,
        );
        const nav = await call(c, 'POST', '/api/v1/ops/c/navigate', {
          url: `http://host.docker.internal:${fixturePort}/set?v=${COOKIE}`,
        });
        expect(nav.json).toMatchObject({ success: true, status_code: 200 });

        const procs = containerPids(c.id).map((pid) => ({ pid, ...procInfo(pid) }));
        const worker = procs.find((p) => p.argv.some((a) => a.endsWith('worker/dist/main.js')));
        expect(worker).toBeDefined();
        expect(worker?.uid).not.toBe(0);
        // The image's node switches are the ones every other way of starting a worker uses.
        expect(worker?.argv.slice(1, -1)).toEqual(WORKER_NODE_FLAGS);
        const chromium = procs.filter((p) => /chromium/.test(p.argv[0] ?? ''));
        const browser = chromium.find((p) => !p.argv.some((a) => a.startsWith('--type=')));
        const renderers = chromium.filter((p) => p.argv.includes('--type=renderer'));
        expect(browser).toBeDefined();
        expect(renderers.length).toBeGreaterThan(0);
        // Sandboxed renderers live in user and PID namespaces of their own, not the browser's.
        for (const r of renderers) {
          expect(r.userNs).not.toBe(browser?.userNs);
          expect(r.pidNs).not.toBe(browser?.pidNs);
        }
        for (const p of chromium) {
          expect(p.uid).not.toBe(0);
          expect(p.argv).not.toContain('--no-sandbox');
        }
        // The GPU service runs in the browser process (no GPU process), and the processes the
        // sandbox held before it did, the renderers and the storage service, still have
        // Chromium's seccomp filter on top of Docker's, which the browser process has alone.
        expect(chromium.filter((p) => p.argv.includes('--type=gpu-process'))).toEqual([]);
        const storage = chromium.filter((p) => p.argv.some((a) => /=storage\.mojom/.test(a)));
        expect(storage).toHaveLength(1);
        for (const p of [...renderers, ...storage]) {
          expect(p.seccompFilters).toBeGreaterThan(browser?.seccompFilters ?? Infinity);
        }
      },
    );
    await step(
      '3 of 5: docker stop closes Chromium cleanly, leaves no process, and keeps files sensibly owned',
      async () => {
        const t0 = Date.now();
        await c.container.stop();
        const stopMs = Date.now() - t0;
        process.stdout.write(`docker stop took ${stopMs} ms\n`);
        const info = await c.container.inspect();
        expect(info.State.Running).toBe(false);
        expect(info.State.ExitCode).toBe(0);
        // Well under the stop timeout: the worker ended by itself on SIGTERM, it was not killed.
        expect(stopMs).toBeLessThan((STOP_TIMEOUT_S * 1000) / 2);
        expect(exitType()).toBe('Normal');
        expect(containerPids(c.id)).toEqual([]);
        const logs = await containerLogs(c.container);
        expect(logs).toMatch(/"message":"stopped"/);

        // Made by root (CI), the folder was handed to the image's user as a whole; made by a user,
        // it stays that user's. Either way one owner, not root, for every file.
        const files = owners(dir);
        const folderUid = fs.statSync(dir).uid;
        expect(folderUid).not.toBe(0);
        expect(files.filter((f) => f.uid !== folderUid)).toEqual([]);
        expect(files.some((f) => f.file === path.join('profile', 'Default', 'Preferences'))).toBe(
          true,
        );

        await c.container.remove();
      },
    );
    await step('4 of 5: a new container on the same folder still has the cookie', async () => {
      const c = await start();
      await waitWorkerReady(c.url, 90_000);
      expect((await call(c, 'POST', '/api/v1/ops/create-page', { page_id: 'e' })).status).toBe(200);
      const nav = await call(c, 'POST', '/api/v1/ops/e/navigate', {
        url: `http://host.docker.internal:${fixturePort}/echo`,
      });
      expect(nav.json).toMatchObject({ success: true, status_code: 200 });
      const page = await call(c, 'POST', '/api/v1/ops/e/extract-content');
      expect(page.status).toBe(200);
      expect((page.json as { content: string }).content).toContain(
        `cookie=[persona_cookie=${COOKIE}]`,
      );
      await c.container.stop();
      expect(exitType()).toBe('Normal');
      expect(containerPids(c.id)).toEqual([]);
    });
    await step('5 of 5: the containers of this test are found by their labels', async () => {
      const list = await dockerClient().listContainers({
        all: true,
        filters: { label: [`persona-browser.fleet=${FLEET}`, 'persona-browser.persona=alice'] },
      });
      expect(list.map((x) => x.Names[0])).toEqual([`/pb-${FLEET}-alice`]);
    });
  }, 600_000);

  test('a folder owned by a host user: the worker runs as that user; persona.env can opt out of the sandbox', async () => {
    const own = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-image-owned-'));
    // Run as root (CI), the folder is handed to a user the image does not know; run as a user,
    // it is that user's already.
    const uid = process.getuid?.() === 0 ? 4321 : (process.getuid?.() ?? 4321);
    try {
      fs.writeFileSync(path.join(own, 'persona.env'), 'CHROME_NO_SANDBOX=true\n');
      if (process.getuid?.() === 0) {
        fs.chownSync(path.join(own, 'persona.env'), uid, uid);
        fs.chownSync(own, uid, uid);
      }
      const c = await startPersonaContainer({
        image,
        fleet: FLEET,
        persona: 'owned',
        dir: own,
        env: { SERVICE_KEY: KEY },
      });
      await waitWorkerReady(c.url, 90_000);
      const procs = containerPids(c.id).map((pid) => ({ pid, ...procInfo(pid) }));
      const worker = procs.find((p) => p.argv.some((a) => a.endsWith('worker/dist/main.js')));
      expect(worker?.uid).toBe(uid);
      const browser = procs.find(
        (p) => /chromium/.test(p.argv[0] ?? '') && !p.argv.some((a) => a.startsWith('--type=')),
      );
      expect(browser?.argv).toContain('--no-sandbox');
      // Without the sandbox, Chromium adds no seccomp filter to its renderers: the count the
      // check above relies on tells the two apart.
      const renderers = procs.filter((p) => p.argv.includes('--type=renderer'));
      expect(renderers.length).toBeGreaterThan(0);
      for (const r of renderers) expect(r.seccompFilters).toBe(browser?.seccompFilters);
      await c.container.stop();
      expect(owners(own).filter((f) => f.uid !== uid)).toEqual([]);
    } finally {
      fs.rmSync(own, { recursive: true, force: true });
    }
  });

  test("under Docker's default seccomp profile the sandbox cannot start, and the log says why", async () => {
    const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-image-bare-'));
    try {
      const c = await startPersonaContainer({
        image,
        fleet: FLEET,
        persona: 'bare',
        dir: bare,
        env: { SERVICE_KEY: KEY },
        seccompProfile: false,
      });
      let logs = '';
      for (let i = 0; i < 150 && !/browser failed to start/.test(logs); i += 1) {
        await new Promise((r) => setTimeout(r, 200));
        logs = await containerLogs(c.container);
      }
      expect(logs).toMatch(/browser failed to start/);
      const status = await httpRequest(`${c.url}/api/v1/system/status`);
      expect(status.json).toMatchObject({ initialized: false });
      expect(logs).toMatch(/refuses user namespaces.*seccomp.*CHROME_NO_SANDBOX=true/s);
      await c.container.stop();
    } finally {
      fs.rmSync(bare, { recursive: true, force: true });
    }
  });

  test('any other command runs as given, as root, without the worker settings (the waker)', async () => {
    const out = await dockerCli([
      'run',
      '--rm',
      '--label',
      `persona-browser.fleet=${FLEET}`,
      image,
      'node',
      '-e',
      'console.log(JSON.stringify({ uid: process.getuid(), dir: process.env.PERSONA_DIR ?? null, node: process.versions.node }))',
    ]);
    const seen = JSON.parse(out.trim()) as { uid: number; dir: string | null; node: string };
    expect(seen).toMatchObject({ uid: 0, dir: null });
    expect(seen.node).toMatch(/^22\./);
  });
});
