import type { Target } from '../section';
import { ID_BUCKETS } from './mouse-metrics';
import type { Phase } from './session';

/** The report's rows: each figure's key, label, unit and its target where it has one. */

export interface RowDef {
  key: string;
  label: string;
  unit: string;
  digits: number;
  phase: Phase;
  target?: Target;
}

const between = (lo: number, hi: number, unit: string): Target => ({
  text: `${lo}–${hi}${unit}`,
  met: (v) => v >= lo && v <= hi,
});
const above = (limit: number, text: string): Target => ({ text, met: (v) => v > limit });
const centred: Target = { text: '0.05–0.5 (around centre)', met: (v) => v > 0.05 && v < 0.5 };

const rowsOf =
  (phase: Phase) =>
  (key: string, label: string, unit: string, digits: number, target?: Target): RowDef => ({
    key,
    label,
    unit,
    digits,
    phase,
    ...(target ? { target } : {}),
  });
const mouse = rowsOf('mouse');
const typing = rowsOf('typing');
const scroll = rowsOf('scroll');

export const ROWS: RowDef[] = [
  mouse('mt_500', '500 px → 20 px target: mean movement time', ' s', 2, between(0.9, 1.3, ' s')),
  ...ID_BUCKETS.map((b) => mouse(`mt_id${b}`, `  movement time at ID ${b}–${b + 1} bits`, ' s', 2)),
  mouse('fitts_slope', 'Fitts slope (MT per bit of ID)', ' ms/bit', 0, above(0, '> 0 (grows)')),
  mouse('fitts_r', 'MT–ID correlation r (per move)', '', 2, above(0.5, '> 0.5 (grows)')),
  mouse('peak_pos', 'velocity peak position, median', ' %', 0, between(30, 60, ' %')),
  mouse('peak_pos_share', '  moves with the peak at 30–60 %', ' %', 0),
  mouse('peak_mean', 'peak / mean speed, median', '×', 2, between(1.5, 2.5, '×')),
  mouse('peak_mean_share', '  moves with peak/mean in 1.5–2.5', ' %', 0),
  mouse('single_peak', 'moves with one velocity peak', ' %', 0, above(90, '> 90 % (one peak)')),
  mouse('move_dt_mean', 'mousemove interval mean (per frame)', ' ms', 1),
  mouse('move_dt_sd', 'mousemove interval SD', ' ms', 1),
  mouse('move_dt_cv', 'mousemove interval CV', '', 2, above(0.1, '> 0.1 (jittered)')),
  mouse('raw_dt_mean', 'raw pointer sample interval mean', ' ms', 1),
  mouse('raw_dt_cv', 'raw pointer sample interval CV', '', 2, above(0.1, '> 0.1 (jittered)')),
  mouse('landing_dx', 'landing |dx| / half-width, mean', '', 2, centred),
  mouse('landing_dy', 'landing |dy| / half-height, mean', '', 2, centred),
  mouse('landing_edge', 'presses on the edge pixels', ' %', 0, {
    text: '0 %',
    met: (v) => v === 0,
  }),
  mouse('press_ms', 'press duration (down → up), median', ' ms', 0, between(50, 150, ' ms')),
  mouse('press_share', '  presses within 50–150 ms', ' %', 0),
  mouse('trusted', 'isTrusted events (all phases)', ' %', 0, {
    text: '100 %',
    met: (v) => v === 100,
  }),
  typing('key_dt_mean', 'inter-key interval mean', ' ms', 0, between(180, 300, ' ms')),
  typing('key_dt_sd', 'inter-key interval SD', ' ms', 0, between(80, 150, ' ms')),
  typing('chars_per_typo', 'characters per corrected typo', '', 1, between(15, 30, '')),
  typing('bs_per_100', 'backspaces per 100 characters', '', 1, between(2, 6, '')),
  typing('bs_per_100_calls', '  calls with 2–6 per 100 characters', ' %', 0, {
    text: '100 %',
    met: (v) => v === 100,
  }),
  typing('key_hold', 'key hold (down → up), median', ' ms', 0),
  typing('text_exact', 'every call left the input holding the text', 'bool', 0, {
    text: 'yes',
    met: (v) => v === 1,
  }),
  scroll('notch_px', 'wheel notch size, median', ' px', 0, between(80, 120, ' px')),
  scroll('notch_share', '  notches within 80–120 px', ' %', 0, {
    text: '100 % (whole notches)',
    met: (v) => v === 100,
  }),
  scroll('scroll_inflation', 'gross (main burst) / requested', '×', 2, between(1.1, 1.2, '×')),
  scroll('scroll_back', 'back-scroll / gross', '×', 2, between(0.1, 0.2, '×')),
  scroll('scroll_net', 'net / requested', '×', 2, between(0.9, 1.1, '×')),
];
