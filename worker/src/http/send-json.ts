import type { Response } from 'express';
import { ResponseCheck } from './response-check';

/**
 * Sends `body` as the API's JSON reply, encoded once into the bytes that go out: the headers
 * are the ones `res.json` sends (`application/json; charset=utf-8` and the length in bytes),
 * without express's detour through `res.send` (content-type parsing, freshness, HEAD and 204
 * handling a success envelope never needs). The bytes are handed to the socket as they are;
 * a string would be joined to the header text and encoded again there. Under
 * VALIDATE_RESPONSES the body is checked like every other.
 */
export function sendJson(res: Response, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(ResponseCheck.vetted(res, body)));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes.length);
  // A HEAD request (express serves it with the GET route) gets the headers only.
  res.end(res.req.method === 'HEAD' ? undefined : bytes);
}
