import type { Browser, Page } from 'puppeteer-core';
import type { PersonaInfo } from '@persona-browser/contracts';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { boxes, shown, shownTexts, sidewaysOverflow } from '@persona-browser/testkit/on-screen';
import type { ClusterNode, PanelServer } from '@persona-browser/testkit/panel-server';
import {
  clusterNode,
  openFleetPanel,
  persona,
  servePanel,
} from '@persona-browser/testkit/panel-server';
import { until } from '@persona-browser/testkit/waker';

/**
 * The fleet panel on a cluster, in a real (headless) browser, as a person uses it: each
 * persona's node, a node that is down, moving a persona to a node picked from a list, the Nodes
 * card and draining a node; and on a single server none of it. The panel's own files in front
 * of canned answers: the waker's moves themselves are proven on a real cluster elsewhere.
 */

const KEY = 'cluster-key';

interface World {
  nodes: ClusterNode[];
  personas: PersonaInfo[];
}

/** Four nodes, one of them down; three personas on w1, one on w2, one on the node that is down. */
const cluster = (): World => ({
  nodes: [
    clusterNode('w1', { memory_mb: 16384 }),
    clusterNode('w2', { memory_mb: 8192 }),
    clusterNode('w3', { ready: false, message: 'heartbeat failure' }),
    clusterNode('w4', { memory_mb: 4096 }),
  ],
  personas: [
    persona('alice', 5101, { node: 'w1' }),
    persona('bob', 5102, {
      node: 'w1',
      mode: 'sleepy',
      state: 'sleeping',
      idle_seconds: null,
      last_request: null,
    }),
    persona('erin', 5105, { node: 'w1' }),
    persona('carol', 5103, { node: 'w2' }),
    persona('dave', 5104, {
      node: 'w3',
      state: 'crashed',
      error: 'node w3 is down (heartbeat failure)',
    }),
  ],
});

const singleServer = (): World => ({
  nodes: [],
  personas: cluster().personas.map((p) => ({ ...p, node: null, error: null, state: 'running' })),
});

type Reply = { status: number; body: unknown };

let world: World;
/** How the waker answers a move; by default the persona moves and 12 files were copied. */
let answerMove: (name: string, node: string) => Promise<Reply>;
/** Moves held until the test lets them answer: a move takes tens of seconds for real. */
let held: Array<() => void>;
let stand: PanelServer;
let client: { browser: Browser; close(): Promise<void> };
const scriptErrors: string[] = [];

function moved(name: string, node: string): Reply {
  const p = world.personas.find((q) => q.name === name)!;
  const from = p.node;
  p.node = node;
  return {
    status: 200,
    body: {
      ...p,
      move: { from, to: node, copy: { entries: 14, files: 12, bytes: 3_456_789, ms: 2_140 } },
    },
  };
}

/** A move answer that waits until the test calls the next of `held`. */
const heldMove = (name: string, node: string): Promise<Reply> =>
  new Promise((resolve) => held.push(() => resolve(moved(name, node))));

beforeAll(async () => {
  stand = await servePanel(KEY, (api) => {
    api.get('/personas', (_req, res) => {
      res.json({ personas: world.personas });
    });
    api.get('/nodes', (_req, res) => {
      res.json({ nodes: world.nodes });
    });
    api.get('/metrics', (_req, res) => {
      res.json({ interval_s: 5, window_s: 3600, samples: [] });
    });
    api.get('/personas/:name/requests', (req, res) => {
      res.json({ name: req.params.name, hours: 48, requests: [] });
    });
    api.post('/personas/:name/move', async (req, res) => {
      const body: unknown = req.body;
      const node =
        typeof body === 'object' && body !== null && 'node' in body ? String(body.node) : '';
      const reply = await answerMove(req.params.name, node);
      res.status(reply.status).json(reply.body);
    });
  });
  client = await launchClientBrowser();
});

beforeEach(() => {
  stand.calls.splice(0);
  world = cluster();
  held = [];
  answerMove = async (name, node) => moved(name, node);
});

afterEach(() => {
  expect(scriptErrors.splice(0)).toEqual([]);
});

afterAll(async () => {
  await client?.close();
  await stand?.close();
});

async function openPanel(): Promise<Page> {
  const page = await openFleetPanel(client.browser, stand.base, {
    key: KEY,
    width: 1280,
    height: 1000,
    errors: scriptErrors,
  });
  await page.waitForSelector('tr[data-persona="dave"]');
  return page;
}

