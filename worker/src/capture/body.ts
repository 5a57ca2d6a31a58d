/** Deciding what a text body is, reading it, and cutting it (docs/api.md, Limits). */

export const BODY_LIMIT_CHARS = 2_000_000;

/**
 * Text, by MIME type: `text/*`, JSON, JavaScript, XML (and `+json`/`+xml` types such as SVG),
 * form data, GraphQL. Everything else (images, fonts, octet streams, protobuf…) is non-text
 * and its body is reported as null with its length.
 */
export function isTextType(mime: string | null | undefined): boolean {
  const m = (mime ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!m) return false;
  if (m.startsWith('text/')) return true;
  if (/json|javascript|ecmascript|xml/.test(m)) return true;
  return (
    m === 'application/x-www-form-urlencoded' ||
    m === 'application/graphql' ||
    m === 'application/x-sh' ||
    m === 'application/sql'
  );
}

/** The `charset` parameter of a Content-Type value, if any. */
export function charsetOf(contentType: string | null | undefined): string | null {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return m?.[1] ?? null;
}

/** Text from bytes in the response's charset (UTF-8 when absent or unknown to this runtime). */
export function decodeText(bytes: Buffer, charset: string | null): string {
  if (charset && !/^utf-?8$/i.test(charset)) {
    try {
      return new TextDecoder(charset).decode(bytes);
    } catch {
      // An unknown label: UTF-8 below.
    }
  }
  return bytes.toString('utf8');
}

/** Cuts `text` to at most `limit` characters without splitting a surrogate pair. */
export function cutText(text: string, limit: number): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  let end = limit;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), truncated: true };
}

/** Cuts base64 to at most `limit` characters on a 4-character boundary (it still decodes). */
export function cutBase64(b64: string, limit: number): string {
  if (b64.length <= limit) return b64;
  return b64.slice(0, limit - (limit % 4));
}

/** Bytes that a base64 string decodes to. */
export function base64Bytes(b64: string): number {
  const len = b64.length;
  if (len === 0) return 0;
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((len * 3) / 4) - pad;
}

/** The value of header `name` (any case), or null. */
export function headerValue(headers: Record<string, string>, name: string): string | null {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v;
  return null;
}

/** CDP header objects hold strings (several values joined by newlines); anything else is made one. */
export function headerStrings(
  headers: Record<string, unknown> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}
