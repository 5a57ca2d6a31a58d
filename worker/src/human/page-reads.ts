import type { Box, Visibility } from '@persona-browser/plugin-sdk';
import { prop } from '../util';

/**
 * Reading what an in-page function answered. The answer crosses the DevTools connection as
 * JSON, so its type is the page's word only: each field is checked here against the type the
 * worker goes on with, and a value of another shape fails by name instead of travelling on.
 */

export function pageNumber(value: unknown, what: string): number {
  if (typeof value !== 'number') throw unexpected(what, value);
  return value;
}

export function pageString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw unexpected(what, value);
  return value;
}

function pageBoolean(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') throw unexpected(what, value);
  return value;
}

function pageBox(value: unknown, what: string): Box | null {
  if (value === null) return null;
  return {
    x: pageNumber(prop(value, 'x'), `${what}.x`),
    y: pageNumber(prop(value, 'y'), `${what}.y`),
    width: pageNumber(prop(value, 'width'), `${what}.width`),
    height: pageNumber(prop(value, 'height'), `${what}.height`),
  };
}

/** The measure of an element, in the order of its fields in the reply. */
export function pageVisibility(value: unknown): Visibility {
  const viewport = prop(value, 'viewport');
  return {
    found: pageBoolean(prop(value, 'found'), 'found'),
    visible: pageBoolean(prop(value, 'visible'), 'visible'),
    fully_visible: pageBoolean(prop(value, 'fully_visible'), 'fully_visible'),
    bounding_box: pageBox(prop(value, 'bounding_box'), 'bounding_box'),
    intersection: pageBox(prop(value, 'intersection'), 'intersection'),
    viewport: {
      width: pageNumber(prop(viewport, 'width'), 'viewport.width'),
      height: pageNumber(prop(viewport, 'height'), 'viewport.height'),
    },
  };
}

/** Whether a point hits the element measured last, and if not, what covers it. */
export function pageHit(value: unknown): { hits: boolean; cover: string | null } {
  const cover = prop(value, 'cover');
  return {
    hits: pageBoolean(prop(value, 'hits'), 'hits'),
    cover: cover === null ? null : pageString(cover, 'cover'),
  };
}

const unexpected = (what: string, value: unknown): Error =>
  new Error(`The page answered ${what} = ${JSON.stringify(value) ?? 'undefined'}`);
