import Joi from 'joi';
import type { ManagedPage } from '../browser/managed-page';
import { planBudgetMs } from '../browser/timing';
import { BadRequest } from '../errors';
import type { Body, HeldContext, HeldRouteDef, Route } from '../http/route';
import { heldRoute } from '../http/route';
import { envelope } from '../http/schemas';
import type { ElementTarget } from '../human/element-target';
import { REF_PATTERN } from '../human/element-target';
import { Gestures } from '../human/gestures';
import { scrollPlanMs, typingPlanMs } from '../human/plan-duration';

const P = '/api/v1/primitive';
const str = Joi.string();
const num = Joi.number();
const point = Joi.object({ x: num.required(), y: num.required() });
const box = Joi.object({
  x: num.required(),
  y: num.required(),
  width: num.required(),
  height: num.required(),
}).allow(null);

export const MAX_TYPED_CHARS = 10_000;
export const MAX_ZOOM = 5;

/** An element by CSS selector or by a reference from the page's accessibility snapshot. */
interface TargetBody {
  selector?: string;
  ref?: string;
}
const targetBody = Joi.object<TargetBody, true>({
  selector: str.min(1).description('CSS selector (or give `ref`)'),
  ref: str
    .pattern(REF_PATTERN)
    .description('an element reference from `GET /ops/{page_id}/snapshot` (or give `selector`)')
    .messages({ 'string.pattern.base': "'ref' is a snapshot's element reference, like n42" }),
})
  .xor('selector', 'ref')
  .messages({
    'object.missing': "'selector' is required (or 'ref', an element reference from a snapshot)",
    'object.xor': "give either 'selector' or 'ref', not both",
  });
const targetOf = (b: TargetBody): ElementTarget =>
  b.ref !== undefined ? { ref: b.ref } : (b.selector ?? '');
/** What the answer names the element by: `selector` (null when by ref), and `ref` when given. */
const named = (b: TargetBody): { selector: string | null; ref?: string } =>
  b.ref !== undefined ? { selector: null, ref: b.ref } : { selector: b.selector ?? null };
const namedFields = { selector: str.allow(null).required(), ref: str };
interface PointBody {
  x: number;
  y: number;
}
const positionBody = Joi.object<PointBody, true>({
  x: num.required().description('viewport x, CSS pixels'),
  y: num.required().description('viewport y, CSS pixels'),
});

/**
 * One primitive: its page held (lock, deadline, brought to the front, slowmo pause after) by
 * the route, the gesture itself from Gestures, and the page URL after it.
 */
function primitive<B>(
  def: Pick<
    HeldRouteDef<B, Body>,
    'name' | 'summary' | 'body' | 'description' | 'unknownFields'
  > & {
    fields: Record<string, Joi.Schema>;
    /** Reading calls neither bring the page forward nor pause for slowmo. */
    reads?: boolean;
    /** Navigation-like: shows `loading` and brings a crashed or stuck page back. */
    navigates?: boolean;
    run: (g: Gestures, ctx: HeldContext<B, Body>) => Promise<object>;
  },
): Route {
  return heldRoute<B>({
    name: def.name,
    method: 'post',
    path: `${P}/:page_id/${def.name}`,
    auth: true,
    tag: 'Primitive',
    summary: def.summary,
    description: def.description,
    page: 'leased',
    hold: { gesture: !def.reads, navigation: def.navigates },
    body: def.body,
    unknownFields: def.unknownFields,
    response: envelope({ url: str.required(), ...def.fields }),
    handler: async (ctx) => {
      const out = await def.run(new Gestures(ctx.page, ctx.call), ctx);
      return { url: ctx.page.url, ...out };
    },
  });
}

/** A plan that could not finish by the call's deadline is refused before it touches the page. */
function refuseLongPlan(what: string, ms: number, hint: string, page: ManagedPage): void {
  const budget = planBudgetMs(page.timing);
  if (ms <= budget) return;
  throw new BadRequest(
    `${what} would take about ${Math.ceil(ms / 1000)} s; one call may take at most ` +
      `${budget / 1000} s: ${hint}`,
    page.id,
  );
}

const required = (s: Joi.Schema): Joi.Schema => s.required();

