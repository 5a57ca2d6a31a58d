import type { RawData, WebSocket } from 'ws';
import type { Credential, Logger } from '@persona-browser/service-kit';
import { credentialName } from '@persona-browser/service-kit';
import type { GuestLink } from '../devtools/guest-link';

/** Close code of a connection ended for what it did or what its credential became. */
export const POLICY_VIOLATION = 1008;
/**
 * How long an ended client has to read what is queued and its close frame before its socket is
 * destroyed: a client that reads nothing would otherwise hold its unsent data for ws's own
 * close timeout (30 s).
 */
export const CLOSE_GRACE_MS = 2_000;
/** setTimeout's longest delay; a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface DevtoolsClientOptions {
  ws: WebSocket;
  link: GuestLink;
  /** The credential that opened the connection (null: none was needed). */
  credential: Credential | null;
  /** Unsent bytes past which the client is dropped (DEVTOOLS_CLIENT_BUFFER_MB). */
  bufferLimit: number;
  logger: Logger;
  /** The client was dropped for its unsent data. */
  onDropped: () => void;
  /** Closes the guest link (its targets); called once, when the client ends or goes. */
  release: (link: GuestLink) => Promise<void>;
  /** The WebSocket closed, whatever ended it. */
  onGone: (client: DevtoolsClient) => void;
}

/**
 * One outside DevTools client on its guest link: the browser's messages to it, bounded by what
 * it has not read, its commands to the browser, and its end (its socket closed; dropped for
 * its unsent data; its token revoked or expired; the browser gone), which releases the link.
 */
export class DevtoolsClient {
  /** `key`, or the id of the token that opened it: what its log lines name. */
  readonly credential: string;
  /** The token's id, for its revocation; null for the service key. */
  readonly tokenId: string | null;
  private ended = false;
  private expiry: NodeJS.Timeout | null = null;
  private grace: NodeJS.Timeout | null = null;
  private released: Promise<void> | null = null;
  /** The targets it had created when its link was released (closed with it). */
  private closedTargets = 0;

  constructor(private readonly o: DevtoolsClientOptions) {
    const { ws, link, credential } = o;
    this.credential = credentialName(credential);
    this.tokenId = credential?.kind === 'token' ? credential.claims.id : null;
    link.onmessage = (text) => this.deliver(text);
    link.onclose = () => this.end(1001, 'the browser went');
    ws.on('message', (data: RawData) => {
      if (!this.ended) link.fromClient(rawText(data));
    });
    ws.on('error', () => undefined);
    ws.on('close', () => {
      this.clearTimers();
      void this.release().finally(() => {
        o.logger.info('devtools client disconnected', {
          credential: this.credential,
          closed_targets: this.closedTargets,
        });
        o.onGone(this);
      });
    });
    if (credential?.kind === 'token') this.expireAt(credential.claims.exp * 1000);
  }

  /**
   * Ends the connection with `code` and `reason` (a client that reads sees them), stops what
   * goes to it, and releases its link now; its socket is destroyed after a short grace.
   */
  end(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.o.link.onmessage = null;
    void this.release();
    const { ws } = this.o;
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    this.grace = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
    this.grace.unref();
  }

  /**
   * A message from the browser. A client that reads keeps its queue near empty; one whose
   * unsent data this message would take past the limit is dropped. A message alone on an empty
   * queue always goes (a full-page screenshot may be bigger than the limit by itself), so what
   * a client holds is at most the limit and one message.
   */
  private deliver(text: string): void {
    if (this.ended) return;
    const { ws, bufferLimit } = this.o;
    const queued = ws.bufferedAmount;
    if (queued > 0) {
      const unsent = queued + Buffer.byteLength(text);
      if (unsent > bufferLimit) return this.drop(unsent);
    }
    ws.send(text);
  }

  private drop(unsent: number): void {
    this.o.logger.warn('devtools client dropped', {
      credential: this.credential,
      unsent_bytes: unsent,
      limit_bytes: this.o.bufferLimit,
    });
    this.o.onDropped();
    const mb = (this.o.bufferLimit / 1024 / 1024).toFixed(0);
    this.end(
      POLICY_VIOLATION,
      `unsent data of ${unsent} bytes passed DEVTOOLS_CLIENT_BUFFER_MB (${mb} MB)`,
    );
  }

  /** Ends the connection when its token expires. */
  private expireAt(ms: number): void {
    const left = ms - Date.now();
    if (left <= 0) return this.end(POLICY_VIOLATION, 'the token expired');
    this.expiry = setTimeout(() => this.expireAt(ms), Math.min(left, MAX_TIMER_MS));
    this.expiry.unref();
  }

  private release(): Promise<void> {
    if (this.released) return this.released;
    this.o.link.onclose = null;
    this.closedTargets = this.o.link.created.length;
    this.released = this.o.release(this.o.link);
    return this.released;
  }

  private clearTimers(): void {
    if (this.expiry) clearTimeout(this.expiry);
    if (this.grace) clearTimeout(this.grace);
    this.expiry = null;
    this.grace = null;
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}
