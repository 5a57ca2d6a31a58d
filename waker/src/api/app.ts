import path from 'node:path';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import Joi from 'joi';
import type { MetricsBody, PersonaInfo, SleepDepth } from '@persona-browser/contracts';
import {
  SLEEP_DEPTHS,
  SUPERVISOR_PATHS,
  UPDATE_STEPS_MODULE,
  WAKER_PATHS,
} from '@persona-browser/contracts';
import type { Logger } from '@persona-browser/service-kit';
import type { Persona } from '../persona/persona';
import type { FleetMcp } from './mcp';
import type { SiteChecks } from '../site-checks/schedule';
import { SITE_CHECK_ROUTES } from '../site-checks/run';
import { DepthRefused, IdentityWakeError, WakeError } from '../persona/persona';
import { UnknownPersona } from '../fleet';
import { TransitionRefused } from '../persona/lifecycle';
import { MoveError } from '../drivers/swarm-move';
import type { MoveResult } from '../placement/move';
import type { NodeStatus } from '../drivers/types';
import { MoveRefused } from '../placement/move';
import type { SupervisorClient } from '../supervisor-client';
import { NoSupervisor, SupervisorUnreachable } from '../supervisor-client';
import type { AuthGuard } from '@persona-browser/service-kit';
import {
  AuthError,
  AuthRefusal,
  KEY_ONLY,
  TOKEN_SCOPES,
  answerWrongMethod,
  checkFields,
  errorEnvelope,
  isRecord,
} from '@persona-browser/service-kit';
import type { RefusalCounter } from '../metrics/prometheus';
import type { TokenStore } from '../tokens/store';
import { MAX_TTL_S, TokenLimit } from '../tokens/store';

/** What the API reads and drives: the fleet, and the metrics helper's parts (injected). */
export interface ApiDeps {
  fleet: {
    list(): PersonaInfo[];
    get(name: string): Persona;
  };
  metrics: { body(): MetricsBody };
  /** Prometheus' `/metrics`: the exposition's content type and text. */
  prometheus?: { scrape(): Promise<{ contentType: string; text: string }> };
  /** The cluster's nodes (none on a single server). */
  nodes(): NodeStatus[];
  /** Moves a persona to another node of the cluster (409 without one). */
  move(persona: Persona, node: string): Promise<MoveResult>;
  /** A persona's requests per hour, wherever its request log is. */
  requestsPerHour(persona: Persona, hours: number): Promise<Array<{ hour: string; count: number }>>;
  /** The supervisor that started this waker (SUPERVISOR_URL), or null when none did. */
  supervisor: SupervisorClient | null;
  serviceKey: string | null;
  /** The credential check: the waker's API takes the service key alone, throttled per address. */
  guard: AuthGuard;
  /** Where refusals are counted. */
  refusals?: RefusalCounter | null;
  /** The scoped tokens this waker makes and revokes. */
  tokens: TokenStore;
  /** The pool of a running persona's worker (`status/pages`), for the panel's live links. */
  pages(persona: Persona): Promise<unknown>;
  logger: Logger;
  /** The personas' site checks (SITE_CHECKS), when the waker runs them. */
  siteChecks?: SiteChecks;
  /** The fleet's MCP server (/mcp), when the waker serves one. */
  mcp?: FleetMcp;
  /** Folders of the fleet panel (`waker/panel`), the panels' shared files and uPlot's files. */
  panelDir: string;
  uiDir: string;
  uplotDir: string;
}

type Ctx = {
  deps: ApiDeps;
  params: Request['params'];
  query: Record<string, unknown>;
  body: Record<string, unknown>;
};

interface RouteDef {
  name: string;
  method: 'get' | 'post' | 'delete';
  path: string;
  auth: boolean;
  query?: Joi.ObjectSchema;
  /** A JSON body, checked with this schema (unknown fields refused by name). */
  body?: Joi.ObjectSchema;
  handler(ctx: Ctx): Promise<unknown>;
}

/** A client mistake with a clear message (bad query). */
class BadRequest extends Error {}

/** The waker's scoped tokens: made, listed, revoked. */
export const TOKENS_PATH = '/api/tokens';

/** No token by that id stands (never made, expired or revoked already): 404. */
class UnknownToken extends Error {
  constructor(id: string) {
    super(`No token ${id} stands (unknown, expired or already revoked)`);
  }
}

