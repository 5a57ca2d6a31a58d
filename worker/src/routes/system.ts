import Joi from 'joi';
import type { Navigator } from '../browser/navigator';
import { NotFound } from '../errors';
import type { RouteDef } from '../http/route';
import { envelope, messageResponse } from '../http/schemas';
import type { RequestTracker } from '../http/request-tracker';
import type { CommitInfo } from '@persona-browser/contracts';
import type { ProxyErrors } from '../system-info';
import { touchUpdateTrigger } from '../system-info';
import { about, sleep } from '../util';
import { poolStatus } from './pool-view';

export interface SystemDeps {
  navigator: Navigator;
  tracker: RequestTracker;
  proxyErrors: ProxyErrors;
  commit: () => Promise<CommitInfo | null>;
  persona: string | null;
  repoRoot: string;
  wakerUrl: string;
  /** Graceful shutdown of the whole process, after the reply has gone out. */
  shutdown: () => void;
}

export const PING_DELAY_MS = 2_000;
const P = '/api/v1/system';
const num = Joi.number();

const navigatorStatus = Joi.object({
  initialized: Joi.boolean(),
  browser_context_active: Joi.boolean(),
  page_pool_active: Joi.boolean(),
  max_pages: Joi.number().integer(),
  slowmo: Joi.number().integer(),
  page_count: Joi.number().integer().allow(null),
  available_pages: Joi.number().integer().allow(null),
}).label('NavigatorStatus');

export function systemRoutes(d: SystemDeps): RouteDef[] {
  return [
    {
      name: 'ping',
      method: 'get',
      path: `${P}/ping`,
      auth: false,
      tag: 'System',
      summary: 'Health check (answers after about 2 s)',
      response: Joi.object({
        pong: num.integer(),
        status: Joi.string().valid('alive'),
        commit: Joi.object({ hash: Joi.string(), subject: Joi.string(), date: Joi.string() }).allow(
          null,
        ),
        persona: Joi.string().allow(null),
        activity: Joi.object({ in_flight: num.integer(), idle_seconds: num.integer().allow(null) }),
        proxy_errors: num.integer().allow(null),
      }).label('Ping'),
      raw: true,
      handler: async ({ res }) => {
        await sleep(about(PING_DELAY_MS));
        res.json({
          pong: Date.now(),
          status: 'alive',
          commit: await d.commit(),
          persona: d.persona,
          activity: d.tracker.activity(),
          proxy_errors: d.proxyErrors.value(),
        });
      },
    },
    {
      name: 'status',
      method: 'get',
      path: `${P}/status`,
      auth: false,
      tag: 'System',
      summary: 'Navigator status',
      response: navigatorStatus,
      raw: true,
      handler: async ({ res }) => {
        res.json(d.navigator.status());
      },
    },
    {
      name: 'status-pages',
      method: 'get',
      path: `${P}/status/pages`,
      auth: false,
      tag: 'System',
      summary: 'Pool status with every page (500 when the navigator is not initialized)',
      response: Joi.object({
        total_pages: num.integer(),
        max_pages: num.integer(),
        status_by_state: Joi.object().pattern(Joi.string(), num.integer()),
        pages: Joi.array().items(Joi.object().label('PageEntry')),
      }).label('PoolStatus'),
      raw: true,
      handler: async ({ res }) => {
        res.json(poolStatus(d.navigator));
      },
    },
    {
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
    },
    {
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
    },
    {
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
    },
    {
      name: 'update',
      method: 'get',
      path: `${P}/update`,
      auth: true,
      tag: 'System',
      summary: 'Ask the supervisor to pull new code (touches .update-trigger)',
      response: messageResponse,
      handler: async () => {
        touchUpdateTrigger(d.repoRoot);
        return { message: 'Update requested (.update-trigger touched)' };
      },
    },
    {
      name: 'metrics',
      method: 'get',
      path: `${P}/metrics`,
      auth: true,
      tag: 'System',
      summary: 'Host and persona samples from the waker (404 when the waker is not running)',
      response: envelope({ interval_s: num, window_s: num, samples: Joi.array() }),
      handler: async () => {
        let body: Record<string, unknown>;
        try {
          const res = await fetch(`${d.wakerUrl}/api/metrics`, {
            signal: AbortSignal.timeout(3_000),
          });
          if (!res.ok) throw new Error(`waker answered ${res.status}`);
          body = (await res.json()) as Record<string, unknown>;
        } catch {
          throw new NotFound(`Metrics unavailable: the waker is not running at ${d.wakerUrl}`);
        }
        return { interval_s: body.interval_s, window_s: body.window_s, samples: body.samples };
      },
    },
  ];
}
