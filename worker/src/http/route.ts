import type { Request, Response } from 'express';
import type Joi from 'joi';
import type { Call } from '../browser/call';
import type { ManagedPage, RunOptions } from '../browser/managed-page';
import type { Navigator } from '../browser/navigator';
import { isBrowserLevel } from '../browser/failures';
import { checkFields } from '@persona-browser/service-kit';
import { ApiError, BadRequest, BrowserFailure, errorMessage } from '../errors';

export type Method = 'get' | 'post' | 'delete';
export type Body = Record<string, unknown>;

/** What every handler gets. */
export interface RouteContext<B, Q> {
  req: Request;
  res: Response;
  params: Record<string, string>;
  /** The query and body as their joi schemas validated and converted them. */
  query: Q;
  body: B;
  /** The `X-Lease` header as sent. */
  leaseToken: string | undefined;
}

/** A route with `page` and no `hold`: the page, and a way to hold it for part of the work. */
export interface PageContext<B, Q> extends RouteContext<B, Q> {
  /** The addressed page, already past the lease gate. */
  page: ManagedPage;
  /** Holds the page for part of a handler's work, lease gate included. */
  hold: <T>(name: string, opts: RunOptions, work: (call: Call) => Promise<T>) => Promise<T>;
}

/** A route with `page` and `hold`: the page, held for the whole handler, and the call's bounds. */
export interface HeldContext<B, Q> extends RouteContext<B, Q> {
  page: ManagedPage;
  /** The call's deadline and signal (the page is held meanwhile). */
  call: Call;
  /**
   * Work to run if the call fails, still holding the page before the failure is answered
   * (see RunOptions.afterFailure); the last one registered runs.
   */
  onFailure: (work: (err: unknown) => Promise<void>) => void;
}

/** How a route holds its page: the page's lock, a deadline, and for gestures the hand's habits. */
export interface Hold extends Omit<RunOptions, 'gate' | 'anyState'> {
  /** Bring the tab to the front first and pause for slowmo after (primitives). */
  gesture?: boolean;
}

/** What a route declares about itself: how it is mounted, checked and documented. */
export interface RouteInfo<B = Body, Q = Body> {
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
}

type Handler<C> = (ctx: C) => Promise<Body | void>;

/** A route that addresses no page: its handler sees neither page nor call. */
export interface PlainRouteDef<B, Q> extends RouteInfo<B, Q> {
  page?: undefined;
  hold?: undefined;
  handler: Handler<RouteContext<B, Q>>;
}

/** A route on `:page_id` that holds the page only where its handler asks to. */
export interface PageRouteDef<B, Q> extends RouteInfo<B, Q> {
  page: 'leased' | 'exists';
  hold?: undefined;
  handler: Handler<PageContext<B, Q>>;
}

/** A route on `:page_id` whose whole handler runs holding the page. */
export interface HeldRouteDef<B, Q> extends RouteInfo<B, Q> {
  page: 'leased' | 'exists';
  hold: Hold;
  handler: Handler<HeldContext<B, Q>>;
}

/** One request as the mount reads it, before the route's own checks. */
export interface Incoming {
  req: Request;
  res: Response;
  params: Record<string, string>;
  pageId: string | null;
  /** The JSON body, when one was sent. */
  json: Body | undefined;
  leaseToken: string | undefined;
  navigator: Navigator;
}

/**
 * A route as route tables list it: its declaration (body and query types erased, they only
 * matter inside) and `serve`, which checks a request against the typed schemas and runs the
 * handler with the context its kind declares.
 */
export interface Route extends RouteInfo<unknown, unknown> {
  serve(incoming: Incoming): Promise<Body | void>;
}

/** A query or body as its schema converts it, or the API's 400 naming the first problem. */
function validate<T>(
  schema: Joi.ObjectSchema<T> | undefined,
  value: object,
  pageId: string | null,
  unknown?: 'ignore',
): T {
  const checked = checkFields(schema, value, unknown);
  if (!checked.ok) throw new BadRequest(checked.message, pageId);
  return checked.value;
}

