import Joi from 'joi';
import type { Navigator } from '../browser/navigator';
import type { RouteContext, RouteDef } from '../http/route';
import { envelope } from '../http/schemas';
import * as act from '../human/primitives';

const P = '/api/v1/primitive';
const str = Joi.string();
const num = Joi.number();
const point = Joi.object({ x: num, y: num });
const box = Joi.object({ x: num, y: num, width: num, height: num }).allow(null);

export const MAX_TYPED_CHARS = 10_000;
export const MAX_ZOOM = 5;

const selectorBody = Joi.object({
  selector: str.min(1).required().description('CSS selector'),
});
const positionBody = Joi.object({
  x: num.required().description('viewport x, CSS pixels'),
  y: num.required().description('viewport y, CSS pixels'),
});

type Handler = (ctx: RouteContext, slowmo: number) => Promise<Record<string, unknown>>;

function primitive(
  name: string,
  summary: string,
  body: Joi.ObjectSchema | undefined,
  fields: Record<string, Joi.Schema>,
  handler: Handler,
  navigator: Navigator,
): RouteDef {
  return {
    name,
    method: 'post',
    path: `${P}/:page_id/${name}`,
    auth: true,
    tag: 'Primitive',
    summary,
    page: 'leased',
    body,
    response: envelope({ url: str, ...fields }),
    handler: (ctx) => handler(ctx, navigator.slowmoMs),
  };
}

const pointOf = (b: Record<string, unknown>) => ({ x: b.x as number, y: b.y as number });

export function primitiveRoutes(navigator: Navigator): RouteDef[] {
  const r = (...a: Parameters<typeof primitive> extends [...infer H, Navigator] ? H : never) =>
    primitive(...a, navigator);
  return [
    r(
      'click-element',
      'Move along a curved path to the element and click it',
      selectorBody,
      { selector: str, position: point },
      ({ page, body }, s) => act.clickElement(page, body.selector as string, s),
    ),
    r(
      'click-position',
      'Move to a viewport point and click',
      positionBody,
      { position: point },
      ({ page, body }, s) => act.clickPosition(page, pointOf(body), s),
    ),
    r(
      'hover-element',
      'Move onto the element without clicking',
      selectorBody,
      { selector: str, position: point },
      ({ page, body }, s) => act.hoverElement(page, body.selector as string, s),
    ),
    r(
      'hover-position',
      'Move to a viewport point without clicking',
      positionBody,
      { position: point },
      ({ page, body }, s) => act.hoverPosition(page, pointOf(body), s),
    ),
    r(
      'check-visible',
      'Whether the element is on screen, wholly or in part, and where',
      selectorBody,
      {
        selector: str,
        found: Joi.boolean(),
        visible: Joi.boolean(),
        fully_visible: Joi.boolean(),
        bounding_box: box,
        intersection: box,
        viewport: Joi.object({ width: num, height: num }),
      },
      ({ page, body }) => act.checkVisible(page, body.selector as string),
    ),
    r(
      'scroll-page',
      'Wheel-scroll by about `distance` px (negative scrolls up) where the pointer is',
      Joi.object({
        distance: num
          .min(-100_000)
          .max(100_000)
          .default(1000)
          .description('pixels; negative scrolls up'),
      }),
      { scrolled_distance: num },
      ({ page, body }, s) => act.scrollPage(page, body.distance as number, s),
    ),
    r(
      'type-text',
      'Type into the focused element, key by key, with corrected typos',
      Joi.object({ text: str.allow('').max(MAX_TYPED_CHARS).required() }),
      { text_length: num.integer(), chars_typed: num.integer(), typos_made: num.integer() },
      ({ page, body }, s) => act.typeText(page, body.text as string, s),
    ),
    r(
      'paste-text',
      'Paste into the focused element through the clipboard (Ctrl+V)',
      Joi.object({ text: str.allow('').required() }),
      { text_length: num.integer(), fumbled: Joi.boolean(), delay_before_ms: num.integer() },
      ({ page, body }, s) => act.pasteText(page, body.text as string, s),
    ),
    r('press-enter', 'Press Enter on the focused element', undefined, { key: str }, ({ page }, s) =>
      act.pressEnter(page, s),
    ),
    r(
      'press-tab',
      'Press Tab (Shift+Tab with `with_shift`) to move focus',
      Joi.object({ with_shift: Joi.boolean().default(false) }),
      { key: str },
      ({ page, body }, s) => act.pressTab(page, body.with_shift as boolean, s),
    ),
    r(
      'reload-page',
      'Press F5: a full reload',
      undefined,
      { key: str, status_code: num.integer().allow(null) },
      ({ page }, s) => act.reloadPage(page, s),
    ),
    r(
      'zoom-page',
      'Pinch-zoom around (x, y) to `zoom_level` (1 = 100 %)',
      positionBody.keys({ zoom_level: num.min(1).max(MAX_ZOOM).default(1) }),
      { zoom_level: num, position: point },
      ({ page, body }, s) => act.zoomPage(page, pointOf(body), body.zoom_level as number, s),
    ),
    r('reset-zoom', 'Back to 100 % zoom', undefined, { zoom_level: num }, ({ page }, s) =>
      act.resetZoom(page, s),
    ),
  ];
}
