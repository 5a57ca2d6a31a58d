import type Joi from 'joi';
import type { HostPort, InstanceSample, ProcessTreeBody } from '@persona-browser/contracts';
import { processTreeBodySchema } from '@persona-browser/contracts';
import { workerProcessTree } from '../worker-client';

/**
 * A persona's tree figures as its worker measures them (its browser's process tree, in the
 * worker's own process namespace), for personas on hosts whose /proc the waker cannot read.
 * Null while the worker's browser is not running. The call has a hard timeout, so a worker
 * that does not answer costs one sample at most `timeoutMs`, never a hang.
 */
export async function readWorkerTree(
  worker: HostPort,
  serviceKey: string | null,
  timeoutMs: number,
): Promise<InstanceSample | null> {
  const body = await workerProcessTree(worker, serviceKey, timeoutMs);
  const checked: Joi.ValidationResult<ProcessTreeBody> = processTreeBodySchema.validate(body, {
    stripUnknown: true,
  });
  if (checked.error) throw new Error(`invalid process tree: ${checked.error.message}`);
  return checked.value.tree;
}
