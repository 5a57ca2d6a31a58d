import type { Browser, Page } from 'puppeteer-core';
import { ApiError, BadRequest, PageNotFound, errorMessage } from '../errors';
import { randomHex } from '../util';
import type { PageState } from './managed-page';
import { ManagedPage, PAGE_STATES } from './managed-page';
import { pageTargetId } from '../devtools/page-session';
import type { OpenedTab } from './tab-watch';
import { onTabOpened } from './tab-watch';
import type { PageTiming } from './timing';
import { DEFAULT_TIMING } from './timing';

/** The pool cap: a constant of the product, not an environment setting. */
export const MAX_PAGES = 5;
const PROBE_INTERVAL_MS = 2_000;

export interface PoolHooks {
  /** Called for every page the pool opens, before it is handed out (network capture, counters). */
  onPageCreated?: (page: ManagedPage) => void | Promise<void>;
  onPageClosed?: (pageId: string) => void;
}

/** Owns every pooled page: ids, the cap, health probes and closing. */
export class PagePool {
  private readonly pages = new Map<string, ManagedPage>();
  private readonly creating = new Set<string>();
  private readonly probeTimer: NodeJS.Timeout;
  /** The page a person drives through the live view: the screen is theirs, no other comes forward. */
  private screenHolder: string | null = null;
  /**
   * A blank tab no page holds, that the next page is made in: the browser's startup tab, or the
   * one opened when the last page went. The window's last tab going would end the browser
   * (Chromium quits with its last window), so while the browser runs the pool always holds a
   * page or this tab; and the window never holds a blank tab beside the pool's pages.
   */
  private spare: Page | null;
  /** Blank spare tabs the pool is opening now (see ownsTab). */
  private openingSpares = 0;

  constructor(
    private readonly browser: Browser,
    private readonly hooks: PoolHooks = {},
    private readonly timing: PageTiming = DEFAULT_TIMING,
    startupTab: Page | null = null,
  ) {
    this.spare = startupTab;
    this.probeTimer = setInterval(() => this.probeAll(), PROBE_INTERVAL_MS);
    this.probeTimer.unref();
  }

  get size(): number {
    return this.pages.size;
  }

  list(): ManagedPage[] {
    return [...this.pages.values()];
  }

  has(id: string): boolean {
    return this.pages.has(id);
  }

  get(id: string): ManagedPage {
    const page = this.pages.get(id);
    if (!page) throw new PageNotFound(id);
    return page;
  }

  /** A person drives `pageId` through the live view (null: nobody does). */
  holdScreen(pageId: string | null): void {
    this.screenHolder = pageId;
  }

  private screenHeldElsewhere(pageId: string): string | null {
    const holder = this.screenHolder;
    return holder !== null && holder !== pageId && this.pages.has(holder) ? holder : null;
  }

  /**
   * Whether the tab with this DevTools target id is one of the pool's: a page's or the blank
   * spare. While the pool is making a page or opening a spare, any tab may be that one: true.
   */
  ownsTab(targetId: string): boolean {
    if (this.creating.size > 0 || this.openingSpares > 0) return true;
    if (this.spare && !this.spare.isClosed() && pageTargetId(this.spare) === targetId) return true;
    return this.list().some((p) => p.targetId === targetId);
  }

  /** Calls `listener` for each tab the browser opens from now on; returns the unsubscribe. */
  onTabOpened(listener: (tab: OpenedTab) => void): () => void {
    return onTabOpened(this.browser, listener);
  }

  /** Opens a blank spare tab, counted until it is held as the spare (see ownsTab). */
  private async openSpare(): Promise<void> {
    this.openingSpares += 1;
    try {
      this.spare = await this.browser.newPage().catch(() => null);
    } finally {
      this.openingSpares -= 1;
    }
  }

  countByState(): Record<PageState, number> {
    // fromEntries types its keys as any string; here they are exactly the PAGE_STATES.
    const counts = Object.fromEntries(PAGE_STATES.map((s) => [s, 0])) as Record<PageState, number>;
    for (const p of this.pages.values()) counts[p.state] += 1;
    return counts;
  }

  async create(requestedId: string | null): Promise<ManagedPage> {
    const id = requestedId ?? this.generateId();
    if (this.pages.has(id) || this.creating.has(id)) {
      throw new BadRequest(`Page ${id} already exists`, id);
    }
    if (this.pages.size + this.creating.size >= MAX_PAGES) {
      throw new BadRequest(
        `Page pool is full (${MAX_PAGES} pages); destroy one first`,
        requestedId,
      );
    }
    this.creating.add(id);
    let page: Page | null = null;
    try {
      page = this.takeSpare() ?? (await this.browser.newPage());
      const managed = new ManagedPage(id, page, this.timing, (pageId) =>
        this.screenHeldElsewhere(pageId),
      );
      await this.hooks.onPageCreated?.(managed);
      this.pages.set(id, managed);
      // A tab closed from outside (a person at the VNC view, a crash of its window) leaves the pool.
      page.once('close', () => {
        if (this.pages.get(id) !== managed) return;
        this.pages.delete(id);
        managed.markClosed();
        this.hooks.onPageClosed?.(id);
      });
      await this.dropSpare();
      return managed;
    } catch (err) {
      // No half-made tab outside the pool: close what was opened, then say why. The window
      // keeps a tab: a blank one opens first when that was its last.
      if (page && this.pages.size === 0 && !this.spare) {
        await this.openSpare();
      }
      await page?.close().catch(() => undefined);
      if (err instanceof ApiError) throw err;
      throw new BadRequest(`Page could not be created: ${errorMessage(err)}`, id);
    } finally {
      this.creating.delete(id);
    }
  }

  async destroy(id: string): Promise<void> {
    const page = this.get(id);
    this.pages.delete(id);
    this.hooks.onPageClosed?.(id);
    // The last page's tab may be the window's last: a blank one opens first to keep it.
    if (this.pages.size === 0 && !this.spare) {
      await this.openSpare();
    }
    await page.close();
    // A page made meanwhile holds the window again.
    await this.dropSpare();
  }

  /** Closes the blank tab kept for the window once a page of the pool holds the window. */
  private async dropSpare(): Promise<void> {
    const spare = this.spare;
    if (this.pages.size === 0 || !spare) return;
    this.spare = null;
    await spare.close().catch(() => undefined);
  }

  private takeSpare(): Page | null {
    const spare = this.spare;
    this.spare = null;
    return spare && !spare.isClosed() ? spare : null;
  }

  /**
   * Ends every page as the browser goes. Their tabs are left to the browser's own close, which
   * takes its window with them: closing them here one by one would close the window's last tab
   * first, and Chromium would start quitting by itself under the close that follows.
   */
  closeAll(): void {
    clearInterval(this.probeTimer);
    const all = this.list();
    this.pages.clear();
    this.spare = null;
    for (const p of all) {
      p.markClosed();
      this.hooks.onPageClosed?.(p.id);
    }
  }

  private probeAll(): void {
    for (const page of this.pages.values()) page.probe();
  }

  private generateId(): string {
    let id: string;
    do id = `page-${randomHex(4)}`;
    while (this.pages.has(id) || this.creating.has(id));
    return id;
  }
}
