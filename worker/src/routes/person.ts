import type { IncomingMessage, ServerResponse } from 'node:http';
import Joi from 'joi';
import { BadRequest, Busy } from '../errors';
import type { Route } from '../http/route';
import { pageRoute } from '../http/route';
import { envelope } from '../http/schemas';
import type { PersonAsks, StandingAsk } from '../live/asks';

/** How long a call may wait for the person (seconds): the default and the most. */
export const ASK_PERSON_DEFAULT_S = 600;
export const ASK_PERSON_MAX_S = 3600;

interface AskBody {
  message: string;
  timeout: number;
  wait: boolean;
}

/** The first value of a header that proxies may have sent as a comma-separated list. */
function firstValue(v: string | string[] | undefined): string | null {
  const first = (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim();
  return first ? first : null;
}

/** A host and port as a URL may hold them: names, IPv4, bracketed IPv6; nothing else. */
const HOST = /^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The address of the live view as the caller reached this worker: behind a proxy its
 * `X-Forwarded-Host` and `X-Forwarded-Proto`, else the `Host` it sent, over http. The token
 * goes in the fragment, which a browser never sends to the server.
 */
export function liveUrl(req: IncomingMessage, token: string): string | null {
  const forwarded = firstValue(req.headers['x-forwarded-host']);
  const host = [forwarded, firstValue(req.headers.host)].find((h) => h !== null && HOST.test(h));
  if (!host) return null;
  const proto = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
  const scheme = proto === 'https' ? 'https' : 'http';
  return `${scheme}://${host}/vnc/#token=${encodeURIComponent(token)}`;
}

/** Waits for the ask's outcome; a caller that waits and started it ends it when it leaves. */
function outcomeOf(ask: StandingAsk, res: ServerResponse, owner: boolean): Promise<boolean> {
  if (!owner) return ask.outcome;
  const gone = (): void => ask.end(false);
  res.once('close', gone);
  return ask.outcome.finally(() => res.off('close', gone));
}

/**
 * `ask-person`: the call's client (an agent) hands the page to the person at the live view.
 * While the ask stands, the page says what is asked of them, and their "Take control" is
 * granted at once under the client's own lease, as for a plugin that waits for a one-time
 * code. It answers a `live_url` that opens the live view with no key, limited to this page,
 * until the ask ends: when the person has taken control of this page and handed it back (or
 * moved to another page), when `timeout` runs out (`handed_back` false), or when the caller
 * that waits for it leaves. With `wait: false` it answers at once and the ask stands until the
 * hand-back or the timeout; a later call with `wait: true` joins it and answers its outcome.
 */
export function personRoutes(asks: PersonAsks | undefined): Route[] {
  return [
    pageRoute<AskBody>({
      name: 'ask-person',
      method: 'post',
      path: '/api/v1/ops/:page_id/ask-person',
      auth: true,
      tag: 'Ops',
      summary:
        'Hand the page to the person at the live view (a link for them) and wait for it back',
      page: 'leased',
      body: Joi.object<AskBody, true>({
        message: Joi.string()
          .trim()
          .min(1)
          .max(500)
          .required()
          .description('what is asked of the person (a call joining a standing ask keeps its own)'),
        timeout: Joi.number()
          .greater(0)
          .max(ASK_PERSON_MAX_S)
          .default(ASK_PERSON_DEFAULT_S)
          .description('seconds the ask stands, and the life of its live_url'),
        wait: Joi.boolean()
          .default(true)
          .description(
            'wait for the hand-back (or join the ask standing on the page); false answers at once with live_url',
          ),
      }),
      response: envelope({
        url: Joi.string().required(),
        handed_back: Joi.boolean().required(),
        waited_s: Joi.number().required(),
        message: Joi.string().required(),
        live_url: Joi.string()
          .allow(null)
          .required()
          .description('the live view for the person, limited to this page, until the ask ends'),
        expires_at: Joi.string()
          .allow(null)
          .required()
          .description('when the ask times out and live_url stops working (ISO 8601)'),
      }),
      handler: async ({ page, body, req, res }) => {
        if (!asks) {
          throw new BadRequest(
            'The live view is off for this worker: no person can take the page over',
            page.id,
          );
        }
        let ask = asks.of(page);
        const joined = ask !== null;
        if (!ask) {
          if (page.awaitingPerson !== null) {
            throw new Busy(
              `The page already waits for the person: ${page.awaitingPerson}`,
              page.id,
            );
          }
          ask = asks.begin(page, body.message, body.timeout);
        }
        const link = ask.link;
        const answer = {
          url: page.url,
          live_url: link ? liveUrl(req, link.token) : null,
          expires_at: link ? new Date(link.exp * 1000).toISOString() : null,
        };
        if (!body.wait) {
          return {
            ...answer,
            handed_back: false,
            waited_s: 0,
            message: `Waiting for the person: live_url opens this page to them until ${answer.expires_at ?? 'the timeout'}`,
          };
        }
        const handedBack = await outcomeOf(ask, res, !joined);
        const waited = Math.round((Date.now() - ask.started) / 100) / 10;
        return {
          ...answer,
          // Where the person left the page.
          url: page.url,
          handed_back: handedBack,
          waited_s: waited,
          message: handedBack
            ? 'The person took the page over and handed it back'
            : `Nobody took the page over and handed it back within ${ask.timeoutS} s`,
        };
      },
    }),
  ];
}
