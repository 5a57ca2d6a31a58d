/**
 * How long a plan takes to play, from its own steps: a caller that must finish by a deadline
 * refuses a plan that cannot, before it touches the page.
 */
import type { ScrollPlan, TypingPlan } from './types';
import { keyFor } from './keys';

/** Upper bounds of the executor's own pauses (executor.ts): a key's hold, Shift around it. */
const KEY_HOLD_MAX_MS = 100;
const SHIFT_EXTRA_MAX_MS = 110;
/** The move to the rest point between the two bursts of a scroll (mouse-plan.ts MAX_MOVE_MS). */
const REST_MOVE_MAX_MS = 2_500;

export function typingPlanMs(plan: TypingPlan): number {
  let ms = KEY_HOLD_MAX_MS;
  for (const step of plan.steps) {
    ms += step.delayMs;
    if (step.kind === 'char' && keyFor(step.char).shift) ms += SHIFT_EXTRA_MAX_MS;
  }
  return ms;
}

export function scrollPlanMs(plan: ScrollPlan): number {
  const burst = (notches: ScrollPlan['main']): number =>
    notches.reduce((sum, n) => sum + n.delayMs, 0);
  return burst(plan.main) + plan.pauseMs + REST_MOVE_MAX_MS + burst(plan.back);
}
