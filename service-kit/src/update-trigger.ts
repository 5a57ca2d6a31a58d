import path from 'node:path';

/**
 * The flag file at the repository root that asks the supervisor for an update: the worker's
 * `system/update` touches it, the waker's front door touches the checkout's own copy, and the
 * supervisor watches it.
 */
export const UPDATE_TRIGGER_FILE = '.update-trigger';

export const updateTriggerPath = (repoRoot: string): string =>
  path.join(repoRoot, UPDATE_TRIGGER_FILE);