/** Waits until the panel has read the node list, and the persona list once more after it. */
async function settled(page: Page): Promise<void> {
  const nodesRead = () => stand.calls.findIndex((c) => c.path === '/api/nodes');
  const after = await until(
    async () => (nodesRead() < 0 ? null : nodesRead()),
    15_000,
    'the panel reading /api/nodes',
  );
  await until(
    async () => (stand.calls.slice(after).some((c) => c.path === '/api/personas') ? true : null),
    15_000,
    'the panel reading /api/personas after /api/nodes',
  );
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));
}

/** Whether each part of the cluster's panel is drawn. */
async function clusterParts(page: Page): Promise<Record<string, boolean>> {
  return {
    nodeHeading: await shown(page, '#personas-table th[data-cluster]'),
    nodeCell: await shown(page, 'tr[data-persona="alice"] [data-field="node"]'),
    moveButton: await shown(page, 'button[data-move="open"][data-persona="alice"]'),
    nodesCard: await shown(page, '#nodes'),
  };
}

const cellText = (page: Page, sel: string) =>
  page.$eval(sel, (e) => (e as HTMLElement).innerText.trim());

const moveCalls = () => stand.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/move'));

test('on a cluster each persona shows its node, a node that is down says so, and the Nodes card lists the nodes', async () => {
  const page = await openPanel();
  await page.waitForSelector('#nodes:not([hidden])');
  await settled(page);
  expect(await clusterParts(page)).toEqual({
    nodeHeading: true,
    nodeCell: true,
    moveButton: true,
    nodesCard: true,
  });
  expect(await cellText(page, 'tr[data-persona="alice"] [data-field="node"] code')).toBe('w1');
  expect(await cellText(page, 'tr[data-persona="carol"] [data-field="node"] code')).toBe('w2');
  // Dave's node is down: his row says so, and his error names the node.
  expect(await shown(page, 'tr[data-persona="dave"] [data-field="node-down"]')).toBe(true);
  expect(await cellText(page, 'tr[data-persona="dave"] [data-field="node-down"]')).toBe(
    'node down',
  );
  expect(await shown(page, 'tr[data-persona="alice"] [data-field="node-down"]')).toBe(false);
  expect(await cellText(page, 'tr[data-persona="dave"] [data-field="error"]')).toBe(
    'node w3 is down (heartbeat failure)',
  );
  expect(
    await page.$eval('button[data-move="open"][data-persona="dave"]', (b) => [b.disabled, b.title]),
  ).toEqual([true, 'Its node w3 is down: its folder cannot be copied off it']);

  // The Nodes card: each node, up or down with the engine's words, memory, personas held.
  const rows = await page.$$eval('#nodes-body tr', (trs) =>
    trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.innerText.trim())),
  );
  expect(rows.map((r) => r.slice(0, 4))).toEqual([
    ['w1', 'ready', '16.0 GB', '3'],
    ['w2', 'ready', '8.0 GB', '1'],
    ['w3', 'down\nheartbeat failure', '8.0 GB', '1'],
    ['w4', 'ready', '4.0 GB', '0'],
  ]);
  const drainable = await page.$$eval('button[data-drain]', (bs) =>
    bs.map((b) => [(b as HTMLElement).dataset.drain, !b.disabled]),
  );
  expect(drainable).toEqual([
    ['w1', true],
    ['w2', true],
    ['w3', false],
    ['w4', false],
  ]);
  await page.close();
});

