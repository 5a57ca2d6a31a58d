import type { Protocol } from 'puppeteer-core';

/**
 * The page's main-frame document, and the generation that its commits count.
 *
 * Generations: every commit of a new document in the main frame (Page.frameNavigated without a
 * parent) starts a generation and empties both lists. A request belongs to the generation in
 * which it was sent; when its line is ready after a later commit it is discarded, except the
 * main-frame navigation request that made the commit (its requestId is its loaderId): its
 * redirect hops and its document response are the new document's own lines and survive.
 * Same-document URL changes (history API, fragment) only add a navigation line.
 */
export class DocumentState {
  gen = 0;
  /** The main frame's id (a page target's main frame id is its target id) and document. */
  mainFrameId: string;
  loaderId: string | null = null;
  url = 'about:blank';

  constructor(targetId: string) {
    this.mainFrameId = targetId;
  }

  /** A line made now still belongs to the lists: same generation, or the committed document's. */
  fresh(t: { gen: number; nav?: string | null }): boolean {
    return t.gen === this.gen || (!!t.nav && t.nav === this.loaderId);
  }

  /** The main frame as Page.getFrameTree saw it at start; a commit seen meanwhile is newer. */
  adopt(frame: Protocol.Page.Frame): void {
    if (this.loaderId !== null) return;
    this.mainFrameId = frame.id;
    this.loaderId = frame.loaderId;
    this.url = frame.url + (frame.urlFragment ?? '');
  }

  /** A new document committed in the main frame: a new generation. */
  commit(frame: Protocol.Page.Frame): void {
    this.mainFrameId = frame.id;
    this.gen += 1;
    this.loaderId = frame.loaderId;
    // An error page stands for the URL that could not be reached.
    this.url = frame.unreachableUrl || frame.url + (frame.urlFragment ?? '');
  }
}
