import http from 'node:http';
import type { SupervisorStatus } from '@persona-browser/contracts';
import { SUPERVISOR_PATHS } from '@persona-browser/contracts';
import {
  AuthError,
  AuthGuard,
  KEY_ONLY,
  answerWrongMethod,
  errorEnvelope,
  sendJson,
} from '@persona-browser/service-kit';

/**
 * The supervisor's one route, `GET /api/supervisor`, behind the service key (the waker relays
 * it on its own port). It answers while the waker is down, which is when it matters most.
 * Errors are the product's: the envelope, 405 with `Allow`, and the `{detail}` of auth; an
 * address that keeps presenting wrong keys meets 429 as at every door of the product.
 */
export function createStatusServer(
  status: () => SupervisorStatus,
  serviceKey: string | null,
  failuresPerMinute?: number,
): http.Server {
  const guard = new AuthGuard({ serviceKey, failuresPerMinute });
  return http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://supervisor');
    if (pathname !== SUPERVISOR_PATHS.status) {
      return sendJson(res, 404, errorEnvelope(`No route ${req.method} ${pathname}`));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return answerWrongMethod(req, res, pathname, ['GET']);
    }
    try {
      guard.check(
        { authorization: req.headers.authorization, address: req.socket.remoteAddress },
        KEY_ONLY,
        null,
      );
    } catch (err) {
      if (err instanceof AuthError) return sendJson(res, err.status, err.body, err.headers);
      throw err;
    }
    sendJson(res, 200, status());
  });
}
