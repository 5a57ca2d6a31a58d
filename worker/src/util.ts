import crypto from 'node:crypto';

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** "About `ms`": uniformly within ±10 %, so fixed pauses do not look machine-made. */
export const about = (ms: number): number => ms * (0.9 + Math.random() * 0.2);

export const epochSeconds = (): number => Date.now() / 1000;

/** Rejects with `onTimeout()` if `work` has not settled after `ms`; `work` itself goes on. */
export function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

export const randomHex = (bytes: number): string => crypto.randomBytes(bytes).toString('hex');

/**
 * The item at `index` of an array the caller's own bounds keep it inside (a loop counter, a
 * binary search); a RangeError instead of a silent `undefined` if that reasoning is ever wrong.
 */
export function at<T>(items: ArrayLike<T>, index: number): T {
  const item = items[index];
  if (item === undefined) throw new RangeError(`No item at ${index} of ${items.length}`);
  return item;
}

/**
 * The property `key` of a value parsed from JSON (or any value of unknown shape): undefined when
 * the value is not an object or has no such property. Callers then check the property's type.
 */
export function prop(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || !(key in value)) return undefined;
  const found: unknown = Reflect.get(value, key);
  return found;
}
