import type { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import { BadRequest, BrowserFailure } from '../errors';
import { InputExecutor } from './executor';
import type { ElementTarget } from './element-target';
import { measureTarget, targetLabel } from './element-target';
import type { Geometry } from './geometry';
import { hits, measure } from './geometry';
import { pickLandingPoint } from './mouse-plan';
import { systemRng } from './random';
import type { Box, Point } from './types';

/** Corrective moves allowed when the element moves during the approach (docs/api.md). */
export const MAX_CORRECTIONS = 2;
/** How far (px) the element may drift before the approach is corrected. */
const DRIFT_PX = 2;
const LANDING_TRIES = 6;

export const executorFor = (mp: ManagedPage, call: Call): InputExecutor =>
  new InputExecutor(mp, call, systemRng());

const inside = (p: Point, b: Box): boolean =>
  p.x >= b.x && p.y >= b.y && p.x <= b.x + b.width && p.y <= b.y + b.height;

function visiblePart(g: Geometry, mp: ManagedPage, label: string): Box {
  if (!g.found) throw new BrowserFailure(`No element matches ${label}`, mp.id);
  if (!g.intersection) {
    throw new BrowserFailure(
      `Element ${label} is not visible in the viewport; scroll to it first`,
      mp.id,
    );
  }
  return g.intersection;
}

/**
 * A landing point inside the visible part that really hits the element. A miss is looked into:
 * if the element itself moved, aim at where it is now; if it stayed put, something covers it.
 */
async function landingPoint(
  x: InputExecutor,
  mp: ManagedPage,
  call: Call,
  start: Box,
  label: string,
): Promise<{ point: Point; box: Box }> {
  let box = start;
  let cover: string | null = null;
  for (let i = 0; i < LANDING_TRIES; i += 1) {
    const point = pickLandingPoint(box, x.rng);
    const hit = await hits(mp, call, point);
    if (hit.hits) return { point, box };
    const now = await current(mp, call, label);
    if (movedBox(box, now)) box = now;
    else cover = hit.cover;
  }
  throw new BrowserFailure(
    cover === null
      ? `Element ${label} kept moving; no steady point to aim at`
      : `Element ${label} is covered by ${cover}`,
    mp.id,
  );
}

/** Where the element found earlier is now; it may have gone or left the screen meanwhile. */
async function current(mp: ManagedPage, call: Call, label: string): Promise<Box> {
  const now = await measure(mp, call, null);
  if (!now.found) throw new BrowserFailure(`Element ${label} disappeared`, mp.id);
  if (!now.intersection) throw new BrowserFailure(`Element ${label} left the viewport`, mp.id);
  return now.intersection;
}

const movedBox = (a: Box, b: Box): boolean =>
  Math.abs(a.x - b.x) > DRIFT_PX ||
  Math.abs(a.y - b.y) > DRIFT_PX ||
  Math.abs(a.width - b.width) > DRIFT_PX ||
  Math.abs(a.height - b.height) > DRIFT_PX;

/**
 * Moves the pointer onto the element like a hand would: a curved, Fitts-timed path to a point
 * spread around the visible part's centre. On arrival the element is measured again; if it moved
 * meanwhile, up to two short corrective moves follow it, then the call gives up.
 */
export async function approachElement(
  x: InputExecutor,
  mp: ManagedPage,
  call: Call,
  element: ElementTarget,
): Promise<Point> {
  const label = targetLabel(element);
  const first = await measureTarget(mp, call, element);
  let { point: target, box } = await landingPoint(
    x,
    mp,
    call,
    visiblePart(first, mp, label),
    label,
  );
  for (let correction = 0; ; correction += 1) {
    const reference = box;
    const watch = watchForMovement(mp, call, reference);
    try {
      await x.moveTo(target, Math.min(box.width, box.height), first.viewport);
    } finally {
      watch.stop();
    }
    const movedMeanwhile = await watch.moved;
    const now = await current(mp, call, label);
    if (!movedMeanwhile && !movedBox(reference, now) && inside(target, now)) {
      const hit = await hits(mp, call, target);
      if (hit.hits) return target;
    }
    if (correction >= MAX_CORRECTIONS) {
      throw new BrowserFailure(
        `Element ${label} kept moving; gave up after ${MAX_CORRECTIONS} corrections`,
        mp.id,
      );
    }
    ({ point: target, box } = await landingPoint(x, mp, call, now, label));
  }
}

/** How often the element is looked at while the hand is on its way, like an eye on the target. */
const WATCH_INTERVAL_MS = 60;

/** Samples the element during a movement; `moved` says whether it left `reference` meanwhile. */
function watchForMovement(
  mp: ManagedPage,
  call: Call,
  reference: Box,
): { moved: Promise<boolean>; stop(): void } {
  let running = true;
  const moved = (async () => {
    while (running) {
      await call.sleep(WATCH_INTERVAL_MS).catch(() => undefined);
      if (!running || call.signal.aborted) break;
      const g = await measure(mp, call, null).catch(() => null);
      if (!g?.intersection || movedBox(reference, g.intersection)) return true;
    }
    return false;
  })();
  return {
    moved,
    stop: () => {
      running = false;
    },
  };
}

export function checkViewportPoint(
  mp: ManagedPage,
  p: Point,
  viewport: { width: number; height: number },
): void {
  if (p.x < 0 || p.y < 0 || p.x >= viewport.width || p.y >= viewport.height) {
    throw new BadRequest(
      `Position (${p.x}, ${p.y}) is outside the viewport (${viewport.width}x${viewport.height})`,
      mp.id,
    );
  }
}

export async function viewportOf(
  mp: ManagedPage,
  call: Call,
): Promise<{ width: number; height: number }> {
  return (await measure(mp, call, null)).viewport;
}

export const round = (p: Point): Point => ({
  x: Math.round(p.x * 10) / 10,
  y: Math.round(p.y * 10) / 10,
});
