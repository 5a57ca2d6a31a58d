import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import type { Browser, Page } from 'puppeteer-core';
import { openWithKey } from './panel-key';
import type { PersonaInfo, SupervisorStatus } from '@persona-browser/contracts';
import { UPDATE_STEPS_MODULE } from '@persona-browser/contracts';

/**
 * The fleet panel's files served as the waker serves them (the panel at `/`, the shared files
 * at `/ui/`, uPlot at `/vendor/uplot/`, the update steps at `/update-steps.js`), in front of API
 * routes a test writes: the page in a real browser, the answers chosen by the test.
 */

const PANEL_DIR = path.join(
  path.dirname(require.resolve('@persona-browser/waker/package.json')),
  'panel',
);
const UPLOT_DIR = path.dirname(require.resolve('uplot/dist/uPlot.iife.min.js'));
const UI_DIR = path.dirname(require.resolve('@persona-browser/ui/package.json'));

export interface ApiCall {
  method: string;
  path: string;
  auth: string | undefined;
  /** The JSON body, for a call that sent one. */
  body?: unknown;
}

/** A node of a cluster as the waker's `GET /api/nodes` lists it. */
export interface ClusterNode {
  hostname: string;
  ready: boolean;
  active: boolean;
  memory_mb: number;
  message: string;
}

export interface PanelServer {
  base: string;
  /** Every call under /api, in order. */
  calls: ApiCall[];
  server: http.Server;
  close(): Promise<void>;
}

/**
 * Serves the panel; `/api` needs `Bearer <key>` (else the API's 401), then `routes` answer.
 * `GET /api/nodes` answers an empty list, as a single server does, unless `routes` answer it.
 */
export async function servePanel(
  key: string,
  routes: (api: express.Router) => void,
): Promise<PanelServer> {
  const calls: ApiCall[] = [];
  const app = express();
  const api = express.Router();
  api.use(express.json());
  api.use((req, res, next) => {
    const body: unknown = req.body;
    calls.push({
      method: req.method,
      path: req.originalUrl,
      auth: req.headers.authorization,
      ...(body === undefined ? {} : { body }),
    });
    if (req.headers.authorization !== `Bearer ${key}`) {
      res.status(401).json({ detail: 'Invalid API key' });
      return;
    }
    next();
  });
  routes(api);
  api.get('/nodes', (_req, res) => {
    res.json({ nodes: [] });
  });
  app.use('/api', api);
  app.use('/vendor/uplot', express.static(UPLOT_DIR));
  app.use('/ui', express.static(UI_DIR));
  app.get('/update-steps.js', (_req, res) => {
    res.type('text/javascript').send(UPDATE_STEPS_MODULE);
  });
  app.use('/', express.static(PANEL_DIR, { index: 'index.html' }));
  const server = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A persona as the waker lists it: running for five minutes, last asked 12 s ago. */
export function persona(name: string, port: number, over: Partial<PersonaInfo>): PersonaInfo {
  return {
    name,
    port,
    mode: 'always-on',
    state: 'running',
    depth: null,
    since: new Date(Date.now() - 300_000).toISOString(),
    commit: null,
    idle_seconds: 12,
    last_request: new Date(Date.now() - 12_000).toISOString(),
    error: null,
    retry_at: null,
    proxy: null,
    node: null,
    ...over,
  };
}

/** A ready, active node of 8 GB, as `GET /api/nodes` lists it. */
export function clusterNode(hostname: string, over: Partial<ClusterNode> = {}): ClusterNode {
  return { hostname, ready: true, active: true, memory_mb: 8192, message: '', ...over };
}

/**
 * A supervisor status as `GET /api/supervisor` answers between updates; `remote` (and the rest)
 * as the test sets it. A `remote` of undefined leaves the field out, as an older supervisor does.
 */
export function supervisorStatus(
  over: Partial<SupervisorStatus> = {},
): Omit<SupervisorStatus, 'remote'> & Partial<Pick<SupervisorStatus, 'remote'>> {
  const { remote, ...rest } = over;
  return {
    state: 'idle',
    commit: { hash: 'a'.repeat(40), subject: 'The running commit', date: '2026-11-20T10:00:00Z' },
    healthy_commit: 'a'.repeat(40),
    upstream: 'origin/main',
    refused: null,
    halted: null,
    last_update: null,
    bad_commits: [],
    log: [],
    waker: { pid: 4241, running: true },
    ...(remote === undefined ? {} : { remote }),
    ...rest,
  };
}

/**
 * A panel test file's closing hooks: a script error in the panel fails the test during which it
 * was thrown (or the first one, when it was thrown while the panel was set up), and what `open`
 * lists (the client browser, the stand) is closed after the file's tests.
 */
export function panelTestHooks(
  scriptErrors: string[],
  open: () => Array<{ close: () => Promise<void> } | undefined>,
): void {
  afterEach(() => {
    expect(scriptErrors.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    for (const o of open()) await o?.close();
  });
}

/**
 * The fleet panel at `base` in a new tab of `browser`, `width` wide, with `key` entered as a
 * person enters it; each script error the page throws goes to `errors`.
 */
export async function openFleetPanel(
  browser: Browser,
  base: string,
  o: { key: string; width: number; height?: number; errors: string[] },
): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (e) => o.errors.push(String(e)));
  await page.setViewport({ width: o.width, height: o.height ?? 900 });
  await openWithKey(page, `${base}/`, o.key);
  return page;
}