test('picking a node and confirming sends exactly {"node": <picked>} to that persona, says so while it runs, then what was copied', async () => {
  answerMove = heldMove;
  const page = await openPanel();
  await page.waitForSelector('button[data-move="open"][data-persona="alice"]:not([disabled])');
  await page.click('button[data-move="open"][data-persona="alice"]');
  const select = 'select[data-field="move-target"][data-persona="alice"]';
  await page.waitForSelector(select, { visible: true });
  // The other ready nodes: not her own (w1), not the one that is down (w3).
  expect(await page.$$eval(`${select} option`, (os) => os.map((o) => o.value))).toEqual([
    'w2',
    'w4',
  ]);
  await page.select(select, 'w4');
  // A node joins while the person picks: the control is drawn again, and the choice stays.
  world.nodes.push(clusterNode('w5'));
  await page.waitForFunction(
    (sel) => document.querySelector(`${sel} option[value="w5"]`) !== null,
    { timeout: 15_000 },
    select,
  );
  expect(await page.$eval(select, (s) => s.value)).toBe('w4');
  await page.click('button[data-move="confirm"][data-persona="alice"]');

  await page.waitForSelector('tr[data-persona="alice"] [data-field="move-status"]', {
    visible: true,
  });
  expect(
    await page.$eval('tr[data-persona="alice"] [data-field="move-status"] button', (b) => [
      b.textContent,
      b.disabled,
    ]),
  ).toEqual(['Moving…', true]);
  expect(await cellText(page, 'tr[data-persona="alice"] [data-field="move-status"] span')).toBe(
    'Moving to w4: copying its folder, this can take a minute',
  );
  expect(moveCalls()).toEqual([
    {
      method: 'POST',
      path: '/api/personas/alice/move',
      auth: `Bearer ${KEY}`,
      body: { node: 'w4' },
    },
  ]);
  expect(moveCalls()[0]!.body).toStrictEqual({ node: 'w4' });

  held.shift()!();
  const result = 'tr[data-persona="alice"] [data-field="move-result"]';
  await page.waitForSelector(result, { visible: true });
  expect(await page.$eval(result, (e) => (e as HTMLElement).dataset.outcome)).toBe('ok');
  expect(await cellText(page, result)).toBe(
    'Moved from w1 to w4: 12 files (3.5 MB) copied in 2.1 s',
  );
  // The list was read again: alice is on w4 now, and the card counts her there.
  await page.waitForFunction(
    () =>
      document.querySelector('tr[data-persona="alice"] [data-field="node"] code')?.textContent ===
      'w4',
  );
  await page.waitForFunction(
    () =>
      document.querySelector('tr[data-node="w4"] [data-field="node-personas"]')?.textContent ===
      '1',
  );
  expect(await shown(page, 'tr[data-persona="alice"] [data-field="move-status"]')).toBe(false);
  await page.close();
});

test("a refused move (409): the waker's message on that persona's row", async () => {
  const refusal = 'cannot move persona carol: a folder carol is on node w4 already';
  answerMove = async () => ({
    status: 409,
    body: { success: false, error: refusal, page_id: null },
  });
  const page = await openPanel();
  await page.waitForSelector('button[data-move="open"][data-persona="carol"]:not([disabled])');
  await page.click('button[data-move="open"][data-persona="carol"]');
  await page.waitForSelector('select[data-field="move-target"][data-persona="carol"]');
  await page.select('select[data-field="move-target"][data-persona="carol"]', 'w4');
  await page.click('button[data-move="confirm"][data-persona="carol"]');
  const result = 'tr[data-persona="carol"] [data-field="move-result"]';
  await page.waitForSelector(result, { visible: true });
  expect(await page.$eval(result, (e) => (e as HTMLElement).dataset.outcome)).toBe('error');
  expect(await cellText(page, result)).toBe(`Moving to w4 failed: ${refusal}`);
  // Shown in the danger colour, on carol's row only; she stays where she was.
  expect(await page.$eval(result, (e) => getComputedStyle(e).color)).toBe('rgb(192, 52, 43)');
  expect(await shownTexts(page, '[data-field="move-result"]')).toHaveLength(1);
  expect(await cellText(page, 'tr[data-persona="carol"] [data-field="node"] code')).toBe('w2');
  expect(moveCalls().map((c) => [c.path, c.body])).toEqual([
    ['/api/personas/carol/move', { node: 'w4' }],
  ]);
  await page.close();
});

/** Asks for a drain of `host` and confirms it. */
async function drain(page: Page, host: string): Promise<void> {
  await page.waitForSelector(`button[data-drain="${host}"]:not([disabled])`);
  await page.click(`button[data-drain="${host}"]`);
  await page.waitForSelector('#drain-confirm', { visible: true });
  expect(await cellText(page, '#drain-confirm')).toContain(`Moves alice, bob, erin`);
  await page.click(`button[data-drain-confirm="${host}"]`);
}

const drainStatus = (page: Page) => cellText(page, '#drain-status');

