import type { PlanInput, PlanPersona } from '../src/memory/plan';
import { estimateMb, planWake } from '../src/memory/plan';

/** An idle sleepy persona, awake and running, measured at 400 MB, last active at `lastActiveMs`. */
const p = (name: string, over: Partial<PlanPersona> = {}): PlanPersona => ({
  name,
  sleepy: true,
  awake: true,
  running: true,
  busy: null,
  lastActiveMs: 0,
  measuredMb: 400,
  node: null,
  ...over,
});

const asleep = (name: string, over: Partial<PlanPersona> = {}): PlanPersona =>
  p(name, { awake: false, running: false, ...over });

const input = (personas: PlanPersona[], over: Partial<PlanInput> = {}): PlanInput => ({
  personas,
  waking: 'new',
  budget: { limitMb: 1000, maxAwake: null, defaultMb: 500 },
  host: null,
  ...over,
});

describe('memory plan', () => {
  test('a wake that fits puts nobody to sleep', () => {
    const plan = planWake(input([p('a'), asleep('new')]));
    expect(plan).toMatchObject({ sleep: [], refused: null, estimateMb: 400, usedMb: 800 });
  });

  test('the least recently used idle sleepy persona sleeps first, and only as many as needed', () => {
    const personas = [
      p('recent', { lastActiveMs: 3000 }),
      p('oldest', { lastActiveMs: 1000 }),
      p('middle', { lastActiveMs: 2000 }),
      asleep('new'),
    ];
    // 1200 held + 400: 600 over a 1000 budget, so two of 400 go, the two least recent.
    expect(planWake(input(personas))).toMatchObject({
      sleep: ['oldest', 'middle'],
      refused: null,
    });
  });

  test('a persona with a live view open, a request in flight or always-on is kept', () => {
    const personas = [
      p('viewed', { lastActiveMs: 1, busy: 'live view open' }),
      p('asked', { lastActiveMs: 2, busy: 'request in flight' }),
      p('base', { lastActiveMs: 3, sleepy: false }),
      p('idle', { lastActiveMs: 4 }),
      asleep('new'),
    ];
    const plan = planWake(
      input(personas, { budget: { limitMb: 1600, maxAwake: null, defaultMb: 500 } }),
    );
    expect(plan).toMatchObject({ sleep: ['idle'], refused: null });
  });

  test('nothing to free: a refusal that names the budget, its MB and what holds it', () => {
    const personas = [
      p('viewed', { busy: 'live view open' }),
      p('asked', { busy: 'request in flight', measuredMb: 450 }),
      asleep('new'),
    ];
    const plan = planWake(input(personas));
    expect(plan.sleep).toEqual([]);
    expect(plan.refused).toContain('FLEET_MEMORY_LIMIT_MB=1000');
    expect(plan.refused).toContain('850 MB in use');
    expect(plan.refused).toContain('viewed 400 MB (live view open)');
    expect(plan.refused).toContain('asked 450 MB (request in flight)');
  });

  test('a persona starting or stopping holds memory but is not put to sleep', () => {
    const personas = [p('starting', { running: false, measuredMb: 700 }), asleep('new')];
    expect(planWake(input(personas)).refused).toContain('starting 700 MB (starting)');
  });

  test('the maximum of awake personas', () => {
    const personas = [p('a', { lastActiveMs: 5 }), p('b', { lastActiveMs: 1 }), asleep('new')];
    const budget = { limitMb: 100_000, maxAwake: 2, defaultMb: 500 };
    expect(planWake(input(personas, { budget }))).toMatchObject({ sleep: ['b'], refused: null });
    const busy = personas.map((q) => (q.awake ? { ...q, busy: 'request in flight' } : q));
    expect(planWake(input(busy, { budget })).refused).toContain('FLEET_MAX_AWAKE=2 is reached');
    // The control: without the maximum, the same fleet wakes.
    const open = { ...budget, maxAwake: null };
    expect(planWake(input(busy, { budget: open }))).toMatchObject({ sleep: [], refused: null });
  });

  test('a host short of memory frees in the same order, or refuses naming the threshold', () => {
    const personas = [p('a', { lastActiveMs: 2 }), p('b', { lastActiveMs: 1 }), asleep('new')];
    const big = { limitMb: 100_000, maxAwake: null, defaultMb: 500 };
    // 1000 available less 400 leaves 600, under 900: 300 must go, one persona of 400.
    const host = { availableMb: 1000, minAvailableMb: 900 };
    expect(planWake(input(personas, { budget: big, host }))).toMatchObject({
      sleep: ['b'],
      refused: null,
    });
    const short = { availableMb: 500, minAvailableMb: 5000 };
    const refused = planWake(input(personas, { budget: big, host: short }));
    expect(refused.refused).toContain('HOST_MEMORY_MIN_AVAILABLE_MB=5000');
    expect(refused.sleep).toEqual(['b', 'a']);
    // The control: a host with room wakes it without a sleep.
    const roomy = { availableMb: 20_000, minAvailableMb: 256 };
    expect(planWake(input(personas, { budget: big, host: roomy })).sleep).toEqual([]);
  });

  test('the budget is per node: personas on another node neither count nor sleep', () => {
    const personas = [
      p('far', { node: 'w2', measuredMb: 900 }),
      p('near', { node: 'w1', measuredMb: 100 }),
      asleep('new', { node: 'w1' }),
    ];
    expect(planWake(input(personas))).toMatchObject({ sleep: [], refused: null, usedMb: 500 });
  });

  test('the estimate: its own last measure, else the fleet median, else the default', () => {
    expect(estimateMb(p('x', { measuredMb: 321 }), 700, 500)).toBe(321);
    expect(estimateMb(p('x', { measuredMb: null }), 700, 500)).toBe(700);
    expect(estimateMb(p('x', { measuredMb: null }), null, 500)).toBe(500);
    // The median of the measured, not pulled by one heavy persona.
    const personas = [
      p('a', { measuredMb: 300, busy: 'request in flight' }),
      p('b', { measuredMb: 310, busy: 'request in flight' }),
      p('heavy', { measuredMb: 3000, awake: false, running: false }),
      asleep('new', { measuredMb: null }),
    ];
    const budget = { limitMb: 100_000, maxAwake: null, defaultMb: 500 };
    expect(planWake(input(personas, { budget })).estimateMb).toBe(310);
  });
});
