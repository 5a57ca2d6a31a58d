import type { PersonaState } from '@persona-browser/contracts';

/**
 * What happens to a persona's worker. `wake`, `sleep` and `stop` are asked for (the API, a
 * request at the persona's port, the idle timer, a restart); the others are what the worker
 * did or what the waker found.
 */
export type PersonaEvent =
  /** A worker starts (a wake, a request, a restart, the back-off timer). */
  | 'wake'
  /** The worker started answers: it is ready. */
  | 'ready'
  /** A paused worker goes on where it stopped. */
  | 'resume'
  /** Idle: the worker is paused, not stopped (a quick wake later). */
  | 'pause'
  /** The worker is told to stop (sleep, restart, idle, waker shutdown). */
  | 'stop'
  /** The worker has stopped. */
  | 'stopped'
  /**
   * Asleep with nothing to stop: the persona sleeps, and its last error is cleared (or, for a
   * wake the memory budget refused, says why).
   */
  | 'sleep'
  /**
   * The start failed, an always-on worker died, or a stop failed (its worker is then a leftover
   * that must be stopped before any start): the back-off tries again.
   */
  | 'fail'
  /** A sleepy persona's worker ended by itself: it sleeps until its next request. */
  | 'exit'
  /** A worker an earlier waker left running is taken over. */
  | 'adopt'
  /** A worker an earlier waker left paused is taken over. */
  | 'adopt-paused'
  /** A configuration error (a port conflict): the persona never starts. */
  | 'misconfigured';

export const PERSONA_EVENTS: readonly PersonaEvent[] = [
  'wake',
  'ready',
  'resume',
  'pause',
  'stop',
  'stopped',
  'sleep',
  'fail',
  'exit',
  'adopt',
  'adopt-paused',
  'misconfigured',
];

/** For each event, the state it leads to from each state it is allowed in. */
const TRANSITIONS: Readonly<Record<PersonaEvent, Partial<Record<PersonaState, PersonaState>>>> = {
  // An always-on persona starts out waking: its first wake is already under way.
  wake: { sleeping: 'waking', crashed: 'waking', waking: 'waking' },
  ready: { waking: 'running' },
  resume: { sleeping: 'running' },
  pause: { running: 'sleeping' },
  stop: { running: 'stopping', sleeping: 'stopping', crashed: 'stopping' },
  stopped: { stopping: 'sleeping' },
  sleep: { sleeping: 'sleeping', crashed: 'sleeping', waking: 'sleeping' },
  fail: {
    waking: 'crashed',
    running: 'crashed',
    sleeping: 'crashed',
    stopping: 'crashed',
    crashed: 'crashed',
  },
  exit: { running: 'sleeping', sleeping: 'sleeping' },
  adopt: { waking: 'running', sleeping: 'running' },
  'adopt-paused': { waking: 'sleeping', sleeping: 'sleeping' },
  misconfigured: {
    sleeping: 'crashed',
    waking: 'crashed',
    running: 'crashed',
    stopping: 'crashed',
    crashed: 'crashed',
  },
};

/** An event the persona's state does not allow now: the API answers 409 with Retry-After. */
export class TransitionRefused extends Error {}

/** An event the state does not allow, and why. */
export interface Refusal {
  refused: string;
}

/** The state `event` leads to from `state`, or a refusal naming both. */
export function next(state: PersonaState, event: PersonaEvent): PersonaState | Refusal {
  const to = TRANSITIONS[event][state];
  if (to) return to;
  const from = Object.keys(TRANSITIONS[event]).join(', ');
  return { refused: `${event} is not allowed while ${state} (only while ${from})` };
}

export function isRefusal(result: PersonaState | Refusal): result is Refusal {
  return typeof result === 'object';
}

/**
 * A persona's state, when it was entered and its last error: changed only through `next`, so
 * a change the table does not allow is an error at once, never a state nobody planned for.
 */
export class PersonaLifecycle {
  private current: PersonaState;
  private entered = new Date();
  private lastError: string | null = null;

  constructor(
    initial: PersonaState,
    /** Told of every change of state. */
    private readonly onChange: (state: PersonaState, error: string | null) => void,
  ) {
    this.current = initial;
  }

  get state(): PersonaState {
    return this.current;
  }

  get since(): Date {
    return this.entered;
  }

  get error(): string | null {
    return this.lastError;
  }

  /** Applies `event`; `error` replaces the last error (null clears it, absent keeps it). */
  apply(event: PersonaEvent, error: string | null = this.lastError): PersonaState {
    const to = next(this.current, event);
    if (isRefusal(to)) throw new TransitionRefused(`persona lifecycle: ${to.refused}`);
    if (to !== this.current) {
      this.current = to;
      this.entered = new Date();
      this.onChange(to, error);
    }
    this.lastError = error;
    return to;
  }
}
