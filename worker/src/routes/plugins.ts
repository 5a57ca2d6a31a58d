import Joi from 'joi';
import type { FieldType } from '@persona-browser/plugin-sdk';
import { SiteError } from '@persona-browser/plugin-sdk';
import { isRecord } from '@persona-browser/service-kit';
import { ApiError, BadRequest, BrowserFailure, NotFound, Timeout } from '../errors';
import type { PluginResult } from '../http/metrics';
import type { Body, HeldContext, HeldRouteDef, Route } from '../http/route';
import { heldRoute, route } from '../http/route';
import { envelope } from '../http/schemas';
import { CallTrail, pageTextOf, pixelsWithheld, takeBundle } from '../plugins/bundle';
import type { ContextDeps } from '../plugins/context';
import { pluginContext } from '../plugins/context';
import type { Discovery, LoadedPlugin } from '../plugins/discover';
import { readmeOf } from '../plugins/discover';
import { mergeQueryAndBody } from '../plugins/params';

const str = Joi.string();

/** A plugin that threw: its own bug, said without echoing its internals (they are logged). */
export class PluginFailed extends ApiError {
  constructor(plugin: string, err: unknown, pageId: string) {
    const kind = err instanceof Error ? err.name : typeof err;
    super(
      500,
      `Plugin ${plugin} failed unexpectedly (${kind}); the worker log has the details`,
      pageId,
    );
  }
}

const parameter = Joi.object({
  name: str.required(),
  type: str.required(),
  label: str.required(),
  required: Joi.boolean().required(),
  default: Joi.alternatives(str.allow(''), Joi.number(), Joi.boolean()).allow(null).required(),
  placeholder: str.allow(null, '').required(),
  options: Joi.array().items(str).required(),
  help_text: str.allow(null, '').required(),
}).label('PluginParameter');

const descriptor = Joi.object({
  name: str.required(),
  description: str.required(),
  methods: Joi.array().items(str.valid('POST', 'GET')).required(),
  bg_color: Joi.array().items(str).length(2).required(),
  parameters: Joi.array().items(parameter).required(),
  route: str.required(),
}).label('PluginDescriptor');

function fieldSchema(type: FieldType): Joi.Schema {
  const [base = '', nullable] = type.split('|');
  const bases: Record<string, Joi.Schema> = {
    string: str.allow(''),
    number: Joi.number(),
    integer: Joi.number().integer(),
    boolean: Joi.boolean(),
    object: Joi.object().unknown(true),
    array: Joi.array(),
  };
  const s = bases[base] ?? Joi.any();
  return (nullable ? s.allow(null) : s).required();
}

/** What a success of the plugin answers: its declared fields, or anything if it declares none. */
function responseSchema(p: LoadedPlugin): Joi.ObjectSchema {
  const declared = p.manifest.response;
  if (!declared) return envelope({}).unknown(true);
  const fields: Record<string, Joi.Schema> = {};
  for (const [name, type] of Object.entries(declared)) fields[name] = fieldSchema(type);
  return envelope(fields);
}

/** Runs the plugin and turns what it did into the API's answers. */
async function execute(
  p: LoadedPlugin,
  run: () => Promise<unknown>,
  pageId: string,
  signal: AbortSignal,
  deps: ContextDeps,
  trail: CallTrail,
): Promise<Body> {
  // What a site showed or a plugin said may hold a secret: an error never carries one out.
  const clean = (text: string): string => deps.secrets.redact(text);
  const cleanFields = (fields: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, deps.secrets.redactAll(v)]));
  let out: unknown;
  try {
    out = await run();
  } catch (err) {
    if (SiteError.is(err))
      throw new BrowserFailure(clean(err.message), pageId, cleanFields(err.details ?? {}));
    // Stopped at its deadline, or a primitive's own answer (a 408, an element not found…).
    if (err instanceof ApiError) {
      err.message = clean(err.message);
      throw err;
    }
    if (signal.aborted) throw err;
    deps.logger.error('plugin failed', { plugin: p.name, page_id: pageId, err });
    trail.add('error', 'plugin failed', { err: String(err) });
    throw new PluginFailed(p.name, err, pageId);
  }
  if (!isRecord(out) || Array.isArray(out)) {
    deps.logger.error('plugin answered no object', { plugin: p.name, answer: typeof out });
    trail.add('error', 'plugin answered no object', { answer: typeof out });
    throw new PluginFailed(p.name, new TypeError('no result object'), pageId);
  }
  // `success` and `page_id` are the host's to send.
  const { success, error, ...fields } = out;
  delete fields.page_id;
  if (success === false) {
    throw new BrowserFailure(
      clean(typeof error === 'string' ? error : `${p.name} failed`),
      pageId,
      cleanFields(fields),
    );
  }
  return fields;
}

/** What the plugin routes need: the plugins' context, and where their outcomes are counted. */
export interface PluginRouteDeps extends ContextDeps {
  outcome?: (plugin: string, result: PluginResult) => void;
}

/** How a plugin call that threw ended, for the outcome counter. */
function resultOf(err: unknown, stopped: boolean): PluginResult {
  if (err instanceof PluginFailed) return 'crashed';
  // Stopped at its deadline: whatever the plugin was doing then threw.
  if (err instanceof Timeout || stopped) return 'timeout';
  // A browser-level failure: the plugin's own `success: false`, a SiteError, a page gone.
  if (err instanceof BrowserFailure || !(err instanceof ApiError)) return 'failed';
  return 'refused';
}

