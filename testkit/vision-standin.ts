import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

/**
 * A loopback stand-in for the Gemini `generateContent` API, the one third-party service that
 * search-object calls. It checks each request the way the real service would read it (path
 * with the model, `x-goog-api-key`, an inline PNG that really decodes, the prompt text), records
 * what it saw, and answers like the service: `candidates[0].content.parts[0].text` holding JSON
 * `[{box_2d: [ymin, xmin, ymax, xmax], label}]` on a 0–1000 scale, plus `usageMetadata`; errors
 * as `{error: {code, message, status}}`.
 */

export type Box2d = [number, number, number, number];

/** How the stand-in treats a request made with a given key. */
export type KeyBehaviour =
  /** A normal answer: the configured object whose description is in the prompt, else `[]`. */
  | { kind: 'answer' }
  /** 429 RESOURCE_EXHAUSTED, as a free key that is rate-limited or out of quota gets. */
  | { kind: 'quota' }
  /** 403 PERMISSION_DENIED. */
  | { kind: 'denied' }
  /** 400 INVALID_ARGUMENT "API key not valid" (what an unknown key gets). */
  | { kind: 'invalid' }
  /** A normal answer, but only after `ms`. */
  | { kind: 'slow'; ms: number }
  /** Any other error answer. */
  | { kind: 'fail'; code: number; status: string; message: string }
  /** 200 with this text as the model's answer (for unreadable answers). */
  | { kind: 'text'; text: string };

export interface SeenRequest {
  method: string;
  path: string;
  /** The `x-goog-api-key` header, or null when absent. */
  key: string | null;
  /** Whatever the client put in the query string (a key must never travel there). */
  query: string;
  prompt: string;
  image: { width: number; height: number } | null;
  responseMimeType: unknown;
  /** Everything wrong with the request; a request with problems is answered 400. */
  problems: string[];
  /** What the stand-in answered. */
  status: number;
  usage: Usage | null;
}

interface Usage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
}

export interface VisionStandin {
  url: string;
  model: string;
  /** Behaviour per API key; a key not in the map is refused like an unknown key. */
  keys: Map<string, KeyBehaviour>;
  /** What the "model" finds: a description (as it appears in the prompt) to its box. */
  objects: Map<string, Box2d>;
  /** When set, every inline PNG must have exactly this pixel size. */
  expectImage: { width: number; height: number } | null;
  /** Thinking tokens to report in usageMetadata (0: the field is left out). */
  thoughts: number;
  requests: SeenRequest[];
  reset(): void;
  close(): Promise<void>;
}

/** The box a perfect model would give for a CSS rectangle in a viewport of the given size. */
export function boxFor(
  rect: { left: number; top: number; width: number; height: number },
  viewport: { width: number; height: number },
): Box2d {
  const sx = (v: number): number => Math.round((v / viewport.width) * 1000);
  const sy = (v: number): number => Math.round((v / viewport.height) * 1000);
  return [sy(rect.top), sx(rect.left), sy(rect.top + rect.height), sx(rect.left + rect.width)];
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Decodes a PNG far enough to know it is one: signature, every chunk's CRC, IHDR, and IDAT
 * data that inflates to exactly the scanlines the header promises, each with a valid filter.
 */
export function decodePng(buf: Buffer): { width: number; height: number } {
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (buf.length < 8 || !buf.subarray(0, 8).equals(sig)) throw new Error('no PNG signature');
  let at = 8;
  let header: { width: number; height: number; depth: number; type: number; lace: number } | null =
    null;
  const idat: Buffer[] = [];
  let ended = false;
  while (at + 12 <= buf.length && !ended) {
    const len = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (data.length !== len || at + 12 + len > buf.length) throw new Error(`${type} is cut short`);
    const crc = buf.readUInt32BE(at + 8 + len);
    if (zlib.crc32(buf.subarray(at + 4, at + 8 + len)) !== crc) throw new Error(`bad CRC: ${type}`);
    if (type === 'IHDR') {
      header = {
        width: data.readUInt32BE(0),
        height: data.readUInt32BE(4),
        depth: data.readUInt8(8),
        type: data.readUInt8(9),
        lace: data.readUInt8(12),
      };
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') ended = true;
    at += 12 + len;
  }
  if (!header) throw new Error('no IHDR');
  if (!ended) throw new Error('no IEND');
  const channels = CHANNELS[header.type];
  if (!channels) throw new Error(`unknown colour type ${header.type}`);
  if (header.lace !== 0) throw new Error('interlaced PNGs are not expected');
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const row = 1 + Math.ceil((header.width * channels * header.depth) / 8);
  if (raw.length !== row * header.height) throw new Error('pixel data does not match the size');
  for (let y = 0; y < header.height; y += 1) {
    if ((raw[y * row] ?? 255) > 4) throw new Error(`bad filter on row ${y}`);
  }
  return { width: header.width, height: header.height };
}

/** A valid solid-colour RGB PNG of the given size (for client tests without a browser). */
export function makePng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // RGB
  const row = Buffer.alloc(1 + width * 3, 0x80);
  row[0] = 0; // filter: none
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Gemini 2.x image cost: 258 tokens for a small image, else 258 per 768×768 tile. */
const imageTokens = (w: number, h: number): number =>
  w <= 384 && h <= 384 ? 258 : Math.ceil(w / 768) * Math.ceil(h / 768) * 258;

type Json = Record<string, any>;

function inspect(req: http.IncomingMessage, raw: string, model: string, s: VisionStandin) {
  const url = new URL(req.url ?? '/', 'http://standin');
  const header = req.headers['x-goog-api-key'];
  const key = (Array.isArray(header) ? header[0] : header) ?? null;
  const seen: SeenRequest = {
    method: req.method ?? '',
    path: url.pathname,
    key,
    query: url.search,
    prompt: '',
    image: null,
    responseMimeType: undefined,
    problems: [],
    status: 0,
    usage: null,
  };
  const problem = (p: string): number => seen.problems.push(p);
  if (seen.method !== 'POST') problem(`method ${seen.method}, expected POST`);
  const expectedPath = `/v1beta/models/${model}:generateContent`;
  if (decodeURIComponent(seen.path) !== expectedPath) problem(`path ${seen.path}`);
  if (url.searchParams.has('key')) problem('an API key was sent in the URL');
  if (!/^application\/json/.test(req.headers['content-type'] ?? '')) problem('not JSON');
  let body: Json;
  try {
    body = JSON.parse(raw) as Json;
  } catch {
    problem('body is not JSON');
    return seen;
  }
  const parts: Json[] = body.contents?.[0]?.parts ?? [];
  if (!Array.isArray(parts) || parts.length === 0) problem('no contents[0].parts');
  const images = parts.filter((p) => p.inline_data ?? p.inlineData);
  const texts = parts.filter((p) => typeof p.text === 'string');
  if (images.length !== 1) problem(`${images.length} inline images, expected 1`);
  if (texts.length < 1) problem('no text part');
  seen.prompt = texts.map((p) => p.text as string).join('\n');
  const inline: Json | undefined = images[0]?.inline_data ?? images[0]?.inlineData;
  if (inline) {
    const mime = inline.mime_type ?? inline.mimeType;
    if (mime !== 'image/png') problem(`image mime type ${String(mime)}`);
    try {
      const data = String(inline.data ?? '');
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data)) throw new Error('data is not base64');
      seen.image = decodePng(Buffer.from(data, 'base64'));
    } catch (err) {
      problem(`image does not decode as PNG: ${(err as Error).message}`);
    }
  }
  const want = s.expectImage;
  if (want && seen.image && (seen.image.width !== want.width || seen.image.height !== want.height))
    problem(
      `image is ${seen.image.width}x${seen.image.height}, expected ${want.width}x${want.height}`,
    );
  seen.responseMimeType = body.generationConfig?.responseMimeType;
  if (seen.responseMimeType !== 'application/json') problem('responseMimeType is not JSON');
  return seen;
}

