import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { connectAgent, personTakesOver, textOf } from '@persona-browser/testkit/agent';
import { metricsBodySchema, personaListSchema } from '@persona-browser/contracts';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { fleetPids, isAlive, portReleased, workerPid } from '@persona-browser/testkit/fleet-procs';
import type { Reply, RunningWaker } from '@persona-browser/testkit/waker';
import { KEY, ROOT, call, freePort, until } from '@persona-browser/testkit/waker';
import { startFleet } from '@persona-browser/testkit/fleet';
import { openFleetPanel } from '@persona-browser/testkit/panel-server';
import { pageProblems } from '@persona-browser/testkit/page-problems';
import { viewerLive } from '@persona-browser/testkit/viewer';

/**
 * The waker with the `process` driver (a machine without Docker): real workers, real Chromium,
 * each persona served on its own host port by the waker.
 */
const FLEET = `ptest${process.pid}`;
const IDLE_S = 3;
/** alice's worker throws an uncaught exception once this file appears (a test build's hook). */
const CRASH_FILE = path.join(os.tmpdir(), `pb-crash-${process.pid}`);

let waker: RunningWaker;
let ports: Record<string, number>;
let blocker: net.Server;
let site: Fixture;

beforeAll(async () => {
  const own = {
    waker: await freePort(),
    alice: await freePort(),
    bob: await freePort(),
    busy: await freePort(),
  };
  ports = own;
  // Something else already listens on busy's port.
  site = await startFixture();
  blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(own.busy, r));
  ({ waker } = await startFleet({
    driver: 'process',
    fleet: FLEET,
    port: own.waker,
    personas: {
      // alice's own BROWSER_SLOWMO beats the fleet's (the waker's environment, below).
      alice: `PORT=${own.alice}\nMODE=always-on\nNEWS_BASE_URL=${site.url}\nBROWSER_SLOWMO=120\nPB_TEST_CRASH_FILE=${CRASH_FILE}\n`,
      bob: `PORT=${own.bob}\nMODE=sleepy\nIDLE_TIMEOUT=${IDLE_S}\n`,
      busy: `PORT=${own.busy}\nMODE=always-on\n`,
      dup: `PORT=${own.alice}\nMODE=sleepy\nIDLE_TIMEOUT=5\n`,
      own: `PORT=${own.waker}\nMODE=always-on\n`,
      noenv: null,
      badmode: `PORT=${own.busy}\nMODE=lazy\n`,
    },
    env: {
      METRICS_INTERVAL: '1',
      METRICS_WINDOW: '20',
      // The fleet's default of a worker setting: what a persona without its own gets.
      BROWSER_SLOWMO: '150',
    },
  }));
});

// Stopping the waker, after every test, leaves no worker, Xvfb or Chromium behind, and frees
// its ports (the last check of the file: a hook, so that it runs last in any order of the tests).
afterAll(async () => {
  await site?.close();
  if (waker) {
    expect(fleetPids(FLEET).length).toBeGreaterThan(0);
    expect(await waker.stop()).toBe(0);
    expect(fleetPids(FLEET)).toEqual([]);
    await portReleased(ports.alice);
  }
  await new Promise((r) => blocker?.close(r));
});

