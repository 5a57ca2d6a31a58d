/** The captured network lines as clients read them (docs/api.md, Network capture). */

export const RESOURCE_TYPES = ['document', 'xhr', 'fetch'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

export type HttpKind = 'navigation' | 'response';
export type WsKind = 'open' | 'sent' | 'received' | 'close' | 'error';

export interface HttpLine {
  seq: number;
  /** Epoch seconds: when the response headers arrived, or when the navigation committed. */
  ts: number;
  kind: HttpKind;
  /** Request method; null on a same-document navigation line (no request). */
  method: string | null;
  url: string;
  resource_type: ResourceType;
  /** HTTP status; 0 when the request failed before any response; null when no response applies. */
  status: number | null;
  content_type: string | null;
  headers: Record<string, string>;
  /** Only with include_body: the text body (cut), or null for a non-text or unreadable body. */
  body?: string | null;
  /** Characters of a text body before any cut; bytes of a non-text body. */
  body_length: number;
  body_truncated: boolean;
  error: string | null;
}

export interface WsLine {
  seq: number;
  ts: number;
  kind: WsKind;
  /** The socket's URL. */
  url: string;
  /** Only with include_body: text as sent, base64 when `binary`; the message of an `error` line. */
  payload?: string | null;
  binary: boolean;
  /** Characters of a text payload, bytes of a binary one (before any cut). */
  payload_length: number;
}

export type NewHttpLine = Omit<HttpLine, 'seq' | 'body'>;
export type NewWsLine = Omit<WsLine, 'seq' | 'payload'>;

export const mapResourceType = (cdpType: string | undefined): ResourceType | null => {
  switch (cdpType) {
    case 'Document':
      return 'document';
    case 'XHR':
      return 'xhr';
    case 'Fetch':
      return 'fetch';
    default:
      return null;
  }
};
