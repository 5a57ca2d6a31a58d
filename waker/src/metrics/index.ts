export type { HostRoots } from './host';
export type { Instance, SamplerOptions } from './sampler';
export { MetricsSampler, scheduleFor } from './sampler';
