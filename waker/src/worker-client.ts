import type Joi from 'joi';
import type { PersonaClient, Result } from '@persona-browser/client';
import { createPersonaClient, httpTransport, settle } from '@persona-browser/client';
import type { CommitInfo, NavigatorStatus, PingResult } from '@persona-browser/contracts';
import { HttpStatusError, navigatorStatusSchema, pingSchema } from '@persona-browser/contracts';
import { isRecord } from '@persona-browser/service-kit';
import type { Address } from './drivers/types';

/**
 * The worker's REST API at `address`, typed by the client generated from its document: each
 * call bounded at `timeoutMs` over Node's http (through the address's tunnel agent, if any),
 * with the service key when one is given.
 */
function workerApi(
  address: Address,
  timeoutMs: number,
  serviceKey: string | null = null,
): PersonaClient {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return createPersonaClient({
    baseUrl: `http://${host}:${address.port}`,
    key: serviceKey,
    fetch: httpTransport({ timeoutMs, agent: address.agent }),
  });
}

/** The answer's data; a failure throws, with its status and the body it came with. */
async function dataOf<D>(result: Promise<Result<D>>): Promise<D> {
  const r = await result;
  if (!r.ok) throw new HttpStatusError(r.status, JSON.stringify(r.body ?? r.error));
  return r.data;
}

/** Whether the worker answers status with its browser up (`initialized`). */
export async function isReady(address: Address, timeoutMs = 3_000): Promise<boolean> {
  const api = workerApi(address, timeoutMs);
  const body = await dataOf(settle(api.GET('/api/v1/system/status')));
  // A worker of another commit may answer in another shape: held to the fields read here.
  const result: Joi.ValidationResult<NavigatorStatus> = navigatorStatusSchema.validate(body, {
    allowUnknown: true,
  });
  return !result.error && result.value.initialized;
}

/**
 * Polls status until the worker is ready; rejects after `timeoutMs`, or at once with the
 * reason `stopped` gives (the worker exited, the waker is shutting down).
 */
export async function waitReady(
  address: Address,
  timeoutMs: number,
  stopped: () => string | null,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const reason = stopped();
    if (reason) throw new Error(reason);
    if (await isReady(address, 2_000).catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`worker not ready within ${Math.round(timeoutMs / 1000)} s`);
}

/**
 * Light sleep: the worker closes its browser (the profile is written and closed on disk) and
 * stays up, its display, proxy relay and live view with it.
 */
export async function browserDown(
  address: Address,
  serviceKey: string | null,
  timeoutMs: number,
): Promise<void> {
  await dataOf(settle(workerApi(address, timeoutMs, serviceKey).GET('/api/v1/system/stop')));
}

/** The wake from light sleep: the worker starts its browser and answers once it is up. */
export async function browserUp(
  address: Address,
  serviceKey: string | null,
  timeoutMs: number,
): Promise<void> {
  await dataOf(settle(workerApi(address, timeoutMs, serviceKey).GET('/api/v1/system/start')));
}

/** What the waker reads from a worker's ping (the ping itself waits about 2 s). */
export async function pingWorker(
  address: Address,
  timeoutMs = 10_000,
): Promise<Pick<PingResult, 'commit' | 'proxy_errors'>> {
  const body = await dataOf(settle(workerApi(address, timeoutMs).GET('/api/v1/system/ping')));
  // A worker of another commit (an update under way) may answer in another shape.
  const result: Joi.ValidationResult<PingResult> = pingSchema.validate(body, {
    allowUnknown: true,
  });
  if (result.error) throw new Error(`invalid ping: ${result.error.message}`);
  return { commit: result.value.commit, proxy_errors: result.value.proxy_errors };
}

/** The commit the worker reports in its ping. */
export async function pingCommit(address: Address): Promise<CommitInfo | null> {
  return (await pingWorker(address)).commit;
}

/**
 * The worker's pool as it reports it (`status/pages`): read by the fleet panel's page picker, so
 * held to no shape here beyond being an object (the panel reads the fields it knows).
 */
export async function workerPages(
  address: Address,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const body: unknown = await dataOf(
    settle(workerApi(address, timeoutMs).GET('/api/v1/system/status/pages')),
  );
  return isRecord(body) ? body : {};
}

/** The worker's own view of its browser's process tree (the answer, unchecked). */
export async function workerProcessTree(
  address: Address,
  serviceKey: string | null,
  timeoutMs: number,
): Promise<unknown> {
  const api = workerApi(address, timeoutMs, serviceKey);
  return dataOf(settle(api.GET('/api/v1/system/process-tree')));
}

/** The worker's request counts for its last `hours` hours (the answer, unchecked). */
export async function workerRequestCounts(
  address: Address,
  serviceKey: string | null,
  hours: number,
  timeoutMs: number,
): Promise<unknown> {
  const api = workerApi(address, timeoutMs, serviceKey);
  return dataOf(settle(api.GET('/api/v1/system/requests', { params: { query: { hours } } })));
}

/** Hands the worker the whole list of this persona's revoked token ids. */
export async function pushRevokedTokens(
  address: Address,
  serviceKey: string,
  ids: string[],
  timeoutMs: number,
): Promise<void> {
  const api = workerApi(address, timeoutMs, serviceKey);
  await dataOf(settle(api.POST('/api/v1/system/revoked-tokens', { body: { ids } })));
}
