import type { Access } from '@persona-browser/service-kit';
import { accessOf } from '@persona-browser/service-kit';
import type { AppDeps } from '../src/app';
import { allRoutes } from '../src/app';
import { routeNeed, routeUrl } from '../src/http/mount';
import type { Route } from '../src/http/route';
import { DEFAULT_PLUGINS_DIR } from '../src/paths';
import { discoverPlugins } from '../src/plugins/discover';

/**
 * The route tables say which routes need a credential (`auth`); service-kit's `accessOf` says
 * which credential opens each path (the worker's mount checks with it, the waker's front door
 * decides with it whether to wake a persona). The two are written apart: this walks every
 * route the worker mounts, plugins included, so that they cannot drift apart unnoticed.
 */

/** The routes a `read` token opens: reading a page, nothing that acts on it. */
const READ_ROUTES = ['POST extract-content', 'GET screenshot', 'GET network', 'GET snapshot'];
/** The routes of the service key alone (they reach beyond the persona). */
const KEY_ROUTES = ['GET update', 'GET metrics', 'POST revoked-tokens'];

const PAGE = 'p-1';

/** Every route of a worker with its plugins, built without a browser (as generate-client does). */
function everyRoute(): Route[] {
  const found = discoverPlugins(DEFAULT_PLUGINS_DIR);
  expect(found.broken).toEqual([]);
  // Route tables read their dependencies only when a request comes: stand-ins do here.
  const deps = {
    navigator: { slowmoMs: 0 },
    allowFileUrls: false,
    plugins: { found, env: {}, rngFor: () => () => 0, secrets: {} },
    metrics: {},
  } as unknown as AppDeps;
  return allRoutes(deps);
}

/** A sample value for each parameter of a route's path (a page id for `:page_id`). */
function sampleParams(path: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [, kind, name] of path.matchAll(/([:*])(\w+)/g)) {
    if (name === undefined) continue;
    params[name] = name === 'page_id' ? PAGE : kind === '*' ? 'social/state' : 'x1';
  }
  return params;
}

interface Seen {
  route: string;
  auth: boolean;
  /** The route's path names a page (`:page_id`). */
  onPage: boolean;
  access: Access;
  pageId: string | null;
}

function classifyAll(routes: Route[]): Seen[] {
  const seen: Seen[] = [];
  for (const def of routes) {
    const methods = Array.isArray(def.method) ? def.method : [def.method];
    for (const m of methods) {
      const method = m.toUpperCase();
      const need = accessOf(method, routeUrl(def.path, sampleParams(def.path)));
      const onPage = def.path.includes(':page_id');
      seen.push({ route: `${method} ${def.name}`, auth: def.auth, onPage, ...need });
    }
  }
  return seen;
}

const routes = everyRoute();
const seen = classifyAll(routes);

describe('the route tables and the access classification agree', () => {
  test('the walk covers the whole worker, plugins included', () => {
    expect(seen.length).toBeGreaterThan(60);
    expect(routes.filter((r) => r.path.includes('/plugin/')).length).toBeGreaterThan(10);
    for (const name of [...READ_ROUTES, ...KEY_ROUTES]) {
      expect(seen.map((s) => s.route)).toContain(name);
    }
  });

  test('a route without auth is exactly a `status` one, and a route with auth never is', () => {
    const wrong = seen.filter((s) => (s.access === 'status') !== !s.auth);
    expect(wrong).toEqual([]);
    // No route of the tables is a public file either (that is the panel's and the docs').
    expect(seen.filter((s) => s.access === 'static')).toEqual([]);
  });

  test('`read` is exactly extract-content, screenshot, network and snapshot', () => {
    const read = seen.filter((s) => s.access === 'read').map((s) => s.route);
    expect(read.sort()).toEqual([...READ_ROUTES].sort());
  });

  test('the service key alone for the fleet-wide routes; `full` for every other one', () => {
    const key = seen.filter((s) => s.access === 'key').map((s) => s.route);
    expect(key.sort()).toEqual([...KEY_ROUTES].sort());
    const rest = seen.filter((s) => s.auth && !['read', 'key'].includes(s.access));
    expect(rest.filter((s) => s.access !== 'full')).toEqual([]);
  });

  test('a route on a page names that page, so a page-limited token can be held to it', () => {
    const onPage = seen.filter((s) => s.onPage);
    expect(onPage.length).toBeGreaterThan(30);
    expect(onPage.filter((s) => s.pageId !== PAGE)).toEqual([]);
  });
});

describe("the mount's need of a route", () => {
  const update = routes.find((r) => r.name === 'update');
  const screenshot = routes.find((r) => r.name === 'screenshot');

  test('is read from the path as declared, whatever letter case the request used', () => {
    // Express routes `/API/V1/SYSTEM/UPDATE` to the update route: the classification reads
    // any case too (the waker's door has only the path as sent), and the mount reads the path
    // as declared.
    expect(accessOf('GET', '/API/V1/SYSTEM/UPDATE').access).toBe('key');
    expect(routeNeed(update as Route, 'GET', {})).toMatchObject({ access: 'key' });
    expect(routeNeed(screenshot as Route, 'GET', { page_id: 'My Page/1' })).toEqual({
      access: 'read',
      pageId: 'My Page/1',
      cookie: false,
    });
  });

  test('a route the table says needs a credential never goes without one', () => {
    const drifted: Route = { ...(update as Route), path: '/not-classified/:id' };
    expect(accessOf('GET', '/not-classified/x').access).toBe('static');
    expect(routeNeed(drifted, 'GET', { id: 'x' }).access).toBe('full');
    expect(routeNeed({ ...drifted, auth: false }, 'GET', { id: 'x' }).access).toBe('static');
  });

  test('routeUrl fills parameters encoded, a splat segment by segment', () => {
    expect(routeUrl('/api/v1/ops/:page_id/lease', { page_id: 'a b/c' })).toBe(
      '/api/v1/ops/a%20b%2Fc/lease',
    );
    expect(routeUrl('/api/v1/plugins/*name/docs', { name: 'social/state' })).toBe(
      '/api/v1/plugins/social/state/docs',
    );
  });
});