/** A route this waker was built without (no metrics registry): 404. */
class UnknownRoute extends Error {
  constructor() {
    super('No such route on this waker');
  }
}

/** An answer with a status of its own (a relayed one); any other handler result is a 200. */
class Relayed {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** An answer that is not JSON: its content type and text (Prometheus' format). */
class RawText {
  constructor(
    readonly contentType: string,
    readonly text: string,
  ) {}
}

/** The persona a `/:name/…` route names (no name is no persona: 404). */
const named = ({ deps, params }: Ctx): Persona =>
  deps.fleet.get(typeof params.name === 'string' ? params.name : '');

/** Hours of request counts a persona's `requests` answers when the query does not say. */
const DEFAULT_HOURS = 24;

const personaAction =
  (action: 'wake' | 'sleep' | 'restart') =>
  async (ctx: Ctx): Promise<PersonaInfo> => {
    const persona = named(ctx);
    if (action === 'sleep') await persona.sleep(sleepDepth(ctx.body.depth));
    else await persona[action]();
    return persona.info();
  };

/** The depth a sleep asks for (`{"depth": …}`, checked by its schema); deep when not given. */
const sleepDepth = (given: unknown): SleepDepth => SLEEP_DEPTHS.find((d) => d === given) ?? 'deep';

/** The waker's routes: one table, one mount. */
export const ROUTES: RouteDef[] = [
  {
    name: 'health',
    method: 'get',
    path: WAKER_PATHS.health,
    auth: false,
    handler: async () => ({ status: 'ok' }),
  },
  {
    name: 'personas',
    method: 'get',
    path: WAKER_PATHS.personas,
    auth: true,
    handler: async ({ deps }): Promise<{ personas: PersonaInfo[] }> => ({
      personas: deps.fleet.list(),
    }),
  },
  ...(['wake', 'sleep', 'restart'] as const).map((action): RouteDef => ({
    name: action,
    method: 'post',
    path: `${WAKER_PATHS.personas}/:name/${action}`,
    auth: true,
    ...(action === 'sleep'
      ? {
          body: Joi.object({
            depth: Joi.string()
              .valid(...SLEEP_DEPTHS)
              .default('deep'),
          }),
        }
      : {}),
    handler: personaAction(action),
  })),
  {
    name: 'requests',
    method: 'get',
    path: `${WAKER_PATHS.personas}/:name/requests`,
    auth: true,
    query: Joi.object({
      hours: Joi.number()
        .integer()
        .min(1)
        .max(24 * 50)
        .default(DEFAULT_HOURS),
    }),
    handler: async (ctx) => {
      const { deps, query } = ctx;
      const persona = named(ctx);
      const hours = typeof query.hours === 'number' ? query.hours : DEFAULT_HOURS;
      return {
        name: persona.name,
        hours,
        requests: await deps.requestsPerHour(persona, hours),
      };
    },
  },
  {
    name: 'site-checks',
    method: 'get',
    path: `${WAKER_PATHS.personas}/:name/site-checks`,
    auth: true,
    handler: async (ctx) => {
      const persona = named(ctx);
      const status = ctx.deps.siteChecks?.status(persona.name);
      if (!status) throw new UnknownRoute();
      return status;
    },
  },
  {
    name: 'site-checks-all',
    method: 'get',
    path: '/api/site-checks',
    auth: true,
    handler: async ({ deps }) => {
      if (!deps.siteChecks) throw new UnknownRoute();
      return { personas: deps.siteChecks.all() };
    },
  },
  {
    name: 'site-check-run',
    method: 'post',
    path: `${WAKER_PATHS.personas}/:name/site-checks/:family`,
    auth: true,
    handler: async (ctx) => {
      const persona = named(ctx);
      const family = String(ctx.params.family);
      if (!(family in SITE_CHECK_ROUTES)) {
        const known = Object.keys(SITE_CHECK_ROUTES).join(', ');
        throw new BadRequest(`No site check for family ${family}: one of ${known}`);
      }
      const run = ctx.deps.siteChecks?.runNow(persona.name, family);
      if (!run) throw new UnknownRoute();
      return run;
    },
  },
  {
    name: 'nodes',
    method: 'get',
    path: WAKER_PATHS.nodes,
    auth: true,
    handler: async ({ deps }): Promise<{ nodes: NodeStatus[] }> => ({ nodes: deps.nodes() }),
  },
  {
    name: 'move',
    method: 'post',
    path: `${WAKER_PATHS.personas}/:name/move`,
    auth: true,
    body: Joi.object({
      node: Joi.string()
        .pattern(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/)
        .max(253)
        .required()
        .messages({ 'string.pattern.base': "'node' must be a node's hostname" }),
    }),
    handler: async (ctx) => {
      const persona = named(ctx);
      const node = typeof ctx.body.node === 'string' ? ctx.body.node : '';
      const move = await ctx.deps.move(persona, node);
      return { ...persona.info(), move };
    },
  },
  {
    name: 'pages',
    method: 'get',
    path: `${WAKER_PATHS.personas}/:name/pages`,
    auth: true,
    handler: async (ctx) => ctx.deps.pages(named(ctx)),
  },
  {
    name: 'token-mint',
    method: 'post',
    path: TOKENS_PATH,
    auth: true,
    body: Joi.object({
      persona: Joi.string().max(200).required(),
      scope: Joi.string()
        .valid(...TOKEN_SCOPES)
        .required(),
      ttl_s: Joi.number().integer().min(1).max(MAX_TTL_S).default(3600),
      page_id: Joi.string()
        .min(1)
        .max(128)
        .pattern(/^[\x20-\x7e]+$/)
        .allow(null)
        .default(null),
      label: Joi.string().max(100).allow(null).default(null),
    }),
    handler: async ({ deps, body }) => {
      const persona = deps.fleet.get(String(body.persona));
      const scope = TOKEN_SCOPES.find((s) => s === body.scope) ?? 'read';
      const { info, token } = deps.tokens.mint({
        persona: persona.name,
        scope,
        ttl_s: typeof body.ttl_s === 'number' ? body.ttl_s : 3600,
        page_id: typeof body.page_id === 'string' ? body.page_id : null,
        label: typeof body.label === 'string' ? body.label : null,
      });
      deps.logger.info('token made', { id: info.id, persona: info.persona, scope: info.scope });
      return { ...info, token };
    },
  },
  {
    name: 'tokens',
    method: 'get',
    path: TOKENS_PATH,
    auth: true,
    handler: async ({ deps }) => ({ tokens: deps.tokens.list() }),
  },
  {
    name: 'token-revoke',
    method: 'delete',
    path: `${TOKENS_PATH}/:id`,
    auth: true,
    handler: async ({ deps, params }) => {
      const id = String(params.id);
      if (!deps.tokens.revoke(id)) throw new UnknownToken(id);
      deps.logger.info('token revoked', { id });
      return { id, revoked: true };
    },
  },
  {
    name: 'metrics',
    method: 'get',
    path: WAKER_PATHS.metrics,
    auth: true,
    handler: async ({ deps }) => deps.metrics.body(),
  },
  {
    name: 'prometheus-metrics',
    method: 'get',
    path: '/metrics',
    auth: true,
    handler: async ({ deps }) => {
      if (!deps.prometheus) throw new UnknownRoute();
      const { contentType, text } = await deps.prometheus.scrape();
      return new RawText(contentType, text);
    },
  },
  {
    name: 'supervisor',
    method: 'get',
    path: SUPERVISOR_PATHS.status,
    auth: true,
    handler: async ({ deps }) => {
      if (!deps.supervisor) throw new NoSupervisor();
      const reply = await deps.supervisor.status();
      return new Relayed(reply.status, reply.body);
    },
  },
];

/**
 * The errors the API expects, with the status that says what happened; their message is the
 * `{error}` body. Anything else is a 500 that names nothing.
 */
function errorStatus(err: unknown): number | null {
  if (
    err instanceof UnknownPersona ||
    err instanceof NoSupervisor ||
    err instanceof UnknownRoute ||
    err instanceof UnknownToken
  )
    return 404;
  if (err instanceof TokenLimit) return 409;
  if (err instanceof BadRequest || err instanceof DepthRefused) return 400;
  if (err instanceof MoveRefused) return 409;
  if (err instanceof MoveError) {
    if (err.reason === 'invalid') return 400;
    return err.reason === 'exists' || err.reason === 'busy' ? 409 : 502;
  }
  // express.json() on a body that is not JSON.
  if (isRecord(err) && err.type === 'entity.parse.failed') return 400;
  if (isRecord(err) && err.type === 'entity.too.large') return 413;
  // The proxy or the GeoIP service failed the wake: an upstream's fault, not the waker's.
  if (err instanceof SupervisorUnreachable || err instanceof IdentityWakeError) return 502;
  if (err instanceof WakeError) return 503;
  // Asked in a state that does not allow it (a change under way): a moment later it may.
  if (err instanceof TransitionRefused) return 409;
  return null;
}

/** When a refused wake, sleep or restart may succeed: the back-off's next try, the budget's. */
function retryAfterOf(err: unknown): number | null {
  if (err instanceof WakeError) return err.retryAfterS;
  return err instanceof TransitionRefused ? 1 : null;
}

/**
 * `Authorization: Bearer <SERVICE_KEY>`, answered as every service of the product answers it,
 * through the guard the persona ports share: failed attempts are throttled per address.
 */
function requireKey(deps: ApiDeps) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    try {
      deps.guard.check(
        { authorization: req.headers.authorization, address: req.socket.remoteAddress },
        KEY_ONLY,
        null,
      );
    } catch (err) {
      if (err instanceof AuthRefusal) deps.refusals?.refused('api', err.reason);
      throw err;
    }
    next();
  };
}

