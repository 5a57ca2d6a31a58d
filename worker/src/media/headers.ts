/**
 * Header values for a media download. Filenames and content types come from plugins, which
 * took them from websites, so nothing here trusts them: the result is always a valid header.
 */

const FALLBACK_NAME = 'download';
const FALLBACK_TYPE = 'application/octet-stream';
/** Code points kept of a filename; enough for any real name, short enough for any header. */
const MAX_NAME_CHARS = 200;

/** A surrogate half without its partner: `encodeURIComponent` would throw on it. */
const LONE_SURROGATE = /\p{Cs}/gu;
const SEPARATOR = /[/\\]/g;
/** Control characters, double quotes and the bidi controls that can disguise an extension. */
const UNSAFE = /[\p{Cc}"\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** The filename as the store keeps it: no path, no control characters, no quotes, never empty. */
export function safeFilename(name: string): string {
  const cleaned = name
    .replace(LONE_SURROGATE, '\ufffd')
    .replace(SEPARATOR, '_')
    .replace(UNSAFE, '')
    .trim();
  const short = Array.from(cleaned).slice(0, MAX_NAME_CHARS).join('').trim();
  return short || FALLBACK_NAME;
}

/**
 * The ASCII stand-in for clients that ignore `filename*`: accents dropped ("ü" → "u"), anything
 * else outside printable ASCII replaced. Compatibility decomposition can turn a full-width
 * solidus or quote into a real one, so those are replaced after it.
 */
function asciiName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]|["\\/]/g, '_');
}

/** RFC 8187 (ex 5987) `ext-value`: UTF-8 bytes, percent-encoded outside `attr-char`. */
function extValue(name: string): string {
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `UTF-8''${encoded}`;
}

/** `attachment; filename="…"; filename*=UTF-8''…`, safe for any input. */
export function contentDisposition(filename: string): string {
  const name = safeFilename(filename);
  return `attachment; filename="${asciiName(name)}"; filename*=${extValue(name)}`;
}

const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:\\s*;\\s*${TOKEN}=(?:${TOKEN}|"[^"\\\\]*"))*$`);

/** A well-formed `type/subtype[; param=value]` as given, else `application/octet-stream`. */
export function safeContentType(contentType: string): string {
  const t = contentType.trim();
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  return MEDIA_TYPE.test(t) && !/[\u0000-\u001f\u007f-\uffff]/.test(t) ? t : FALLBACK_TYPE;
}
