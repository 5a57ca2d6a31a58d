import { isRecord } from '@persona-browser/service-kit';

/** How the DevTools messages of guests (guest-mux.ts) are read, made and told apart. */

/** A DevTools message as it travels: a command, a reply or an event. */
export interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  sessionId?: string;
}

export interface TargetInfo {
  targetId: string;
  type?: string;
  openerId?: string;
  parentFrameId?: string;
}

const SESSION_KEY = Buffer.from('"sessionId":"');
/** Chromium's session ids are 32 hex digits; the key, the id and `"}` fit in this tail. */
const SESSION_TAIL = 64;

/** A protocol error the way Chromium words one (code -32000: server error). */
export const errorReply = (id: number, message: string, sessionId?: string): Message => ({
  id,
  error: { code: -32000, message },
  ...(sessionId === undefined ? {} : { sessionId }),
});

export function targetInfoOf(value: unknown): TargetInfo | null {
  if (!isRecord(value) || typeof value.targetId !== 'string') return null;
  const text = (key: string): string | undefined =>
    typeof value[key] === 'string' ? value[key] : undefined;
  return {
    targetId: value.targetId,
    type: text('type'),
    openerId: text('openerId'),
    parentFrameId: text('parentFrameId'),
  };
}

/** The session id at the end of a message as Chromium writes it, or null: no parse. */
export function trailingSession(message: Buffer): string | null {
  // Only the tail is searched: the worker's own large replies pass here too.
  const from = Math.max(0, message.length - SESSION_TAIL);
  const found = message.subarray(from).lastIndexOf(SESSION_KEY);
  if (found < 0) return null;
  const at = from + found;
  const start = at + SESSION_KEY.length;
  const end = message.indexOf(34 /* " */, start);
  // The message's own session closes it (`…"sessionId":"ID"}`): not one named in its params.
  if (end < 0 || end + 2 !== message.length) return null;
  return message.toString('latin1', start, end);
}

/** The id a reply opens with (`{"id":123,`), or null. */
export function leadingId(message: Buffer): number | null {
  if (message.toString('latin1', 0, 6) !== '{"id":') return null;
  const id = Number.parseInt(message.toString('latin1', 6, 18), 10);
  return Number.isInteger(id) ? id : null;
}

/** A message's JSON, as an object (anything else reads as an empty one). */
export function parseMessage(message: Buffer): Message {
  const value: unknown = JSON.parse(message.toString('utf8'));
  return isRecord(value) ? value : {};
}
