import Joi from 'joi';
import { RESOURCE_TYPES } from '../capture/lines';
import type { CaptureRegistry } from '../capture/registry';
import type { Route } from '../http/route';
import { pageRoute } from '../http/route';
import { envelope, flag } from '../http/schemas';

const str = Joi.string();
const int = Joi.number().integer();

const httpLine = Joi.object({
  seq: int.description('per page, shared with the WebSocket list, never reset'),
  ts: Joi.number().description('epoch seconds: response headers arrived, or navigation committed'),
  kind: str.valid('navigation', 'response'),
  method: str.allow(null).description('request method; null on a same-document navigation'),
  url: str.allow(''),
  resource_type: str.valid(...RESOURCE_TYPES),
  status: int
    .allow(null)
    .description(
      'HTTP status; 0 when the request failed before a response; on a navigation line the ' +
        "document's status, null for a same-document (single-page-app) URL change",
    ),
  content_type: str.allow(null, ''),
  headers: Joi.object().pattern(str, str).description('response header name to value'),
  body: str
    .allow(null, '')
    .description('only with include_body=true; null for non-text or unreadable bodies'),
  body_length: int.description('characters of a text body before any cut; bytes otherwise'),
  body_truncated: Joi.boolean().description('the body was cut at 2,000,000 characters'),
  error: str
    .allow(null)
    .description('why the body could not be read (redirect, navigation race, failure)'),
}).label('NetworkHttpLine');

const wsLine = Joi.object({
  seq: int,
  ts: Joi.number(),
  kind: str.valid('open', 'sent', 'received', 'close', 'error'),
  url: str.description("the socket's URL"),
  payload: str
    .allow(null, '')
    .description(
      'only with include_body=true: text as sent, base64 when binary; an error line carries ' +
        'its message; cut at 2,000,000 characters',
    ),
  binary: Joi.boolean(),
  payload_length: int.description('characters of text, bytes of binary, before any cut'),
}).label('NetworkWebSocketLine');

const DESCRIPTION = `Lines captured since the page was created, or since its last full load (navigate, reload,
a link to a new document): a full load empties both lists, a single-page-app URL change
(history API, fragment) only adds a \`navigation\` line. Passive: answers at once even while a
navigation, primitive or plugin holds the page. Pass the returned \`mark\` as \`since\` next time.
\`resource_type\` filters the HTTP list only; \`url_contains\` filters both lists. Without
\`include_body\` the \`body\` and \`payload\` fields are left out. A navigation line carries the URL,
and for a new document its request method, status and content type. A redirect hop is a
\`response\` line with its status and headers and \`error\` saying that no body is kept.`;

interface NetworkQuery {
  since: number;
  url_contains?: string;
  resource_type?: string;
  include_body: boolean;
}

export function networkRoutes(captures: CaptureRegistry): Route[] {
  return [
    pageRoute({
      name: 'network',
      method: 'get',
      path: '/api/v1/ops/:page_id/network',
      auth: true,
      tag: 'Ops',
      summary: 'Captured HTTP and WebSocket lines of a page (passive; never waits on the page)',
      description: DESCRIPTION,
      page: 'leased',
      query: Joi.object<NetworkQuery, true>({
        since: int.min(0).default(0).description('only lines with seq greater than this'),
        url_contains: str.allow('').description('substring the URL must contain'),
        resource_type: str
          .valid(...RESOURCE_TYPES)
          .description('HTTP lines of this type only (WebSocket lines are not filtered)'),
        include_body: flag
          .default(false)
          .description('include response bodies and WebSocket payloads'),
      }),
      response: envelope({
        url: str.allow('').required().description('the page URL'),
        mark: int
          .required()
          .description('highest seq given so far, even if filtered out; use as since'),
        blacklist: Joi.array()
          .items(str)
          .required()
          .description("patterns kept out of the capture on the page's current site"),
        http: Joi.array().items(httpLine).required(),
        websocket: Joi.array().items(wsLine).required(),
      }),
      // Passive: no page.run(), so no lock; a navigation in progress does not delay the answer.
      handler: async ({ page, query }) => {
        const capture = captures.get(page.id);
        if (!capture) {
          return {
            url: captures.redact(page.url),
            mark: 0,
            blacklist: [],
            http: [],
            websocket: [],
          };
        }
        const result = await capture.query({
          since: query.since,
          urlContains: query.url_contains,
          resourceType: query.resource_type,
          includeBody: query.include_body,
        });
        return {
          url: captures.redact(page.url),
          mark: result.mark,
          blacklist: capture.blacklistInForce(),
          http: result.http,
          websocket: result.websocket,
        };
      },
    }),
  ];
}
