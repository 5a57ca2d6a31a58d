import type { LadderSettings, LadderView } from '../src/persona/ladder';
import { deeper, ladderStep } from '../src/persona/ladder';

const ALL: LadderSettings = { pauseSeconds: 30, canPause: true, lightSleepSeconds: 600 };
const idle = (over: Partial<LadderView>): LadderView => ({
  sleepy: true,
  idleTimeoutS: 60,
  busy: false,
  serving: true,
  kept: null,
  idleMs: 0,
  atDepthMs: 0,
  ...over,
});

describe('the idle ladder', () => {
  test('each rung comes after its own time: awake, paused, light, deep', () => {
    expect(ladderStep(idle({ idleMs: 59_999 }), ALL)).toBeNull();
    expect(ladderStep(idle({ idleMs: 60_000 }), ALL)).toBe('paused');
    const paused = idle({ serving: false, kept: 'paused' });
    expect(ladderStep({ ...paused, atDepthMs: 29_999 }, ALL)).toBeNull();
    expect(ladderStep({ ...paused, atDepthMs: 30_000 }, ALL)).toBe('light');
    const light = idle({ serving: false, kept: 'light' });
    expect(ladderStep({ ...light, atDepthMs: 599_999 }, ALL)).toBeNull();
    expect(ladderStep({ ...light, atDepthMs: 600_000 }, ALL)).toBe('deep');
  });

  test('a rung that does not apply is skipped', () => {
    const noPause = { ...ALL, canPause: false };
    expect(ladderStep(idle({ idleMs: 60_000 }), noPause)).toBe('light');
    expect(ladderStep(idle({ idleMs: 60_000 }), { ...ALL, pauseSeconds: 0 })).toBe('light');
    expect(ladderStep(idle({ idleMs: 60_000 }), { ...noPause, lightSleepSeconds: 0 })).toBe('deep');
    const paused = idle({ serving: false, kept: 'paused', atDepthMs: 30_000 });
    expect(ladderStep(paused, { ...ALL, lightSleepSeconds: 0 })).toBe('deep');
    expect(deeper(null, ALL)).toBe('paused');
    expect(deeper('paused', ALL)).toBe('light');
    expect(deeper('light', ALL)).toBe('deep');
  });

  test('nothing moves while busy, for an always-on persona awake, or without an idle time', () => {
    expect(ladderStep(idle({ idleMs: 1e9, busy: true }), ALL)).toBeNull();
    expect(ladderStep(idle({ idleMs: 1e9, sleepy: false }), ALL)).toBeNull();
    expect(ladderStep(idle({ idleMs: 1e9, idleTimeoutS: null }), ALL)).toBeNull();
    expect(
      ladderStep(idle({ serving: false, kept: 'light', atDepthMs: 1e9, busy: true }), ALL),
    ).toBeNull();
  });

  test('a depth the API asked for, whose time is 0, is kept until a call', () => {
    const off = { pauseSeconds: 0, canPause: true, lightSleepSeconds: 0 };
    expect(ladderStep(idle({ serving: false, kept: 'paused', atDepthMs: 1e9 }), off)).toBeNull();
    expect(ladderStep(idle({ serving: false, kept: 'light', atDepthMs: 1e9 }), off)).toBeNull();
    // An always-on persona put to a depth goes on down like any other.
    const alwaysOn = idle({ sleepy: false, serving: false, kept: 'light', atDepthMs: 600_000 });
    expect(ladderStep(alwaysOn, ALL)).toBe('deep');
  });
});
