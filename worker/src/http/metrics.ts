import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RefusalReason } from '@persona-browser/service-kit';
import { REFUSAL_REASONS } from '@persona-browser/service-kit';
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

/** What the DevTools endpoint counts (read at scrape time; it is made after the metrics). */
export interface DevtoolsCounts {
  /** Clients connected. */
  clients: number;
  /** Guest links held on the browser: connected clients' and those being upgraded. */
  guestLinks: number;
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
  private readonly refusals: Counter<'reason'>;
  private readonly devtoolsDrops: Counter;
  private devtoolsCounts: (() => DevtoolsCounts) | null = null;

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
    this.refusals = new Counter({
      name: `${WORKER_PREFIX}auth_refusals_total`,
      help: 'Requests refused by the credential check, by reason (missing, invalid, scope, throttled…)',
      labelNames: ['reason'],
      registers,
    });
    // Every reason shows from the first scrape, at 0: a rate over a series that appears only
    // with its first refusal would miss that one.
    for (const reason of REFUSAL_REASONS) this.refusals.inc({ reason }, 0);
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
    this.devtoolsDrops = this.devtoolsMetrics(registers);
  }

  /** The DevTools endpoint's series; returns the counter of clients dropped. */
  private devtoolsMetrics(registers: Registry[]): Counter {
    const counts = (): DevtoolsCounts => this.devtoolsCounts?.() ?? { clients: 0, guestLinks: 0 };
    new Gauge({
      name: `${WORKER_PREFIX}devtools_clients`,
      help: 'DevTools clients connected now',
      registers,
      collect() {
        this.set(counts().clients);
      },
    });
    new Gauge({
      name: `${WORKER_PREFIX}devtools_guest_links`,
      help: "Guest links held on the browser: connected DevTools clients' and those being upgraded",
      registers,
      collect() {
        this.set(counts().guestLinks);
      },
    });
    return new Counter({
      name: `${WORKER_PREFIX}devtools_clients_dropped_total`,
      help: 'DevTools clients dropped because their unsent data passed DEVTOOLS_CLIENT_BUFFER_MB',
      registers,
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

  /** The Authenticator's `onRefusal`: one request refused, and why. */
  authRefused(reason: RefusalReason): void {
    this.refusals.inc({ reason });
  }

  /** Where the DevTools gauges read from, once the endpoint is made. */
  devtoolsFrom(counts: () => DevtoolsCounts): void {
    this.devtoolsCounts = counts;
  }

  /** A DevTools client was dropped for its unsent data. */
  devtoolsDropped(): void {
    this.devtoolsDrops.inc();
  }

  /** The exposition: its content type and text. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