/** The context every kind shares: the query and body checked against the route's schemas. */
function baseContext<B, Q>(def: RouteInfo<B, Q>, at: Incoming): RouteContext<B, Q> {
  const { req, res, params, pageId, json, leaseToken } = at;
  // A query is read only where the route declares one (a cache-buster elsewhere is fine).
  const query =
    def.merge || !def.query
      ? validate<Q>(undefined, {}, pageId)
      : validate(def.query, req.query, pageId);
  const input = def.merge ? def.merge(req.query, json ?? {}) : (json ?? {});
  const body = validate(def.body, input, pageId, def.unknownFields);
  return { req, res, params, query, body, leaseToken };
}

/** The page a request addresses, past the lease gate, and the gate to check again later. */
interface Addressed {
  page: ManagedPage;
  leased: boolean;
  gate: (() => void) | undefined;
}

function address(kind: 'leased' | 'exists', at: Incoming): Addressed {
  const { navigator, pageId, leaseToken } = at;
  if (pageId === null) throw new Error(`a page route's path has no :page_id`);
  const page = navigator.requirePool().get(pageId);
  if (kind !== 'leased') return { page, leased: false, gate: undefined };
  return {
    page,
    leased: navigator.leases.check(pageId, leaseToken),
    // Checked again once the page is held: a lease granted meanwhile stops this call.
    gate: () => void navigator.leases.check(pageId, leaseToken),
  };
}

/**
 * Runs a page route's work on the addressed page: a browser that throws (target closed,
 * context destroyed…) is a browser-level failure, 200 with success false (docs/api.md);
 * anything else is our fault, a 500. Every call that uses a lease renews it.
 */
async function onPage(
  kind: 'leased' | 'exists',
  at: Incoming,
  work: (addressed: Addressed) => Promise<Body | void>,
): Promise<Body | void> {
  const addressed = address(kind, at);
  try {
    return await work(addressed);
  } catch (err) {
    if (!(err instanceof ApiError) && isBrowserLevel(err))
      throw new BrowserFailure(errorMessage(err), at.pageId);
    throw err;
  } finally {
    if (addressed.leased && at.pageId !== null) at.navigator.leases.touch(at.pageId, at.leaseToken);
  }
}

/** Declares a route that addresses no page; body and query are typed from its joi schemas. */
export const route = <B = Body, Q = Body>(def: PlainRouteDef<B, Q>): Route => ({
  ...def,
  serve: (at) => def.handler(baseContext(def, at)),
});

/** Declares a route on `:page_id` whose handler holds the page only where it says so. */
export const pageRoute = <B = Body, Q = Body>(def: PageRouteDef<B, Q>): Route => ({
  ...def,
  serve: (at) => {
    const ctx = baseContext(def, at);
    return onPage(def.page, at, ({ page, leased, gate }) => {
      // A leased page is brought to the front by every call that uses the lease (docs/api.md).
      if (leased && page.mayTakeFront()) page.page.bringToFront().catch(() => undefined);
      return def.handler({
        ...ctx,
        page,
        hold: (name, opts, work) => page.run(name, { ...opts, gate }, work),
      });
    });
  },
});

/**
 * Declares a route on `:page_id` whose handler runs holding the page (front first for a
 * gesture or a leased page, the slowmo pause after a gesture).
 */
export const heldRoute = <B = Body, Q = Body>(def: HeldRouteDef<B, Q>): Route => ({
  ...def,
  serve: (at) => {
    const ctx = baseContext(def, at);
    const h = def.hold;
    let failed: ((err: unknown) => Promise<void>) | null = null;
    const afterFailure = async (err: unknown): Promise<void> => failed?.(err);
    return onPage(def.page, at, ({ page, leased, gate }) =>
      page.run(def.name, { ...h, gate, afterFailure }, async (call) => {
        if (h.gesture || leased) await page.bringToFront(call);
        const onFailure = (work: (err: unknown) => Promise<void>): void => {
          failed = work;
        };
        const out = await def.handler({ ...ctx, page, call, onFailure });
        if (h.gesture) await call.sleep(at.navigator.slowmoMs);
        return out;
      }),
    );
  },
});
