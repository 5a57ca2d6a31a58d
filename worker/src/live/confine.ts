import type { CDPSession } from 'puppeteer-core';
import type { Logger } from '@persona-browser/service-kit';
import { evaluateInWorld } from '../browser/isolated-world';
import type { ManagedPage } from '../browser/managed-page';
import type { PagePool } from '../browser/page-pool';
import type { OpenedTab } from '../browser/tab-watch';
import { watchShown } from '../browser/tab-watch';
import { errorMessage } from '../errors';
import { withTimeout } from '../util';

/** How long one DevTools step of the confinement may take (a hung page must not hold control). */
const STEP_MS = 3_000;

/**
 * Keeps a person whose live-view link is limited to one page on that page. The display shows
 * the browser's whole window, and with it the tab strip, other tabs and the browser's menus; the
 * input filter drops what reaches those (confined-input.ts), and whatever still brings another
 * tab forward is undone here, from what the browser itself tells:
 * - another tab coming to the front (a pool page, or one opened meanwhile) sends the page back
 *   to the front at once;
 * - a tab opened by neither the page nor the pool (the browser's new tab or window) is closed;
 * - tabs the page opens itself (a sign-in popup, a link's target) are the page's: they stay.
 * It also keeps `contentTop`, where the page's content begins on the screen, for the filter.
 */
export class PageConfinement {
  /** Screen row where the page's content begins; Infinity until measured (no press passes). */
  contentTop = Number.POSITIVE_INFINITY;
  private readonly stops: Array<() => void> = [];
  /** Tabs the page opened (and tabs those opened): theirs to show. */
  private readonly own = new Set<string>();
  private stopped = false;
  private measures = 0;

  private constructor(
    private readonly pool: PagePool,
    readonly page: ManagedPage,
    private readonly logger: Logger,
  ) {}

  /** Confines to `page` from now on; resolves once the other tabs are watched. */
  static async start(pool: PagePool, page: ManagedPage, logger: Logger): Promise<PageConfinement> {
    const c = new PageConfinement(pool, page, logger);
    c.stops.push(pool.onTabOpened((tab) => c.opened(tab)));
    c.followLayout(page.session);
    // A prerendered page taking the tab's place brings the page a new session.
    page.onSessionSwap((session) => {
      if (!c.stopped) c.followLayout(session);
    });
    const others = pool.list().filter((p) => p !== page);
    await Promise.all([c.measure(), ...others.map((p) => c.watch(`page ${p.id}`, p.session))]);
    return c;
  }

  stop(): void {
    this.stopped = true;
    for (const stop of this.stops.splice(0)) stop();
  }

  /**
   * Measured again when the window's bars change height (an infobar closed, fullscreen), and at
   * each load (a page that could not be measured, crashed, may be reloaded with F5).
   */
  private followLayout(session: CDPSession): void {
    const again = (): void => void this.measure();
    session.on('Page.frameResized', again);
    session.on('Page.loadEventFired', again);
    this.stops.push(() => {
      session.off('Page.frameResized', again);
      session.off('Page.loadEventFired', again);
    });
  }

  /**
   * The page's content begins where the window's bars end: the window's bottom less the
   * viewport's height in screen pixels (page zoom included), read in the page's isolated world.
   */
  private async measure(): Promise<void> {
    const n = (this.measures += 1);
    const session = this.page.session;
    try {
      const [{ bounds }, viewport] = await withTimeout(
        Promise.all([
          session.send('Browser.getWindowForTarget'),
          evaluateInWorld(this.page, (command) => command(session), 'innerHeight*devicePixelRatio'),
        ]),
        STEP_MS,
        () => new Error('no answer'),
      );
      if (typeof viewport !== 'number' || bounds.top === undefined || !bounds.height) return;
      // An older measurement answering late never overwrites a newer one.
      if (n === this.measures && !this.stopped)
        this.contentTop = bounds.top + bounds.height - Math.round(viewport);
    } catch (err) {
      this.logger.warn('live view: the controlled page’s place on the screen is unknown', {
        page_id: this.page.id,
        error: errorMessage(err),
      });
    }
  }

  private opened(tab: OpenedTab): void {
    if (this.stopped || tab.targetId === this.page.targetId) return;
    const opener = tab.openerId;
    if (opener !== null && (opener === this.page.targetId || this.own.has(opener))) {
      this.own.add(tab.targetId);
      this.logger.info('live view: the controlled page opened a tab of its own', {
        page_id: this.page.id,
      });
      return;
    }
    // A new tab opens in front: the page goes back at once, before the tab is ready to watch.
    const kept = this.keepInFront('a new tab');
    if (this.pool.ownsTab(tab.targetId)) {
      void tab.session().then((session) => session && this.watch('a new page', session));
      return;
    }
    // Closed once the page is in front: closing a tab behind it leaves the front tab in place.
    void kept.then(() =>
      tab.close().then(
        () =>
          this.logger.info('live view: closed a tab opened beside the controlled page', {
            page_id: this.page.id,
          }),
        () => undefined,
      ),
    );
  }

  /** Whenever this tab comes to the front, the page goes back in front of it. */
  private async watch(what: string, session: CDPSession): Promise<void> {
    const started = watchShown(session, () => void this.keepInFront(what)).then(
      (stop) => {
        // Stopped meanwhile (or given up waiting for): the watch ends as soon as it began.
        if (this.stopped) stop();
        else this.stops.push(stop);
      },
      (err: unknown) =>
        this.logger.warn('live view: a tab beside the controlled page is not watched', {
          page_id: this.page.id,
          tab: what,
          error: errorMessage(err),
        }),
    );
    await withTimeout(started, STEP_MS, () => new Error('no answer')).catch(() => undefined);
  }

  private async keepInFront(shown: string): Promise<void> {
    if (this.stopped) return;
    this.logger.info('live view: kept the controlled page in front', {
      page_id: this.page.id,
      shown,
    });
    await withTimeout(this.page.page.bringToFront(), STEP_MS, () => new Error('no answer')).catch(
      () => undefined,
    );
  }
}