test("Drain moves each of the node's personas in turn, each to the ready node with the fewest", async () => {
  answerMove = heldMove;
  const page = await openPanel();
  await drain(page, 'w1');
  // One at a time: the next move is asked only once the one before has answered.
  const expected = [
    ['alice', 'w4'], // w4 holds none, w2 one
    ['bob', 'w2'], // one each: w2 has more memory
    ['erin', 'w4'], // w2 two, w4 one
  ];
  for (const [i, [name, node]] of expected.entries()) {
    while (held.length === 0) await new Promise((r) => setTimeout(r, 50));
    expect(moveCalls().map((c) => [c.path, c.body])).toEqual(
      expected.slice(0, i + 1).map(([n, to]) => [`/api/personas/${n}/move`, { node: to }]),
    );
    await page.waitForFunction(
      (t) => document.getElementById('drain-status')?.textContent === t,
      {},
      `Draining w1: moving ${name} to ${node} (${i + 1} of 3)…`,
    );
    expect(await shown(page, `tr[data-persona="${name}"] [data-field="move-status"]`)).toBe(true);
    held.shift()!();
  }
  await page.waitForSelector('#drain-status[data-outcome="ok"]');
  expect(await drainStatus(page)).toBe(
    'Drained w1: 3 personas moved (alice → w4, bob → w2, erin → w4).',
  );
  expect(moveCalls()).toHaveLength(3);
  await page.waitForFunction(
    () =>
      document.querySelector('tr[data-node="w1"] [data-field="node-personas"]')?.textContent ===
      '0',
  );
  await page.close();
});

test('Drain stops at the first failure and says why', async () => {
  const failure = 'copying the folder of bob from w1 to w2 failed: 11 files arrived of 12';
  answerMove = async (name, node) =>
    name === 'bob'
      ? { status: 502, body: { success: false, error: failure, page_id: null } }
      : moved(name, node);
  const page = await openPanel();
  await drain(page, 'w1');
  await page.waitForSelector('#drain-status[data-outcome="error"]');
  expect(await drainStatus(page)).toBe(`Draining w1 stopped at bob (2 of 3): ${failure}`);
  expect(await shown(page, '#drain-status.banner-error')).toBe(true);
  // Erin is never asked to move, even after the list is read again.
  await settled(page);
  expect(moveCalls().map((c) => c.path)).toEqual([
    '/api/personas/alice/move',
    '/api/personas/bob/move',
  ]);
  expect(await cellText(page, 'tr[data-persona="erin"] [data-field="node"] code')).toBe('w1');
  await page.close();
});

test('on a single server the panel shows no node, no move and no Nodes card', async () => {
  world = singleServer();
  const page = await openPanel();
  await settled(page);
  expect(await clusterParts(page)).toEqual({
    nodeHeading: false,
    nodeCell: false,
    moveButton: false,
    nodesCard: false,
  });
  expect(await shownTexts(page, '#personas-table th')).toEqual([
    'Persona',
    'State',
    'Port',
    'Proxy',
    'Commit',
    'Last request',
    'CPU · memory',
    'Open',
    'Actions',
  ]);
  expect(await page.$$('[data-move], #nodes-body tr')).toHaveLength(0);
  await page.close();
});

test.each([1024, 1280])(
  'at %i px, with a result and an open picker, every persona button stays in sight',
  async (px) => {
    answerMove = async () => ({
      status: 502,
      body: {
        success: false,
        error:
          'copying the folder of bob from w1 to w2 failed: the receiver counted 11 files of 12',
        page_id: null,
      },
    });
    const page = await openPanel();
    await page.setViewport({ width: px, height: 1000 });
    await page.waitForSelector('button[data-move="open"][data-persona="bob"]:not([disabled])');
    await page.click('button[data-move="open"][data-persona="bob"]');
    await page.waitForSelector('button[data-move="confirm"][data-persona="bob"]');
    await page.click('button[data-move="confirm"][data-persona="bob"]');
    await page.waitForSelector('tr[data-persona="bob"] [data-field="move-result"]');
    await page.click('button[data-move="open"][data-persona="carol"]');
    await page.waitForSelector('button[data-move="cancel"][data-persona="carol"]');
    expect(await sidewaysOverflow(page)).toBe(0);
    const [card] = await boxes(page, '.card:has(#personas-table)');
    const [wrap] = await boxes(page, '.card:has(#personas-table) .table-wrap');
    const visibleRight = Math.min(card!.right, wrap!.right, px);
    const buttons = await boxes(page, '#personas-table button');
    // Wake, Sleep, Restart and Share for five personas; Move… for four; the picker's Move and
    // Cancel.
    expect(buttons).toHaveLength(5 * 4 + 4 + 2);
    for (const b of buttons) expect(b.right).toBeLessThanOrEqual(visibleRight);
    await page.close();
  },
);
