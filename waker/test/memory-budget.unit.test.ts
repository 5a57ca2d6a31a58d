import type { MetricsSample } from '@persona-browser/contracts';
import { createLogger } from '@persona-browser/service-kit';
import { Activity } from '../src/persona/activity';
import type { BudgetPersona } from '../src/memory/budget';
import { BudgetRefusal, MemoryBudget } from '../src/memory/budget';

const running = (name: string): BudgetPersona => ({
  name,
  spec: { mode: 'sleepy' },
  state: 'running',
  node: null,
  activity: new Activity(),
  keepsWorker: () => false,
  sleepForMemory: async () => true,
});

const sample = (instances: Record<string, number | null>): MetricsSample => ({
  ts: 0,
  system: { cpu_pct: 0, mem_total_mb: 10_000, mem_used_mb: 0, load1: 0, load5: 0, temp_c: null },
  instances: Object.fromEntries(
    Object.entries(instances).map(([n, mb]) => [
      n,
      mb === null ? null : { pid: 1, procs: 1, cpu_pct: 0, rss_mb: mb },
    ]),
  ),
});

describe('memory budget bookkeeping', () => {
  test("a persona's memory is the peak of its current awake run; a new run starts afresh", () => {
    const budget = new MemoryBudget({
      settings: { limitMb: null, maxAwake: null, defaultMb: 500, minAvailableMb: 0 },
      personas: () => [running('a')],
      logger: createLogger({ secrets: [], level: 'error' }),
    });
    // Before any sample the budget is unknown (no gauge), not 0.
    expect(budget.usage()).toEqual([{ node: '', limitMb: Infinity, usedMb: 0 }]);
    budget.observe(sample({ a: 300 }));
    budget.observe(sample({ a: 450 }));
    budget.observe(sample({ a: 400 }));
    // The default budget is 80 % of the host's memory.
    expect(budget.usage()).toEqual([{ node: '', limitMb: 8000, usedMb: 450 }]);
    budget.observe(sample({ a: null }));
    budget.observe(sample({ a: 200 }));
    expect(budget.usage()).toEqual([{ node: '', limitMb: 8000, usedMb: 200 }]);
  });
});

describe('memory budget admission', () => {
  const settings = { limitMb: 500, maxAwake: null, defaultMb: 400, minAvailableMb: 0 };
  const waking = (): BudgetPersona => ({ ...running('new'), state: 'waking' });

  test('an idle persona is put to sleep for a wake; one that turns busy first makes a refusal, not a hang', async () => {
    const slept: string[] = [];
    let answer = true;
    const old: BudgetPersona = {
      ...running('old'),
      sleepForMemory: async () => {
        slept.push('old');
        return answer;
      },
    };
    const budget = new MemoryBudget({
      settings,
      personas: () => [old, waking()],
      logger: createLogger({ secrets: [], level: 'error' }),
    });
    budget.observe(sample({ old: 400, new: null }));
    await expect(budget.admit('new')).resolves.toBeUndefined();
    expect(slept).toEqual(['old']);
    // Every time the plan picks it, it has become busy (a request came in, a restart queued).
    answer = false;
    slept.length = 0;
    await expect(budget.admit('new')).rejects.toThrow(BudgetRefusal);
    await expect(budget.admit('new')).rejects.toThrow('personas became busy');
    expect(slept.length).toBeGreaterThanOrEqual(3);
  });
});

describe('memory budget and depths of sleep', () => {
  test('a persona asleep with its worker kept (paused or light) holds memory: the least recently used is put to deep sleep first, one in use never', async () => {
    const slept: string[] = [];
    const kept = (name: string, lastActiveMs: number): BudgetPersona => {
      const activity = new Activity();
      jest.spyOn(activity, 'lastActiveMs').mockReturnValue(lastActiveMs);
      return {
        ...running(name),
        state: 'sleeping',
        activity,
        keepsWorker: () => true,
        sleepForMemory: async () => {
          slept.push(name);
          return true;
        },
      };
    };
    const older = kept('older', 1_000);
    const newer = kept('newer', 2_000);
    const busy = kept('busy', 0);
    busy.activity.socketOpened();
    const budget = new MemoryBudget({
      settings: { limitMb: 700, maxAwake: null, defaultMb: 300, minAvailableMb: 0 },
      personas: () => [newer, busy, older, { ...running('new'), state: 'waking' }],
      logger: createLogger({ secrets: [], level: 'error' }),
    });
    budget.observe(sample({ older: 200, newer: 200, busy: 200, new: null }));
    // 600 held of 700: the wake (300 by default) needs one of them to sleep deep.
    await expect(budget.admit('new')).resolves.toBeUndefined();
    expect(slept).toEqual(['older']);
    // Control: with no worker kept, a sleeping persona holds nothing and nothing is put to sleep.
    slept.length = 0;
    const none = new MemoryBudget({
      settings: { limitMb: 700, maxAwake: null, defaultMb: 300, minAvailableMb: 0 },
      personas: () => [
        { ...older, keepsWorker: () => false },
        { ...newer, keepsWorker: () => false },
        { ...running('new'), state: 'waking' },
      ],
      logger: createLogger({ secrets: [], level: 'error' }),
    });
    none.observe(sample({ older: null, newer: null, new: null }));
    await expect(none.admit('new')).resolves.toBeUndefined();
    expect(slept).toEqual([]);
  });
});
