/**
 * docs/api.md against the OpenAPI document a real worker serves: every route it serves is
 * listed (plugins by their path in the plugin table), and every `/api/v1` route listed is
 * served. The controls run the same check on the page with a row taken out or a route added.
 */
import {
  differences,
  readApiDoc,
  servedRoutes,
  withoutRow,
} from '@persona-browser/testkit/api-doc';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

type OpenApi = { paths: Record<string, Record<string, unknown>> };

let w: RunningWorker;
let served: OpenApi;
const doc = readApiDoc();

beforeAll(async () => {
  w = await startWorker();
  const r = await w.call<OpenApi>('GET', '/openapi.json', { auth: false });
  expect(r.status).toBe(200);
  served = r.body;
});
afterAll(async () => {
  await w?.stop();
});

describe('docs/api.md and the served OpenAPI document', () => {
  test('list the same routes, plugins included', () => {
    const routes = servedRoutes(served);
    // The worker serves its own routes and every installed plugin's: a document this small
    // would mean the worker found no plugins, and the comparison would prove little.
    expect(routes.filter((r) => r.includes('/plugin/')).length).toBeGreaterThan(10);
    expect(routes.length).toBeGreaterThan(40);
    expect(differences(doc, served)).toEqual([]);
  });

  test('a route the page leaves out is named (control)', () => {
    const missing = withoutRow(doc, 'POST /api/v1/ops/{page_id}/navigate');
    expect(differences(missing, served)).toEqual([
      'POST /api/v1/ops/{page_id}/navigate is served; docs/api.md does not list it',
    ]);
    const noDelete = withoutRow(doc, 'DELETE /api/v1/ops/{page_id}/destroy-page');
    expect(differences(noDelete, served)).toEqual([
      'DELETE /api/v1/ops/{page_id}/destroy-page is served; docs/api.md does not list it',
    ]);
  });

  test('a plugin the page leaves out is named (control)', () => {
    const missing = withoutRow(doc, 'GET social/state');
    expect(differences(missing, served)).toEqual([
      'plugin route GET /api/v1/{page_id}/plugin/social/state is served; docs/api.md has no row `GET social/state`',
    ]);
  });

  test('a route the worker does not serve is named (control)', () => {
    const extra = `${doc}\n| \`POST /api/v1/ops/{page_id}/teleport\` | none | nothing |\n| \`POST archive/forget\` | x |\n`;
    expect(differences(extra, served)).toEqual([
      'docs/api.md lists POST /api/v1/ops/{page_id}/teleport, which the worker does not serve',
      'docs/api.md lists plugin `POST archive/forget`, which the worker does not serve',
    ]);
  });
});
