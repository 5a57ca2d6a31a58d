/**
 * The element arguments of the MCP tools: a snapshot ref or a CSS selector, brought into view
 * before a primitive acts on it as a person would.
 */
import type { Result } from '@persona-browser/client';
import { settle } from '@persona-browser/client';
import type { Json } from './rest';
import type { ToolContext } from './tool';
import { ArgumentError, onPage, optionalString, stringArg } from './tool';

export const REF = {
  type: 'string',
  description: 'an element reference from snapshot, like n42 (or give selector)',
};
export const SELECTOR = { type: 'string', description: 'a CSS selector (or give ref)' };

/** An element as the primitives take it: by snapshot ref or by CSS selector. */
type Element = { ref: string } | { selector: string };

/** `{ref}` or `{selector}` from the arguments; null when neither was given. */
export function elementOf(args: Json): Element | null {
  const ref = optionalString(args, 'ref');
  const selector = optionalString(args, 'selector');
  if (ref !== undefined && selector !== undefined)
    throw new ArgumentError("give either 'ref' or 'selector', not both");
  if (ref !== undefined) return { ref };
  if (selector !== undefined) return { selector };
  return null;
}
function requireElement(args: Json): Element {
  const el = elementOf(args);
  if (!el) throw new ArgumentError("'ref' (from snapshot) or 'selector' is required");
  return el;
}

/**
 * Brings the element on screen as a person would, with the wheel, when it is not wholly there:
 * its centre to the middle of the viewport. A failed check is returned (its message is the
 * answer); an element not found is left to the gesture, whose error names it.
 */
export async function bringIntoView(
  ctx: ToolContext,
  pageId: string,
  el: Element,
): Promise<Result<unknown> | null> {
  const seen = await settle(
    ctx.target.api.POST('/api/v1/primitive/{page_id}/check-visible', {
      ...onPage(ctx, pageId),
      body: el,
    }),
  );
  if (!seen.ok) return seen;
  const { found, fully_visible: whole, bounding_box: box, viewport } = seen.data;
  if (!found || whole || box === null) return null;
  const distance = Math.round(box.y + box.height / 2 - viewport.height / 2);
  if (Math.abs(distance) < 2) return null;
  const scrolled = await settle(
    ctx.target.api.POST('/api/v1/primitive/{page_id}/scroll-page', {
      ...onPage(ctx, pageId),
      body: { distance },
    }),
  );
  return scrolled.ok ? null : scrolled;
}

/** Aims at the element (scrolling it into view first) and runs `gesture` on it. */
export async function onElement(
  ctx: ToolContext,
  args: Json,
  action: 'click-element' | 'hover-element',
): Promise<Result<unknown>> {
  const pageId = stringArg(args, 'page_id');
  const el = requireElement(args);
  const scrolled = await bringIntoView(ctx, pageId, el);
  if (scrolled) return scrolled;
  return settle(
    ctx.target.api.POST(`/api/v1/primitive/{page_id}/${action}`, {
      ...onPage(ctx, pageId),
      body: el,
    }),
  );
}

/**
 * The `text` of a type or paste, after a click on the element given (if one is): a failed
 * click is the answer then.
 */
export async function textToEnter(
  ctx: ToolContext,
  args: Json,
): Promise<{ text: string } | { failed: Result<unknown> }> {
  if (typeof args.text !== 'string') throw new ArgumentError("'text' is required (a string)");
  if (elementOf(args)) {
    const clicked = await onElement(ctx, args, 'click-element');
    if (!clicked.ok) return { failed: clicked };
  }
  return { text: args.text };
}
