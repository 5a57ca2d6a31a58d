import type { IncomingMessage, ServerResponse } from 'node:http';
import type Joi from 'joi';
import { SYSTEM_PATHS, navigatorStatusSchema, poolStatusSchema } from '@persona-browser/contracts';
import type { Navigator } from '../browser/navigator';
import { ApiError } from '../errors';
import type { Logger } from '@persona-browser/service-kit';
import { poolStatus } from '../browser/pool-view';
import { ResponseCheck } from './response-check';

type Send = (res: ServerResponse, status: number, body: unknown, schema: Joi.Schema) => void;

function send(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

/**
 * The two status reads that monitors poll hardest, answered before express sees them: they
 * take no auth, no body and are not request-logged, so the result is the same as the routes in
 * routes/system.ts (which still document them), at a third of the CPU per request (measured
 * by `npm run bench`). Anything else, or any other method, falls through.
 */
export function fastStatus(
  navigator: Navigator,
  /** Given (VALIDATE_RESPONSES), every body is checked as the routes' bodies are. */
  checkWith: Logger | null = null,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const reply: Send = checkWith
    ? (res, status, body, schema) => {
        const why = ResponseCheck.mismatch(ResponseCheck.schemaFor(status, body, schema), body);
        if (why === null) return send(res, status, body);
        checkWith.error('response does not match its declared schema', { status, why });
        send(res, 500, { success: false, error: `Response did not match: ${why}`, page_id: null });
      }
    : (res, status, body) => send(res, status, body);
  return (req, res) => {
    if (req.method !== 'GET' || !req.url) return false;
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    if (path === SYSTEM_PATHS.status) {
      reply(res, 200, navigator.status(), navigatorStatusSchema);
      return true;
    }
    if (path === SYSTEM_PATHS.pages) {
      try {
        reply(res, 200, poolStatus(navigator), poolStatusSchema);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        reply(
          res,
          err.status,
          { success: false, error: err.message, page_id: null },
          poolStatusSchema,
        );
      }
      return true;
    }
    return false;
  };
}