const errorBody = (code: number, status: string, message: string, reason?: string): Json => ({
  error: {
    code,
    message,
    status,
    ...(reason
      ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason }] }
      : {}),
  },
});

export async function startVisionStandin(model = 'gemini-2.5-flash'): Promise<VisionStandin> {
  const timers = new Set<NodeJS.Timeout>();
  const state: VisionStandin = {
    url: '',
    model,
    keys: new Map(),
    objects: new Map(),
    expectImage: null,
    thoughts: 0,
    requests: [],
    reset() {
      state.keys.clear();
      state.objects.clear();
      state.expectImage = null;
      state.thoughts = 0;
      state.requests.length = 0;
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const answer = (seen: SeenRequest, text: string): Json => {
    const prompt =
      Math.ceil(seen.prompt.length / 4) +
      imageTokens(seen.image?.width ?? 0, seen.image?.height ?? 0);
    const out = Math.ceil(text.length / 4);
    const usage: Usage = {
      promptTokenCount: prompt,
      candidatesTokenCount: out,
      totalTokenCount: prompt + out + state.thoughts,
      ...(state.thoughts ? { thoughtsTokenCount: state.thoughts } : {}),
    };
    seen.usage = usage;
    return {
      candidates: [
        { content: { parts: [{ text }], role: 'model' }, finishReason: 'STOP', index: 0 },
      ],
      usageMetadata: usage,
      modelVersion: model,
      responseId: `standin-${state.requests.length}`,
    };
  };

  const detect = (seen: SeenRequest): string => {
    for (const [description, box] of state.objects) {
      if (seen.prompt.includes(description))
        return JSON.stringify([{ box_2d: box, label: description }]);
    }
    return '[]';
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = inspect(req, Buffer.concat(chunks).toString('utf8'), model, state);
      state.requests.push(seen);
      const send = (status: number, body: Json): void => {
        seen.status = status;
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(JSON.stringify(body));
      };
      if (!seen.key) {
        return send(
          403,
          errorBody(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers."),
        );
      }
      if (seen.problems.length) {
        return send(400, errorBody(400, 'INVALID_ARGUMENT', seen.problems.join('; ')));
      }
      const behaviour = state.keys.get(seen.key) ?? { kind: 'invalid' };
      switch (behaviour.kind) {
        case 'answer':
          return send(200, answer(seen, detect(seen)));
        case 'slow': {
          const timer = setTimeout(() => {
            timers.delete(timer);
            send(200, answer(seen, detect(seen)));
          }, behaviour.ms);
          timers.add(timer);
          return;
        }
        case 'text':
          return send(200, answer(seen, behaviour.text));
        case 'quota':
          return send(
            429,
            errorBody(
              429,
              'RESOURCE_EXHAUSTED',
              'You exceeded your current quota, please check your plan and billing details.',
            ),
          );
        case 'denied':
          return send(
            403,
            errorBody(403, 'PERMISSION_DENIED', 'Permission denied: Consumer has been suspended.'),
          );
        case 'invalid':
          return send(
            400,
            errorBody(
              400,
              'INVALID_ARGUMENT',
              'API key not valid. Please pass a valid API key.',
              'API_KEY_INVALID',
            ),
          );
        case 'fail':
          return send(
            behaviour.code,
            errorBody(behaviour.code, behaviour.status, behaviour.message),
          );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
