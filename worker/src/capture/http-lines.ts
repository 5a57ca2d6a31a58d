import type { Protocol } from 'puppeteer-core';
import { epochSeconds } from '../util';
import { headerStrings, headerValue } from './body';
import type { NewHttpLine, ResourceType } from './lines';

/** The HTTP lines that a tracked request, a redirect hop or a navigation makes. */

export const REDIRECT_ERROR = 'redirect response: the browser keeps no body for it';

/** A request of a captured type (document, xhr, fetch) on its way. */
export interface Tracked {
  id: string;
  method: string;
  url: string;
  type: ResourceType;
  frameId: string | undefined;
  loaderId: string;
  gen: number;
  /** The loaderId when this is a main-frame navigation request, else null. */
  nav: string | null;
  response: {
    ts: number;
    url: string;
    status: number;
    headers: Record<string, string>;
    contentType: string | null;
    mime: string;
  } | null;
  /** Decoded bytes received so far (Network.dataReceived). */
  received: number;
}

export function responseFields(
  t: Tracked,
  bodyLength: number,
  truncated: boolean,
  error: string | null,
): NewHttpLine {
  const r = t.response;
  return {
    ts: r?.ts ?? epochSeconds(),
    kind: 'response',
    method: t.method,
    url: r?.url ?? t.url,
    resource_type: t.type,
    status: r?.status ?? 0,
    content_type: r?.contentType ?? null,
    headers: r?.headers ?? {},
    body_length: bodyLength,
    body_truncated: truncated,
    error,
  };
}

/** A redirect hop of `t`: the browser keeps no body for it. */
export function redirectFields(t: Tracked, r: Protocol.Network.Response): NewHttpLine {
  const headers = headerStrings(r.headers);
  const declared = Number(headerValue(headers, 'content-length'));
  return {
    ts: epochSeconds(),
    kind: 'response',
    method: t.method,
    url: r.url,
    resource_type: t.type,
    status: r.status,
    content_type: headerValue(headers, 'content-type') ?? (r.mimeType || null),
    headers,
    body_length: Number.isFinite(declared) && declared > 0 ? declared : 0,
    body_truncated: false,
    error: REDIRECT_ERROR,
  };
}

export function navigationFields(
  url: string,
  d: { method: string | null; status: number | null; contentType: string | null },
): NewHttpLine {
  return {
    ts: epochSeconds(),
    kind: 'navigation',
    method: d.method,
    url,
    resource_type: 'document',
    status: d.status,
    content_type: d.contentType,
    headers: {},
    body_length: 0,
    body_truncated: false,
    error: null,
  };
}
