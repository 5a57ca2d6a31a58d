import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import type { HostPort, HourRequests, RequestCountsBody } from '@persona-browser/contracts';
import { hourRequestsSchema, requestCountsBodySchema } from '@persona-browser/contracts';
import { MAX_HOURS, errnoCode, requestsPerHour } from '@persona-browser/service-kit';
import { workerRequestCounts } from '../worker-client';

/**
 * Request counts of a persona whose request log is on another node: asked of its worker while
 * it runs, and kept in the persona's definition folder on the manager when it stops. A worker
 * logs only while it runs, so the counts kept at its last stop are the whole story until it
 * wakes again.
 */
export const SNAPSHOT_FILE = '.requests-hours.json';
const HOUR_MS = 3_600_000;
const keptSchema = Joi.object<{ requests: HourRequests[] }>({
  requests: Joi.array().items(hourRequestsSchema).required(),
});

const hourLabel = (ms: number): string => new Date(ms).toISOString().slice(0, 13) + ':00:00Z';

/** The worker's counts for the last `hours` hours (its own request log). */
export async function workerRequests(
  worker: HostPort,
  serviceKey: string | null,
  hours: number,
  timeoutMs = 5_000,
): Promise<HourRequests[]> {
  const body = await workerRequestCounts(worker, serviceKey, hours, timeoutMs);
  const checked: Joi.ValidationResult<RequestCountsBody> = requestCountsBodySchema.validate(body);
  if (checked.error) throw new Error(`invalid request counts: ${checked.error.message}`);
  // Written as the waker writes hours read from the files (the schema's ISO form has .000).
  return checked.value.requests.map((h) => ({
    hour: hourLabel(Date.parse(h.hour)),
    count: h.count,
  }));
}

/** Keeps every hour the worker still has (50 days) beside the persona's definition. */
export async function keepRequests(
  worker: HostPort,
  serviceKey: string | null,
  personaDir: string,
): Promise<void> {
  const requests = (await workerRequests(worker, serviceKey, MAX_HOURS)).filter((h) => h.count);
  const file = path.join(personaDir, SNAPSHOT_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.promises.writeFile(tmp, `${JSON.stringify({ requests })}\n`);
  await fs.promises.rename(tmp, file);
}

/** The last `hours` hours from the counts kept at the last stop; zero where none were. */
export async function keptRequests(
  personaDir: string,
  hours: number,
  now = new Date(),
): Promise<HourRequests[]> {
  const byHour = new Map<number, number>();
  try {
    const parsed: unknown = JSON.parse(
      await fs.promises.readFile(path.join(personaDir, SNAPSHOT_FILE), 'utf8'),
    );
    const checked: Joi.ValidationResult<{ requests: HourRequests[] }> = keptSchema.validate(parsed);
    // A damaged file counts as none kept: the counts are a convenience, never a reason to fail.
    for (const h of checked.error ? [] : checked.value.requests)
      byHour.set(Date.parse(h.hour), h.count);
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT' && !(err instanceof SyntaxError)) throw err;
  }
  const last = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const first = last - (hours - 1) * HOUR_MS;
  return Array.from({ length: hours }, (_, i) => {
    const ms = first + i * HOUR_MS;
    return { hour: hourLabel(ms), count: byHour.get(ms) ?? 0 };
  });
}

/** What a persona's counts are read from: its folder, its worker, where it runs. */
export interface CountedPersona {
  /** Its cluster node, or null on a single server (the log is then in `dir`). */
  readonly node: string | null;
  readonly spec: { readonly dir: string };
  runningAddress(): HostPort | null;
}

/**
 * A persona's requests per hour wherever its log is: this host's folder on a single server;
 * on a cluster node, its worker while it runs, else the counts kept at its last stop.
 */
export function personaRequests(
  persona: CountedPersona,
  hours: number,
  serviceKey: string | null,
): Promise<HourRequests[]> {
  if (!persona.node) return requestsPerHour(persona.spec.dir, hours);
  const worker = persona.runningAddress();
  return worker ? workerRequests(worker, serviceKey, hours) : keptRequests(persona.spec.dir, hours);
}
