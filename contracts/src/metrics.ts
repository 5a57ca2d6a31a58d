import Joi from 'joi';

/** Host figures of one metrics sample (docs/api.md, System: metrics). */
export interface SystemSample {
  /** Summed over cores: can exceed 100. */
  cpu_pct: number;
  mem_total_mb: number;
  mem_used_mb: number;
  load1: number;
  load5: number;
  /** null where the host has no thermal zone file. */
  temp_c: number | null;
}

/** One persona's whole browser process tree. */
export interface InstanceSample {
  pid: number;
  procs: number;
  cpu_pct: number;
  rss_mb: number;
}

export interface MetricsSample {
  /** epoch seconds */
  ts: number;
  system: SystemSample;
  /** Keyed by persona name; null while that persona is down. */
  instances: Record<string, InstanceSample | null>;
}

export interface MetricsBody {
  interval_s: number;
  window_s: number;
  samples: MetricsSample[];
}

const num = Joi.number().required();

export const systemSampleSchema = Joi.object<SystemSample, true>({
  cpu_pct: num,
  mem_total_mb: num,
  mem_used_mb: num,
  load1: num,
  load5: num,
  temp_c: Joi.number().allow(null).required(),
}).label('SystemSample');

export const instanceSampleSchema = Joi.object<InstanceSample, true>({
  pid: Joi.number().integer().required(),
  procs: Joi.number().integer().min(0).required(),
  cpu_pct: num,
  rss_mb: num,
}).label('InstanceSample');

export const metricsSampleSchema = Joi.object<MetricsSample, true>({
  ts: num,
  system: systemSampleSchema.required(),
  instances: Joi.object().pattern(Joi.string(), instanceSampleSchema.allow(null)).required(),
}).label('MetricsSample');

export const metricsBodySchema = Joi.object<MetricsBody, true>({
  interval_s: num,
  window_s: num,
  samples: Joi.array().items(metricsSampleSchema).required(),
}).label('Metrics');

/** A worker's own browser process tree (docs/api.md, System: process-tree). */
export interface ProcessTreeBody {
  success: true;
  page_id: null;
  /** null while the browser is not running. */
  tree: InstanceSample | null;
}

export const processTreeBodySchema = Joi.object<ProcessTreeBody, true>({
  success: Joi.boolean().valid(true).required(),
  page_id: Joi.string().allow(null).valid(null).required(),
  tree: instanceSampleSchema.allow(null).required(),
}).label('ProcessTree');

/** Client requests begun in one UTC hour (the request log's `start` rows). */
export interface HourRequests {
  /** Start of the UTC hour, ISO 8601 (`2026-11-23T17:00:00Z`). */
  hour: string;
  count: number;
}

/** A worker's own request counts (docs/api.md, System: requests). */
export interface RequestCountsBody {
  success: true;
  page_id: null;
  hours: number;
  /** Oldest first; the last one is the current hour. */
  requests: HourRequests[];
}

export const hourRequestsSchema = Joi.object<HourRequests, true>({
  hour: Joi.string().isoDate().required(),
  count: Joi.number().integer().min(0).required(),
}).label('HourRequests');

export const requestCountsBodySchema = Joi.object<RequestCountsBody, true>({
  success: Joi.boolean().valid(true).required(),
  page_id: Joi.string().allow(null).valid(null).required(),
  hours: Joi.number().integer().min(1).required(),
  requests: Joi.array().items(hourRequestsSchema).required(),
}).label('RequestCounts');
