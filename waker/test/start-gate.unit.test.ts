import { StartGate, StartTurnRefused, coresOfNodes } from '../src/persona/start-gate';

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

  it('each node has its own lane at its own concurrency: a full node holds back no other', async () => {
    const cores: Record<string, number> = { w1: 1, w2: 3 };
    const gate = new StartGate({
      concurrency: 2,
      nodeConcurrency: (node) => cores[node] ?? null,
      queueMs: 60_000,
    });
    const granted: string[] = [];
    const ends = new Map<string, () => void>();
    const ask = (name: string, node: string): Promise<void> =>
      gate.turn(name, node).then((end) => {
        granted.push(name);
        ends.set(name, end);
      });
    const asked = [
      ask('a1', 'w1'),
      ask('a2', 'w1'),
      ask('b1', 'w2'),
      ask('b2', 'w2'),
      ask('b3', 'w2'),
      ask('b4', 'w2'),
      // A node whose cores are not known takes the gate's concurrency.
      ask('c1', 'w3'),
      ask('c2', 'w3'),
      ask('c3', 'w3'),
    ];
    await new Promise((r) => setImmediate(r));
    expect(granted.sort()).toEqual(['a1', 'b1', 'b2', 'b3', 'c1', 'c2']);
    expect([gate.running, gate.waiting]).toEqual([6, 3]);
    expect([gate.concurrency('w1'), gate.concurrency('w2'), gate.concurrency('w3')]).toEqual([
      1, 3, 2,
    ]);
    // A turn ended on w2 goes to w2's next, not to w1's.
    ends.get('b1')?.();
    await new Promise((r) => setImmediate(r));
    expect(granted).toContain('b4');
    expect(granted).not.toContain('a2');
    ends.get('a1')?.();
    await new Promise((r) => setImmediate(r));
    expect(granted).toContain('a2');
    // A node that gains cores hands the new turns out at the next end there.
    cores.w3 = 3;
    ends.get('c1')?.();
    await Promise.all(asked.slice(0, 6));
    await asked[8];
    expect(granted).toContain('c3');
    for (const end of ends.values()) end();
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });

  it('a refusal names the node, its concurrency and the queue ahead there', async () => {
    const gate = new StartGate({ concurrency: 5, nodeConcurrency: () => 1, queueMs: 0 });
    const end = await gate.turn('a', 'w1');
    const refused = await gate.turn('b', 'w1').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StartTurnRefused);
    expect((refused as Error).message).toMatch(
      /no start turn for persona b within 0 s: 1 workers are starting on node w1 \(at most 1 at once\) and 0 wait before it/,
    );
    // The other node has room.
    const other = await gate.turn('c', 'w2');
    other();
    end();
  });

  it('unset, each node of a cluster starts as many as its cores; set, the setting holds everywhere', () => {
    const nodes = [
      { hostname: 'w1', cpus: 8 },
      { hostname: 'w2', cpus: 0 },
    ];
    const own = coresOfNodes(null, () => nodes);
    expect([own('w1'), own('w2'), own('gone'), own('')]).toEqual([8, null, null, null]);
    const gate = new StartGate({ concurrency: 2, nodeConcurrency: own, queueMs: 0 });
    expect([gate.concurrency('w1'), gate.concurrency('w2'), gate.concurrency()]).toEqual([8, 2, 2]);
    const set = coresOfNodes(3, () => nodes);
    expect([set('w1'), set('')]).toEqual([null, null]);
  });

  it('rejects a concurrency below one', () => {
    expect(() => new StartGate({ concurrency: 0, queueMs: 1 })).toThrow(/from 1/);
  });
});
