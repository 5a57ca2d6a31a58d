import type { Row } from './section';

/** Plain-text tables and the one-line JSON summary. */

export interface SectionResult {
  id: string;
  title: string;
  rows: Row[];
  error: string | null;
  seconds: number;
}

function formatValue(row: Row): string {
  if (row.value === null || Number.isNaN(row.value)) return 'n/a';
  const digits = row.digits ?? (row.unit === 'x' ? 2 : row.value < 10 ? 2 : 0);
  const unit = row.unit === 'x' ? '×' : row.unit ? ` ${row.unit}` : '';
  return `${row.value.toFixed(digits)}${unit}`;
}

function verdict(row: Row): string {
  if (!row.target) return '';
  if (row.value === null || Number.isNaN(row.value)) return '?';
  return row.target.met(row.value) ? 'yes' : 'NO';
}

export function formatTable(results: SectionResult[]): string {
  const header = ['metric', 'value', 'target', 'met', 'detail'];
  const blocks = results.map((r) => ({
    title: `== ${r.title}  [${r.id}, ${r.seconds.toFixed(0)} s]`,
    lines: [
      ...(r.error ? [['FAILED', '', '', '', r.error.split('\n')[0] ?? '']] : []),
      ...r.rows.map((row) => [
        row.label,
        formatValue(row),
        row.target?.text ?? '',
        verdict(row),
        row.detail ?? '',
      ]),
    ],
  }));
  const all = [header, ...blocks.flatMap((b) => b.lines)];
  const widths = header.map((_, i) => Math.max(...all.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 1 ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out = [fmt(header), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const b of blocks) out.push(b.title, ...b.lines.map(fmt));
  return out.join('\n');
}

export function summaryJson(results: SectionResult[], meta: Record<string, unknown>): string {
  const figures: Record<string, number | null> = {};
  for (const r of results) {
    for (const row of r.rows) {
      figures[row.key] =
        row.value === null || Number.isNaN(row.value)
          ? null
          : Number(row.value.toFixed(row.digits ?? 3));
    }
  }
  const errors = Object.fromEntries(
    results.filter((r) => r.error).map((r) => [r.id, r.error?.split('\n')[0]]),
  );
  return JSON.stringify({ ...meta, figures, errors });
}