/** After the routes: a known path called with another method answers 405 with `Allow`. */
function guardMethods(app: express.Express): void {
  const byPath = new Map<string, string[]>();
  for (const r of ROUTES) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.method]);
  for (const [route, methods] of byPath) {
    app.all(route, (req, res) => answerWrongMethod(req, res, req.path, methods));
  }
}

export function createApp(deps: ApiDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  const auth = requireKey(deps);
  for (const r of ROUTES) {
    const run = (req: Request, res: Response, next: NextFunction): void => {
      let query: Record<string, unknown> = {};
      let body: Record<string, unknown> = {};
      for (const [schema, input, set] of [
        [r.query, req.query, (v: Record<string, unknown>) => (query = v)],
        [r.body, isRecord(req.body) ? req.body : {}, (v: Record<string, unknown>) => (body = v)],
      ] as const) {
        if (!schema) continue;
        const checked = checkFields<Record<string, unknown>>(schema, input);
        if (!checked.ok) {
          next(new BadRequest(checked.message));
          return;
        }
        set(checked.value);
      }
      r.handler({ deps, params: req.params, query, body }).then((out) => {
        if (out instanceof Relayed) res.status(out.status).json(out.body);
        else if (out instanceof RawText)
          res.set('Cache-Control', 'no-store').type(out.contentType).send(out.text);
        else res.json(out);
      }, next);
    };
    const parse = r.body ? [express.json({ limit: '16kb' })] : [];
    if (r.auth) app[r.method](r.path, auth, ...parse, run);
    else app[r.method](r.path, ...parse, run);
  }
  guardMethods(app);
  if (deps.mcp) app.use(deps.mcp.router());
  app.use('/vendor/uplot', express.static(deps.uplotDir, { index: false }));
  app.use('/ui', express.static(deps.uiDir, { index: false }));
  app.get('/update-steps.js', (_req, res) => {
    res.type('text/javascript').send(UPDATE_STEPS_MODULE);
  });
  app.use(express.static(deps.panelDir));
  app.use('/api', (req, res) => {
    res.status(404).json(errorEnvelope(`No route ${req.method} ${req.originalUrl.split('?')[0]}`));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof AuthError) {
      res.status(err.status).set(err.headers).json(err.body);
      return;
    }
    const status = errorStatus(err);
    if (status === null) {
      deps.logger.error('api error', { path: req.path, err });
      res.status(500).json(errorEnvelope('Internal server error'));
      return;
    }
    const retryAfter = retryAfterOf(err);
    if (retryAfter !== null) res.set('Retry-After', String(retryAfter));
    res.status(status).json(errorEnvelope(err instanceof Error ? err.message : String(err)));
  });
  return app;
}

/** Where the panel and uPlot's files are, seen from the built waker (waker/dist). */
export function defaultStaticDirs(): { panelDir: string; uiDir: string; uplotDir: string } {
  return {
    panelDir: path.resolve(__dirname, '..', '..', 'panel'),
    uiDir: path.dirname(require.resolve('@persona-browser/ui/package.json')),
    uplotDir: path.join(path.dirname(require.resolve('uplot/package.json')), 'dist'),
  };
}
