import http from 'node:http';
import type { Duplex } from 'node:stream';
import express from 'express';
import type { Navigator } from './browser/navigator';
import { answerBodyError, deferBodyError } from './http/body-error';
import { docsRouter, localOnly } from './http/docs';
import { errorHandler, notFound } from './http/error-handler';
import { fastStatus } from './http/fast-status';
import { refuseUpgrade } from './http/refuse-upgrade';
import { buildOpenApi } from './http/openapi';
import type { RequestTracker } from './http/request-tracker';
import { ResponseCheck } from './http/response-check';
import type { Route } from './http/route';
import { mount } from './http/mount';
import type { LiveView } from './live';
import { CdpEndpoint } from './remote/cdp-endpoint';
import type { McpEndpoint } from './remote/mcp-endpoint';
import type { Logger } from '@persona-browser/service-kit';
import type { CaptureRegistry } from './capture/registry';
import type { MediaStore } from './media/store';
import { PANEL_DIR, UI_DIR } from './paths';
import { mediaRoutes } from './routes/media';
import { networkRoutes } from './routes/network';
import { opsRoutes } from './routes/ops';
import { personRoutes } from './routes/person';
import { primitiveRoutes } from './routes/primitive';
import type { SystemDeps } from './routes/system';
import { systemRoutes } from './routes/system';
import { visionRoutes } from './routes/vision';
import { pluginsRoutes } from './routes/plugins';
import { prometheusRoutes } from './routes/prometheus';
import type { WorkerMetrics } from './http/metrics';
import { bundleRoutes } from './routes/bundles';
import type { BundleStore } from './plugins/bundle-store';
import type { Recorder } from './recording/recorder';
import type { RecordingStore } from './recording/recording-store';
import { recordingRoutes } from './routes/recordings';
import type { Discovery } from './plugins/discover';
import type { Rng } from './human/types';
import type { SecretValues } from '@persona-browser/service-kit';
import type { VisionClient } from './vision/client';

export const BODY_LIMIT = '1mb';

export interface AppDeps extends SystemDeps {
  navigator: Navigator;
  tracker: RequestTracker;
  serviceKey: string | null;
  logger: Logger;
  version: string;
  /** Check every response against its declared schema; a mismatch is a logged 500 (tests). */
  validateResponses: boolean;
  /** navigate may open `file:` URLs. */
  allowFileUrls: boolean;
  media: MediaStore;
  captures: CaptureRegistry;
  vision: VisionClient;
  /** The live view (/vnc/): noVNC, its WebSocket bridge and control of a page for a person. */
  live?: LiveView;
  /** DevTools for outside clients (/json/version, /devtools/browser): puppeteer's connect. */
  cdp?: CdpEndpoint;
  /** The MCP server for agents (/mcp): the REST API as tools. */
  mcp?: McpEndpoint;
  /** Prometheus' `/metrics`, and the counters that routes and the live view move. */
  metrics?: WorkerMetrics;
  /** The screen recordings kept (of plugin calls, of leases), when either is recorded. */
  recordings?: RecordingStore;
  /** The plugins found at start, and what plugins need beyond the deps above. */
  plugins?: {
    found: Discovery;
    env: Readonly<Record<string, string | undefined>>;
    rngFor: (plugin: string) => Rng;
    secrets: SecretValues;
    /** Failure bundles of plugin calls. */
    bundles: BundleStore;
    /** Screen recordings of plugin calls, when recording is on. */
    recorder?: Recorder;
  };
}

