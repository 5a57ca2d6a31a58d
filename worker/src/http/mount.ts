import type { Request, Response, Router } from 'express';
import type { AccessNeed } from '@persona-browser/service-kit';
import type { Navigator } from '../browser/navigator';
import { accessOf, answerWrongMethod } from '@persona-browser/service-kit';
import { BadRequest } from '../errors';
import type { Authenticator } from './auth';
import { raiseBodyError } from './body-error';
import { keepCredential } from './call-credential';
import { WorkerMetrics } from './metrics';
import { ResponseCheck } from './response-check';
import { sendJson } from './send-json';
import type { Body, Method, Route } from './route';

export interface MountDeps {
  navigator: Navigator;
  auth: Authenticator;
}

/** A JSON object (what every request body must be), as opposed to an array or a scalar. */
const isJsonObject = (v: unknown): v is Body =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Path parameters as strings: a splat (`*name`) arrives as its segments, joined again here. */
function pathParams(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.params)) {
    out[name] = Array.isArray(value) ? value.join('/') : value;
  }
  return out;
}

/**
 * A route's path with its parameters put in (`:name` one segment, `*name` the rest), as
 * service-kit's classification reads paths: `/api/v1/ops/p1/screenshot`.
 */
export function routeUrl(path: string, params: Record<string, string>): string {
  return path.replace(/([:*])(\w+)/g, (whole, kind: string, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return kind === '*'
      ? value.split('/').map(encodeURIComponent).join('/')
      : encodeURIComponent(value);
  });
}

/**
 * What a request to `def` needs (service-kit's `accessOf`), read from the route's own path with
 * the request's parameters: express matches paths in any letter case (`/API/V1/SYSTEM/UPDATE`
 * reaches the update route), which the classification, written for the paths as declared,
 * would take for a public file. A route the table says needs a credential never goes without
 * one, whatever the classification says (the unit test keeps the two in step).
 */
export function routeNeed(def: Route, method: string, params: Record<string, string>): AccessNeed {
  const need = accessOf(method, routeUrl(def.path, params));
  const open = need.access === 'status' || need.access === 'static';
  return def.auth && open ? { ...need, access: 'full' } : need;
}

function leaseHeader(req: Request): string | undefined {
  const v = req.header('x-lease');
  return v && v.trim() ? v.trim() : undefined;
}

/**
 * Applies one route table: the credential (the service key, or a token whose scope, persona and
 * page open the route), validation, page lookup and lease gate, the page hold with its
 * deadline, then the thin handler and the API's success envelope. Errors flow to the one error
 * middleware: ApiErrors as they are, browser-level failures as 200 `success: false`, and
 * anything else as a logged 500.
 */
export function mount(router: Router, routes: Route[], deps: MountDeps): void {
  const { navigator, auth } = deps;
  for (const def of routes) {
    const methods = Array.isArray(def.method) ? def.method : [def.method];
    for (const method of methods) {
      router[method](def.path, async (req: Request, res: Response) => {
        ResponseCheck.declare(res, def.response);
        WorkerMetrics.routeServed(res.locals, def.name);
        const params = pathParams(req);
        // The credential first (docs/api.md): a refusal says nothing of the body or the page.
        keepCredential(res.locals, auth.check(req, routeNeed(def, req.method, params)));
        const pageId = params.page_id ?? null;
        // The error middleware sits outside this router, where req.params is empty.
        res.locals.pageId = pageId;
        raiseBodyError(res.locals);
        // Bodies are JSON objects; an array would otherwise be ignored by routes without fields.
        const raw: unknown = req.body;
        if (raw !== undefined && !isJsonObject(raw))
          throw new BadRequest('Request body must be a JSON object', pageId);
        const leaseToken = leaseHeader(req);
        const result = await def.serve({
          req,
          res,
          params,
          pageId,
          json: raw,
          leaseToken,
          navigator,
        });
        if (def.raw) return;
        sendJson(res, { success: true, page_id: pageId, ...(result ?? {}) });
      });
    }
  }
  guardMethods(router, routes);
}

/**
 * After every route of the table: a known path called with a method it does not serve
 * answers 405 with `Allow` (a wrong method is not an unknown route).
 */
function guardMethods(router: Router, routes: Route[]): void {
  const byPath = new Map<string, Method[]>();
  for (const def of routes) {
    const methods = byPath.get(def.path) ?? [];
    byPath.set(def.path, methods.concat(def.method));
  }
  for (const [path, methods] of byPath) {
    router.all(path, (req: Request, res: Response) =>
      answerWrongMethod(req, res, req.originalUrl.split('?')[0] ?? path, methods),
    );
  }
}
