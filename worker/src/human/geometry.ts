import type { Visibility } from '@persona-browser/plugin-sdk';
import type { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import { BadRequest } from '../errors';
import { evalIsolated, PageScriptError } from '../browser/page-world';
import { prop } from '../util';
import { pageHit, pageVisibility } from './page-reads';
import type { Point } from './types';

/** Where an element is and how much of it is on screen (`check-visible`, docs/api.md). */
export type Geometry = Visibility;

/**
 * In-page: finds the element (kept for later calls in this isolated world) and measures it.
 * `selector` null re-measures the element found last. Plain JS: it is sent as source text.
 */
function measureInPage(selector: string | null): unknown {
  if (selector !== null) {
    try {
      Reflect.set(globalThis, '__pbTarget', document.querySelector(selector));
    } catch (e) {
      return { invalidSelector: e instanceof Error ? e.message : String(e) };
    }
  }
  const kept: unknown = Reflect.get(globalThis, '__pbTarget');
  const el = kept instanceof Element ? kept : null;
  const root = document.documentElement;
  const viewport = { width: root.clientWidth, height: root.clientHeight };
  const none = {
    found: false,
    visible: false,
    fully_visible: false,
    bounding_box: null,
    intersection: null,
    viewport,
  };
  if (!el || !el.isConnected) return none;
  const r = el.getBoundingClientRect();
  const box = { x: r.left, y: r.top, width: r.width, height: r.height };
  let left = Math.max(0, r.left);
  let top = Math.max(0, r.top);
  let right = Math.min(viewport.width, r.right);
  let bottom = Math.min(viewport.height, r.bottom);
  const style = getComputedStyle(el);
  // A fixed element escapes the clipping of its scrolling ancestors.
  if (style.position !== 'fixed') {
    for (let a = el.parentElement; a && a !== root; a = a.parentElement) {
      const cs = getComputedStyle(a);
      const ar = a.getBoundingClientRect();
      const cl = ar.left + a.clientLeft;
      const ct = ar.top + a.clientTop;
      if (cs.overflowX !== 'visible') {
        left = Math.max(left, cl);
        right = Math.min(right, cl + a.clientWidth);
      }
      if (cs.overflowY !== 'visible') {
        top = Math.max(top, ct);
        bottom = Math.min(bottom, ct + a.clientHeight);
      }
      if (cs.position === 'fixed') break;
    }
  }
  const shown = style.visibility !== 'hidden' && style.display !== 'none';
  const hasArea = right - left > 0 && bottom - top > 0;
  const visible = shown && r.width > 0 && r.height > 0 && hasArea;
  const eps = 0.5;
  return {
    found: true,
    visible,
    fully_visible:
      visible &&
      left <= r.left + eps &&
      top <= r.top + eps &&
      right >= r.right - eps &&
      bottom >= r.bottom - eps,
    bounding_box: box,
    intersection: visible ? { x: left, y: top, width: right - left, height: bottom - top } : null,
    viewport,
  };
}

/** In-page: whether the point hits the element found last (or something inside it). */
function hitsInPage(x: number, y: number): unknown {
  const kept: unknown = Reflect.get(globalThis, '__pbTarget');
  const el = kept instanceof Element ? kept : null;
  const hit = document.elementFromPoint(x, y);
  if (!el || !hit) return { hits: false, cover: hit ? hit.tagName.toLowerCase() : null };
  if (el === hit || el.contains(hit)) return { hits: true, cover: null };
  const id = hit.id ? `#${hit.id}` : '';
  return { hits: false, cover: hit.tagName.toLowerCase() + id };
}

/** Finds `selector` and measures it; 400 for a selector the browser cannot parse. */
export async function measure(
  mp: ManagedPage,
  call: Call,
  selector: string | null,
): Promise<Geometry> {
  const res = await evalIsolated<unknown>(mp, call, measureInPage, [selector]).catch(
    (err: unknown) => {
      if (err instanceof PageScriptError)
        throw new BadRequest(`Selector failed: ${err.message}`, mp.id);
      throw err;
    },
  );
  if (prop(res, 'invalidSelector') !== undefined) {
    throw new BadRequest(`Invalid CSS selector '${selector ?? ''}'`, mp.id);
  }
  return pageVisibility(res);
}

export async function hits(
  mp: ManagedPage,
  call: Call,
  p: Point,
): Promise<{ hits: boolean; cover: string | null }> {
  return pageHit(await evalIsolated<unknown>(mp, call, hitsInPage, [p.x, p.y]));
}
