import { LeaseTable } from '../src/browser/leases';
import { TimedMutex } from '../src/browser/mutex';

describe('LeaseTable with a controlled clock', () => {
  let now = 1_000_000;
  const table = new LeaseTable(() => now);

  test('a lease lasts ttl after the last use, renewed by check and touch', () => {
    const { token } = table.acquire('p', undefined, 10);
    now += 9_000;
    expect(table.check('p', token)).toBe(true);
    now += 9_000;
    expect(table.isLeased('p')).toBe(true);
    table.touch('p', token);
    now += 9_999;
    expect(table.isLeased('p')).toBe(true);
    now += 1;
    expect(table.isLeased('p')).toBe(false);
    expect(table.check('p', undefined)).toBe(false);
  });

  test('wrong or missing tokens are 423; an unleased page passes without one', () => {
    const { token } = table.acquire('q', undefined, 5);
    expect(() => table.check('q', undefined)).toThrow(expect.objectContaining({ status: 423 }));
    expect(() => table.check('q', token + 'x')).toThrow(expect.objectContaining({ status: 423 }));
    expect(() => table.acquire('q', 'other', 5)).toThrow(expect.objectContaining({ status: 423 }));
    expect(() => table.release('q', 'other')).toThrow(expect.objectContaining({ status: 423 }));
    table.release('q', token);
    expect(table.check('q', undefined)).toBe(false);
  });

  test('tokens carry 128 random bits', () => {
    const tokens = new Set(
      Array.from({ length: 200 }, (_, i) => table.acquire(`t${i}`, undefined, 1).token),
    );
    expect(tokens.size).toBe(200);
    for (const t of tokens) expect(t).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('LeaseTable watcher', () => {
  test('hears each lease taken and how it ended; a renewal is not a new lease', () => {
    let now = 0;
    const table = new LeaseTable(() => now);
    const heard: string[] = [];
    table.watch((e) =>
      heard.push(e.type === 'start' ? `start ${e.pageId}` : `${e.why} ${e.pageId}`),
    );
    const a = table.acquire('a', undefined, 10).token;
    table.acquire('a', a, 20);
    table.release('a', a);
    table.acquire('b', undefined, 1);
    now += 999;
    expect(table.isLeased('b')).toBe(true);
    now += 1;
    expect(table.isLeased('b')).toBe(false);
    table.acquire('c', undefined, 10);
    table.acquire('d', undefined, 10);
    table.forget('c');
    table.clear();
    // Control: nothing is heard for a page that was never leased.
    table.forget('never');
    expect(heard).toEqual([
      'start a',
      'released a',
      'start b',
      'expired b',
      'start c',
      'start d',
      'closed c',
      'closed d',
    ]);
  });
});

describe('TimedMutex', () => {
  test('serves waiters in order and times out a waiter past its deadline', async () => {
    const m = new TimedMutex();
    const order: number[] = [];
    const r1 = await m.acquire(100, () => new Error('t'));
    const p2 = m.acquire(1000, () => new Error('t')).then((r) => (order.push(2), r));
    const p3 = m.acquire(1000, () => new Error('t')).then((r) => (order.push(3), r));
    const late = m.acquire(20, () => new Error('too late'));
    await expect(late).rejects.toThrow('too late');
    r1();
    (await p2)();
    (await p3)();
    expect(order).toEqual([2, 3]);
    expect(m.locked).toBe(false);
  });
});
