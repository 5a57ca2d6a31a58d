import http from 'node:http';
import type { SupervisorStatus } from '@persona-browser/contracts';
import { SUPERVISOR_PATHS } from '@persona-browser/contracts';
import {
  AuthError,
  answerWrongMethod,
  checkServiceKey,
  errorEnvelope,
  sendJson,
} from '@persona-browser/service-kit';

/**
 * The supervisor's one route, `GET /api/supervisor`, behind the service key (the waker relays
 * it on its own port). It answers while the waker is down, which is when it matters most.
 * Errors are the product's: the envelope, 405 with `Allow`, and the `{detail}` of auth.
 */
export function createStatusServer(
  status: () => SupervisorStatus,
  serviceKey: string | null,
): http.Server {
  return http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://supervisor');
    if (pathname !== SUPERVISOR_PATHS.status) {
      return sendJson(res, 404, errorEnvelope(`No route ${req.method} ${pathname}`));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return answerWrongMethod(req, res, pathname, ['GET']);
    }
    try {
      checkServiceKey(req.headers.authorization, serviceKey);
    } catch (err) {
      if (err instanceof AuthError) return sendJson(res, err.status, err.body);
      throw err;
    }
    sendJson(res, 200, status());
  });
}
