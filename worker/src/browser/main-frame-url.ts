import type { CDPSession, Protocol } from 'puppeteer-core';

/**
 * The URL of a page's main frame, followed from the page's own session. Puppeteer's
 * `page.url()` is not enough: after a prerendered page is activated it goes on reporting the
 * page that was left.
 */
export class MainFrameUrl {
  private url: string | null = null;
  private frameId: string | null = null;
  /** The loader of the main frame's current document: a new document, a new loader. */
  private loaderId: string | null = null;
  private session: CDPSession | null = null;

  private readonly onNavigated = (e: Protocol.Page.FrameNavigatedEvent): void => {
    if (e.frame.parentId) return;
    this.frameId = e.frame.id;
    this.loaderId = e.frame.loaderId;
    this.url = e.frame.url + (e.frame.urlFragment ?? '');
  };

  private readonly onSameDocument = (e: Protocol.Page.NavigatedWithinDocumentEvent): void => {
    if (e.frameId === this.frameId) this.url = e.url;
  };

  /** Listens on `session` from now on, and reads where its main frame is. */
  follow(session: CDPSession): void {
    this.session?.off('Page.frameNavigated', this.onNavigated);
    this.session?.off('Page.navigatedWithinDocument', this.onSameDocument);
    this.session = session;
    this.loaderId = null;
    session.on('Page.frameNavigated', this.onNavigated);
    session.on('Page.navigatedWithinDocument', this.onSameDocument);
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
}
