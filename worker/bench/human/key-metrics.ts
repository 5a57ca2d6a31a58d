import { median, percentile } from '../stats';
import type { InputEvent, Recorded } from './events';
import { segments } from './events';
import type { Figures } from './figures';
import { diffs, fig, mean, sd, share, skewness } from './figures';

/** Typing and scrolling figures from a recorded log (segments marked `typing`, `scroll:N`). */

const MODIFIERS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'CapsLock']);

/**
 * Typing figures over every typing run of a recording (segments marked `typing:N`): key timing
 * pooled over the runs, corrections and backspaces per run, and whether each run's field ended
 * up holding exactly the text.
 */
export function typingFigures(
  log: readonly Recorded[],
  text: string,
  finalValues: readonly string[],
): Figures {
  const runs = segments(log).filter((s) => s.mark.label.startsWith('typing'));
  const gaps: number[] = [];
  const holds: number[] = [];
  const perHundred: number[] = [];
  let backspaces = 0;
  let corrections = 0;
  for (const run of runs) {
    const downs = run.events.filter((e) => e.type === 'keydown' && !MODIFIERS.has(e.key ?? ''));
    gaps.push(...diffs(downs.map((e) => e.ts)));
    const bs = downs.filter((e) => e.key === 'Backspace').length;
    backspaces += bs;
    perHundred.push((bs / text.length) * 100);
    // One correction is a run of backspaces; a typo noticed late takes several.
    downs.forEach((e, i) => {
      if (e.key === 'Backspace' && downs[i - 1]?.key !== 'Backspace') corrections++;
    });
    const open = new Map<string, number>();
    for (const e of run.events) {
      if (e.type === 'keydown') open.set(e.key ?? '', e.ts);
      if (e.type === 'keyup' && open.has(e.key ?? '')) {
        holds.push(e.ts - (open.get(e.key ?? '') as number));
        open.delete(e.key ?? '');
      }
    }
  }
  const chars = text.length * runs.length;
  const logGaps = gaps.filter((g) => g > 0).map(Math.log);
  const inBand = perHundred.filter((x) => x >= 2 && x <= 6).length;
  const exact = finalValues.filter((v) => v === text).length;
  return {
    key_dt_mean: fig(
      mean(gaps),
      `${gaps.length} intervals, median ${median(gaps).toFixed(0)}, p95 ${percentile(gaps, 95).toFixed(0)} ms`,
    ),
    key_dt_sd: fig(
      sd(gaps),
      `skew ${skewness(gaps).toFixed(2)}, of log ${skewness(logGaps).toFixed(2)} (log-normal: >0, ≈0)`,
    ),
    chars_per_typo: fig(
      corrections ? chars / corrections : Number.NaN,
      `${corrections} corrections, ${backspaces} backspaces in ${runs.length} calls of ${text.length} chars`,
    ),
    bs_per_100: fig(
      chars ? (backspaces / chars) * 100 : Number.NaN,
      `per call: ${perHundred.map((x) => x.toFixed(1)).join(', ')}`,
    ),
    bs_per_100_calls: fig(
      runs.length ? (inBand / runs.length) * 100 : Number.NaN,
      `${inBand} of ${runs.length} calls within 2–6, range ${Math.min(...perHundred).toFixed(1)}–${Math.max(...perHundred).toFixed(1)}`,
    ),
    key_hold: fig(median(holds), `n=${holds.length}`),
    text_exact: fig(
      finalValues.length && exact === finalValues.length ? 1 : 0,
      `${exact} of ${finalValues.length} calls left the input holding exactly the text`,
    ),
  };
}

interface ScrollCall {
  requested: number;
  main: number[];
  back: number[];
  net: number;
}

function scrollCalls(log: readonly Recorded[]): ScrollCall[] {
  const segs = segments(log);
  const calls: ScrollCall[] = [];
  segs.forEach((s, i) => {
    const m = /^scroll:(-?\d+)$/.exec(s.mark.label);
    if (!m) return;
    const requested = Number(m[1]);
    const dir = Math.sign(requested);
    const wheels = s.events.filter((e): e is InputEvent & { deltaY: number } => e.type === 'wheel');
    const end = segs[i + 1]?.mark.scrollY ?? s.mark.scrollY;
    calls.push({
      requested,
      main: wheels.filter((e) => Math.sign(e.deltaY) === dir).map((e) => Math.abs(e.deltaY)),
      back: wheels.filter((e) => Math.sign(e.deltaY) === -dir).map((e) => Math.abs(e.deltaY)),
      net: (end - s.mark.scrollY) * dir,
    });
  });
  return calls;
}

/** A wheel notch as the scroll planner makes it: 80–120 px. */
const inBand = (n: number): boolean => n >= 80 && n <= 120;

/** Which wheel events the page saw were not one notch: partial notches, merged notches. */
function notchesOutside(notches: readonly number[]): string {
  const out = notches.filter((n) => !inBand(n));
  if (out.length === 0) return `all ${notches.length} inside`;
  const shown = out.slice(0, 12).map((n) => n.toFixed(1));
  const list = shown.join(', ') + (out.length > shown.length ? ', …' : '');
  return `${notches.length - out.length} of ${notches.length} inside; outside: ${list}`;
}

export function scrollFigures(log: readonly Recorded[]): Figures {
  const calls = scrollCalls(log);
  const notches = calls.flatMap((c) => [...c.main, ...c.back]);
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  const inflation = calls.map((c) => sum(c.main) / Math.abs(c.requested));
  const back = calls.map((c) => (sum(c.main) ? sum(c.back) / sum(c.main) : 0));
  const netRatio = calls.map((c) => c.net / Math.abs(c.requested));
  const wheels = calls.map((c) => c.main.length + c.back.length);
  return {
    notch_px: fig(
      median(notches),
      notches.length
        ? `${notches.length} wheel events in ${calls.length} calls, ${Math.min(...notches).toFixed(0)}–${Math.max(...notches).toFixed(0)} px`
        : `no wheel events in ${calls.length} calls`,
    ),
    notch_share: fig(share(notches, inBand) * 100, notchesOutside(notches)),
    scroll_inflation: fig(
      median(inflation),
      `per call: ${inflation.map((v) => v.toFixed(2)).join(' ')}`,
    ),
    scroll_back: fig(median(back), `per call: ${back.map((v) => v.toFixed(2)).join(' ')}`),
    scroll_net: fig(
      median(netRatio),
      `per call: ${netRatio.map((v) => v.toFixed(2)).join(' ')}; wheels/call ${wheels.join(' ')}`,
    ),
  };
}
