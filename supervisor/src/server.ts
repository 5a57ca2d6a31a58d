import http from 'node:http';
import type { SupervisorStatus } from '@persona-browser/contracts';
import { SUPERVISOR_PATHS } from '@persona-browser/contracts';

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/**
 * The supervisor's one route, `GET /api/supervisor`, behind the service key (the waker relays
 * it on its own port). It answers while the waker is down, which is when it matters most.
 */
export function createStatusServer(
  status: () => SupervisorStatus,
  serviceKey: string | null,
): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://supervisor');
    if (url.pathname !== SUPERVISOR_PATHS.status) {
      return send(res, 404, { error: `no such route: ${req.method} ${url.pathname}` });
    }
    if (req.method !== 'GET') return send(res, 405, { error: 'only GET is served here' });
    if (!serviceKey) {
      return send(res, 500, { error: 'SERVICE_KEY is not set: the status route is locked' });
    }
    if (req.headers.authorization !== `Bearer ${serviceKey}`) {
      return send(res, 401, { error: 'missing or wrong Authorization: Bearer <SERVICE_KEY>' });
    }
    send(res, 200, status());
  });
}
