import Joi from 'joi';
import { DEFAULT_LEASE_TTL_S, MAX_LEASE_TTL_S } from '../browser/leases';
import type { Navigator } from '../browser/navigator';
import { navigate, screenshot } from '../browser/page-actions';
import { readPageHtml } from '../browser/page-html';
import { MAX_SNAPSHOT_LINES, readSnapshot } from '../browser/page-snapshot';
import { navigationRefusal } from '../browser/url-policy';
import type { Route } from '../http/route';
import { heldRoute, pageRoute, route } from '../http/route';
import { envelope, flag, messageResponse, pageIdSchema } from '../http/schemas';

const P = '/api/v1/ops';
const str = Joi.string();
const int = Joi.number().integer();

export interface OpsSettings {
  allowFileUrls: boolean;
}

const URL_HELP =
  'http, https, data: and about:blank URLs; file: only when the worker runs with ' +
  'ALLOW_FILE_URLS=true; javascript:, chrome:, view-source: and other schemes are refused';

export function opsRoutes(navigator: Navigator, settings: OpsSettings): Route[] {
  const url = str
    .required()
    .custom((value: string, helpers) => {
      const why = navigationRefusal(value, settings.allowFileUrls);
      return why === null ? value : helpers.message({ custom: why });
    })
    .description(URL_HELP);
  return [
    route({
      name: 'create-page',
      method: 'post',
      path: `${P}/create-page`,
      auth: true,
      tag: 'Ops',
      summary: 'Open a new page in the pool (400 for a duplicate id or a full pool)',
      body: Joi.object<{ page_id?: string | null }, true>({ page_id: pageIdSchema.allow(null) }),
      response: envelope({
        message: str.required(),
        url: str.required(),
        state: str.required(),
        total_pages: int.required(),
      }),
      handler: async ({ body }) => {
        const pool = navigator.requirePool();
        const page = await pool.create(body.page_id ?? null);
        return {
          page_id: page.id,
          message: `Page ${page.id} created`,
          url: page.url,
          state: page.state,
          total_pages: pool.size,
        };
      },
    }),
    pageRoute({
      name: 'destroy-page',
      method: ['post', 'delete'],
      path: `${P}/:page_id/destroy-page`,
      auth: true,
      tag: 'Ops',
      summary: 'Close a page and remove it from the pool',
      page: 'leased',
      response: envelope({ message: str.required(), total_pages: int.required() }),
      handler: async ({ page }) => {
        const pool = navigator.requirePool();
        await pool.destroy(page.id);
        return { message: `Page ${page.id} destroyed`, total_pages: pool.size };
      },
    }),
    pageRoute({
      name: 'lease',
      method: 'post',
      path: `${P}/:page_id/lease`,
      auth: true,
      tag: 'Ops',
      summary: 'Take (or, with the current X-Lease, renew) an exclusive lease on a page',
      description:
        'Waits for a call already running on the page to end (409 after 30 s) before the lease ' +
        'is granted, so no other client works on the page once the token is returned. A ' +
        'renewal (the current token in X-Lease) does not wait: the page is already its holder’s.',
      page: 'exists',
      body: Joi.object<{ ttl: number }, true>({
        ttl: Joi.number()
          .greater(0)
          .max(MAX_LEASE_TTL_S)
          .default(DEFAULT_LEASE_TTL_S)
          .description('seconds; the lease ends this long after the last call that uses it'),
      }),
      response: envelope({ lease_token: str.required(), ttl: Joi.number().required() }),
      handler: async ({ page, body, leaseToken }) => {
        // The holder renewing: its own call may be running on the page, and nobody else's can.
        if (navigator.leases.holds(page.id, leaseToken)) {
          const renewed = navigator.leases.acquire(page.id, leaseToken, body.ttl);
          return { lease_token: renewed.token, ttl: renewed.ttlS };
        }
        // Holding the page's lock: a call of another client still running finishes first, and
        // any call queued behind this one meets the lease when it gets the page (gate).
        const lease = await page.run('lease', { anyState: true }, async (call) => {
          const granted = navigator.leases.acquire(page.id, leaseToken, body.ttl);
          await page.bringToFront(call).catch(() => undefined);
          return granted;
        });
        return { lease_token: lease.token, ttl: lease.ttlS };
      },
    }),
    pageRoute({
      name: 'lease',
      method: 'delete',
      path: `${P}/:page_id/lease`,
      auth: true,
      tag: 'Ops',
      summary: 'Release a lease (the token goes in X-Lease)',
      page: 'exists',
      response: messageResponse,
      handler: async ({ page, leaseToken }) => {
        navigator.leases.release(page.id, leaseToken);
        return { message: 'Lease released' };
      },
    }),
    heldRoute({
      name: 'navigate',
      method: 'post',
      path: `${P}/:page_id/navigate`,
      auth: true,
      tag: 'Ops',
      summary: 'Go to a URL (about 2 s pause first; waits for DOM content loaded; 408 after 60 s)',
      description:
        `Opens ${URL_HELP}. Brings a crashed or stuck page back: a hung script is stopped ` +
        'first.',
      page: 'leased',
      hold: { navigation: true },
      body: Joi.object<{ url: string }, true>({ url }),
      response: envelope({
        url: str.required(),
        status_code: int.allow(null).required(),
        final_url: str.required(),
      }),
      handler: async ({ page, call, body }) => ({
        ...(await navigate(page, call, body.url, navigator.slowmoMs)),
      }),
    }),
    heldRoute({
      name: 'extract-content',
      method: 'post',
      path: `${P}/:page_id/extract-content`,
      auth: true,
      tag: 'Ops',
      summary: 'Full HTML and title of the page',
      page: 'leased',
      hold: { endsWithTitle: true },
      response: envelope({
        url: str.required(),
        title: str.allow('').required(),
        content: str.allow('').required(),
        content_length: int.required(),
      }),
      handler: async ({ page, call }) => ({ ...(await readPageHtml(page, call)) }),
    }),
    heldRoute({
      name: 'snapshot',
      method: 'get',
      path: `${P}/:page_id/snapshot`,
      auth: true,
      tag: 'Ops',
      summary:
        'The page as an accessibility tree, each element with a reference the primitives take',
      description:
        'One line per element, indented by depth: `- role "name" [state] [ref=n42]`. Read by ' +
        "the browser, without running script in the page. Give a line's ref to click-element, " +
        'hover-element or check-visible as `{"ref": "n42"}`; a ref names its element until the ' +
        `page navigates. Main frame only; at most ${MAX_SNAPSHOT_LINES} lines (then truncated).`,
      page: 'leased',
      hold: {},
      response: envelope({
        url: str.required(),
        title: str.allow('').required(),
        snapshot: str.allow('').required(),
        refs: int.required(),
        truncated: Joi.boolean().required(),
      }),
      handler: async ({ page, call }) => ({ url: page.url, ...(await readSnapshot(page, call)) }),
    }),
    heldRoute({
      name: 'screenshot',
      method: 'get',
      path: `${P}/:page_id/screenshot`,
      auth: true,
      tag: 'Ops',
      summary: 'PNG of the viewport (base64); with full=true also the whole page',
      page: 'leased',
      hold: {},
      query: Joi.object<{ full: boolean }, true>({ full: flag.default(false) }),
      response: envelope({
        screenshot: str.required(),
        full_screenshot: str.allow(null).required(),
        url: str.required(),
      }),
      handler: async ({ page, call, query }) => ({
        ...(await screenshot(page, call, query.full)),
      }),
    }),
  ];
}
