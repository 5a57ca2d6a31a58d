import type Joi from 'joi';
import type { CommitInfo, NavigatorStatus, PingResult } from '@persona-browser/contracts';
import {
  SYSTEM_PATHS,
  getJson,
  navigatorStatusSchema,
  pingSchema,
} from '@persona-browser/contracts';
import type { Address } from './drivers/types';

/** Whether the worker answers status with its browser up (`initialized`). */
export async function isReady(address: Address, timeoutMs = 3_000): Promise<boolean> {
  const body = await getJson(address, SYSTEM_PATHS.status, timeoutMs);
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

const bearer = (serviceKey: string | null): Record<string, string> =>
  serviceKey ? { Authorization: `Bearer ${serviceKey}` } : {};

/**
 * Light sleep: the worker closes its browser (the profile is written and closed on disk) and
 * stays up, its display, proxy relay and live view with it.
 */
export async function browserDown(
  address: Address,
  serviceKey: string | null,
  timeoutMs: number,
): Promise<void> {
  await getJson(address, SYSTEM_PATHS.browserStop, timeoutMs, bearer(serviceKey));
}

/** The wake from light sleep: the worker starts its browser and answers once it is up. */
export async function browserUp(
  address: Address,
  serviceKey: string | null,
  timeoutMs: number,
): Promise<void> {
  await getJson(address, SYSTEM_PATHS.browserStart, timeoutMs, bearer(serviceKey));
}

/** What the waker reads from a worker's ping (the ping itself waits about 2 s). */
export async function pingWorker(
  address: Address,
  timeoutMs = 10_000,
): Promise<Pick<PingResult, 'commit' | 'proxy_errors'>> {
  const body = await getJson(address, SYSTEM_PATHS.ping, timeoutMs);
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
