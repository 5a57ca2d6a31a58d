import type { Browser } from 'puppeteer-core';
import type { AppDeps } from '../src/app';
import { allRoutes } from '../src/app';
import { openApiPath } from '../src/http/openapi';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

let w: RunningWorker;
let browser: Browser;
let client: ClientBrowser | undefined;

beforeAll(async () => {
  w = await startWorker();
  client = await launchClientBrowser();
  browser = client.browser;
});
afterAll(async () => {
  await client?.close();
  await w?.stop();
});

type Doc = { openapi: string; paths: Record<string, Record<string, any>> };

describe('OpenAPI document', () => {
  test('lists every mounted route with its method, built from the validating joi schemas', async () => {
    const r = await w.call<Doc>('GET', '/openapi.json', { auth: false });
    expect(r.status).toBe(200);
    expect(r.body.openapi).toMatch(/^3\./);
    const routes = allRoutes({} as AppDeps);
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const m of methods) {
        expect({
          route: `${m} ${route.path}`,
          documented: Boolean(r.body.paths[openApiPath(route.path)]?.[m]),
        }).toEqual({
          route: `${m} ${route.path}`,
          documented: true,
        });
      }
    }
    // The navigate body schema is the one that validates: url is required and must be a URI.
    const nav = r.body.paths['/api/v1/ops/{page_id}/navigate']?.post;
    const schema = nav.requestBody.content['application/json'].schema;
    expect(schema.required).toContain('url');
    expect(schema.properties.url.description).toMatch(/http, https, data: and about:blank/);
    const lease =
      r.body.paths['/api/v1/ops/{page_id}/lease']?.post.requestBody.content['application/json']
        .schema;
    expect(lease.properties.ttl).toMatchObject({ maximum: 3600, default: 300 });
    expect(nav.security).toEqual([{ bearer: [] }]);
    expect(r.body.paths['/api/v1/system/ping']?.get.security).toBeUndefined();
  });
});

describe('Swagger UI and ReDoc', () => {
  test.each([
    ['/docs', '.opblock'],
    ['/redoc', '[data-section-id]'],
  ])('%s renders the API from local assets only', async (route, selector) => {
    const page = await browser.newPage();
    // What may leave the browser: every request except those the page's content security
    // policy stopped before any connection was made (this sandbox has no route out, so a
    // failed request alone would prove nothing).
    const cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    const urls = new Map<string, string>();
    const blocked = new Set<string>();
    cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
    cdp.on('Network.loadingFailed', (e) => {
      if (e.blockedReason === 'csp') blocked.add(e.requestId);
    });
    await page.goto(w.url + route);
    await page.waitForSelector(selector, { timeout: 30_000 });
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toContain('/api/v1/ops/{page_id}/navigate');
    const hosts = new Set<string>();
    for (const [id, url] of urls) {
      const u = new URL(url);
      if (u.protocol.startsWith('http') && !blocked.has(id)) hosts.add(u.host);
    }
    expect([...hosts]).toEqual([`127.0.0.1:${w.port}`]);
    await page.close();
  });
});
