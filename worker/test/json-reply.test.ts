import http from 'node:http';
import { buffer } from 'node:stream/consumers';
import Joi from 'joi';
import { Navigator } from '../src/browser/navigator';
import type { Route } from '../src/http/route';
import { route } from '../src/http/route';
import { envelope } from '../src/http/schemas';
import type { LoopbackSite } from '@persona-browser/testkit/loopback';
import { capturedLogger } from './captured-logger';
import { serveRoutes } from './serve-routes';

/**
 * A route's success reply as bytes on the wire, through the route layer and the response check
 * the test suite runs with: a reply the size of a page's HTML, in several scripts, arrives whole
 * with its length in bytes and a JSON type in UTF-8; HEAD gets a GET's headers and no body; a
 * success that does not match its declared schema is still caught.
 */

const KEY = 'json-reply-key';
/** About 200 kB of text in one-, two-, three- and four-byte UTF-8 characters. */
const TEXT = 'Grüße aus Köln — 東京の夜景 🌃 <p class="x">\n'.repeat(5_000);

const routes: Route[] = [
  route({
    name: 'big',
    method: 'get',
    path: '/api/v1/test/big',
    auth: true,
    tag: 'Test',
    summary: 'a large reply',
    response: envelope({ text: Joi.string().required() }),
    handler: async () => ({ text: TEXT }),
  }),
  route({
    name: 'wrong',
    method: 'post',
    path: '/api/v1/test/wrong',
    auth: true,
    tag: 'Test',
    summary: 'a success that breaks its own schema',
    response: envelope({ count: Joi.number().integer().required() }),
    handler: async () => ({ count: 'many' }),
  }),
];

const logLines: Array<Record<string, unknown>> = [];
let served: LoopbackSite | undefined;
let port: number;

beforeAll(async () => {
  const logger = capturedLogger([KEY], logLines);
  // The routes here address no page: the navigator is handed over, never started.
  const navigator = new Navigator({
    executablePath: '/nonexistent',
    profileDir: '/nonexistent',
    display: null,
    slowmoMs: 0,
    logger,
  });
  served = await serveRoutes(routes, { navigator, key: KEY, logger });
  port = Number(new URL(served.url).port);
});

afterAll(() => served?.close());

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

/** One request, answered as the bytes that came over the socket. */
function raw(method: string, path: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, headers: { authorization: `Bearer ${KEY}` } },
      (res) => {
        buffer(res).then(
          (bytes) => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }),
          reject,
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('a large reply arrives whole: its Content-Length counts bytes, its type is JSON in UTF-8', async () => {
  const r = await raw('GET', '/api/v1/test/big');
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(r.headers['content-length']).toBe(String(r.bytes.length));
  const text = r.bytes.toString('utf8');
  // Many characters take more than one byte: a length in characters would cut the reply short.
  expect(r.bytes.length).toBeGreaterThan(text.length + 50_000);
  expect(JSON.parse(text)).toEqual({ success: true, page_id: null, text: TEXT });
  expect(r.headers.etag).toBeUndefined();
});

test('HEAD answers the headers a GET would, without a body', async () => {
  const get = await raw('GET', '/api/v1/test/big');
  const head = await raw('HEAD', '/api/v1/test/big');
  expect(head.status).toBe(200);
  expect(head.headers['content-type']).toBe(get.headers['content-type']);
  expect(head.headers['content-length']).toBe(get.headers['content-length']);
  expect(head.bytes.length).toBe(0);
});

test('a success that does not match its declared schema is replaced by a logged 500', async () => {
  const r = await raw('POST', '/api/v1/test/wrong');
  expect(r.status).toBe(500);
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(r.headers['content-length']).toBe(String(r.bytes.length));
  expect(JSON.parse(r.bytes.toString('utf8'))).toEqual({
    success: false,
    error: expect.stringMatching(/^Response did not match its declared schema: .*count/),
    page_id: null,
  });
  expect(logLines).toContainEqual(
    expect.objectContaining({
      message: 'response does not match its declared schema',
      path: '/api/v1/test/wrong',
      status: 200,
    }),
  );
});
