import type { Response } from 'express';
import { encodeJson, withJsonParsed } from '../json-text';
import { ResponseCheck } from './response-check';

/**
 * Sends `body` as the API's JSON reply, encoded once into the bytes that go out: the headers
 * are the ones `res.json` sends (`application/json; charset=utf-8` and the length in bytes),
 * without express's detour through `res.send` (content-type parsing, freshness, HEAD and 204
 * handling a success envelope never needs). A field that is JSON text already (a page's HTML
 * as Chromium escaped it, see JsonText) goes in as the buffer it came in, never copied. The
 * bytes are handed to the socket as they are; a string would be joined to the header text and
 * encoded again there. Under
 * VALIDATE_RESPONSES the body is checked like every other, as the value it stands for.
 */
export function sendJson(res: Response, body: Record<string, unknown>): void {
  let parts = encodeJson(body);
  if (ResponseCheck.watching(res)) {
    const parsed = withJsonParsed(body);
    const vetted = ResponseCheck.vetted(res, parsed);
    if (vetted !== parsed) parts = [Buffer.from(JSON.stringify(vetted))];
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader(
    'Content-Length',
    parts.reduce((sum, part) => sum + part.length, 0),
  );
  // A HEAD request (express serves it with the GET route) gets the headers only.
  if (res.req.method === 'HEAD') {
    res.end();
    return;
  }
  // Corked: the headers and every piece leave in one write to the socket.
  res.cork();
  for (const part of parts.slice(0, -1)) res.write(part);
  res.end(parts.at(-1));
}
