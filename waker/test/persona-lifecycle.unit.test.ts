import { PERSONA_STATES } from '@persona-browser/contracts';
import type { PersonaState } from '@persona-browser/contracts';
import { PERSONA_EVENTS, PersonaLifecycle, isRefusal, next } from '../src/persona/lifecycle';
import type { PersonaEvent } from '../src/persona/lifecycle';
import { RestartBackoff } from '../src/persona/backoff';

/** Every transition a persona may make, written out: [from, event, to]. */
const ALLOWED: Array<[PersonaState, PersonaEvent, PersonaState]> = [
  ['sleeping', 'wake', 'waking'],
  ['crashed', 'wake', 'waking'],
  ['waking', 'wake', 'waking'],
  ['waking', 'ready', 'running'],
  ['sleeping', 'resume', 'running'],
  ['running', 'pause', 'sleeping'],
  ['running', 'stop', 'stopping'],
  ['sleeping', 'stop', 'stopping'],
  ['crashed', 'stop', 'stopping'],
  ['stopping', 'stopped', 'sleeping'],
  ['sleeping', 'sleep', 'sleeping'],
  ['crashed', 'sleep', 'sleeping'],
  ['waking', 'sleep', 'sleeping'],
  ['waking', 'fail', 'crashed'],
  ['running', 'fail', 'crashed'],
  ['sleeping', 'fail', 'crashed'],
  ['stopping', 'fail', 'crashed'],
  ['crashed', 'fail', 'crashed'],
  ['running', 'exit', 'sleeping'],
  ['sleeping', 'exit', 'sleeping'],
  ['waking', 'adopt', 'running'],
  ['sleeping', 'adopt', 'running'],
  ['waking', 'adopt-paused', 'sleeping'],
  ['sleeping', 'adopt-paused', 'sleeping'],
  ...PERSONA_STATES.map((s): [PersonaState, PersonaEvent, PersonaState] => [
    s,
    'misconfigured',
    'crashed',
  ]),
];

describe('the persona transition table', () => {
  test.each(ALLOWED)('%s --%s--> %s', (from, event, to) => {
    expect(next(from, event)).toBe(to);
  });

  const refused = PERSONA_STATES.flatMap((state) =>
    PERSONA_EVENTS.filter((event) => !ALLOWED.some(([f, e]) => f === state && e === event)).map(
      (event): [PersonaState, PersonaEvent] => [state, event],
    ),
  );

  test('every other pair of state and event is refused', () => {
    // A table that allowed more (or less) than the list above would change this count too.
    expect(refused.length + ALLOWED.length).toBe(PERSONA_STATES.length * PERSONA_EVENTS.length);
    for (const [state, event] of refused) expect(isRefusal(next(state, event))).toBe(true);
  });

  test.each(refused)('while %s, %s is refused with a reason naming both', (state, event) => {
    const result = next(state, event);
    if (!isRefusal(result)) throw new Error(`${event} was allowed while ${state}`);
    expect(result.refused).toContain(`${event} is not allowed while ${state}`);
  });

  test('a refusal says in which states the event is allowed', () => {
    expect(next('running', 'ready')).toEqual({
      refused: 'ready is not allowed while running (only while waking)',
    });
    expect(next('stopping', 'wake')).toEqual({
      refused: 'wake is not allowed while stopping (only while sleeping, crashed, waking)',
    });
  });
});

describe('PersonaLifecycle', () => {
  test('changes state only as the table allows, and says so once per change', () => {
    const changes: Array<[PersonaState, string | null]> = [];
    const life = new PersonaLifecycle('sleeping', (s, e) => changes.push([s, e]));
    life.apply('wake');
    life.apply('fail', 'start failed: no image');
    expect(life.state).toBe('crashed');
    expect(life.error).toBe('start failed: no image');
    expect(() => life.apply('ready')).toThrow(
      'persona lifecycle: ready is not allowed while crashed (only while waking)',
    );
    expect(life.state).toBe('crashed');
    life.apply('sleep', null);
    expect(changes).toEqual([
      ['waking', null],
      ['crashed', 'start failed: no image'],
      ['sleeping', null],
    ]);
    expect(life.error).toBeNull();
  });

  test('a transition to the same state keeps its start time and is not reported', async () => {
    const changes: PersonaState[] = [];
    const life = new PersonaLifecycle('waking', (s) => changes.push(s));
    const since = life.since;
    // Time itself is tested: a later time stamp.
    await new Promise((r) => setTimeout(r, 5));
    life.apply('wake');
    expect(life.since).toBe(since);
    expect(changes).toEqual([]);
    life.apply('ready');
    expect(life.since.getTime()).toBeGreaterThan(since.getTime());
  });
});

describe('RestartBackoff', () => {
  test('each failure doubles the wait up to a minute; a worker up a minute resets it', () => {
    const backoff = new RestartBackoff();
    const delays: number[] = [];
    for (let i = 0; i < 9; i++) {
      backoff.failed();
      delays.push(backoff.delayMs());
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    backoff.settle(0, 60_000);
    expect(backoff.failures).toBe(9);
    backoff.settle(0, 60_001);
    expect(backoff.failures).toBe(0);
  });

  test('one restart waits at a time, and a cancelled one never runs', async () => {
    const backoff = new RestartBackoff();
    let runs = 0;
    expect(backoff.schedule(() => (runs += 1))).toBe(500);
    expect(backoff.schedule(() => (runs += 1))).toBeNull();
    backoff.cancel();
    // Time itself is tested: nothing runs past the cancelled delay.
    await new Promise((r) => setTimeout(r, 700));
    expect(runs).toBe(0);
  });
});
