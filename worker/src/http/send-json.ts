import type { Response } from 'express';
import { encodeJson, withJsonParsed } from '../json-text';
import { ResponseCheck } from './response-check';

/**
 * Sends `body` as the API's JSON reply, encoded once into the bytes that go out: the headers
 * are the ones `res.json` sends (`application/json; charset=utf-8` and the length in bytes),
 * without express's detour through `res.send` (content-type parsing, freshness, HEAD and 204
 * handling a success envelope never needs). A field that is JSON text already (a page's HTML
 * as Chromium escaped it, see JsonText) goes in as it is. The bytes are handed to the socket as
 * they are; a string would be joined to the header text and encoded again there. Under
 * VALIDATE_RESPONSES the body is checked like every other, as the value it stands for.
 */
export function sendJson(res: Response, body: Record<string, unknown>): void {
  let bytes = encodeJson(body);
  if (ResponseCheck.watching(res)) {
    const parsed = withJsonParsed(body);
    const vetted = ResponseCheck.vetted(res, parsed);
    if (vetted !== parsed) bytes = Buffer.from(JSON.stringify(vetted));
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes.length);
  // A HEAD request (express serves it with the GET route) gets the headers only.
  res.end(res.req.method === 'HEAD' ? undefined : bytes);
}
