import type { CDPSession, Protocol } from 'puppeteer-core';

/** Navigations that stay in the document: DevTools goes on answering through them. */
const SAME_DOCUMENT: ReadonlySet<string> = new Set(['sameDocument', 'historySameDocument']);

/**
 * The URL of a page's main frame, followed from the page's own session. Puppeteer's
 * `page.url()` is not enough: after a prerendered page is activated it goes on reporting the
 * page that was left. It also knows when a navigation to a new document is in flight: until
 * it commits, DevTools holds every command sent to the page (whoever started it: a call, a
 * click on a link, the page's own script).
 */
export class MainFrameUrl {
  private url: string | null = null;
  private frameId: string | null = null;
  /** The loader of the main frame's current document: a new document, a new loader. */
  private loaderId: string | null = null;
  private session: CDPSession | null = null;
  /** When the navigation in flight started (performance.now()), or null when none is. */
  private inFlightSince: number | null = null;
  /** When the last navigation in flight ended: it committed, or was given up. */
  private navigationEndedAt = -Infinity;

  private readonly onNavigated = (e: Protocol.Page.FrameNavigatedEvent): void => {
    if (e.frame.parentId) return;
    this.frameId = e.frame.id;
    this.loaderId = e.frame.loaderId;
    this.url = e.frame.url + (e.frame.urlFragment ?? '');
    this.navigationEnded();
  };

  private readonly onSameDocument = (e: Protocol.Page.NavigatedWithinDocumentEvent): void => {
    if (e.frameId === this.frameId) this.url = e.url;
  };

  private readonly onStartedNavigating = (e: Protocol.Page.FrameStartedNavigatingEvent): void => {
    if (this.frameId !== null && e.frameId !== this.frameId) return;
    if (SAME_DOCUMENT.has(e.navigationType)) return;
    this.inFlightSince ??= performance.now();
  };

  /** The main frame stopped loading: a navigation that did not commit (a 204, a download). */
  private readonly onStoppedLoading = (e: Protocol.Page.FrameStoppedLoadingEvent): void => {
    if (e.frameId === this.frameId) this.navigationEnded();
  };

  private navigationEnded(): void {
    if (this.inFlightSince === null) return;
    this.inFlightSince = null;
    this.navigationEndedAt = performance.now();
  }

  /** Listens on `session` from now on, and reads where its main frame is. */
  follow(session: CDPSession): void {
    this.session?.off('Page.frameNavigated', this.onNavigated);
    this.session?.off('Page.navigatedWithinDocument', this.onSameDocument);
    this.session?.off('Page.frameStartedNavigating', this.onStartedNavigating);
    this.session?.off('Page.frameStoppedLoading', this.onStoppedLoading);
    this.session = session;
    this.loaderId = null;
    this.navigationEnded();
    session.on('Page.frameNavigated', this.onNavigated);
    session.on('Page.navigatedWithinDocument', this.onSameDocument);
    session.on('Page.frameStartedNavigating', this.onStartedNavigating);
    session.on('Page.frameStoppedLoading', this.onStoppedLoading);
    session.send('Page.getFrameTree').then(
      ({ frameTree }) => {
        if (this.session !== session) return;
        this.frameId = frameTree.frame.id;
        // An event that came in meanwhile is newer than this answer.
        this.loaderId ??= frameTree.frame.loaderId;
        this.url = frameTree.frame.url + (frameTree.frame.urlFragment ?? '');
      },
      () => undefined,
    );
  }

  /**
   * Which document the main frame shows, as last seen (its loader), or null before the first
   * answer: it changes with every new document (a navigation, a reload, a page restored from
   * the back-forward cache), never with a same-document one (a fragment, pushState).
   */
  get document(): string | null {
    return this.loaderId === null || this.session === null
      ? null
      : `${this.session.id()}/${this.loaderId}`;
  }

  /** The last URL seen, or null before the first answer. */
  get current(): string | null {
    return this.url;
  }

  /**
   * Whether a navigation to a new document was in flight at any moment since `sinceMs`
   * (performance.now()): one still in flight counts for at most `boundMs` from its start.
   */
  navigatedSince(sinceMs: number, boundMs: number): boolean {
    if (this.navigationEndedAt >= sinceMs) return true;
    return this.inFlightSince !== null && performance.now() - this.inFlightSince < boundMs;
  }
}
