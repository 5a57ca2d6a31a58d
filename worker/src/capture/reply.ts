import { decompress } from './brotli';
import type { Chunk, StoredRecord } from './chunk-store';
import { decodeChunk } from './chunk-store';
import type { HttpLine, WsLine } from './lines';

/** Reading lines back out of a snapshot of the chunks, as clients read them. */

/** Bodies and payloads in one reply, in characters, before the rest are left out. */
export const DEFAULT_MAX_REPLY_CHARS = 64_000_000;
/** Chunks decoded between two yields to the event loop while answering a query. */
const CHUNKS_PER_YIELD = 64;

export interface QueryFilter {
  since: number;
  urlContains?: string;
  resourceType?: string;
  includeBody: boolean;
}

export interface QueryResult {
  mark: number;
  http: HttpLine[];
  websocket: WsLine[];
}

/** A line of the reply, by its list, whose content is filled in once all lines are read. */
type ListedLine = { list: 'h'; line: HttpLine } | { list: 'w'; line: WsLine };

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Lines of `snapshot` with `filter.since` < seq <= `mark`, filtered; with their contents when
 * asked, up to `maxReplyChars`. Decoding yields to the event loop now and then.
 */
export async function assembleReply(
  snapshot: Chunk[],
  mark: number,
  filter: QueryFilter,
  maxReplyChars: number,
): Promise<QueryResult> {
  const http: HttpLine[] = [];
  const websocket: WsLine[] = [];
  const contents: { chunk: Chunk; rec: StoredRecord; line: ListedLine }[] = [];
  let decoded = 0;
  for (const chunk of snapshot) {
    for (const rec of decodeChunk(chunk)) {
      if (rec.q <= filter.since || rec.q > mark) continue;
      if (filter.urlContains !== undefined && !String(rec.f.url).includes(filter.urlContains)) {
        continue;
      }
      if (rec.l === 'h') {
        if (filter.resourceType !== undefined && rec.f.resource_type !== filter.resourceType) {
          continue;
        }
        const line: HttpLine = { seq: rec.q, ...rec.f };
        http.push(line);
        if (filter.includeBody) contents.push({ chunk, rec, line: { list: 'h', line } });
      } else {
        const line: WsLine = { seq: rec.q, ...rec.f };
        websocket.push(line);
        if (filter.includeBody) contents.push({ chunk, rec, line: { list: 'w', line } });
      }
    }
    decoded += 1;
    if (decoded % CHUNKS_PER_YIELD === 0) await yieldToLoop();
  }
  // Contents in seq order, so that the reply limit leaves out the newest ones only.
  let replyChars = 0;
  let full = false;
  for (const { chunk, rec, line } of contents) {
    let text = full ? null : await content(chunk, rec);
    if (text !== null && replyChars + text.length > maxReplyChars) {
      full = true;
      text = null;
    }
    replyChars += text?.length ?? 0;
    if (line.list === 'h') {
      const h = line.line;
      h.body = text;
      if (full && h.error === null && (rec.b !== undefined || (rec.c ?? null) !== null)) {
        h.error = `body left out: this reply reached ${maxReplyChars} characters; ask again with since=${rec.q - 1}`;
      }
    } else {
      line.line.payload = text;
    }
  }
  return { mark, http, websocket };
}

async function content(chunk: Chunk, rec: StoredRecord): Promise<string | null> {
  if (rec.b === undefined) return rec.c ?? null;
  const blob = chunk.blobs[rec.b];
  if (!blob) return null;
  const raw = await decompress(blob);
  return raw.toString(rec.e === 'b64' ? 'base64' : 'utf8');
}
