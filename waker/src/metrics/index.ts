export type { HostRoots } from './host';
export type { HourCount } from './requests';
export { MAX_HOURS, requestsPerHour } from './requests';
export type { Instance, SamplerOptions } from './sampler';
export { MetricsSampler, scheduleFor } from './sampler';
