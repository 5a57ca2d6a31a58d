import type { Request, Response, Router } from 'express';
import type Joi from 'joi';
import type { Call } from '../browser/call';
import type { ManagedPage, RunOptions } from '../browser/managed-page';
import type { Navigator } from '../browser/navigator';
import { isBrowserLevel } from '../browser/failures';
import { answerWrongMethod, checkFields } from '@persona-browser/service-kit';
import { ApiError, BadRequest, BrowserFailure, errorMessage } from '../errors';
import type { Authenticator } from './auth';
import { ResponseCheck } from './response-check';

export type Method = 'get' | 'post' | 'delete';
export type Body = Record<string, unknown>;

export interface RouteContext<B, Q> {
  req: Request;
  res: Response;
  params: Record<string, string>;
  /** The query and body as their joi schemas validated and converted them. */
  query: Q;
  body: B;
  /** The addressed page (routes with `page`), already past the lease gate. */
  page: ManagedPage;
  /** The `X-Lease` header as sent. */
  leaseToken: string | undefined;
  /** The call's deadline and signal, for routes with `hold` (the page is held meanwhile). */
  call: Call;
  /** Holds the page for part of a handler's work (routes without `hold`), lease gate included. */
  hold: <T>(name: string, opts: RunOptions, work: (call: Call) => Promise<T>) => Promise<T>;
}

/** How a route holds its page: the page's lock, a deadline, and for gestures the hand's habits. */
export interface Hold extends Omit<RunOptions, 'gate' | 'anyState'> {
  /** Bring the tab to the front first and pause for slowmo after (primitives). */
  gesture?: boolean;
}

export interface RouteDef<B = Body, Q = Body> {
  /** Action name: the request log's `name` and the OpenAPI operation id. */
  name: string;
  method: Method | Method[];
  path: string;
  /** The path as the OpenAPI document shows it, where express's differs (a splat). */
  docPath?: string;
  auth: boolean;
  tag: string;
  summary: string;
  description?: string;
  query?: Joi.ObjectSchema<Q>;
  body?: Joi.ObjectSchema<B>;
  /**
   * GET plugins: the body the handler gets is the query and the JSON body merged by this
   * function, then validated by `body`; `query` only documents the parameters.
   */
  merge?: (query: Body, body: Body) => Body;
  /** What a success answers; checked against every response under VALIDATE_RESPONSES. */
  response?: Joi.ObjectSchema;
  /** `:page_id` names a pooled page: 404 when absent, then the lease gate. */
  page?: 'leased' | 'exists';
  /** Run the handler holding the page (see Hold); without it the handler does not lock. */
  hold?: Hold;
  /**
   * Unknown body fields are refused (400 naming the field) unless the contract says this
   * route ignores them (`scroll-page`: `amount`, `direction` fall back to the default).
   */
  unknownFields?: 'ignore';
  /** The handler writes the response itself (raw bytes, or a reply before shutting down). */
  raw?: boolean;
  /** The content type a raw route answers with, for the OpenAPI document. */
  rawType?: string;
  handler(ctx: RouteContext<B, Q>): Promise<Body | void>;
}

/** A route of any body and query type, as route tables list them. */
export type AnyRoute = RouteDef<never, never>;

/** Declares a route; the handler's body and query are typed from the route's joi schemas. */
export const route = <B = Body, Q = Body>(def: RouteDef<B, Q>): AnyRoute =>
  def as unknown as AnyRoute;

/** A query or body as its schema converts it, or the API's 400 naming the first problem. */
function validate<T>(
  schema: Joi.ObjectSchema<T> | undefined,
  value: unknown,
  pageId: string | null,
  unknown?: 'ignore',
): T {
  const checked = checkFields(schema, value ?? {}, unknown);
  if (!checked.ok) throw new BadRequest(checked.message, pageId);
  return checked.value;
}

function leaseHeader(req: Request): string | undefined {
  const v = req.header('x-lease');
  return v && v.trim() ? v.trim() : undefined;
}

export interface MountDeps {
  navigator: Navigator;
  auth: Authenticator;
}

/** The page a request addresses, past the lease gate, and the gate to check again later. */
interface Addressed {
  page: ManagedPage | undefined;
  leased: boolean;
  gate: (() => void) | undefined;
}

