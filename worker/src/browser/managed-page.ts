import type { CDPSession, Page } from 'puppeteer-core';
import type { PageState } from '@persona-browser/contracts';
import type { ApiError } from '../errors';
import { Busy, BrowserFailure, Locked, Timeout } from '../errors';
import { epochSeconds, withTimeout } from '../util';
import { Call, CallStopped } from './call';
import { browserWire } from '../devtools/chromium-launcher';
import { onPageSessionSwap, pageSession, pageTargetId } from '../devtools/page-session';
import type { WireReply } from '../devtools/wire-commands';
import { MainFrameUrl } from './main-frame-url';
import { evaluateInWorld } from './isolated-world';
import { TimedMutex } from './mutex';
import type { PageTiming } from './timing';
import { DEFAULT_TIMING, navigationDeadlineMs } from './timing';

export { PAGE_STATES } from '@persona-browser/contracts';
export type { PageState } from '@persona-browser/contracts';

/** A renderer that has not answered a probe for this long is `stuck`. */
export const PROBE_TIMEOUT_MS = 4_000;
/** How long reading the title from the browser may hold up the end of a call. */
const TITLE_READ_TIMEOUT_MS = 1_000;

export interface RunOptions {
  /** The work may take this long once the page is held (default: the timing's call deadline). */
  deadlineMs?: number;
  /**
   * A navigation (navigate, reload): the page shows `loading`; a crashed or stuck page is
   * brought back (a hung script is stopped first, so the page can load again); past the
   * navigation's deadline the call is a 408.
   */
  navigation?: boolean;
  /** Work on a crashed or stuck page as it is (a lease) instead of refusing at once. */
  anyState?: boolean;
  /** Checked before waiting and again once the page is held: the lease gate. */
  gate?: () => void;
  /**
   * The work's last step reads the title in the page (`noteTitle`): once it has, the call ends
   * without a title read or probe of its own, one DevTools round trip and a probe fewer.
   */
  endsWithTitle?: boolean;
  /**
   * Runs after the work failed, still holding the page, before the failure is answered: what
   * the page shows is then what the failed work left (a plugin's failure bundle). It bounds
   * its own time; what it throws is dropped.
   */
  afterFailure?: (err: unknown) => Promise<void>;
}

/**
 * One pooled tab: its lock, its health as last observed, and cached url and title so that
 * status calls never wait on the renderer. Every call on it runs through `run`, which gives the
 * call its deadline and stops it at once when the page gets stuck, crashes or closes.
 */
export class ManagedPage {
  readonly lock = new TimedMutex();
  currentOperation: string | null = null;
  /**
   * What the call holding the page waits for the person at the live view to do (a one-time
   * code), or null: while set, the live view takes control without waiting for the call.
   */
  awaitingPerson: string | null = null;
  private operationStartedAt: number | null = null;
  private loadingNow = false;
  private lastFailed = false;
  crashed = false;
  responsive = true;
  errorCount = 0;
  lastActivity = epochSeconds();
  /** The page's title as the browser last reported it (see `readTitle`). */
  title = '';
  closed = false;
  /** Where this page's mouse pointer rests between calls (viewport CSS pixels). */
  pointer = { x: 500 + Math.random() * 600, y: 300 + Math.random() * 300 };
  private probing = false;
  /** Title reads started and the latest applied: an older answer never overwrites a newer. */
  private titleReadsStarted = 0;
  private titleReadApplied = 0;
  /** The running call's work read the title in the page itself (see `noteTitle`). */
  private titleReadByCall = false;
  /** Aborted when the page is closed: every call on it stops. */
  private readonly closing = new AbortController();
  /** Aborted when the page gets stuck or crashes; made anew when it is back. */
  private unusable = new AbortController();
  private readonly mainUrl = new MainFrameUrl();