describe('waker with the process driver', () => {
  test('health needs no key; the persona list needs one', async () => {
    expect((await call(`${waker.url}/api/health`, { key: null })).status).toBe(200);
    const denied = await call(`${waker.url}/api/personas`, { key: null });
    expect(denied).toMatchObject({ status: 401, body: { detail: 'Invalid API key' } });
    expect((await call(`${waker.url}/api/personas`, { key: 'wrong' })).status).toBe(401);
  });

  test('bad persona folders are skipped with one line naming persona and variable', async () => {
    const list = await call(`${waker.url}/api/personas`);
    expect(list.status).toBe(200);
    expect(personaListSchema.validate(list.body).error).toBeUndefined();
    const names = (list.body.personas as Array<{ name: string }>).map((p) => p.name);
    expect(names).toEqual(['alice', 'bob', 'busy', 'dup', 'own']);
    const lines = waker.logs.filter((l) => l.includes('skipped'));
    expect(lines.some((l) => l.includes('persona noenv') && l.includes('persona.env'))).toBe(true);
    expect(lines.some((l) => l.includes('persona badmode') && l.includes('MODE'))).toBe(true);
  });

  test('port conflicts crash only that persona, with a clear error', async () => {
    const byName = Object.fromEntries((await waker.personas()).map((p) => [p.name, p]));
    expect(byName.busy).toMatchObject({ state: 'crashed' });
    expect(byName.busy?.error).toContain(`port ${ports.busy} is already in use`);
    expect(byName.dup).toMatchObject({ state: 'crashed' });
    expect(byName.dup?.error).toContain('already used by persona alice');
    expect(byName.own).toMatchObject({ state: 'crashed' });
    expect(byName.own?.error).toContain('WAKER_PORT');
    // And they stay so: a wake is refused with the reason.
    const wake = await call(`${waker.url}/api/personas/busy/wake`, { method: 'POST' });
    expect(wake.status).toBe(503);
    expect(wake.body.error).toContain('already in use');
  });

  test('the always-on persona runs and answers REST through its port', async () => {
    const alice = await waker.waitState('alice', 'running');
    const head = execFileSync('git', ['-C', ROOT, 'log', '-1', '--format=%H']).toString().trim();
    const status = await call(`http://127.0.0.1:${ports.alice}/api/v1/system/status`, {
      key: null,
    });
    expect(status.status).toBe(200);
    expect(status.body.initialized).toBe(true);
    expect(status.body.slowmo).toBe(120);
    const ping = await call(`http://127.0.0.1:${ports.alice}/api/v1/system/ping`, { key: null });
    expect(ping.body).toMatchObject({ status: 'alive', persona: 'alice' });
    expect(ping.body.commit.hash).toBe(head);
    // An authenticated POST goes through with its headers and body.
    const created = await call(`http://127.0.0.1:${ports.alice}/api/v1/ops/create-page`, {
      method: 'POST',
      body: { page_id: 'through-waker' },
    });
    expect(created).toMatchObject({
      status: 200,
      body: { success: true, page_id: 'through-waker', total_pages: 1 },
    });
    const denied = await call(`http://127.0.0.1:${ports.alice}/api/v1/ops/create-page`, {
      method: 'POST',
      key: 'wrong',
      body: {},
    });
    expect(denied.status).toBe(401);
    expect(alice.port).toBe(ports.alice);
    // The commit the worker reports reaches the list.
    const commit = await until(
      async () => (await waker.persona('alice')).commit,
      15_000,
      "the commit alice's worker reports in the persona list",
    );
    expect(commit.hash).toBe(head);
  });

  test("puppeteer and Playwright connect to the persona's browser through its port on the waker", async () => {
    await waker.waitState('alice', 'running');
    const version = await call(`http://127.0.0.1:${ports.alice}/json/version`);
    expect(version.status).toBe(200);
    // The endpoint is named on the address the client used: the waker's port for alice.
    const endpoint = String(version.body.webSocketDebuggerUrl);
    expect(endpoint).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${ports.alice}/devtools/browser/`));
    const client = await puppeteer.connect({
      browserWSEndpoint: endpoint,
      headers: { authorization: `Bearer ${KEY}` },
      defaultViewport: null,
    });
    try {
      const page = await client.newPage();
      await page.goto('data:text/html,<title>through the waker</title>');
      expect(await page.evaluate(() => document.title)).toBe('through the waker');
      // The pool's page made through the API above is not the client's to see.
      expect((await client.pages()).map((p) => p.url())).toEqual([
        'data:text/html,<title>through the waker</title>',
      ]);
    } finally {
      await client.disconnect();
    }
    // Playwright too, finding the endpoint itself from the persona's port on the waker.
    const pw = await chromium.connectOverCDP(`http://127.0.0.1:${ports.alice}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    try {
      const [context] = pw.contexts();
      if (!context) throw new Error('no default context');
      expect(context.pages()).toEqual([]);
      const page = await context.newPage();
      await page.goto('data:text/html,<title>playwright through the waker</title>');
      expect(await page.evaluate(() => document.title)).toBe('playwright through the waker');
    } finally {
      await pw.close();
    }
  });

  test("an agent drives a persona through the fleet's MCP server, the persona a tool argument", async () => {
    await waker.waitState('alice', 'running');
    // The agent reaches the waker by name: the link ask_person makes for a person names it too.
    const {
      client: agent,
      transport,
      use,
    } = await connectAgent(`http://localhost:${ports.waker}/mcp`, KEY);
    const text = textOf;
    try {
      const { tools } = await agent.listTools();
      const names = tools.map((t) => t.name);
      expect(names).toContain('list_personas');
      // The installed plugins are tools at the fleet too (read from a persona's document).
      expect(names.filter((n) => n.startsWith('plugin_')).length).toBeGreaterThan(5);
      expect(tools.find((t) => t.name === 'navigate')?.inputSchema.required).toEqual([
        'persona',
        'page_id',
        'url',
      ]);
      expect(text(await use('list_personas'))).toContain('"alice"');
      const unknown = await use('create_page', { persona: 'nobody' });
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toMatch(/Unknown persona 'nobody'/);

      expect(
        (await use('create_page', { persona: 'alice', page_id: 'agent' })).isError,
      ).toBeFalsy();
      // The button writes what it received where the page's text shows it.
      const page =
        'data:text/html,<title>agent at the fleet</title><button onclick="document.body.' +
        "append('clicked:' + event.isTrusted)\">Go</button>";
      expect(
        (await use('navigate', { persona: 'alice', page_id: 'agent', url: page })).isError,
      ).toBeFalsy();
      const snap = text(await use('snapshot', { persona: 'alice', page_id: 'agent' }));
      const go = /agent at the fleet[\s\S]*- button "Go" \[ref=(n\d+)\]/.exec(snap);
      expect(go).not.toBeNull();
      const clicked = await use('click', { persona: 'alice', page_id: 'agent', ref: go?.[1] });
      expect(clicked.isError).toBeFalsy();
      expect(text(await use('page_text', { persona: 'alice', page_id: 'agent' }))).toContain(
        'clicked:true',
      );
      // A plugin as a tool: misc/news-search opens a page of its site (the fixture, here).
      const news = await use('plugin_misc_news_search', {
        persona: 'alice',
        page_id: 'agent',
        query: `${site.url}/second`,
      });
      expect(news.isError).toBeFalsy();
      expect(JSON.parse(text(news))).toMatchObject({ page_url: `${site.url}/second` });
      // ask_person through the fleet: the person takes the page over at alice's live view.
      const asked = use('ask_person', {
        persona: 'alice',
        page_id: 'agent',
        message: 'Solve the puzzle',
        timeout: 60,
      });
      const person = await personTakesOver(`http://127.0.0.1:${ports.alice}`, 'agent', KEY);
      await person.handBack();
      const answer = await asked;
      expect(answer.isError).toBeFalsy();
      expect(JSON.parse(text(answer))).toMatchObject({ handed_back: true });
      // At alice's own port, on the host the agent reached the waker on (not the loopback
      // address the waker calls alice on).
      expect(JSON.parse(text(answer)).live_url).toMatch(
        new RegExp(`^http://localhost:${ports.alice}/vnc/#token=pbt_`),
      );
      // The page is the session's: the API without its token meets the lease.
      const locked = await call(`http://127.0.0.1:${ports.alice}/api/v1/ops/agent/navigate`, {
        method: 'POST',
        body: { url: 'about:blank' },
      });
      expect(locked.status).toBe(423);
      await transport.terminateSession();
      const free = await call(`http://127.0.0.1:${ports.alice}/api/v1/ops/agent/destroy-page`, {
        method: 'POST',
      });
      expect(free.status).toBe(200);
    } finally {
      await agent.close();
    }
  });

  test('the sleepy persona is woken by a call with its key, which is answered', async () => {
    // Asleep: at first, or IDLE_TIMEOUT after whatever woke it last.
    const sleeping = await waker.waitState('bob', 'sleeping', 30_000);
    await until(
      async () => (workerPid(FLEET, 'bob') === null ? true : null),
      10_000,
      "bob's worker to end as bob sleeps",
    );
    const status = `http://127.0.0.1:${ports.bob}/api/v1/system/status`;
    // A status read is public: the waker answers it for the sleeping persona, waking nothing.
    const asleep = await call(status, { key: null });
    expect(asleep).toMatchObject({
      status: 200,
      body: { initialized: false, persona_state: 'sleeping' },
    });
    expect(await waker.persona('bob')).toMatchObject({
      state: 'sleeping',
      last_request: sleeping.last_request,
    });
    expect(workerPid(FLEET, 'bob')).toBeNull();
    // A call with the key wakes it, and its worker answers it.
    const first = await call(`http://127.0.0.1:${ports.bob}/api/v1/system/process-tree`);
    expect(first.status).toBe(200);
    const awake = await call(status, { key: null });
    expect(awake.status).toBe(200);
    expect(awake.body.initialized).toBe(true);
    expect(awake.body.slowmo).toBe(150);
    expect(awake.body.persona_state).toBeUndefined();
    const bob = await waker.persona('bob');
    expect(bob.state).toBe('running');
    expect(bob.last_request).not.toBeNull();
    expect(bob.last_request).not.toBe(sleeping.last_request);
    expect(workerPid(FLEET, 'bob')).not.toBeNull();
    // What the waker said asleep is what the worker says awake: the fleet's BROWSER_SLOWMO.
    expect(asleep.body.slowmo).toBe(awake.body.slowmo);
  });

  test('it sleeps after IDLE_TIMEOUT without requests, and wakes again', async () => {
    // Busy through a call with the key in flight (a navigation waits about 2 s before it
    // starts, and the page takes 2 s more): idle_seconds is null while it runs. A ping would
    // not do: a public read is never activity.
    const ops = `http://127.0.0.1:${ports.bob}/api/v1/ops`;
    const created = await call(`${ops}/create-page`, { method: 'POST', body: { page_id: 'busy' } });
    expect(created.status).toBe(200);
    let navigated = false;
    const navigating = call(`${ops}/busy/navigate`, {
      method: 'POST',
      body: { url: `${site.url}/slow?ms=2000` },
    }).finally(() => (navigated = true));
    await until(
      async () => ((await waker.persona('bob')).idle_seconds === null ? true : null),
      10_000,
      "bob's idle_seconds to be null while the navigation runs",
    );
    expect(navigated).toBe(false);
    expect((await navigating).body).toMatchObject({ success: true, status_code: 200 });
    const doneAt = Date.now();
    const asleep = await waker.waitState('bob', 'sleeping', 30_000);
    expect(Date.now() - doneAt).toBeGreaterThanOrEqual(IDLE_S * 1000 - 100);
    expect(asleep.commit).toBeNull();
    await until(
      async () => (workerPid(FLEET, 'bob') === null ? true : null),
      10_000,
      "bob's worker to end as bob sleeps",
    );
    expect(fleetPids(FLEET, 'bob')).toEqual([]);
    // A ping asleep is the waker's answer and wakes nothing; a call with the key wakes it.
    const asleepPing = await call(`http://127.0.0.1:${ports.bob}/api/v1/system/ping`, {
      key: null,
    });
    expect(asleepPing).toMatchObject({
      status: 200,
      body: { persona: 'bob', persona_state: 'sleeping' },
    });
    expect(fleetPids(FLEET, 'bob')).toEqual([]);
    // (Its worker's answer: the door never answers a protected route itself.)
    const again = await call(`http://127.0.0.1:${ports.bob}/api/v1/system/process-tree`);
    expect(again).toMatchObject({ status: 200, body: { success: true } });
    expect((await waker.persona('bob')).state).toBe('running');
    expect(workerPid(FLEET, 'bob')).not.toBeNull();
  });

  test('wake, sleep and restart through the API; unknown persona is 404', async () => {
    const unknown = await call(`${waker.url}/api/personas/zed/wake`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toContain('zed');
    expect(
      (await call(`${waker.url}/api/personas/bob/sleep`, { method: 'POST', key: null })).status,
    ).toBe(401);
    const slept = await call(`${waker.url}/api/personas/bob/sleep`, { method: 'POST' });
    expect(slept).toMatchObject({ status: 200, body: { name: 'bob', state: 'sleeping' } });
    const woken = await call(`${waker.url}/api/personas/bob/wake`, { method: 'POST' });
    expect(woken).toMatchObject({ status: 200, body: { name: 'bob', state: 'running' } });
    const before = workerPid(FLEET, 'alice');
    const restarted = await call(`${waker.url}/api/personas/alice/restart`, { method: 'POST' });
    expect(restarted).toMatchObject({ status: 200, body: { name: 'alice', state: 'running' } });
    expect(workerPid(FLEET, 'alice')).not.toBe(before);
    expect(before !== null && isAlive(before)).toBe(false);
  });

  test('an always-on worker killed from outside comes back', async () => {
    await waker.waitState('alice', 'running');
    const pid = workerPid(FLEET, 'alice') as number;
    expect(pid).not.toBeNull();
    process.kill(pid, 'SIGKILL');
    const down = await waker.waitState('alice', ['crashed', 'waking'], 10_000);
    expect(down.error ?? '').toMatch(/SIGKILL|start/);
    await waker.waitState('alice', 'running', 60_000);
    const newPid = workerPid(FLEET, 'alice');
    expect(newPid).not.toBeNull();
    expect(newPid).not.toBe(pid);
    const status = await call(`http://127.0.0.1:${ports.alice}/api/v1/system/status`, {
      key: null,
    });
    expect(status.body.initialized).toBe(true);
  });

  test('an always-on worker that meets an uncaught exception stops in order, exits 1 and comes back', async () => {
    await waker.waitState('alice', 'running');
    const pid = workerPid(FLEET, 'alice') as number;
    // The worker's whole tree: itself, its Xvfb, its Chromium and Chromium's children.
    const tree = fleetPids(FLEET, 'alice');
    expect(tree.length).toBeGreaterThanOrEqual(3);
    fs.writeFileSync(CRASH_FILE, '');
    const down = await waker.waitState('alice', ['crashed', 'waking'], 30_000);
    // Exit code 1 after its orderly stop, not a kill by a signal.
    expect(down.error ?? '').toMatch(/exited with 1/);
    await until(
      async () => (tree.some(isAlive) ? null : true),
      30_000,
      "the old worker's tree gone",
    );
    const back = await waker.waitState('alice', 'running', 60_000);
    expect(back.error).toBeNull();
    const newPid = workerPid(FLEET, 'alice');
    expect(newPid).not.toBeNull();
    expect(newPid).not.toBe(pid);
    expect(fs.existsSync(CRASH_FILE)).toBe(false);
    const status = await call(`http://127.0.0.1:${ports.alice}/api/v1/system/status`, {
      key: null,
    });
    expect(status.body.initialized).toBe(true);
  });

  test('metrics sample the workers, request counts come from their logs', async () => {
    // Alice was just restarted (the test above): wait for a sample of her whole tree, browser up.
    await waker.waitState('alice', 'running');
    const body = await until(async () => {
      const r = await call(`${waker.url}/api/metrics`);
      return (r.body?.samples?.at(-1)?.instances?.alice?.procs ?? 0) >= 5 ? r.body : null;
    }, 30_000);
    expect(metricsBodySchema.validate(body).error).toBeUndefined();
    expect(body).toMatchObject({ interval_s: 1, window_s: 20 });
    const last = body.samples.at(-1);
    // Alice's whole tree: the worker, its Xvfb, Chromium and its children.
    expect(last.instances.alice.pid).toBe(workerPid(FLEET, 'alice'));
    expect(last.instances.alice.procs).toBeGreaterThanOrEqual(5);
    expect(last.instances.alice.rss_mb).toBeGreaterThan(50);
    expect(last.system.mem_total_mb).toBeGreaterThan(last.system.mem_used_mb);
    expect((await call(`${waker.url}/api/metrics`, { key: null })).status).toBe(401);
    // Two calls through alice's port (outside /system/, which the log leaves out): her request
    // log counts them.
    const requests = async (): Promise<Reply> =>
      call(`${waker.url}/api/personas/alice/requests?hours=3`);
    const counted = (r: Reply): number =>
      r.body.requests.reduce((n: number, h: { count: number }) => n + h.count, 0);
    const countedBefore = counted(await requests());
    for (let i = 0; i < 2; i += 1) {
      const r = await call(`http://127.0.0.1:${ports.alice}/api/v1/plugins`);
      expect(r.status).toBe(200);
    }
    const reqs = await until(
      async () => {
        const r = await requests();
        return counted(r) >= countedBefore + 2 ? r : null;
      },
      30_000,
      "alice's request log counting the two calls",
    );
    expect(reqs).toMatchObject({ status: 200, body: { name: 'alice', hours: 3 } });
    expect(reqs.body.requests).toHaveLength(3);
    expect((await call(`${waker.url}/api/personas/bob/requests?hours=x`)).status).toBe(400);
    expect((await call(`${waker.url}/api/personas/zed/requests`)).status).toBe(404);
  });

  test('a viewer opened with the key in its address comes back by itself when the worker restarts', async () => {
    const client = await launchClientBrowser();
    try {
      const page = await client.browser.newPage();
      const problems = pageProblems(page);
      await page.goto(`http://127.0.0.1:${ports.alice}/vnc/#key=${KEY}`, { waitUntil: 'load' });
      await viewerLive(page, 90_000, problems);
      const before = workerPid(FLEET, 'alice');
      // The new worker knows nothing of the old session: the viewer opens one with the key the
      // address gave, without asking the person for it, and is live again.
      const reopened = page.waitForResponse(
        (r) => r.url().endsWith('/vnc/session') && r.request().method() === 'POST',
        { timeout: 90_000 },
      );
      expect(
        (await call(`${waker.url}/api/personas/alice/restart`, { method: 'POST' })).status,
      ).toBe(200);
      expect(workerPid(FLEET, 'alice')).not.toBe(before);
      expect((await reopened).status()).toBe(200);
      await viewerLive(page, 90_000, problems);
      expect(await page.$eval('#key-form', (f) => (f as HTMLFormElement).hidden)).toBe(true);
      expect(await page.$eval('#status', (e) => e.textContent)).toBe('Live');
    } finally {
      await client.close();
    }
  });

  test('the fleet panel shows every persona of the real waker, and its buttons act', async () => {
    const client = await launchClientBrowser();
    const browser = client.browser;
    try {
      const errors: string[] = [];
      const page = await openFleetPanel(browser, waker.url, { key: KEY, width: 1280, errors });
      await page.waitForSelector('tr[data-persona="alice"][data-state="running"]');
      await page.waitForSelector('tr[data-persona="busy"][data-state="crashed"]');
      const live = await page.$eval('tr[data-persona="alice"] a[data-link="live"]', (a) =>
        a.getAttribute('href'),
      );
      expect(live).toBe(`http://127.0.0.1:${ports.alice}/vnc/#key=${KEY}`);
      // Restart from the panel: the persona's worker is a new process.
      const before = workerPid(FLEET, 'alice');
      await page.click('button[data-action="restart"][data-persona="alice"]');
      const after = await until(async () => {
        const pid = workerPid(FLEET, 'alice');
        return pid !== null && pid !== before ? pid : null;
      });
      expect(after).not.toBe(before);
      await waker.waitState('alice', 'running');
      // The CPU chart draws alice from the metrics window.
      await page.waitForFunction(
        () =>
          document
            .querySelector<HTMLElement>('[data-chart="cpu"]')
            ?.dataset.series?.includes('alice'),
        { timeout: 30_000 },
      );
      expect(errors).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
