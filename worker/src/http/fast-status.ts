import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Navigator } from '../browser/navigator';
import { ApiError } from '../errors';
import { poolStatus } from '../routes/pool-view';

const STATUS = '/api/v1/system/status';
const PAGES = '/api/v1/system/status/pages';

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
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'GET' || !req.url) return false;
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    if (path === STATUS) {
      send(res, 200, navigator.status());
      return true;
    }
    if (path === PAGES) {
      try {
        send(res, 200, poolStatus(navigator));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        send(res, err.status, { success: false, error: err.message, page_id: null });
      }
      return true;
    }
    return false;
  };
}
