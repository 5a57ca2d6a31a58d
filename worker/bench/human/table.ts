import type { Figures } from './figures';
import type { RowDef } from './rows';
import { ROWS } from './rows';
import type { Phase } from './session';

/** The report: one row per figure, our column beside the competitor's, the targets. */

export interface Column {
  title: string;
  figures: Figures;
  /** A phase that did not run: its cells show this instead of a value. */
  missing: Partial<Record<Phase, string>>;
}

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
  const header = ['metric', 'target', ...cols.map((c) => c.title)];
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