export function allRoutes(deps: AppDeps): Route[] {
  return [
    ...systemRoutes(deps),
    ...opsRoutes(deps.navigator, { allowFileUrls: deps.allowFileUrls }),
    ...networkRoutes(deps.captures),
    ...visionRoutes(deps.vision),
    ...primitiveRoutes(),
    ...personRoutes(deps.live?.asks),
    ...mediaRoutes(deps.media),
    ...(deps.metrics ? prometheusRoutes(deps.metrics) : []),
    ...(deps.plugins
      ? pluginsRoutes(deps.plugins.found, {
          captures: deps.captures,
          media: deps.media,
          vision: deps.vision,
          logger: deps.logger,
          rngFor: deps.plugins.rngFor,
          env: deps.plugins.env,
          slowmoMs: deps.navigator.slowmoMs,
          allowFileUrls: deps.allowFileUrls,
          secrets: deps.plugins.secrets,
          outcome: (plugin, result) => deps.metrics?.pluginOutcome(plugin, result),
          bundles: deps.plugins.bundles,
          recorder: deps.plugins.recorder,
        })
      : []),
    ...(deps.plugins ? bundleRoutes(deps.plugins.bundles) : []),
    ...(deps.plugins
      ? recordingRoutes(deps.recordings ?? deps.plugins.recorder?.store ?? null)
      : []),
  ];
}

/** Whether a request says it carries a body: a length above zero, or chunks. */
function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The HTTP application, apart from any listener (tests and main both use it). */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Hashing a multi-megabyte HTML or screenshot reply for an ETag costs CPU and helps no client.
  app.set('etag', false);
  app.set('query parser', 'simple');
  if (deps.validateResponses) app.use(new ResponseCheck(deps.logger).middleware());
  app.use(deps.tracker.middleware());
  if (deps.metrics) app.use(deps.metrics.callTimer());
  // Any content type is read as JSON: `curl -d '{…}'` without a header still works. A request
  // without a body (most calls on a page) skips the parser: reading an empty stream to its end
  // costs a turn of the event loop and a fifth of a millisecond for nothing. A body that does
  // not parse is answered after the route's credential check (see body-error.ts).
  const json = express.json({ limit: BODY_LIMIT, type: () => true, strict: true });
  app.use((req, res, next) => {
    if (!hasBody(req)) {
      next();
      return;
    }
    json(req, res, (err?: unknown) => {
      if (err !== undefined) deferBodyError(res.locals, err);
      next();
    });
  });
  const routes = allRoutes(deps);
  const api = express.Router();
  mount(api, routes, {
    navigator: deps.navigator,
    auth: deps.auth,
  });
  app.use(api);
  app.use(answerBodyError);
  let openApi: Promise<Record<string, unknown>> | null = null;
  app.use(
    docsRouter(
      () =>
        (openApi ??= buildOpenApi(routes, deps.version).catch((err: unknown) => {
          openApi = null;
          throw err;
        })),
    ),
  );
  if (deps.live) app.use(deps.live.router());
  if (deps.cdp) app.use(deps.cdp.router());
  if (deps.mcp) app.use(deps.mcp.router());
  app.use('/ui', localOnly, express.static(UI_DIR, { index: false }));
  app.use('/', localOnly, express.static(PANEL_DIR, { index: 'index.html' }));
  app.use('/api', notFound);
  app.use(errorHandler(deps.logger));
  return app;
}

/** How long the worker keeps an idle keep-alive connection open for its client. */
export const KEEP_ALIVE_MS = 65_000;

/**
 * The worker's HTTP server as production runs it: the two status reads that monitors poll
 * hardest answered before express (fast-status.ts), everything else by the app.
 */
export function createServer(deps: AppDeps): http.Server {
  const app = createApp(deps);
  const quick = fastStatus(deps.navigator, deps.validateResponses ? deps.logger : null);
  const server = http.createServer((req, res) => {
    if (!quick(req, res)) app(req, res);
  });
  // Clients close an idle connection first (a pool reads the `Keep-Alive: timeout` hint and
  // stops a second early): at Node's 5 s, a client busy for a moment reused a connection the
  // worker was closing, and its request failed ("other side closed").
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;
  const { live, cdp } = deps;
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    if (cdp && CdpEndpoint.wants(req)) cdp.upgrade(req, socket, head);
    else if (live) live.upgrade(req, socket, head);
    else refuseUpgrade(socket, 404, { success: false, error: 'No WebSocket here', page_id: null });
  });
  return server;
}
