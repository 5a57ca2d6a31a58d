import type { ConnectionTransport } from 'puppeteer-core';

/**
 * Keeps the Runtime domain off on every target of the browser whose connection it carries.
 *
 * Puppeteer enables `Runtime` on each page, frame and worker it attaches to, to learn their
 * execution contexts. A page can tell: with Runtime on, the console API serialises its
 * arguments for the DevTools client, so an Error whose `stack` getter is watched and that is
 * passed to `console.debug` reveals the client (detector pages check exactly this). The worker
 * needs none of what Runtime brings: every in-page read and write runs in an isolated world of
 * its own, made with `Page.createIsolatedWorld` (which returns its context id directly), and
 * nothing calls puppeteer's `evaluate`, `$` or `waitForSelector` on a worker page. So the
 * command is answered here, on its way out, and never reaches Chromium. Browser-level commands
 * (no session) pass: the browser target has no page to tell.
 *
 * The filter belongs to the one connection it wraps: other puppeteer connections in the same
 * process (a test's observer) keep their Runtime.
 */
export class QuietRuntimeTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;

  constructor(private readonly inner: ConnectionTransport) {
    inner.onmessage = (message) => this.onmessage?.(message);
    inner.onclose = () => this.onclose?.();
  }

  send(message: string): void {
    const answer = localAnswer(message);
    if (answer === null) {
      this.inner.send(message);
      return;
    }
    // Answered as Chromium would, on a later turn: the caller has its reply registered by then.
    setImmediate(() => this.onmessage?.(answer));
  }

  close(): void {
    this.inner.close();
  }
}

/** The wire text of a command the filter names: its method, id and session. */
interface Command {
  id: number;
  method: string;
  sessionId?: string;
}

function isCommand(value: unknown): value is Command {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof Reflect.get(value, 'id') === 'number' &&
    typeof Reflect.get(value, 'method') === 'string'
  );
}

/** `message` as a command when it may be `method`; null without parsing most messages. */
export function commandNamed(message: string, method: string): Command | null {
  // The method is a top-level key of puppeteer's JSON: a string value inside params would have
  // its quotes escaped, so the raw text can only appear as the command's own method.
  if (!message.includes(`"method":"${method}"`)) return null;
  const parsed: unknown = JSON.parse(message);
  return isCommand(parsed) && parsed.method === method ? parsed : null;
}

/** The reply to `Runtime.enable` on a session, made here; null for anything else. */
function localAnswer(message: string): string | null {
  const command = commandNamed(message, 'Runtime.enable');
  if (!command || command.sessionId === undefined) return null;
  return JSON.stringify({ id: command.id, sessionId: command.sessionId, result: {} });
}
