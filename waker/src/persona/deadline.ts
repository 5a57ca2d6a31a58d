/**
 * A driver call with a deadline: an engine that hangs must not hold a persona's queue for good.
 * What the call does after its deadline (a worker started late) is handed on, never lost.
 */

/** What becomes of a driver call that passed its deadline. */
export interface Late<T> {
  /** The deadline passed: the call counts as failed, and may still end. */
  timedOut?: () => void;
  /** It ended after all: with its value, or undefined when it failed. */
  ended: (value: T | undefined) => void;
}

/** `work`, or a rejection once `ms` have passed; what happens after that goes to `late`. */
export function deadline<T>(work: Promise<T>, ms: number, what: string, late: Late<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      late.timedOut?.();
      reject(new Error(`${what} did not end within ${Math.round(ms / 1000)} s`));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (timedOut) late.ended(value);
        else resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (timedOut) late.ended(undefined);
        else reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
