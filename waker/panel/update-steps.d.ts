// What the waker serves at /update-steps.js (contracts' UPDATE_STEPS_MODULE), for the type check.
import type { UpdateStep } from '@persona-browser/contracts';

export const UPDATE_STEPS: readonly UpdateStep[];
