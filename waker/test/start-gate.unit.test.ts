import { StartGate, StartTurnRefused } from '../src/persona/start-gate';

/** Whether `p` has settled by the time the queued callbacks ran (no timer involved). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('StartGate', () => {
  afterEach(() => jest.useRealTimers());

  it('gives at most `concurrency` turns at once, the rest in the order they asked', async () => {
    const gate = new StartGate({ concurrency: 2, queueMs: 60_000 });
    const order: string[] = [];
    const ends = new Map<string, () => void>();
    const ask = (name: string): Promise<void> =>
      gate.turn(name).then((end) => {
        order.push(name);
        ends.set(name, end);
      });
    const asked = ['a', 'b', 'c', 'd', 'e'].map(ask);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['a', 'b']);
    expect(gate.running).toBe(2);
    expect(gate.waiting).toBe(3);
    // b ends first: the first waiting (c) gets its turn, never d or e.
    ends.get('b')?.();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['a', 'b', 'c']);
    expect(gate.running).toBe(2);
    // Ending a turn twice hands nothing on twice.
    ends.get('b')?.();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['a', 'b', 'c']);
    ends.get('a')?.();
    ends.get('c')?.();
    await Promise.all(asked);
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    ends.get('d')?.();
    ends.get('e')?.();
    expect(gate.running).toBe(0);
    expect(gate.waiting).toBe(0);
  });

  it('a newcomer never jumps the queue, even when a turn is free for a moment', async () => {
    const gate = new StartGate({ concurrency: 1, queueMs: 60_000 });
    const endA = await gate.turn('a');
    const b = gate.turn('b');
    endA();
    // b was waiting: the freed turn is b's, and c waits behind it.
    const c = gate.turn('c');
    expect(await settled(b)).toBe(true);
    expect(await settled(c)).toBe(false);
    (await b)();
    (await c)();
  });

  it('refuses a start whose turn does not come within the queue wait, saying why and when', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'performance'] });
    const gate = new StartGate({ concurrency: 1, queueMs: 2_000 });
    const endA = await gate.turn('a');
    const b = gate.turn('b');
    const refusedB = b.catch((err: unknown) => err);
    jest.advanceTimersByTime(1_999);
    expect(await settled(b)).toBe(false);
    jest.advanceTimersByTime(1);
    const err = await refusedB;
    expect(err).toBeInstanceOf(StartTurnRefused);
    const refusal = err as StartTurnRefused;
    expect(refusal.message).toMatch(/no start turn for persona b within 2 s/);
    expect(refusal.message).toMatch(/1 workers are starting \(at most 1 at once\)/);
    expect(refusal.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(gate.waiting).toBe(0);
    // The refused one left the queue: the next turn goes to whoever asks next.
    endA();
    expect(gate.running).toBe(0);
  });

  it('with no queue wait, a start beyond the concurrency is refused at once', async () => {
    const gate = new StartGate({ concurrency: 1, queueMs: 0 });
    const endA = await gate.turn('a');
    await expect(gate.turn('b')).rejects.toBeInstanceOf(StartTurnRefused);
    endA();
    (await gate.turn('c'))();
  });

  it('closing refuses every waiting start and every later one', async () => {
    const gate = new StartGate({ concurrency: 1, queueMs: 60_000 });
    const endA = await gate.turn('a');
    const b = gate.turn('b');
    gate.close('the waker is shutting down');
    await expect(b).rejects.toThrow('the waker is shutting down');
    await expect(gate.turn('c')).rejects.toThrow('the waker is shutting down');
    endA();
    expect(gate.waiting).toBe(0);
  });

  it('says when to retry from the queue ahead and how long turns are held', async () => {
    const gate = new StartGate({ concurrency: 2, queueMs: 60_000 });
    const first = gate.retryAfterS();
    const ends = await Promise.all([gate.turn('a'), gate.turn('b')]);
    const queued = [gate.turn('c'), gate.turn('d'), gate.turn('e')];
    // Three waiting on two turns: two rounds ahead of a newcomer, more than with none.
    expect(gate.retryAfterS()).toBeGreaterThan(first);
    gate.close('done');
    for (const q of queued) await q.catch(() => undefined);
    for (const end of ends) end();
  });

  it('rejects a concurrency below one', () => {
    expect(() => new StartGate({ concurrency: 0, queueMs: 1 })).toThrow(/from 1/);
  });
});
