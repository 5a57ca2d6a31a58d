import http from 'node:http';
import type Joi from 'joi';
import type { CommitInfo, NavigatorStatus, PingResult } from '@persona-browser/contracts';
import { SYSTEM_PATHS, navigatorStatusSchema, pingSchema } from '@persona-browser/contracts';
import type { Address } from './drivers/types';

/**
 * GET of a worker's JSON route with `http.request` and a hard timeout (fetch can hang on
 * Docker's port proxy, and a frozen worker must fail the check rather than hold it).
 */
export function getJson(address: Address, route: string, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: address.host, port: address.port, path: route, method: 'GET', agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`));
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString()));
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** Whether the worker answers status with its browser up (`initialized`). */
export async function isReady(address: Address, timeoutMs = 3_000): Promise<boolean> {
  const body = await getJson(address, SYSTEM_PATHS.status, timeoutMs);
  const result: Joi.ValidationResult<NavigatorStatus> = navigatorStatusSchema.validate(body, {
    allowUnknown: true,
  });
  return !result.error && result.value.initialized;
}

/** The commit the worker reports in its ping (the ping itself waits about 2 s). */
export async function pingCommit(address: Address): Promise<CommitInfo | null> {
  const body = await getJson(address, SYSTEM_PATHS.ping, 10_000);
  const result: Joi.ValidationResult<PingResult> = pingSchema.validate(body, {
    allowUnknown: true,
  });
  if (result.error) throw new Error(`invalid ping: ${result.error.message}`);
  return result.value.commit;
}