  constructor(
    readonly id: string,
    readonly page: Page,
    readonly timing: PageTiming = DEFAULT_TIMING,
    /** The other page whose screen a person holds through the live view, or null. */
    private readonly screenHeldElsewhere: (pageId: string) => string | null = () => null,
  ) {
    // Fails at once on a puppeteer without the page's own session: no silent second session.
    pageSession(page);
    page.on('error', () => {
      this.crashed = true;
      this.poison(new BrowserFailure('Page crashed; navigate or reload it, or destroy it', id));
    });
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame() && this.crashed) {
        this.crashed = false;
        this.healed();
      }
    });
    this.mainUrl.follow(this.session);
    this.onSessionSwap((session) => this.mainUrl.follow(session));
  }

  /**
   * Puppeteer's own CDP session of the page, looked up at every use: when a prerendered page is
   * activated, puppeteer swaps the page onto the new target's session.
   */
  get session(): CDPSession {
    return pageSession(this.page);
  }

  /**
   * Calls `listener` with the page's new session whenever puppeteer moves the page to another
   * target (a prerendered page activated by a click or a navigation).
   */
  onSessionSwap(listener: (session: CDPSession) => void): void {
    onPageSessionSwap(this.page, listener);
  }

  /** The page's current target (a prerender activation moves the page to another). */
  get targetId(): string {
    return pageTargetId(this.page);
  }

  /** A CDP command on the page's session, bounded by the call. */
  cdp<T>(call: Call, command: (session: CDPSession) => Promise<T>): Promise<T> {
    return call.race(command(this.session));
  }

  /**
   * A CDP command on the page's session whose reply comes back as the text Chromium wrote
   * (see WireCommands), bounded by the call; null when the page's browser was not started by
   * the worker's launcher (it has no such channel), and the caller uses `cdp`.
   */
  wire(call: Call, method: string, params: object): Promise<WireReply> | null {
    const wire = browserWire(this.page.browser());
    if (!wire) return null;
    return call.race(wire.command(this.session.id(), method, params, call.signal));
  }

  /** Where the page is, as last seen: never waits on the renderer. */
  get url(): string {
    const followed = this.mainUrl.current;
    if (followed !== null) return followed;
    try {
      return this.page.url();
    } catch {
      return '';
    }
  }

  /** Which document the page shows, as last seen (see MainFrameUrl.document); null if unknown. */
  get document(): string | null {
    return this.mainUrl.document;
  }

  get state(): PageState {
    if (this.crashed) return 'crashed';
    if (!this.responsive) return 'stuck';
    if (this.loadingNow) return 'loading';
    if (this.currentOperation) return 'busy';
    if (this.lastFailed) return 'error';
    return 'idle';
  }

  get operationDuration(): number | null {
    return this.operationStartedAt === null ? null : (Date.now() - this.operationStartedAt) / 1000;
  }

  get loading(): boolean {
    return this.loadingNow;
  }

  /**
   * Brings the tab to the front, as a hand can only reach the visible tab. While a person drives
   * another page through the live view, the screen is theirs: a 423 instead.
   */
  async bringToFront(call: Call): Promise<void> {
    const holder = this.screenHeldElsewhere(this.id);
    if (holder !== null) {
      throw new Locked(
        `A person is driving page ${holder} through the live view; calls that need the screen wait until it is handed back`,
        this.id,
      );
    }
    await this.cdp(call, (s) => s.send('Page.bringToFront'));
  }

  /** Whether this page may come to the front now (no person drives another page). */
  mayTakeFront(): boolean {
    return this.screenHeldElsewhere(this.id) === null;
  }

  /**
   * Runs `work` holding the page's lock, with a deadline: 409 if the lock is not free within
   * the timing's lock wait; a stuck, crashed or closed page answers at once.
   */
  async run<T>(name: string, opts: RunOptions, work: (call: Call) => Promise<T>): Promise<T> {
    opts.gate?.();
    this.refuseUnusable(opts);
    const release = await this.lock.acquire(
      this.timing.lockWaitMs,
      () =>
        new Busy(
          `Page is busy with ${this.currentOperation ?? 'another call'}; try again later`,
          this.id,
        ),
    );
    const call = this.callFor(name, opts);
    let titleFresh = false;
    try {
      opts.gate?.();
      this.refuseUnusable(opts);
      this.currentOperation = name;
      this.titleReadByCall = false;
      this.operationStartedAt = Date.now();
      this.loadingNow = Boolean(opts.navigation);
      if (opts.navigation && !this.responsive) await this.stopHungScript(call);
      const result = await call.race(work(call));
      // Status shows where the call left the page (a navigation's new title) the moment the
      // call answers, not at the next probe. A call that failed leaves that to the probe.
      titleFresh = Boolean(opts.endsWithTitle) && this.titleReadByCall;
      if (!titleFresh) await this.readTitle();
      this.lastFailed = false;
      return result;
    } catch (err) {
      this.lastFailed = true;
      this.errorCount += 1;
      if (opts.afterFailure) await opts.afterFailure(err).catch(() => undefined);
      throw err;
    } finally {
      call.end();
      this.currentOperation = null;
      this.operationStartedAt = null;
      this.loadingNow = false;
      this.lastActivity = epochSeconds();
      release();
      // A call whose work ended by reading the title in the page has just seen the renderer
      // answer: a probe now would only repeat that read.
      if (!titleFresh) this.probe();
    }
  }

  /**
   * The title as the running call's work read it in the page (document.title, the text the
   * browser's history entry takes). It is the newest read: one still in flight never
   * overwrites it, and the call ends without a title read of its own.
   */
  noteTitle(title: string): void {
    this.titleReadApplied = ++this.titleReadsStarted;
    this.title = title;
    this.titleReadByCall = true;
  }

  /**
   * Takes the title from the browser: the title of the page's current history entry, as the
   * browser process holds it ("" when the document has none). No script runs in the page, and
   * a page whose renderer hangs still answers. Chromium announces no title change by itself
   * (Target.targetInfoChanged comes with a new URL only, before the new document has parsed its
   * title, and reports the URL where a page has no title), so the title is read when a call
   * ends and at every health probe. Never throws; a read that fails leaves the title as it was.
   */
  async readTitle(): Promise<void> {
    if (this.closed) return;
    const read = ++this.titleReadsStarted;
    try {
      const history = await withTimeout(
        this.session.send('Page.getNavigationHistory'),
        TITLE_READ_TIMEOUT_MS,
        () => new Error('title read timed out'),
      );
      const entry = history.entries[history.currentIndex];
      if (!entry || read < this.titleReadApplied) return;
      this.titleReadApplied = read;
      this.title = entry.title;
    } catch {
      // A closing target or a session being swapped: the next read tells.
    }
  }

  /**
   * The call's deadline and signal: it stops when the page closes and, unless it may work on a
   * sick page, when the page gets stuck or crashes.
   */
  private callFor(name: string, opts: RunOptions): Call {
    const tolerant = opts.navigation || opts.anyState;
    // Handed to the call as they are: the call joins them with its deadline in one signal.
    const signals = tolerant ? [this.closing.signal] : [this.closing.signal, this.unusable.signal];
    if (opts.navigation) {
      const s = this.timing.navigationTimeoutMs / 1000;
      return new Call(
        opts.deadlineMs ?? navigationDeadlineMs(this.timing),
        () => new Timeout(`Navigation exceeded ${s} s`, this.id),
        signals,
      );
    }
    const deadlineMs = opts.deadlineMs ?? this.timing.callDeadlineMs;
    return new Call(
      deadlineMs,
      () => new CallStopped(`${name} stopped at its deadline of ${deadlineMs / 1000} s`, this.id),
      signals,
    );
  }

  private refuseUnusable(opts: RunOptions): void {
    if (this.closed) throw new BrowserFailure('Page was closed', this.id);
    if (opts.navigation || opts.anyState) return;
    if (this.crashed) {
      throw new BrowserFailure('Page crashed; navigate or reload it, or destroy it', this.id);
    }
    if (!this.responsive) {
      throw new BrowserFailure(
        `Page is stuck: its renderer has not answered for ${PROBE_TIMEOUT_MS / 1000} s; ` +
          'navigate or reload it, or destroy it',
        this.id,
      );
    }
  }

  /**
   * Stops the script that hangs the renderer. The command is served on the renderer's IO
   * thread, so it gets through while the main thread spins.
   */
  private async stopHungScript(call: Call): Promise<void> {
    await this.cdp(call, (s) => s.send('Runtime.terminateExecution')).catch(() => undefined);
  }

  private poison(reason: ApiError): void {
    if (!this.unusable.signal.aborted) this.unusable.abort(reason);
  }

  private healed(): void {
    if (this.unusable.signal.aborted && !this.crashed && this.responsive) {
      this.unusable = new AbortController();
    }
  }

  /**
   * Asks the renderer for a sign of life; a renderer that does not answer in time is stuck,
   * unless a navigation to a new document was in flight meanwhile: DevTools holds the question
   * until it commits (a slow server, a new renderer process), so silence then says nothing of
   * the renderer, whoever started the navigation (a call of ours, a click on a link, the page's
   * own script). Ours are not asked during at all; another counts for at most the navigation
   * timeout. The title is read from the browser meanwhile (a script may have changed it).
   */
  probe(): void {
    if (this.closed) return;
    void this.readTitle();
    if (this.probing || this.crashed || this.loadingNow) return;
    this.probing = true;
    const askedAt = performance.now();
    // Asked in our isolated world: the page's own scripts can neither see nor hook the read.
    const ask = evaluateInWorld(this, (command) => command(this.session), 'document.readyState');
    let answered = false;
    const timer = setTimeout(() => {
      if (answered || this.loadingNow) return;
      if (this.mainUrl.navigatedSince(askedAt, this.timing.navigationTimeoutMs)) return;
      this.responsive = false;
      this.poison(
        new BrowserFailure(
          `Page got stuck: its renderer stopped answering for ${PROBE_TIMEOUT_MS / 1000} s; ` +
            'navigate or reload it, or destroy it',
          this.id,
        ),
      );
    }, PROBE_TIMEOUT_MS);
    ask
      .then(() => {
        this.responsive = true;
        this.healed();
      })
      .catch(() => {
        // A navigation swapping contexts or a closing target: no verdict on responsiveness.
      })
      .finally(() => {
        answered = true;
        clearTimeout(timer);
        this.probing = false;
      });
  }

  /** Marks the page closed: every call on it stops at once. */
  markClosed(): void {
    this.closed = true;
    if (!this.closing.signal.aborted) {
      this.closing.abort(new BrowserFailure('Page was closed', this.id));
    }
  }

  /** Closes the tab even when its renderer is hung or dead. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.markClosed();
    try {
      await withTimeout(
        this.page.close({ runBeforeUnload: false }),
        5_000,
        () => new Error('close'),
      );
    } catch {
      // A hung renderer can ignore a polite close: tear the target down from the browser side.
      const session = await this.page
        .browser()
        .target()
        .createCDPSession()
        .catch(() => null);
      if (session) {
        await session
          .send('Target.closeTarget', { targetId: this.targetId })
          .catch(() => undefined);
        await session.detach().catch(() => undefined);
      }
    }
  }
}
