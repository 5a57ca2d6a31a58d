import { median } from '../stats';
import type { InputEvent, Recorded, Segment } from './events';
import { isMark } from './events';
import type { Figures } from './figures';
import { fig, mean, share } from './figures';

/** Landing points of presses, press durations and the isTrusted share. */

/** Where the press landed in click-element trials, against the target placed for the trial. */
export function landingFigures(segs: readonly Segment[]): Figures {
  const hits: { nx: number; ny: number; edge: boolean; inside: boolean }[] = [];
  for (const s of segs) {
    const down = s.events.find((e) => e.type === 'mousedown');
    const r = s.mark.rect;
    if (!down || !r || !s.mark.label.endsWith(':click-element')) continue;
    const cx = r.x + r.width / 2;
    const cy = r.y + r.height / 2;
    const inside =
      down.x >= r.x && down.x < r.x + r.width && down.y >= r.y && down.y < r.y + r.height;
    const edge =
      inside &&
      (down.x < r.x + 1 ||
        down.x >= r.x + r.width - 1 ||
        down.y < r.y + 1 ||
        down.y >= r.y + r.height - 1);
    hits.push({
      nx: Math.abs(down.x - cx) / (r.width / 2),
      ny: Math.abs(down.y - cy) / (r.height / 2),
      edge,
      inside,
    });
  }
  const missed = share(hits, (h) => !h.inside) * 100;
  return {
    landing_dx: fig(mean(hits.map((h) => h.nx)), `n=${hits.length} click-element presses`),
    landing_dy: fig(mean(hits.map((h) => h.ny))),
    landing_edge: fig(share(hits, (h) => h.edge) * 100, `${missed.toFixed(0)} % outside`),
  };
}

export function pressFigures(log: readonly Recorded[]): Figures {
  const presses: number[] = [];
  let downAt: number | null = null;
  for (const e of log) {
    if (e.type === 'mousedown') downAt = e.ts;
    if (e.type === 'mouseup' && downAt !== null) {
      presses.push(e.ts - downAt);
      downAt = null;
    }
  }
  const inputs = log.filter((e): e is InputEvent => !isMark(e) && e.type !== 'scroll');
  return {
    press_ms: fig(median(presses), `n=${presses.length}, mean ${mean(presses).toFixed(0)} ms`),
    press_share: fig(share(presses, (p) => p >= 50 && p <= 150) * 100),
    trusted: fig(share(inputs, (e) => e.trusted) * 100, `${inputs.length} events`),
  };
}
