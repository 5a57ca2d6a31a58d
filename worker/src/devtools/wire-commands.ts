import { isAscii } from 'node:buffer';
import { ProtocolError } from 'puppeteer-core';
import type { ConnectionTransport } from 'puppeteer-core';
import type { BytesTransport } from './pipe-transport';

/**
 * Ids of the commands sent here: far above any id puppeteer's own counter reaches in a
 * browser's life, and inside the 32-bit range Chromium accepts.
 */
const FIRST_ID = 1_500_000_000;
/** The id sits at the start of every reply Chromium writes: `{"id":123,…`. */
const ID_WITHIN = 24;
const ID_KEY = Buffer.from('"id":');

/** What takes the messages of outside clients' sessions off the connection. */
export interface GuestTap {
  /** True when `message` belongs to a guest (it then never reaches puppeteer). */
  claim(message: Buffer): boolean;
  /** The connection ended. */
  closed(): void;
}

/** One reply as it came off the DevTools pipe, with the command it answers. */
export interface WireReply {
  id: number;
  method: string;
  sessionId: string;
  /** The reply's JSON text exactly as Chromium wrote it, in UTF-8. */
  bytes: Buffer;
}

interface Waiting {
  method: string;
  sessionId: string;
  resolve: (reply: WireReply) => void;
  reject: (err: Error) => void;
}

/**
 * A side channel on the browser's connection for commands whose reply the worker wants as
 * text, unparsed. A page's HTML comes back from Chromium as a JSON string already escaped;
 * handing that text on to the HTTP reply, instead of parsing it into a string and encoding it
 * again, saves two passes over every byte of a large page. The commands go out on the same
 * pipe, on the page's own session, with ids of their own; their replies are taken out here
 * and never reach puppeteer, which sees every other message unchanged.
 */
