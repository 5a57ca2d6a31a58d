import type { HttpKind, NewHttpLine, NewWsLine, ResourceType, WsKind } from './lines';
import { RESOURCE_TYPES } from './lines';

/** A line's list and fields: an HTTP line, or a WebSocket line. */
export type LineEntry = { l: 'h'; f: NewHttpLine } | { l: 'w'; f: NewWsLine };

export type List = LineEntry['l'];

/** One line as kept inside a chunk. */
export type StoredRecord = LineEntry & {
  /** seq */
  q: number;
  /** inline content (body or payload), or null for none */
  c?: string | null;
  /** index of the content's blob in the chunk */
  b?: number;
  /** blob encoding: bytes that read back as base64 */
  e?: 'b64';
  /** tag that survives a clear which keeps it */
  t?: string;
};

/**
 * Reads back a record that `JSON.stringify` wrote into a chunk, checking every field against
 * its type: a chunk is bytes in memory, and a wrong field should fail here, by name, rather
 * than as an odd line in a client's reply.
 */
export function parseStoredRecord(json: string): StoredRecord {
  const raw: unknown = JSON.parse(json);
  if (!isObject(raw)) throw bad('record', raw);
  const { q, l, f, c, b, e, t } = raw;
  if (typeof q !== 'number') throw bad('q', q);
  const rest = {
    ...(c === undefined ? {} : { c: nullable(c, 'c', isString) }),
    ...(b === undefined ? {} : { b: field(b, 'b', isNumber) }),
    ...(e === undefined ? {} : { e: field(e, 'e', isB64) }),
    ...(t === undefined ? {} : { t: field(t, 't', isString) }),
  };
  if (!isObject(f)) throw bad('f', f);
  if (l === 'h') return { q, l, f: httpFields(f), ...rest };
  if (l === 'w') return { q, l, f: wsFields(f), ...rest };
  throw bad('l', l);
}

// The stored fields are spread first so that the line reads back with its keys in order.
function httpFields(f: Record<string, unknown>): NewHttpLine {
  const headers = field(f.headers, 'headers', isObject);
  return {
    ...f,
    ts: field(f.ts, 'ts', isNumber),
    kind: field(f.kind, 'kind', isHttpKind),
    method: nullable(f.method, 'method', isString),
    url: field(f.url, 'url', isString),
    resource_type: field(f.resource_type, 'resource_type', isResourceType),
    status: nullable(f.status, 'status', isNumber),
    content_type: nullable(f.content_type, 'content_type', isString),
    headers: Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k, field(v, `headers.${k}`, isString)]),
    ),
    body_length: field(f.body_length, 'body_length', isNumber),
    body_truncated: field(f.body_truncated, 'body_truncated', isBoolean),
    error: nullable(f.error, 'error', isString),
  };
}

function wsFields(f: Record<string, unknown>): NewWsLine {
  return {
    ...f,
    ts: field(f.ts, 'ts', isNumber),
    kind: field(f.kind, 'kind', isWsKind),
    url: field(f.url, 'url', isString),
    binary: field(f.binary, 'binary', isBoolean),
    payload_length: field(f.payload_length, 'payload_length', isNumber),
  };
}

const WS_KINDS: readonly string[] = [
  'open',
  'sent',
  'received',
  'close',
  'error',
] satisfies WsKind[];
const RESOURCE_TYPE_NAMES: readonly string[] = RESOURCE_TYPES;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isNumber = (v: unknown): v is number => typeof v === 'number';
const isBoolean = (v: unknown): v is boolean => typeof v === 'boolean';
const isB64 = (v: unknown): v is 'b64' => v === 'b64';
const isHttpKind = (v: unknown): v is HttpKind => v === 'navigation' || v === 'response';
const isWsKind = (v: unknown): v is WsKind => isString(v) && WS_KINDS.includes(v);
const isResourceType = (v: unknown): v is ResourceType =>
  isString(v) && RESOURCE_TYPE_NAMES.includes(v);

function field<T>(value: unknown, name: string, is: (v: unknown) => v is T): T {
  if (!is(value)) throw bad(name, value);
  return value;
}

function nullable<T>(value: unknown, name: string, is: (v: unknown) => v is T): T | null {
  return value === null ? null : field(value, name, is);
}

const bad = (name: string, value: unknown): Error =>
  new Error(`stored line has a bad '${name}': ${JSON.stringify(value)}`);
