import Joi from 'joi';
import { BrowserFailure } from '../errors';
import type { Route } from '../http/route';
import { pageRoute } from '../http/route';
import { envelope } from '../http/schemas';
import type { VisionClient } from '../vision/client';
import { VisionError } from '../vision/client';
import { viewportShot } from '../vision/viewport-shot';

const P = '/api/v1/ops';
const num = Joi.number();

export function visionRoutes(vision: VisionClient): Route[] {
  return [
    pageRoute({
      name: 'search-object',
      method: 'post',
      path: `${P}/:page_id/search-object`,
      auth: true,
      tag: 'Ops',
      summary: 'Ask a vision model where a described object is in the viewport',
      description:
        'Screenshots the viewport, then asks the vision model (the page is free again while it ' +
        'thinks). `bounding_box` is `[x1, y1, x2, y2]` = left, top, right, bottom in viewport ' +
        'CSS pixels; feed `center_x` and `center_y` to `click-position`. Needs ' +
        'VISION_API_KEY_GRATIS or VISION_API_KEY_PAGA in the server environment; vision failures ' +
        'answer `success: false` with the cause in `error`.',
      page: 'leased',
      body: Joi.object<{ description: string }, true>({
        description: Joi.string()
          .trim()
          .min(1)
          .max(500)
          .required()
          .description('what to look for, in words, such as "the blue Sign in button"'),
      }),
      response: envelope({
        description: Joi.string().required(),
        bounding_box: Joi.array()
          .items(num)
          .length(4)
          .required()
          .description('[x1, y1, x2, y2]: left, top, right, bottom in viewport CSS pixels'),
        center_x: num.required(),
        center_y: num.required(),
        tokens_used: Joi.number()
          .integer()
          .required()
          .description('input plus output tokens of the call'),
        costs_usd: num.required().description('tokens priced per VISION_PRICE_*_PER_MTOK'),
        duration_seconds: num.required().description('time spent asking the vision service'),
      }),
      handler: async ({ page, body, hold }) => {
        const description = body.description;
        try {
          vision.assertConfigured();
          // The page is held for the screenshot only: it is free while the model thinks.
          const shot = await hold('search-object', {}, (call) => viewportShot(page, call));
          const found = await vision.locate(shot.png, description, shot.viewport);
          return {
            description,
            bounding_box: found.bounding_box,
            center_x: found.center_x,
            center_y: found.center_y,
            tokens_used: found.tokens_used,
            costs_usd: found.costs_usd,
            duration_seconds: found.duration_seconds,
          };
        } catch (err) {
          if (err instanceof VisionError) {
            throw new BrowserFailure(`Vision search failed: ${err.message}`, page.id);
          }
          throw err;
        }
      },
    }),
  ];
}
