import type { ValidationResult } from 'joi';
import type { CommitInfo, MetricsBody, PingResult } from '@persona-browser/contracts';
import { TreeMeter, UPDATE_TRIGGER_FILE } from '@persona-browser/service-kit';
import {
  SYSTEM_PATHS,
  WAKER_METRICS_PATH,
  metricsBodySchema,
  navigatorStatusSchema,
  pingSchema,
  poolStatusSchema,
  processTreeBodySchema,
  requestCountsBodySchema,
} from '@persona-browser/contracts';
import Joi from 'joi';
import { MAX_HOURS, requestsPerHour } from '@persona-browser/service-kit';
import type { Navigator } from '../browser/navigator';
import { NotFound } from '../errors';
import type { Authenticator } from '../http/auth';
import { MAX_REVOKED } from '../http/revocations';
import type { Route } from '../http/route';
import { route } from '../http/route';
import { envelope, messageResponse } from '../http/schemas';
import type { RequestTracker } from '../http/request-tracker';
import type { ProxyErrors } from '../system-info';
import { touchUpdateTrigger } from '../system-info';
import { about, sleep } from '../util';
import { poolStatus } from '../browser/pool-view';

export interface SystemDeps {
  navigator: Navigator;
  tracker: RequestTracker;
  proxyErrors: ProxyErrors;
  commit: () => Promise<CommitInfo | null>;
  persona: string | null;
  repoRoot: string;
  /** The folder holding the request log (`requests/`). */
  dataDir: string;
  wakerUrl: string;
  /** Sent to the waker as the bearer token: the waker's API takes the same service key. */
  serviceKey: string | null;
  /** Graceful shutdown of the whole process, after the reply has gone out. */
  shutdown: () => void;
  /** The one door of this worker: key or token, throttled (shared with live view, DevTools, MCP). */
  auth: Authenticator;
}

/** Token ids as the waker makes them (`tok_` and 16 hex digits), with room to spare. */
const MAX_TOKEN_ID = 64;

export const PING_DELAY_MS = 2_000;
const P = '/api/v1/system';
const metricsFields = Object.fromEntries(
  ['interval_s', 'window_s', 'samples'].map((k) => [k, metricsBodySchema.extract(k)]),
);

