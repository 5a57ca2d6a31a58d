import type { Target } from '../section';
import type { Figures } from './figures';
import { ID_BUCKETS } from './mouse-metrics';
import type { Phase } from './session';

/** The report: one row per figure, our column beside the competitor's, design.md's targets. */

export interface RowDef {
  key: string;
  label: string;
  unit: string;
  digits: number;
  phase: Phase;
  target?: Target;
}

export interface Column {
  title: string;
  figures: Figures;
  /** A phase that did not run: its cells show this instead of a value. */
  missing: Partial<Record<Phase, string>>;
}

const between = (lo: number, hi: number, unit: string): Target => ({
  text: `${lo}–${hi}${unit}`,
  met: (v) => v >= lo && v <= hi,
});
const above = (limit: number, text: string): Target => ({ text, met: (v) => v > limit });

const mouse = (key: string, label: string, unit: string, digits: number, target?: Target) => ({
  key,
  label,
  unit,
  digits,
  phase: 'mouse' as const,
  ...(target ? { target } : {}),
});

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
  mouse('landing_dx', 'landing |dx| / half-width, mean', '', 2, {
    text: '0.05–0.5 (around centre)',
    met: (v) => v > 0.05 && v < 0.5,
  }),
  mouse('landing_dy', 'landing |dy| / half-height, mean', '', 2, {
    text: '0.05–0.5 (around centre)',
    met: (v) => v > 0.05 && v < 0.5,
  }),
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
  {
    key: 'key_dt_mean',
    label: 'inter-key interval mean',
    unit: ' ms',
    digits: 0,
    phase: 'typing',
    target: between(180, 300, ' ms'),
  },
  {
    key: 'key_dt_sd',
    label: 'inter-key interval SD',
    unit: ' ms',
    digits: 0,
    phase: 'typing',
    target: between(80, 150, ' ms'),
  },
  {
    key: 'chars_per_typo',
    label: 'characters per corrected typo',
    unit: '',
    digits: 1,
    phase: 'typing',
    target: between(15, 30, ''),
  },
  {
    key: 'key_hold',
    label: 'key hold (down → up), median',
    unit: ' ms',
    digits: 0,
    phase: 'typing',
  },
  {
    key: 'text_exact',
    label: 'final input value equals the text',
    unit: 'bool',
    digits: 0,
    phase: 'typing',
    target: { text: 'yes', met: (v) => v === 1 },
  },
  {
    key: 'notch_px',
    label: 'wheel notch size, median',
    unit: ' px',
    digits: 0,
    phase: 'scroll',
    target: between(80, 120, ' px'),
  },
  {
    key: 'notch_share',
    label: '  notches within 80–120 px',
    unit: ' %',
    digits: 0,
    phase: 'scroll',
  },
  {
    key: 'scroll_inflation',
    label: 'gross (main burst) / requested',
    unit: '×',
    digits: 2,
    phase: 'scroll',
    target: between(1.1, 1.2, '×'),
  },
  {
    key: 'scroll_back',
    label: 'back-scroll / gross',
    unit: '×',
    digits: 2,
    phase: 'scroll',
    target: between(0.1, 0.2, '×'),
  },
  {
    key: 'scroll_net',
    label: 'net / requested',
    unit: '×',
    digits: 2,
    phase: 'scroll',
    target: between(0.9, 1.1, '×'),
  },
];

function cell(row: RowDef, col: Column): string {
  const missing = col.missing[row.phase];
  if (missing) return missing.startsWith('n/a') ? missing : `n/a (${missing.slice(0, 40)})`;
  const v = col.figures[row.key]?.value ?? null;
  if (v === null) return 'n/a';
  const text =
    row.unit === 'bool' ? (v === 1 ? 'yes' : 'no') : `${v.toFixed(row.digits)}${row.unit}`;
  if (!row.target) return text;
  return `${text} ${row.target.met(v) ? '✓' : '✗'}`;
}

const SECTION_TITLES: Record<Phase, string> = {
  mouse: '== mouse',
  typing: '== typing',
  scroll: '== scroll',
};

export function formatTable(cols: readonly Column[]): string {
  const header = ['metric', 'target (design.md)', ...cols.map((c) => c.title)];
  const lines: (string[] | string)[] = [];
  let phase: Phase | null = null;
  for (const row of ROWS) {
    if (row.phase !== phase) {
      phase = row.phase;
      lines.push(SECTION_TITLES[phase]);
    }
    lines.push([row.label, row.target?.text ?? '', ...cols.map((c) => cell(row, c))]);
  }
  const cells = [header, ...lines.filter((l): l is string[] => Array.isArray(l))];
  const widths = header.map((_, i) => Math.max(...cells.map((l) => (l[i] ?? '').length)));
  const fmt = (l: string[]): string =>
    l.map((c, i) => (i >= 2 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join('  ');
  return [
    fmt(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...lines.map((l) => (typeof l === 'string' ? l : fmt(l).trimEnd())),
  ].join('\n');
}

/** Sample sizes and spreads behind the figures, one line per figure that has any. */
export function formatNotes(cols: readonly Column[]): string {
  const out: string[] = [];
  for (const row of ROWS) {
    const parts = cols
      .filter((c) => !c.missing[row.phase] && c.figures[row.key]?.detail)
      .map((c) => `${c.title}: ${c.figures[row.key]?.detail ?? ''}`);
    if (parts.length) out.push(`${row.label.trim()} — ${parts.join(' | ')}`);
  }
  return out.join('\n');
}

export function summaryValues(col: Column): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const row of ROWS) {
    const v = col.missing[row.phase] ? null : (col.figures[row.key]?.value ?? null);
    out[row.key] = v === null ? null : Number(v.toFixed(Math.max(row.digits, 3)));
  }
  return out;
}
