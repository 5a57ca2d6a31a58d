import crypto from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createServer } from '../src/app';
import { Navigator } from '../src/browser/navigator';
import { CaptureRegistry } from '../src/capture/registry';
import { RequestTracker } from '../src/http/request-tracker';
import { createLogger } from '@persona-browser/service-kit';
import { RequestLog } from '../src/log/request-log';
import { MediaStore } from '../src/media/store';
import { ProxyErrors } from '../src/system-info';
import { VisionClient } from '../src/vision/client';
import { Authenticator } from '../src/http/auth';
import { readLogRows } from '@persona-browser/testkit/request-log-file';
import { KEY, startWorker } from '@persona-browser/testkit/worker';

/**
 * Media (docs/api.md) through the real HTTP application on an ephemeral port: what a client
 * downloading a plugin's file receives, once.
 */

const TTL_MS = 300;
const CAP = 64 * 1024;
const GONE = {
  success: false,
  error: 'Media link unknown, expired or already downloaded',
  page_id: null,
};

let dir: string;
let media: MediaStore;
let server: http.Server;
let base: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-media-'));
  media = new MediaStore({ ttlMs: TTL_MS, capBytes: CAP });
  const logger = createLogger({ secrets: [KEY], level: 'error' });
  server = createServer({
    // Never started: the media route needs no browser.
    navigator: new Navigator({
      executablePath: '/usr/bin/chromium',
      profileDir: path.join(dir, 'profile'),
      display: null,
      slowmoMs: 0,
      logger,
    }),
    tracker: new RequestTracker(new RequestLog(dir)),
    proxyErrors: new ProxyErrors(null),
    commit: async () => null,
    persona: null,
    repoRoot: dir,
    dataDir: dir,
    wakerUrl: 'http://127.0.0.1:1',
    serviceKey: KEY,
    auth: new Authenticator({ serviceKey: KEY, persona: null }),
    logger,
    version: 'test',
    validateResponses: true,
    allowFileUrls: false,
    media,
    captures: new CaptureRegistry(),
    vision: new VisionClient({
      baseUrl: 'http://127.0.0.1:1',
      model: 'none',
      keyGratis: null,
      keyPaga: null,
      priceInputPerMTok: 0,
      priceOutputPerMTok: 0,
      timeoutMs: 1000,
    }),
    shutdown: () => undefined,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  media?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  return fetch(base + url, { method, headers: { authorization: `Bearer ${KEY}`, ...headers } });
}

/** Eight bytes of PNG signature, then every byte value, including NUL, CR, LF and 0xFF. */
function pngLike(): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  return Buffer.concat([signature, all, crypto.randomBytes(4096)]);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('GET /api/v1/media/{token}', () => {
  test('serves the exact bytes once, with the download headers', async () => {
    const bytes = pngLike();
    const { media_url } = media.put(bytes, 'Prüfung ✓.pdf', 'image/png');
    expect(media_url).toMatch(/^\/api\/v1\/media\/[A-Za-z0-9_-]{22,}$/);

    const r = await get(media_url);
    expect(r.status).toBe(200);
    const body = Buffer.from(await r.arrayBuffer());
    expect(body.length).toBe(bytes.length);
    expect(Buffer.compare(body, bytes)).toBe(0);
    expect(r.headers.get('content-type')).toBe('image/png');
    expect(r.headers.get('content-length')).toBe(String(bytes.length));
    expect(r.headers.get('cache-control')).toBe('no-store');
    const disposition = r.headers.get('content-disposition') ?? '';
    expect(disposition).toMatch(/^attachment; filename="[^"]+"/);
    expect(disposition).toContain('filename="Prufung _.pdf"');
    const star = /filename\*=UTF-8''(\S+)/.exec(disposition)?.[1] ?? '';
    expect(decodeURIComponent(star)).toBe('Prüfung ✓.pdf');

    const again = await get(media_url);
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual(GONE);
    expect(media.stats()).toMatchObject({ files: 0, bytes: 0 });
  });

  test('text files come back byte for byte, without a charset added', async () => {
    const text = Buffer.from('id;name\n1;Zoë\n', 'utf8');
    const { media_url } = media.put(text, 'export.csv', 'text/csv');
    const r = await get(media_url);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv');
    expect(Buffer.compare(Buffer.from(await r.arrayBuffer()), text)).toBe(0);
  });

  test('an empty file is still a file', async () => {
    const { media_url } = media.put(Buffer.alloc(0), 'empty.txt', 'text/plain');
    const r = await get(media_url);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-length')).toBe('0');
    expect((await r.arrayBuffer()).byteLength).toBe(0);
    expect((await get(media_url)).status).toBe(404);
  });

  test('two concurrent downloads of one link: exactly one gets the bytes', async () => {
    const bytes = crypto.randomBytes(20_000);
    const { media_url } = media.put(bytes, 'race.bin', 'application/octet-stream');
    const replies = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const r = await get(media_url);
        return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
      }),
    );
    const ok = replies.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(Buffer.compare(ok[0]!.body, bytes)).toBe(0);
    for (const r of replies.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(404);
      expect(JSON.parse(r.body.toString())).toEqual(GONE);
    }
  });

  test('an unclaimed link expires after the ttl', async () => {
    const { media_url } = media.put(Buffer.from('late'), 'late.txt', 'text/plain');
    // Time itself is tested: past the link's ttl.
    await sleep(TTL_MS * 2);
    const r = await get(media_url);
    expect(r.status).toBe(404);
    expect(await r.json()).toEqual(GONE);
    expect(media.stats()).toMatchObject({ files: 0, bytes: 0 });
  });

  test('an unknown token is 404 with the envelope', async () => {
    for (const token of [crypto.randomBytes(24).toString('base64url'), 'x', '%E2%9C%93']) {
      const r = await get(`/api/v1/media/${token}`);
      expect({ token, status: r.status, body: await r.json() }).toEqual({
        token,
        status: 404,
        body: GONE,
      });
    }
  });

  test('a missing or wrong key is 401 and does not use up the download', async () => {
    const bytes = Buffer.from('secret');
    const { media_url } = media.put(bytes, 's.txt', 'text/plain');
    for (const headers of [{ authorization: 'Bearer wrong' }, { authorization: '' }]) {
      const r = await get(media_url, headers);
      expect(r.status).toBe(401);
      expect(await r.json()).toEqual({ detail: 'Invalid API key' });
    }
    const bare = await fetch(base + media_url);
    expect(bare.status).toBe(401);
    expect(await bare.json()).toEqual({ detail: 'Invalid API key' });

    const r = await get(media_url);
    expect(r.status).toBe(200);
    expect(Buffer.from(await r.arrayBuffer()).toString()).toBe('secret');
  });

  test('a HEAD request shows the headers without using up the download', async () => {
    const bytes = Buffer.alloc(1234, 1);
    const { media_url } = media.put(bytes, 'head.bin', 'application/octet-stream');
    const head = await get(media_url, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('1234');
    expect(head.headers.get('content-disposition')).toContain('filename="head.bin"');

    const r = await get(media_url);
    expect(r.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await r.arrayBuffer()), bytes)).toBe(0);
  });

  test('downloads are rows of kind media in the request log, with the status sent', async () => {
    const { media_url } = media.put(Buffer.from('logged'), 'l.txt', 'text/plain');
    await (await get(media_url)).arrayBuffer();
    await (await get(media_url)).arrayBuffer();
    const ends = readLogRows(dir).filter((row) => row.event === 'end' && row.path === media_url);
    expect(ends.map((row) => [row.kind, row.status])).toEqual([
      ['media', '200'],
      ['media', '404'],
    ]);
  });

  test('the OpenAPI document lists the download as a binary response', async () => {
    const r = await fetch(`${base}/openapi.json`);
    const doc = (await r.json()) as { paths: Record<string, any> };
    const op = doc.paths['/api/v1/media/{token}']?.get;
    expect(op.tags).toEqual(['Media']);
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(op.responses['200'].content).toEqual({
      'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
    });
  });
});

describe('the worker program', () => {
  test('mounts the media route: a random token is 404 with the media envelope', async () => {
    const w = await startWorker({ env: { MEDIA_TTL_SECONDS: '1' } });
    try {
      const r = await w.call(
        'GET',
        `/api/v1/media/${crypto.randomBytes(24).toString('base64url')}`,
      );
      expect({ status: r.status, body: r.body }).toEqual({ status: 404, body: GONE });
    } finally {
      await w.stop();
    }
  });
});