export function systemRoutes(d: SystemDeps): Route[] {
  const treeMeter = new TreeMeter();
  return [
    route({
      name: 'ping',
      method: 'get',
      path: SYSTEM_PATHS.ping,
      auth: false,
      tag: 'System',
      summary: 'Health check (answers after about 2 s)',
      response: pingSchema,
      raw: true,
      handler: async ({ res }) => {
        await sleep(about(PING_DELAY_MS));
        const ping: PingResult = {
          pong: Date.now(),
          status: 'alive',
          commit: await d.commit(),
          persona: d.persona,
          activity: d.tracker.activity(),
          proxy_errors: d.proxyErrors.value(),
        };
        res.json(ping);
      },
    }),
    route({
      name: 'status',
      method: 'get',
      path: SYSTEM_PATHS.status,
      auth: false,
      tag: 'System',
      summary: 'Navigator status',
      response: navigatorStatusSchema,
      raw: true,
      handler: async ({ res }) => {
        res.json(d.navigator.status());
      },
    }),
    route({
      name: 'status-pages',
      method: 'get',
      path: SYSTEM_PATHS.pages,
      auth: false,
      tag: 'System',
      summary: 'Pool status with every page (500 when the navigator is not initialized)',
      response: poolStatusSchema,
      raw: true,
      handler: async ({ res }) => {
        res.json(poolStatus(d.navigator));
      },
    }),
    route({
      name: 'start',
      method: 'get',
      path: `${P}/start`,
      auth: true,
      tag: 'System',
      summary: 'Start the browser (restarts it when running; all pages are lost)',
      response: messageResponse,
      handler: async () => {
        await d.navigator.start();
        return { message: 'Navigator started' };
      },
    }),
    route({
      name: 'stop',
      method: 'get',
      path: `${P}/stop`,
      auth: true,
      tag: 'System',
      summary: 'Close the browser and every page; the HTTP server keeps running',
      response: messageResponse,
      handler: async () => {
        await d.navigator.stop();
        return { message: 'Navigator stopped' };
      },
    }),
    route({
      name: 'kill',
      method: 'get',
      path: `${P}/kill`,
      auth: true,
      tag: 'System',
      summary: 'Graceful shutdown of the whole worker',
      response: messageResponse,
      raw: true,
      handler: async ({ res }) => {
        res.on('finish', d.shutdown);
        res.json({ success: true, page_id: null, message: 'Shutting down' });
      },
    }),
    route({
      name: 'update',
      method: 'get',
      path: `${P}/update`,
      auth: true,
      tag: 'System',
      summary: `Ask the supervisor to pull new code (touches ${UPDATE_TRIGGER_FILE})`,
      response: messageResponse,
      handler: async () => {
        touchUpdateTrigger(d.repoRoot);
        return { message: `Update requested (${UPDATE_TRIGGER_FILE} touched)` };
      },
    }),
    route({
      name: 'process-tree',
      method: 'get',
      path: SYSTEM_PATHS.processTree,
      auth: true,
      tag: 'System',
      summary: "The browser's process tree as this worker sees it (CPU since the previous read)",
      response: envelope({ tree: processTreeBodySchema.extract('tree') }),
      handler: async () => {
        const pid = d.navigator.browserPid;
        return { tree: pid === null ? null : await treeMeter.measure(pid) };
      },
    }),
    route({
      name: 'requests',
      method: 'get',
      path: SYSTEM_PATHS.requests,
      auth: true,
      tag: 'System',
      summary: "Client requests per UTC hour from this worker's request log, oldest first",
      query: Joi.object<{ hours: number }, true>({
        hours: Joi.number().integer().min(1).max(MAX_HOURS).default(24),
      }),
      response: envelope({
        hours: requestCountsBodySchema.extract('hours'),
        requests: requestCountsBodySchema.extract('requests'),
      }),
      handler: async ({ query }) => ({
        hours: query.hours,
        requests: await requestsPerHour(d.dataDir, query.hours),
      }),
    }),
    route({
      name: 'revoked-tokens',
      method: 'post',
      path: SYSTEM_PATHS.revokedTokens,
      // The service key alone (service-kit's access classes the path `key`): a token must not
      // be able to lift its own revocation.
      auth: true,
      tag: 'System',
      summary: "The waker's whole list of revoked token ids: they are refused from now on",
      description:
        'Replaces the last list pushed (an id left out is no longer refused for its sake). A ' +
        'token now listed is refused from its next request on (every MCP request included), ' +
        'and the live views and DevTools clients it opened close. Service key only.',
      body: Joi.object<{ ids: string[] }, true>({
        ids: Joi.array().items(Joi.string().min(1).max(MAX_TOKEN_ID)).max(MAX_REVOKED).required(),
      }),
      response: envelope({ revoked: Joi.number().integer().min(0).required() }),
      handler: async ({ body }) => {
        d.auth.revocations.replace(body.ids);
        return { revoked: new Set(body.ids).size };
      },
    }),
    route({
      name: 'metrics',
      method: 'get',
      path: SYSTEM_PATHS.metrics,
      auth: true,
      tag: 'System',
      summary: 'Host and persona samples from the waker (404 when the waker is not running)',
      response: envelope(metricsFields),
      handler: async () => {
        const url = `${d.wakerUrl}${WAKER_METRICS_PATH}`;
        let res: Response;
        try {
          res = await fetch(url, {
            headers: d.serviceKey ? { Authorization: `Bearer ${d.serviceKey}` } : {},
            signal: AbortSignal.timeout(3_000),
          });
        } catch {
          throw new NotFound(`Metrics unavailable: the waker is not running at ${d.wakerUrl}`);
        }
        if (!res.ok) {
          await res.body?.cancel().catch(() => undefined);
          throw new NotFound(
            res.status === 401
              ? `Metrics unavailable: the waker at ${d.wakerUrl} refused this worker's SERVICE_KEY (401)`
              : `Metrics unavailable: the waker at ${d.wakerUrl} answered ${res.status}`,
          );
        }
        let body: unknown;
        try {
          body = await res.json();
        } catch {
          throw new NotFound(`Metrics unavailable: the waker at ${d.wakerUrl} answered no JSON`);
        }
        const checked: ValidationResult<MetricsBody> = metricsBodySchema.validate(body, {
          stripUnknown: true,
        });
        if (checked.error) {
          throw new NotFound(`Metrics unavailable: the waker answered ${checked.error.message}`);
        }
        return { ...checked.value };
      },
    }),
  ];
}
