import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { PAGE_STATES } from '../browser/managed-page';
import type { Navigator } from '../browser/navigator';
import type { CaptureRegistry } from '../capture/registry';
import type { MediaStore } from '../media/store';
import { onResponseEnd } from './response-end';

export const WORKER_PREFIX = 'persona_browser_worker_';

/** How a plugin call ended, as `persona_browser_worker_plugin_calls_total` counts it. */
export type PluginResult = 'ok' | 'failed' | 'timeout' | 'refused' | 'crashed';

/** Where the numbers read at scrape time come from: the owners of that state. */
export interface MetricSources {
  navigator: Navigator;
  captures: CaptureRegistry;
  media: MediaStore;
}

/** From a few milliseconds (a status read) to minutes (a navigation, a plugin). */
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** `2xx`, `4xx`, `5xx`…: a bounded label, where the status itself would be almost as good. */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`;

/** The route a mounted handler declared, left on the response for the call metrics. */
const ROUTE_KEY = 'metricsRoute';

/**
 * The worker's Prometheus metrics, one registry per worker (never prom-client's global one).
 * Gauges are read from their owners when Prometheus scrapes; counters and the call histogram
 * are moved where the event happens (the mount, the plugin routes, the live view's control).
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly calls: Histogram<'route' | 'status_class'>;
  private readonly plugins: Counter<'plugin' | 'result'>;
  private readonly takeovers: Counter;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: WORKER_PREFIX });
    this.calls = new Histogram({
      name: `${WORKER_PREFIX}call_duration_seconds`,
      help: 'API calls by the name the route declares and the class of their status',
      labelNames: ['route', 'status_class'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.plugins = new Counter({
      name: `${WORKER_PREFIX}plugin_calls_total`,
      help: 'Plugin calls by plugin and outcome (ok, failed, timeout, refused, crashed)',
      labelNames: ['plugin', 'result'],
      registers,
    });
    this.takeovers = new Counter({
      name: `${WORKER_PREFIX}person_takeovers_total`,
      help: 'Times a person took control of a page through the live view',
      registers,
    });
    const { navigator, captures, media } = sources;
    new Gauge({
      name: `${WORKER_PREFIX}pages`,
      help: 'Pooled pages by state (all zero while the browser is stopped)',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = navigator.pageCounts();
        for (const state of PAGE_STATES) this.set({ state }, counts?.[state] ?? 0);
      },
    });
    new Gauge({
      name: `${WORKER_PREFIX}leases_held`,
      help: 'Page leases standing now (an API client or a person at the live view)',
      registers,
      collect() {
        this.set(navigator.leases.held());
      },
    });
    new Gauge({
      name: `${WORKER_PREFIX}capture_bytes`,
      help: "Compressed bytes the pages' network captures hold",
      registers,
      collect() {
        this.set(captures.heldBytes());
      },
    });
    new Gauge({
      name: `${WORKER_PREFIX}media_bytes`,
      help: 'Bytes of plugin files waiting for their download',
      registers,
      collect() {
        this.set(media.stats().bytes);
      },
    });
    new Gauge({
      name: `${WORKER_PREFIX}media_cap_bytes`,
      help: 'The most bytes the waiting plugin files may hold together',
      registers,
      collect() {
        this.set(media.stats().capBytes);
      },
    });
  }

  /** Times every request that a mounted route answers (see `routeServed`), whatever its end. */
  callTimer(): RequestHandler {
    return (_req, res, next) => {
      const started = performance.now();
      onResponseEnd(
        res,
        () => undefined,
        () => {
          const route: unknown = res.locals[ROUTE_KEY];
          if (typeof route !== 'string') return;
          const seconds = (performance.now() - started) / 1000;
          this.calls.observe({ route, status_class: statusClass(res.statusCode) }, seconds);
        },
      );
      next();
    };
  }

  /** Called by the mount: this response answers the route declared as `name`. */
  static routeServed(locals: Record<string, unknown>, name: string): void {
    locals[ROUTE_KEY] = name;
  }

  pluginOutcome(plugin: string, result: PluginResult): void {
    this.plugins.inc({ plugin, result });
  }

  takeover(): void {
    this.takeovers.inc();
  }

  /** The exposition: its content type and text. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