function pluginRoutes(p: LoadedPlugin, deps: PluginRouteDeps): Route[] {
  const summary = p.manifest.description.split(/(?<=\.)\s/)[0] ?? p.name;
  const common = {
    name: p.routePath,
    path: `/api/v1/:page_id/plugin/${p.routePath}`,
    auth: true,
    tag: 'Plugins',
    summary,
    description: `${p.manifest.description}\n\nDocs: \`GET /api/v1/plugins/${p.name}/docs\`.`,
    page: 'leased',
    hold: { gesture: true, deadlineMs: p.manifest.timeout_s && p.manifest.timeout_s * 1000 },
    response: responseSchema(p),
  } satisfies Omit<HeldRouteDef<Body, Body>, 'method' | 'handler'>;
  const handler = async (ctx: HeldContext<Body, Body>): Promise<Body> => {
    const why = p.module.validate?.(ctx.body) ?? null;
    if (why) throw new BadRequest(why, ctx.page.id);
    // Past validation the call touches the page: from here a failure leaves a bundle.
    const trail = new CallTrail();
    const context = pluginContext(p, ctx.page, ctx.call, deps, trail);
    const run = (): Promise<unknown> => p.module.run(context, ctx.body);
    // From here nothing throws before the run, whose every way out stops the recording.
    const recording = deps.recorder?.start({ kind: 'plugin', plugin: p.name, pageId: ctx.page.id });
    const stopRecording = async (outcome: PluginResult): Promise<void> => {
      try {
        await recording?.finish(outcome, async () =>
          pixelsWithheld(deps.secrets, await pageTextOf(ctx.page)),
        );
      } catch (e) {
        deps.logger.error('recording not written', { plugin: p.name, err: e });
      }
    };
    const bundles = deps.bundles;
    if (bundles) {
      const startedAt = Date.now();
      ctx.onFailure(async (err) => {
        // A placeholder (501) is a route not built yet: there is nothing to debug.
        if (err instanceof ApiError && err.status === 501) return;
        try {
          const id = await takeBundle(
            { store: bundles, captures: deps.captures, secrets: deps.secrets },
            { plugin: p.name, page: ctx.page, startedAt, err, trail, recording: recording?.id },
          );
          if (err instanceof ApiError) err.debugId = id;
        } catch (e) {
          deps.logger.error('failure bundle not written', { plugin: p.name, err: e });
        }
      });
    }
    try {
      const out = await execute(p, run, ctx.page.id, ctx.call.signal, deps, trail);
      deps.outcome?.(p.name, 'ok');
      await stopRecording('ok');
      return out;
    } catch (err) {
      const result = resultOf(err, ctx.call.signal.aborted);
      deps.outcome?.(p.name, result);
      await stopRecording(result);
      throw err;
    }
  };
  return p.manifest.methods.map((m) =>
    m === 'GET'
      ? heldRoute({
          ...common,
          method: 'get',
          query: p.schema,
          body: p.schema,
          merge: (query, body) => mergeQueryAndBody(p.manifest.parameters, query, body),
          handler,
        })
      : heldRoute({ ...common, method: 'post', body: p.schema, handler }),
  );
}

/** The plugin list, each plugin's docs, and one route per plugin and method. */
export function pluginsRoutes(found: Discovery, deps: PluginRouteDeps): Route[] {
  const byName = new Map(found.plugins.map((p) => [p.name, p]));
  return [
    route({
      name: 'plugins',
      method: 'get',
      path: '/api/v1/plugins',
      auth: false,
      tag: 'Plugins',
      summary: 'The installed plugins: routes, methods, colours and parameters',
      description:
        '`route` is authoritative for building URLs. `skipped` names the plugins that did not ' +
        'load at start and why.',
      response: envelope({
        count: Joi.number().integer().required(),
        plugins: Joi.array().items(descriptor).required(),
        skipped: Joi.array()
          .items(Joi.object({ name: str.required(), error: str.required() }))
          .required(),
      }),
      handler: async () => ({
        count: found.plugins.length,
        plugins: found.plugins.map((p) => p.descriptor),
        skipped: found.broken,
      }),
    }),
    route({
      name: 'plugin-docs',
      method: 'get',
      path: '/api/v1/plugins/*name/docs',
      docPath: '/api/v1/plugins/{name}/docs',
      auth: false,
      tag: 'Plugins',
      summary: "A plugin's README (text/markdown), or the nearest one up its folder tree",
      description: '`name` is the registry name (`archive/check`), not the route.',
      raw: true,
      rawType: 'text/markdown',
      handler: async ({ params, res }) => {
        // The splat's segments, joined again by the mount.
        const name = params.name ?? '';
        const p = byName.get(name);
        if (!p) throw new NotFound(`No plugin named ${name}`);
        const readme = readmeOf(found.root, p);
        if (readme === null) throw new NotFound(`Plugin ${name} has no README`);
        res.type('text/markdown; charset=utf-8').send(readme);
      },
    }),
    ...found.plugins.flatMap((p) => pluginRoutes(p, deps)),
  ];
}