function address(
  def: RouteDef,
  navigator: Navigator,
  pageId: string | null,
  leaseToken: string | undefined,
): Addressed {
  if (!def.page || pageId === null) return { page: undefined, leased: false, gate: undefined };
  const page = navigator.requirePool().get(pageId);
  if (def.page !== 'leased') return { page, leased: false, gate: undefined };
  return {
    page,
    leased: navigator.leases.check(pageId, leaseToken),
    // Checked again once the page is held: a lease granted meanwhile stops this call.
    gate: () => void navigator.leases.check(pageId, leaseToken),
  };
}

/**
 * Runs the handler: holding the page for routes with `hold` (front first for a gesture or a
 * leased page, the slowmo pause after a gesture), as it is otherwise.
 */
function run(
  def: RouteDef,
  ctx: RouteContext<Body, Body>,
  at: Addressed,
  slowmoMs: number,
): Promise<Body | void> {
  const { page, leased } = at;
  const h = def.hold;
  if (h && page) {
    return ctx.hold(def.name, h, async (call) => {
      if (h.gesture || leased) await page.bringToFront(call);
      const out = await def.handler({ ...ctx, call });
      if (h.gesture) await call.sleep(slowmoMs);
      return out;
    });
  }
  // A leased page is brought to the front by every call that uses the lease (docs/api.md, Leases).
  if (leased && page && page.mayTakeFront()) page.page.bringToFront().catch(() => undefined);
  return def.handler(ctx);
}

/**
 * Applies one route table: auth, validation, page lookup and lease gate, the page hold with its
 * deadline, then the thin handler and the API's success envelope. Errors flow to the one error
 * middleware: ApiErrors as they are, browser-level failures as 200 `success: false`, and
 * anything else as a logged 500.
 */
export function mount(router: Router, routes: AnyRoute[], deps: MountDeps): void {
  const { navigator, auth } = deps;
  for (const def of routes as RouteDef[]) {
    const methods = Array.isArray(def.method) ? def.method : [def.method];
    for (const method of methods) {
      router[method](def.path, async (req: Request, res: Response) => {
        ResponseCheck.declare(res, def.response);
        if (def.auth) auth.check(req);
        const params = req.params as Record<string, string>;
        const pageId = params.page_id ?? null;
        // The error middleware sits outside this router, where req.params is empty.
        res.locals.pageId = pageId;
        // Bodies are JSON objects; an array would otherwise be ignored by routes without fields.
        const raw: unknown = req.body;
        if (raw !== undefined && (raw === null || typeof raw !== 'object' || Array.isArray(raw)))
          throw new BadRequest('Request body must be a JSON object', pageId);
        // A query is read only where the route declares one (a cache-buster elsewhere is fine).
        const query = def.merge || !def.query ? {} : validate(def.query, req.query, pageId);
        const input = def.merge ? def.merge(req.query, (raw ?? {}) as Body) : raw;
        const body = validate(def.body, input, pageId, def.unknownFields);
        const leaseToken = leaseHeader(req);
        const at = address(def, navigator, pageId, leaseToken);
        const ctx: RouteContext<Body, Body> = {
          req,
          res,
          params,
          query,
          body,
          page: at.page as ManagedPage,
          leaseToken,
          call: undefined as unknown as Call,
          hold: (name, opts, work) => {
            if (!at.page) throw new Error(`route ${def.name} holds a page it does not address`);
            return at.page.run(name, { ...opts, gate: at.gate }, work);
          },
        };
        let result: Body | void;
        try {
          result = await run(def, ctx, at, navigator.slowmoMs);
        } catch (err) {
          // A browser that throws (target closed, context destroyed…) is a browser-level
          // failure: 200 with success false (docs/api.md). Anything else is our fault: a 500.
          if (def.page && !(err instanceof ApiError) && isBrowserLevel(err))
            throw new BrowserFailure(errorMessage(err), pageId);
          throw err;
        } finally {
          if (at.leased && pageId !== null) navigator.leases.touch(pageId, leaseToken);
        }
        if (def.raw) return;
        res.json({ success: true, page_id: pageId, ...(result ?? {}) });
      });
    }
  }
  guardMethods(router, routes);
}

/**
 * After every route of the table: a known path called with a method it does not serve
 * answers 405 with `Allow` (a wrong method is not an unknown route).
 */
function guardMethods(router: Router, routes: RouteDef[]): void {
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
