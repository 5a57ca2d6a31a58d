import type { WorkerMetrics } from '../http/metrics';
import type { Route } from '../http/route';
import { route } from '../http/route';

/** `GET /metrics`: the worker's numbers in Prometheus' text format, behind the service key. */
export function prometheusRoutes(metrics: WorkerMetrics): Route[] {
  return [
    route({
      name: 'prometheus-metrics',
      method: 'get',
      path: '/metrics',
      auth: true,
      tag: 'System',
      summary: "The worker's metrics in Prometheus' text format (scraped with the key)",
      description:
        'Pages by state, call durations by route, leases held, capture and media bytes, plugin ' +
        'outcomes and take-overs by a person; `/api/v1/system/metrics` is the JSON summary.',
      raw: true,
      rawType: 'text/plain',
      handler: async ({ res }) => {
        const { contentType, text } = await metrics.scrape();
        res.setHeader('Cache-Control', 'no-store');
        res.type(contentType).send(text);
      },
    }),
  ];
}
