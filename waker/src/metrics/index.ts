/**
 * The waker's metrics and workload numbers.
 *
 * Wiring in the waker's main:
 *
 *   const sampler = new MetricsSampler({
 *     intervalS: config.metricsInterval, // METRICS_INTERVAL, default 15
 *     windowS: config.metricsWindow, // METRICS_WINDOW, default 600
 *     instances: () => fleet.instances(), // [{ name, pid: host pid of the tree's root | null, worker }]
 *     serviceKey: config.serviceKey, // the workers' key, for personas sampled over the network
 *     onError: (err) => logger.warn(`metrics sample failed: ${String(err)}`),
 *   });
 *   sampler.start(); // and sampler.stop() on shutdown
 *   // GET /api/metrics           → sampler.body()
 *   // GET /api/personas/:name/requests?hours=N → requestsPerHour(personaDir, N) on one server,
 *   //   the worker's own count (requestCounts) for a persona on a cluster node
 */
export type { HostRoots } from './host';
export type { HourCount } from '@persona-browser/service-kit';
export { MAX_HOURS, requestsPerHour } from '@persona-browser/service-kit';
export type { Instance, SamplerOptions } from './sampler';
export type { CountedPersona } from './remote-requests';
export { keepRequests, personaRequests } from './remote-requests';
export { MetricsSampler, scheduleFor } from './sampler';
export type { BudgetRow, FleetSources, PersonaCounters, PersonaRow } from './prometheus';
export { FleetMetrics } from './prometheus';
