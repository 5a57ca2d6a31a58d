import Joi from 'joi';
import { DEFAULT_LEASE_TTL_S, MAX_LEASE_TTL_S } from '../browser/leases';
import type { Navigator } from '../browser/navigator';
import { extractContent, navigate, screenshot } from '../browser/page-actions';
import type { RouteDef } from '../http/route';
import { envelope, messageResponse, pageIdSchema } from '../http/schemas';

const P = '/api/v1/ops';
const str = Joi.string();
const int = Joi.number().integer();

export function opsRoutes(navigator: Navigator): RouteDef[] {
  return [
    {
      name: 'create-page',
      method: 'post',
      path: `${P}/create-page`,
      auth: true,
      tag: 'Ops',
      summary: 'Open a new page in the pool (400 for a duplicate id or a full pool)',
      body: Joi.object({ page_id: pageIdSchema.allow(null) }),
      response: envelope({
        message: str,
        url: str,
        state: str,
        total_pages: int,
      }),
      handler: async ({ body }) => {
        const pool = navigator.requirePool();
        const page = await pool.create((body.page_id as string | null | undefined) ?? null);
        return {
          page_id: page.id,
          message: `Page ${page.id} created`,
          url: page.url,
          state: page.state,
          total_pages: pool.size,
        };
      },
    },
    {
      name: 'destroy-page',
      method: ['post', 'delete'],
      path: `${P}/:page_id/destroy-page`,
      auth: true,
      tag: 'Ops',
      summary: 'Close a page and remove it from the pool',
      page: 'leased',
      response: envelope({ message: str, total_pages: int }),
      handler: async ({ page }) => {
        const pool = navigator.requirePool();
        await pool.destroy(page.id);
        return { message: `Page ${page.id} destroyed`, total_pages: pool.size };
      },
    },
    {
      name: 'lease',
      method: 'post',
      path: `${P}/:page_id/lease`,
      auth: true,
      tag: 'Ops',
      summary: 'Take (or, with the current X-Lease, renew) an exclusive lease on a page',
      page: 'exists',
      body: Joi.object({
        ttl: Joi.number()
          .greater(0)
          .max(MAX_LEASE_TTL_S)
          .default(DEFAULT_LEASE_TTL_S)
          .description('seconds; the lease ends this long after the last call that uses it'),
      }),
      response: envelope({ lease_token: str, ttl: Joi.number() }),
      handler: async ({ page, body, leaseToken }) => {
        const lease = navigator.leases.acquire(page.id, leaseToken, body.ttl as number);
        await page.page.bringToFront().catch(() => undefined);
        return { lease_token: lease.token, ttl: lease.ttlS };
      },
    },
    {
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
    },
    {
      name: 'navigate',
      method: 'post',
      path: `${P}/:page_id/navigate`,
      auth: true,
      tag: 'Ops',
      summary: 'Go to a URL (about 2 s pause first; waits for DOM content loaded; 408 after 60 s)',
      page: 'leased',
      body: Joi.object({
        url: str
          .uri()
          .required()
          .description('absolute URL with a scheme, such as https://example.com/')
          .messages({ 'string.uri': "'url' must be an absolute URL with a scheme (https://…)" }),
      }),
      response: envelope({ url: str, status_code: int.allow(null), final_url: str }),
      handler: async ({ page, body }) => ({
        ...(await navigate(page, body.url as string, navigator.slowmoMs)),
      }),
    },
    {
      name: 'extract-content',
      method: 'post',
      path: `${P}/:page_id/extract-content`,
      auth: true,
      tag: 'Ops',
      summary: 'Full HTML and title of the page',
      page: 'leased',
      response: envelope({ url: str, title: str.allow(''), content: str, content_length: int }),
      handler: async ({ page }) => ({ ...(await extractContent(page)) }),
    },
    {
      name: 'screenshot',
      method: 'get',
      path: `${P}/:page_id/screenshot`,
      auth: true,
      tag: 'Ops',
      summary: 'PNG of the viewport (base64); with full=true also the whole page',
      page: 'leased',
      query: Joi.object({
        full: Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off').default(false),
      }),
      response: envelope({ screenshot: str, full_screenshot: str.allow(null), url: str }),
      handler: async ({ page, query }) => ({ ...(await screenshot(page, query.full as boolean)) }),
    },
  ];
}
