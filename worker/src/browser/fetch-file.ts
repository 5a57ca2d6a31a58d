import type { Call } from './call';
import type { ManagedPage } from './managed-page';
import { BrowserFailure } from '../errors';

/** A file larger than this is refused unless the caller allows more. */
export const DEFAULT_MAX_FILE_BYTES = 100 * 1024 * 1024;
/** IO.read's chunk: large enough that a photo takes a few round trips. */
const CHUNK_BYTES = 1024 * 1024;

export interface LoadedFile {
  status: number;
  content_type: string | null;
  bytes: Buffer;
}

/**
 * Loads `url` for the page's main frame through the browser's network stack
 * (Network.loadNetworkResource): the frame's cookies, the persona's proxy and user agent, the
 * HTTP cache. Nothing runs in the page, so its scripts cannot see or hook the load. The body
 * is streamed with IO.read and refused past `maxBytes`.
 */
export async function fetchFile(
  mp: ManagedPage,
  call: Call,
  url: string,
  maxBytes = DEFAULT_MAX_FILE_BYTES,
): Promise<LoadedFile> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BrowserFailure(`Cannot load ${url}: not an absolute URL`, mp.id);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new BrowserFailure(`Cannot load ${url}: only http and https addresses load`, mp.id);
  }
  const tree = await mp.cdp(call, (s) => s.send('Page.getFrameTree'));
  const { resource } = await mp.cdp(call, (s) =>
    s.send('Network.loadNetworkResource', {
      frameId: tree.frameTree.frame.id,
      url: parsed.href,
      options: { disableCache: false, includeCredentials: true },
    }),
  );
  const headers = Object.fromEntries(
    Object.entries(resource.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
  );
  const type = headers['content-type']?.split(';')[0]?.trim().toLowerCase() || null;
  if (resource.stream === undefined) {
    // An HTTP error without a body is still an answer; a network error is not.
    if (resource.httpStatusCode !== undefined) {
      return { status: resource.httpStatusCode, content_type: type, bytes: Buffer.alloc(0) };
    }
    const why = resource.netErrorName ?? 'no response';
    throw new BrowserFailure(`Cannot load ${parsed.href}: ${why}`, mp.id);
  }
  const stream = resource.stream;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const part = await mp.cdp(call, (s) =>
        s.send('IO.read', { handle: stream, size: CHUNK_BYTES }),
      );
      const chunk = Buffer.from(part.data, part.base64Encoded ? 'base64' : 'utf8');
      size += chunk.length;
      if (size > maxBytes) {
        throw new BrowserFailure(
          `Cannot load ${parsed.href}: larger than ${maxBytes} bytes`,
          mp.id,
        );
      }
      chunks.push(chunk);
      if (part.eof) break;
    }
  } finally {
    await mp.cdp(call, (s) => s.send('IO.close', { handle: stream })).catch(() => undefined);
  }
  return {
    status: resource.httpStatusCode ?? 200,
    content_type: type,
    bytes: Buffer.concat(chunks),
  };
}
