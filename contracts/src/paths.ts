/** The routes of the wire contracts, shared by whoever serves and whoever polls them. */
export const SYSTEM_PATHS = {
  ping: '/api/v1/system/ping',
  status: '/api/v1/system/status',
  pages: '/api/v1/system/status/pages',
  metrics: '/api/v1/system/metrics',
} as const;

/** The waker's metrics, which a worker's `metrics` route relays. */
export const WAKER_METRICS_PATH = '/api/metrics';
