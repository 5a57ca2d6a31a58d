// What the waker serves at /update-steps.js (contracts' UPDATE_STEPS_MODULE), for the type check.
export const UPDATE_STEPS: readonly import('@persona-browser/contracts').UpdateStep[];