export class WireCommands implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  private nextId = FIRST_ID;
  private readonly waiting = new Map<number, Waiting>();
  /** Commands sent and not answered yet, the ones given up on (aborted) included. */
  private unanswered = 0;
  private closed = false;
  /** Takes the messages of outside clients' sessions (see guest-mux.ts) before puppeteer. */
  private guests: GuestTap | null = null;

  constructor(private readonly inner: BytesTransport) {
    inner.claim = (message) => this.settle(message) || (this.guests?.claim(message) ?? false);
    inner.onmessage = (message) => this.onmessage?.(message);
    inner.onclose = () => {
      this.closed = true;
      for (const [id, waiting] of this.waiting) {
        this.waiting.delete(id);
        waiting.reject(closedError(waiting.method));
      }
      this.guests?.closed();
      this.onclose?.();
    };
  }

  /** Whether the browser's connection has ended. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Routes outside clients' messages to `tap`, which sends its own with `send`. One at most. */
  tapGuests(tap: GuestTap): void {
    if (this.guests) throw new Error('the connection has its guest tap already');
    this.guests = tap;
  }

  send(message: string): void {
    this.inner.send(message);
  }

  close(): void {
    this.inner.close();
  }

  /**
   * Sends `method` on `sessionId` and resolves with its reply's text, whether the command
   * succeeded or not (see `replyResult`). A signal that aborts stops the wait.
   */
  command(
    sessionId: string,
    method: string,
    params: object,
    signal?: AbortSignal,
  ): Promise<WireReply> {
    if (this.closed) return Promise.reject(closedError(method));
    const id = this.nextId++;
    return new Promise<WireReply>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiting.delete(id);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      this.waiting.set(id, {
        method,
        sessionId,
        resolve: (reply) => {
          done();
          resolve(reply);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      try {
        this.inner.send(JSON.stringify({ id, method, params, sessionId }));
        this.unanswered += 1;
      } catch (err) {
        this.waiting.delete(id);
        done();
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  /**
   * Takes out a reply to one of our commands, still as bytes; false for every other message. A
   * reply to a command given up on is dropped: puppeteer never sent that id.
   */
  private settle(message: Buffer): boolean {
    if (this.unanswered === 0) return false;
    const at = message.subarray(0, ID_WITHIN).indexOf(ID_KEY);
    if (at < 0) return false;
    const digits = at + ID_KEY.length;
    const id = Number.parseInt(message.toString('latin1', digits, digits + 12), 10);
    if (!(id >= FIRST_ID && id < this.nextId)) return false;
    this.unanswered -= 1;
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    waiting?.resolve({ id, method: waiting.method, sessionId: waiting.sessionId, bytes: message });
    return true;
  }
}

function closedError(method: string): ProtocolError {
  return new ProtocolError(`Protocol error (${method}): Target closed`);
}

/** What a reply carries: its result, or its error thrown as puppeteer would throw it. */
export function replyResult(reply: WireReply): unknown {
  const parsed: unknown = JSON.parse(reply.bytes.toString('utf8'));
  const error: unknown = isObject(parsed) ? parsed.error : undefined;
  if (isObject(error)) {
    const message = typeof error.message === 'string' ? error.message : 'unknown error';
    throw new ProtocolError(`Protocol error (${reply.method}): ${message}`);
  }
  return isObject(parsed) ? parsed.result : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A pair of strings `Runtime.evaluate` returned by value (`[first, second]`), read straight
 * from the reply's bytes: the first decoded (it is short), the second kept as the JSON text
 * Chromium wrote, with its length in UTF-16 units. Null when the reply has any other shape (an
 * error, an exception, another value), which the caller then parses in full.
 */
export function evaluatedStringPair(
  reply: WireReply,
): { first: string; second: Buffer; length: number } | null {
  const value = evaluatedValueText(reply, 'object');
  if (!value) return null;
  // Chromium escapes everything beyond ASCII; raw UTF-8 would be searched as decoded text.
  const text = isAscii(value) ? value : value.toString('utf8');
  const last = text.length - 1;
  if (charAt(text, 0) !== '[' || charAt(text, last) !== ']') return null;
  const first = scanJsonString(text, 1);
  if (!first || charAt(text, first.end + 1) !== ',') return null;
  const second = scanJsonString(text, first.end + 2);
  if (!second || second.end !== last - 1) return null;
  const decoded: unknown = JSON.parse(slice(text, 1, first.end + 1));
  if (typeof decoded !== 'string') return null;
  const kept =
    typeof text === 'string'
      ? Buffer.from(text.slice(first.end + 2, last))
      : text.subarray(first.end + 2, last);
  return { first: decoded, second: kept, length: second.length };
}

/**
 * The string a command's result holds in its one field `field` (`{"outerHTML":"…"}`), kept as
 * the JSON text Chromium wrote, with its length in UTF-16 units; null when the reply has any
 * other shape (an error, more fields), which the caller then reads in full.
 */
export function resultString(
  reply: WireReply,
  field: string,
): { text: Buffer; length: number } | null {
  const value = between(reply, `{"id":${reply.id},"result":{"${field}":`, '}');
  if (!value || value.length === 0) return null;
  // Chromium escapes everything beyond ASCII; raw UTF-8 would be searched as decoded text.
  const text = isAscii(value) ? value : value.toString('utf8');
  const scanned = scanJsonString(text, 0);
  if (!scanned || scanned.end !== text.length - 1) return null;
  return { text: value, length: scanned.length };
}

function charAt(text: string | Buffer, i: number): string {
  if (typeof text === 'string') return text.charAt(i);
  const code = text[i];
  return code === undefined ? '' : String.fromCharCode(code);
}

function slice(text: string | Buffer, start: number, end: number): string {
  return typeof text === 'string' ? text.slice(start, end) : text.toString('latin1', start, end);
}

/**
 * The text where a by-value result of type `type` stands in the reply, or null when the reply
 * does not begin and end as such a result does. Whether that text is one value is for the
 * caller to check: a reply with more fields after the value ends the same way.
 */
function evaluatedValueText(reply: WireReply, type: 'string' | 'object'): Buffer | null {
  return between(reply, `{"id":${reply.id},"result":{"result":{"type":"${type}","value":`, '}}');
}

/**
 * The reply's bytes between `head` at its start and `close` followed by the session's end at
 * its end (`…},"sessionId":"…"}`), or null when it does not begin and end so.
 */
function between(reply: WireReply, head: string, close: string): Buffer | null {
  const tail = `${close},"sessionId":"${reply.sessionId}"}`;
  const { bytes } = reply;
  const end = bytes.length - tail.length;
  if (end < head.length) return null;
  if (bytes.toString('latin1', 0, head.length) !== head) return null;
  if (bytes.toString('latin1', end) !== tail) return null;
  return bytes.subarray(head.length, end);
}

/** Where a JSON string literal ends, and the length of the string it stands for. */
export interface ScannedString {
  /** The index of its closing quote. */
  end: number;
  /** Its length in UTF-16 units, as `String.length` counts. */
  length: number;
}

/**
 * Scans the JSON string literal that opens at `start` in `text` without decoding it: where it
 * ends and how long its string is; null when no literal opens there or it does not close.
 * Escapes count one unit each: `\uXXXX` is one UTF-16 unit, the others (`\"`, `\\`, `\n`…)
 * one character. A Buffer must hold ASCII (one byte, one unit), as Chromium writes: it escapes
 * everything else. The search is native (`indexOf`), never a loop over every character.
 */
export function scanJsonString(text: string | Buffer, start = 0): ScannedString | null {
  const codeAt = (i: number): number | undefined =>
    typeof text === 'string' ? text.charCodeAt(i) : text[i];
  if (codeAt(start) !== QUOTE) return null;
  let escaped = 0;
  let from = start + 1;
  let quote = text.indexOf('"', from);
  for (;;) {
    if (quote === -1) return null;
    const slash = text.indexOf('\\', from);
    if (slash === -1 || slash > quote) return { end: quote, length: quote - start - 1 - escaped };
    const width = codeAt(slash + 1) === LETTER_U ? 6 : 2;
    escaped += width - 1;
    from = slash + width;
    // The quote found was the escaped one: look again past it.
    if (quote < from) quote = text.indexOf('"', from);
  }
}

const QUOTE = 0x22;
const LETTER_U = 0x75;
