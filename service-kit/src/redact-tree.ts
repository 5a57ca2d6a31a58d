/**
 * The walk both redactions share (the logger's `redact`, `SecretValues.redactAll`): a copy of a
 * value with every string passed through `text` and every field through `field`, at any depth.
 *
 * It is iterative, so a chain nested a million deep is no stack overflow; past MAX_DEPTH a
 * value is replaced (never passed through unredacted), which also keeps the copy shallow
 * enough for the JSON serializers downstream (they recurse). An object met again inside itself
 * is replaced with CIRCULAR; one met twice side by side (a shared reference) is copied once, and
 * that copy is reused only where it still fits within MAX_DEPTH. Past `maxNodes` values, the
 * rest are replaced with TOO_LARGE.
 */

/** Nesting far beyond any real log line or error field: a value deeper is replaced. */
export const MAX_DEPTH = 100;
export const TOO_DEEP = '[redacted: nested too deep]';
export const CIRCULAR = '[circular]';
export const TOO_LARGE = '[redacted: too large]';

export interface RedactRules {
  /** A string as it may be shown. */
  text(value: string): string;
  /** A field's value replaced outright (a secret-named field), or undefined: walk it. */
  field?(key: string, value: unknown): unknown;
  /** What an object is shown as before it is walked (an Error as its name and message). */
  shape?(value: object): unknown;
  /** Values copied at most (objects, arrays and leaves alike); unbounded when absent. */
  maxNodes?: number;
}

type Container = Record<string, unknown> | unknown[];

/** One value to copy into `into[key]`. */
interface Visit {
  value: unknown;
  depth: number;
  into: Container;
  key: string | number;
}

/** The end of an object's walk: it is no longer inside the one being walked. */
interface Leave {
  leave: object;
  copy: Container;
}

function put(into: Container, key: string | number, value: unknown): void {
  if (!Array.isArray(into)) into[key] = value;
  else if (typeof key === 'number') into[key] = value;
}

export function redactTree(root: unknown, rules: RedactRules): unknown {
  const holder: unknown[] = [undefined];
  const inside = new Set<object>();
  const copied = new Map<object, Container>();
  /** Each copy made: the levels below it. */
  const heights = new Map<object, number>();
  const stack: Array<Visit | Leave> = [{ value: root, depth: 0, into: holder, key: 0 }];
  let budget = rules.maxNodes ?? Infinity;
  for (let task = stack.pop(); task !== undefined; task = stack.pop()) {
    if ('leave' in task) {
      inside.delete(task.leave);
      copied.set(task.leave, task.copy);
      let height = 0;
      for (const v of Object.values(task.copy)) {
        if (typeof v === 'object' && v !== null)
          height = Math.max(height, (heights.get(v) ?? 0) + 1);
      }
      heights.set(task.copy, height);
      continue;
    }
    const { depth, into, key } = task;
    if (budget-- <= 0) {
      put(into, key, TOO_LARGE);
      continue;
    }
    let value = task.value;
    if (typeof value === 'string') {
      put(into, key, rules.text(value));
      continue;
    }
    if (value === null || typeof value !== 'object') {
      put(into, key, value);
      continue;
    }
    if (inside.has(value)) {
      put(into, key, CIRCULAR);
      continue;
    }
    const earlier = copied.get(value);
    if (earlier !== undefined) {
      const fits = depth + (heights.get(earlier) ?? 0) < MAX_DEPTH;
      put(into, key, fits ? earlier : TOO_DEEP);
      continue;
    }
    if (depth >= MAX_DEPTH) {
      put(into, key, TOO_DEEP);
      continue;
    }
    const source = value;
    if (rules.shape) {
      value = rules.shape(value);
      if (value === null || typeof value !== 'object') {
        stack.push({ value, depth, into, key });
        continue;
      }
    }
    const copy: Container = Array.isArray(value) ? new Array<unknown>(value.length) : {};
    put(into, key, copy);
    inside.add(source);
    // Popped after every child: until then, meeting `source` again is a cycle.
    stack.push({ leave: source, copy });
    const entries: Array<[string | number, unknown]> = Array.isArray(value)
      ? value.map((v, i): [number, unknown] => [i, v])
      : Object.entries(value);
    // The copy's fields in the source's order, whatever order they are filled in.
    if (!Array.isArray(copy)) for (const [k] of entries) copy[k] = undefined;
    // Pushed in reverse, so that fields are copied (and the budget spent) in their order.
    for (const [k, v] of entries.reverse()) {
      const replaced = typeof k === 'string' ? rules.field?.(k, v) : undefined;
      if (replaced !== undefined) put(copy, k, replaced);
      else stack.push({ value: v, depth: depth + 1, into: copy, key: k });
    }
  }
  return holder[0];
}