export function primitiveRoutes(): Route[] {
  return [
    primitive({
      name: 'click-element',
      summary: 'Move along a curved path to the element and click it',
      body: targetBody,
      fields: { ...namedFields, position: required(point) },
      run: async (g, { body }) => ({ ...named(body), ...(await g.clickTarget(targetOf(body))) }),
    }),
    primitive({
      name: 'click-position',
      summary: 'Move to a viewport point and click',
      body: positionBody,
      fields: { position: required(point) },
      run: (g, { body }) => g.clickAt(body),
    }),
    primitive({
      name: 'hover-element',
      summary: 'Move onto the element without clicking',
      body: targetBody,
      fields: { ...namedFields, position: required(point) },
      run: async (g, { body }) => ({ ...named(body), ...(await g.hoverTarget(targetOf(body))) }),
    }),
    primitive({
      name: 'hover-position',
      summary: 'Move to a viewport point without clicking',
      body: positionBody,
      fields: { position: required(point) },
      run: (g, { body }) => g.hoverAt(body),
    }),
    primitive({
      name: 'check-visible',
      summary: 'Whether the element is on screen, wholly or in part, and where',
      body: targetBody,
      reads: true,
      fields: {
        ...namedFields,
        found: Joi.boolean().required(),
        visible: Joi.boolean().required(),
        fully_visible: Joi.boolean().required(),
        bounding_box: box.required(),
        intersection: box.required(),
        viewport: Joi.object({ width: num.required(), height: num.required() }).required(),
      },
      run: async (g, { body }) => ({
        ...named(body),
        ...(await g.checkVisible(targetOf(body))),
      }),
    }),
    primitive({
      name: 'scroll-page',
      summary: 'Wheel-scroll by about `distance` px (negative scrolls up) where the pointer is',
      description:
        'A scroll whose wheel plan could not finish within the call deadline (96 s by default) ' +
        'is refused with 400 before the wheel turns. Fields other than `distance` (`amount`, ' +
        '`direction`) are ignored and the default distance is used.',
      // The contract keeps scroll-page lenient: a client sending `amount` gets the default.
      unknownFields: 'ignore',
      body: Joi.object<{ distance: number }, true>({
        distance: num
          .min(-100_000)
          .max(100_000)
          .default(1000)
          .description('pixels; negative scrolls up'),
      }),
      fields: { scrolled_distance: num.required() },
      run: (g, { body, page }) => {
        const plan = g.planScroll(body.distance);
        refuseLongPlan('This scroll', scrollPlanMs(plan), 'scroll in several calls', page);
        return g.scroll(body.distance, plan);
      },
    }),
    primitive({
      name: 'type-text',
      summary: 'Type into the focused element, key by key, with corrected typos',
      description:
        "Typing runs at a person's pace (about 4 keys a second); a text whose typing plan could " +
        'not finish within the call deadline (96 s by default, about 370 characters of prose) is ' +
        'refused with 400 before any key is sent: split it, or use paste-text.',
      body: Joi.object<{ text: string }, true>({
        text: str.allow('').max(MAX_TYPED_CHARS).required(),
      }),
      fields: {
        text_length: num.integer().required(),
        chars_typed: num.integer().required(),
        typos_made: num.integer().required(),
      },
      run: (g, { body, page }) => {
        const plan = g.planTyping(body.text);
        refuseLongPlan(
          `Typing ${Array.from(body.text).length} characters`,
          typingPlanMs(plan),
          'split the text over several calls, or use paste-text',
          page,
        );
        return g.type(body.text, plan);
      },
    }),
    primitive({
      name: 'paste-text',
      summary: 'Paste into the focused element through the clipboard (Ctrl+V)',
      body: Joi.object<{ text: string }, true>({ text: str.allow('').required() }),
      fields: {
        text_length: num.integer().required(),
        fumbled: Joi.boolean().required(),
        delay_before_ms: num.integer().required(),
      },
      run: (g, { body }) => g.paste(body.text),
    }),
    primitive({
      name: 'press-enter',
      summary: 'Press Enter on the focused element',
      fields: { key: str.required() },
      run: (g) => g.pressEnter(),
    }),
    primitive({
      name: 'press-tab',
      summary: 'Press Tab (Shift+Tab with `with_shift`) to move focus',
      body: Joi.object<{ with_shift: boolean }, true>({
        with_shift: Joi.boolean().default(false),
      }),
      fields: { key: str.required() },
      run: (g, { body }) => g.pressTab(body.with_shift),
    }),
    primitive({
      name: 'reload-page',
      summary: 'Press F5: a full reload',
      navigates: true,
      fields: { key: str.required(), status_code: num.integer().allow(null).required() },
      run: (g) => g.reload(),
    }),
    primitive({
      name: 'zoom-page',
      summary: 'Pinch-zoom around (x, y) to `zoom_level` (1 = 100 %)',
      body: Joi.object<PointBody & { zoom_level: number }, true>({
        x: num.required().description('viewport x, CSS pixels'),
        y: num.required().description('viewport y, CSS pixels'),
        zoom_level: num.min(1).max(MAX_ZOOM).default(1),
      }),
      fields: { zoom_level: num.required(), position: required(point) },
      run: (g, { body }) => g.zoom({ x: body.x, y: body.y }, body.zoom_level),
    }),
    primitive({
      name: 'reset-zoom',
      summary: 'Back to 100 % zoom',
      fields: { zoom_level: num.required() },
      run: (g) => g.resetZoom(),
    }),
  ];
}
