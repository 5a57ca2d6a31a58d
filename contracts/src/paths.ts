/** The routes of the wire contracts, shared by whoever serves and whoever polls them. */
export const SYSTEM_PATHS = {
  ping: '/api/v1/system/ping',
  status: '/api/v1/system/status',
  pages: '/api/v1/system/status/pages',
  update: '/api/v1/system/update',
  metrics: '/api/v1/system/metrics',
  /** The worker's own browser process tree: what the waker samples where it cannot see it. */
  processTree: '/api/v1/system/process-tree',
  /** The worker's request counts per hour, from its own request log (`?hours=`). */
  requests: '/api/v1/system/requests',
  /** The token ids the waker revoked, pushed to each worker (`{ids}`: the whole list). */
  revokedTokens: '/api/v1/system/revoked-tokens',
  /** Starts the browser (the waker's wake from light sleep). */
  browserStart: '/api/v1/system/start',
  /** Closes the browser, the worker staying up (the waker's light sleep). */
  browserStop: '/api/v1/system/stop',
} as const;

/** The waker's metrics, which a worker's `metrics` route relays. */
export const WAKER_METRICS_PATH = '/api/metrics';

/** The waker's own API (JSON; mutating calls and the panel's data need the service key). */
export const WAKER_PATHS = {
  health: '/api/health',
  personas: '/api/personas',
  /** The cluster's nodes (an empty list on a single server). */
  nodes: '/api/nodes',
  metrics: WAKER_METRICS_PATH,
} as const;
