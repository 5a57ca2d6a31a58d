/**
 * Faults for a waker's runtime driver in tests, the process driver's counterpart of
 * `docker-faults.ts`: `wrap(driver)` gives the same driver whose chosen calls (`start`, `stop`,
 * `findExisting`, `pause`, `unpause`) fail, are delayed or hang a set number of times. A failed
 * call never reaches the driver, so a failed stop leaves its worker running, as an engine that
 * answers 500 does; a delayed call reaches it late, so a start past the waker's deadline still
 * starts its worker.
 */

export type DriverOp = 'start' | 'stop' | 'findExisting' | 'pause' | 'unpause';
export const DRIVER_OPS: readonly DriverOp[] = [
  'start',
  'stop',
  'findExisting',
  'pause',
  'unpause',
];

export type DriverFaultAction =
  { kind: 'fail'; message?: string } | { kind: 'delay'; ms: number } | { kind: 'hang' };

export interface DriverFaultRule {
  op: DriverOp;
  /** Only calls for this persona (the spec's or the handle's); all when absent. */
  persona?: string;
  times: number;
  action: DriverFaultAction;
}

export interface DriverCall {
  op: DriverOp;
  persona: string | null;
  outcome: 'ok' | 'failed' | 'injected-fail' | 'delayed' | 'hung';
  at: number;
}

interface Armed {
  rule: DriverFaultRule;
  left: number;
}

/** The persona a driver call is about: a start's spec names it, a handle carries it. */
function personaOf(args: unknown[]): string | null {
  const first = args[0];
  if (typeof first !== 'object' || first === null) return null;
  if ('persona' in first && typeof first.persona === 'string') return first.persona;
  if ('name' in first && typeof first.name === 'string') return first.name;
  return null;
}

const isOp = (name: string | symbol): name is DriverOp =>
  typeof name === 'string' && (DRIVER_OPS as readonly string[]).includes(name);

export class DriverFaults {
  readonly calls: DriverCall[] = [];
  private rules: Armed[] = [];
  /** Hung calls, released (never resolved) by `clear`, so a test's end leaves no timer. */
  private hung = 0;

  /** Arms a rule for the next `times` matching calls. */
  inject(rule: DriverFaultRule): void {
    this.rules.push({ rule, left: rule.times });
  }

  /** Disarms every rule: from now on each call reaches the driver at once. */
  clear(): void {
    this.rules = [];
  }

  get hanging(): number {
    return this.hung;
  }

  /** The driver with its calls under the armed rules; everything else passes through. */
  wrap<D extends object>(inner: D): D {
    return new Proxy(inner, {
      get: (target, name, receiver): unknown => {
        const value: unknown = Reflect.get(target, name, receiver);
        if (!isOp(name) || typeof value !== 'function') return value;
        return (...args: unknown[]): Promise<unknown> =>
          this.call(name, args, () => Promise.resolve(value.apply(target, args)));
      },
    });
  }

  private take(op: DriverOp, persona: string | null): DriverFaultAction | null {
    const armed = this.rules.find(
      (r) => r.left > 0 && r.rule.op === op && (!r.rule.persona || r.rule.persona === persona),
    );
    if (!armed) return null;
    armed.left -= 1;
    return armed.rule.action;
  }

  private async call(op: DriverOp, args: unknown[], run: () => Promise<unknown>): Promise<unknown> {
    const persona = personaOf(args);
    const action = this.take(op, persona);
    const note = (outcome: DriverCall['outcome']): void => {
      this.calls.push({ op, persona, outcome, at: Date.now() });
    };
    if (action?.kind === 'fail') {
      note('injected-fail');
      throw new Error(action.message ?? `injected: ${op} failed`);
    }
    if (action?.kind === 'hang') {
      note('hung');
      this.hung += 1;
      return new Promise<never>(() => undefined);
    }
    if (action?.kind === 'delay') {
      note('delayed');
      // Time itself is tested: an injected delay.
      await new Promise((r) => setTimeout(r, action.ms));
    }
    try {
      const value = await run();
      note('ok');
      return value;
    } catch (err) {
      note('failed');
      throw err;
    }
  }
}
