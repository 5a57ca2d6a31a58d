import { withTimeout } from '../util';
import { charsetOf, cutText, decodeText } from './body';
import type { CaptureContext } from './context';
import type { Tracked } from './http-lines';
import { responseFields } from './http-lines';
import type { Reservation } from './store';

/**
 * Reading text bodies with Network.getResponseBody, a few at a time, once the page's network has
 * been quiet for a moment (at most a second later), so that reading never competes with the
 * page's own loading. Each body's line has taken its place in line already (a Reservation);
 * lines that come meanwhile wait behind it.
 */

/** A text body to read, and its place in line. */
interface BodyRead {
  t: Tracked;
  place: Reservation;
  /** performance.now() when the response finished. */
  at: number;
}

const MAX_BODY_QUEUE = 2048;
const DEFAULT_BODY_CONCURRENCY = 4;
/**
 * Bodies are read once the page's network has been quiet this long, so that reading them never
 * competes with the page's own loading (the renderer serves Network.getResponseBody)…
 */
const QUIET_MS = 60;
/** …or once the oldest has waited this long, so that a page that never goes quiet still gets them. */
const MAX_BODY_DELAY_MS = 1_000;
/** A renderer that does not hand a body over within this long gets an error line instead. */
const BODY_READ_TIMEOUT_MS = 15_000;

export class BodyReader {
  private readonly queue: BodyRead[] = [];
  private readonly reading = new Set<BodyRead>();
  private inFlight = 0;
  /** performance.now() of the page's last network event. */
  private lastNetworkAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly concurrency: number;
  private stopped = false;

  constructor(private readonly ctx: CaptureContext) {
    this.concurrency = ctx.settings.bodyConcurrency ?? DEFAULT_BODY_CONCURRENCY;
  }

  /** The page's network was busy just now. */
  networkEvent(): void {
    this.lastNetworkAt = performance.now();
  }

  /** Bodies of finished responses still to be read (queued or being read). */
  get pending(): number {
    return this.queue.length + this.reading.size;
  }

  get full(): boolean {
    return this.queue.length >= MAX_BODY_QUEUE;
  }

  /** Queues `t`'s body; its line takes its place now. */
  add(t: Tracked): void {
    this.queue.push({ t, place: this.ctx.store.reserve(), at: performance.now() });
    this.pump();
  }

  /** Gives up the places of bodies that belong to an earlier document (after a commit). */
  cancelStale(): void {
    for (const read of [...this.queue, ...this.reading]) {
      if (!this.ctx.doc.fresh(read.t)) read.place.cancel();
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
    this.reading.clear();
  }

  private pump(): void {
    if (this.stopped) return;
    while (this.inFlight < this.concurrency) {
      const read = this.queue[0];
      if (!read) break;
      if (!this.ctx.doc.fresh(read.t)) {
        this.queue.shift();
        read.place.cancel();
        continue;
      }
      const now = performance.now();
      const wait = Math.min(this.lastNetworkAt + QUIET_MS - now, read.at + MAX_BODY_DELAY_MS - now);
      if (wait > 0) {
        this.timer ??= setTimeout(() => {
          this.timer = null;
          this.pump();
        }, wait + 1);
        return;
      }
      this.queue.shift();
      this.inFlight += 1;
      this.reading.add(read);
      void this.read(read).finally(() => {
        this.inFlight -= 1;
        this.reading.delete(read);
        this.pump();
      });
    }
  }

  private async read({ t, place }: BodyRead): Promise<void> {
    const { cdp, doc, settings } = this.ctx;
    let text: string;
    try {
      const r = await withTimeout(
        cdp.send('Network.getResponseBody', { requestId: t.id }),
        BODY_READ_TIMEOUT_MS,
        () => new Error(`no answer within ${BODY_READ_TIMEOUT_MS / 1000} s`),
      );
      text = r.base64Encoded
        ? decodeText(Buffer.from(r.body, 'base64'), charsetOf(t.response?.contentType))
        : r.body;
    } catch (err) {
      if (this.stopped || !doc.fresh(t)) return place.cancel();
      const why =
        err instanceof Error ? err.message.replace(/^Protocol error \([^)]*\): /, '') : '';
      place.fillHttp(
        responseFields(t, t.received, false, `body could not be read: ${why}`),
        null,
        t.nav,
      );
      return;
    }
    if (this.stopped || !doc.fresh(t)) return place.cancel();
    const cut = cutText(text, settings.bodyLimitChars);
    place.fillHttp(responseFields(t, text.length, cut.truncated, null), cut.text, t.nav);
  }
}
