import type { Request, Response, Router } from 'express';
import type Joi from 'joi';
import type { ManagedPage } from '../browser/managed-page';
import type { Navigator } from '../browser/navigator';
import { ApiError, BadRequest, BrowserFailure, errorMessage } from '../errors';
import type { Authenticator } from './auth';

export type Method = 'get' | 'post' | 'delete';

export interface RouteContext<B = Record<string, unknown>, Q = Record<string, unknown>> {
  req: Request;
  res: Response;
  params: Record<string, string>;
  query: Q;
  body: B;
  /** The addressed page (routes with `page: true`), already past the lease gate. */
  page: ManagedPage;
  /** The `X-Lease` header as sent. */
  leaseToken: string | undefined;
}

export interface RouteDef {
  /** Action name: the request log's `name` and the OpenAPI operation id. */
  name: string;
  method: Method | Method[];
  path: string;
  auth: boolean;
  tag: string;
  summary: string;
  description?: string;
  query?: Joi.ObjectSchema;
  body?: Joi.ObjectSchema;
  response?: Joi.ObjectSchema;
  /** `:page_id` names a pooled page: 404 when absent, then the lease gate. */
  page?: 'leased' | 'exists';
  /** The handler writes the response itself (raw bytes, or a reply before shutting down). */
  raw?: boolean;
  handler(ctx: RouteContext): Promise<Record<string, unknown> | void>;
}

function validate(
  schema: Joi.ObjectSchema | undefined,
  value: unknown,
  pageId: string | null,
): Record<string, unknown> {
  if (!schema) return {};
  const result: Joi.ValidationResult<Record<string, unknown>> = schema.validate(value ?? {}, {
    convert: true,
    allowUnknown: true,
    stripUnknown: true,
    abortEarly: true,
  });
  if (result.error) {
    const { details, message } = result.error;
    throw new BadRequest(details[0]?.message.replace(/"/g, "'") ?? message, pageId);
  }
  return result.value;
}

function leaseHeader(req: Request): string | undefined {
  const v = req.header('x-lease');
  return v && v.trim() ? v.trim() : undefined;
}

/**
 * Applies one route table: auth, validation, page lookup and lease gate, then the thin handler,
 * then SPEC's success envelope. Errors flow to the one error middleware.
 */
export function mount(
  router: Router,
  routes: RouteDef[],
  navigator: Navigator,
  auth: Authenticator,
): void {
  for (const route of routes) {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      router[method](route.path, async (req: Request, res: Response) => {
        if (route.auth) auth.check(req);
        const params = req.params as Record<string, string>;
        const pageId = params.page_id ?? null;
        // Bodies are JSON objects; an array would otherwise be ignored by routes without fields.
        const raw: unknown = req.body;
        if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw)))
          throw new BadRequest('Request body must be a JSON object', pageId);
        const query = validate(route.query, req.query, pageId);
        const body = validate(route.body, req.body, pageId);
        const leaseToken = leaseHeader(req);
        let page: ManagedPage | undefined;
        let leased = false;
        if (route.page && pageId !== null) {
          page = navigator.requirePool().get(pageId);
          if (route.page === 'leased') leased = navigator.leases.check(pageId, leaseToken);
          if (leased) await page.page.bringToFront().catch(() => undefined);
        }
        let result: Record<string, unknown> | void;
        try {
          result = await route.handler({
            req,
            res,
            params,
            query,
            body,
            page: page as ManagedPage,
            leaseToken,
          });
        } catch (err) {
          // A browser that throws (target closed, context destroyed…) is a browser-level
          // failure: 200 with success false, as SPEC says, never a 500.
          if (route.page && !(err instanceof ApiError))
            throw new BrowserFailure(errorMessage(err), pageId);
          throw err;
        } finally {
          if (leased && pageId !== null) navigator.leases.touch(pageId, leaseToken);
        }
        if (route.raw) return;
        res.json({ success: true, page_id: pageId, ...(result ?? {}) });
      });
    }
  }
}
