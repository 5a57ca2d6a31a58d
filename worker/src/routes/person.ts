import Joi from 'joi';
import { BadRequest, Busy } from '../errors';
import type { Route } from '../http/route';
import { pageRoute } from '../http/route';
import { envelope } from '../http/schemas';
import type { LiveControl } from '../live/control';

/** How long a call may wait for the person (seconds): the default and the most. */
export const ASK_PERSON_DEFAULT_S = 600;
export const ASK_PERSON_MAX_S = 3600;

interface AskBody {
  message: string;
  timeout: number;
}

/**
 * `ask-person`: the call's client (an agent) hands the page to the person at the live view and
 * waits for it back. While it waits, the page says what is asked of them, and their "Take
 * control" is granted at once under the client's own lease, as for a plugin that waits for a
 * one-time code. The call ends when the person has taken control of this page and handed it
 * back (or moved to another page), or when `timeout` runs out (`handed_back` false).
 */
export function personRoutes(control: LiveControl | undefined): Route[] {
  return [
    pageRoute<AskBody>({
      name: 'ask-person',
      method: 'post',
      path: '/api/v1/ops/:page_id/ask-person',
      auth: true,
      tag: 'Ops',
      summary: 'Wait for the person at the live view to take the page over and hand it back',
      page: 'leased',
      body: Joi.object<AskBody, true>({
        message: Joi.string()
          .trim()
          .min(1)
          .max(500)
          .required()
          .description('what is asked of the person'),
        timeout: Joi.number()
          .greater(0)
          .max(ASK_PERSON_MAX_S)
          .default(ASK_PERSON_DEFAULT_S)
          .description('seconds to wait for the hand-back'),
      }),
      response: envelope({
        url: Joi.string().required(),
        handed_back: Joi.boolean().required(),
        waited_s: Joi.number().required(),
        message: Joi.string().required(),
      }),
      handler: async ({ page, body, res }) => {
        if (!control) {
          throw new BadRequest(
            'The live view is off for this worker: no person can take the page over',
            page.id,
          );
        }
        if (page.awaitingPerson !== null) {
          throw new Busy(`The page already waits for the person: ${page.awaitingPerson}`, page.id);
        }
        const started = Date.now();
        page.awaitingPerson = body.message;
        let handedBack = false;
        try {
          handedBack = await new Promise<boolean>((resolve) => {
            let taken = false;
            const finish = (back: boolean): void => {
              clearTimeout(timer);
              stop();
              res.off('close', gone);
              resolve(back);
            };
            const gone = (): void => finish(false);
            const check = (): void => {
              const held = control.current();
              if (held?.pageId === page.id) taken = true;
              else if (taken) finish(true);
            };
            const timer = setTimeout(() => finish(false), body.timeout * 1000);
            const stop = control.watch(check);
            res.on('close', gone);
            check();
          });
        } finally {
          // Only what this call set: a plugin's own wait for the person may have begun since.
          if (page.awaitingPerson === body.message) page.awaitingPerson = null;
        }
        const waited = Math.round((Date.now() - started) / 100) / 10;
        return {
          url: page.url,
          handed_back: handedBack,
          waited_s: waited,
          message: handedBack
            ? 'The person took the page over and handed it back'
            : `Nobody took the page over and handed it back within ${body.timeout} s`,
        };
      },
    }),
  ];
}
