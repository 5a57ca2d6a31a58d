import { liveVncStep, displayStep, vncStep } from './display-steps';
import { browserStep, capturesStep, launchStep, mediaStep } from './browser-steps';
import { httpStep } from './http-step';
import { profileStep, proxyRelayStep } from './persona-steps';
import { StartupPlan } from './plan';
import type { WorkerSettings } from './settings';

/**
 * The worker's start-up, in order. Shutdown (a signal, the kill endpoint, a step that fails to
 * start) stops the started steps in the reverse of this order: the server stops taking calls
 * before the browser closes, and the profile is released last.
 */
export function workerStartup(given: WorkerSettings & { exit: (reason: string) => void }) {
  return StartupPlan.begin(given)
    .then(profileStep)
    .then(proxyRelayStep)
    .then(displayStep)
    .then(vncStep)
    .then(liveVncStep)
    .then(mediaStep)
    .then(capturesStep)
    .then(browserStep)
    .then(httpStep)
    .then(launchStep);
}
