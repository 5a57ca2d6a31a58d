import type { CDPSession, Page } from 'puppeteer-core';
import { Busy, BrowserFailure } from '../errors';
import { epochSeconds, withTimeout } from '../util';
import { TimedMutex } from './mutex';

export const PAGE_STATES = ['idle', 'busy', 'loading', 'error', 'crashed', 'stuck'] as const;
export type PageState = (typeof PAGE_STATES)[number];

/** How long a call waits for the page's previous call before answering 409. */
export const LOCK_WAIT_MS = 30_000;
/** A renderer that has not answered a probe for this long is `stuck`. */
export const PROBE_TIMEOUT_MS = 4_000;

export interface OperationOptions {
  /** Navigation-like work: the page shows `loading` while it runs. */
  loading?: boolean;
  /** Run even on a crashed page (navigation and reload bring a crashed tab back). */
  allowCrashed?: boolean;
}

/**
 * One pooled tab: its lock, its health as last observed, and cached url and title so that
 * status calls never wait on the renderer.
 */
export class ManagedPage {
  readonly lock = new TimedMutex();
  currentOperation: string | null = null;
  private operationStartedAt: number | null = null;
  private loadingNow = false;
  private lastFailed = false;
  crashed = false;
  responsive = true;
  errorCount = 0;
  lastActivity = epochSeconds();
  title = '';
  closed = false;
  /** Where this page's mouse pointer rests between calls (viewport CSS pixels). */
  pointer = { x: 500 + Math.random() * 600, y: 300 + Math.random() * 300 };
  private probing = false;

  constructor(
    readonly id: string,
    readonly page: Page,
    readonly cdp: CDPSession,
    readonly targetId: string,
  ) {
    page.on('error', () => {
      this.crashed = true;
    });
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) this.crashed = false;
    });
  }

  get url(): string {
    try {
      return this.page.url();
    } catch {
      return '';
    }
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

  /** Runs `work` holding the page's lock; 409 if the lock is not free within LOCK_WAIT_MS. */
  async run<T>(name: string, work: () => Promise<T>, opts: OperationOptions = {}): Promise<T> {
    const release = await this.lock.acquire(
      LOCK_WAIT_MS,
      () =>
        new Busy(
          `Page is busy with ${this.currentOperation ?? 'another call'}; try again later`,
          this.id,
        ),
    );
    try {
      if (this.closed) throw new BrowserFailure('Page was closed', this.id);
      if (this.crashed && !opts.allowCrashed) {
        throw new BrowserFailure('Page crashed; navigate or reload it, or destroy it', this.id);
      }
      this.currentOperation = name;
      this.operationStartedAt = Date.now();
      this.loadingNow = Boolean(opts.loading);
      const result = await work();
      this.lastFailed = false;
      return result;
    } catch (err) {
      this.lastFailed = true;
      this.errorCount += 1;
      throw err;
    } finally {
      this.currentOperation = null;
      this.operationStartedAt = null;
      this.loadingNow = false;
      this.lastActivity = epochSeconds();
      release();
      this.probe();
    }
  }

  /** Asks the renderer for its title; a renderer that does not answer in time is stuck. */
  probe(): void {
    if (this.probing || this.closed || this.crashed) return;
    this.probing = true;
    const ask = this.cdp.send('Runtime.evaluate', {
      expression: 'document.title',
      returnByValue: true,
    });
    let answered = false;
    const timer = setTimeout(() => {
      if (!answered) this.responsive = false;
    }, PROBE_TIMEOUT_MS);
    ask
      .then((res) => {
        const value = (res.result as { value?: unknown }).value;
        if (typeof value === 'string') this.title = value;
        this.responsive = true;
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

  /** Closes the tab even when its renderer is hung or dead. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
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
