import type { CDPEvents, CDPSession, Protocol } from 'puppeteer-core';
import type { BlacklistPattern } from './blacklist';
import { Blacklist, describePattern, hostnameOf, patternMatches } from './blacklist';
import type { CaptureContext, CaptureSettings } from './context';
import { DocumentState } from './document';
import { navigationFields } from './http-lines';
import { HttpTracker } from './http-tracker';
import { SocketTracker } from './socket-tracker';
import type { QueryFilter, QueryResult, StoreStats } from './store';
import { LineStore } from './store';

export type { CaptureSettings } from './context';
export { REDIRECT_ERROR } from './http-lines';

/**
 * The network capture of one page: listens to CDP Network and Page events on puppeteer's own
 * session of the page, whose Network and Page domains puppeteer keeps on (a second session
 * enabling them again makes Chrome instrument every request twice: ~8 % page-load time, npm run
 * bench), and turns them into lines in a LineStore. When a prerendered page is activated the
 * page moves to another session; `follow` moves the listeners with it. Passive: it never takes
 * the page's lock and never waits on the page.
 *
 * HTTP requests are tracked in http-tracker.ts (their bodies read in body-reader.ts),
 * WebSockets in socket-tracker.ts; this wires the events to them, follows the main frame's
 * commits (generations: document.ts) and applies the blacklist of the page's current site.
 */

type Handler<K extends keyof CDPEvents> = (event: CDPEvents[K]) => void;

export class PageCapture {
  readonly store: LineStore;
  private readonly doc: DocumentState;
  private readonly http: HttpTracker;
  private readonly sockets: SocketTracker;
  private readonly off: (() => void)[] = [];
  private cdp: CDPSession;
  private patterns: { host: string; version: number; list: BlacklistPattern[] } | null = null;
  private stopped = false;
  /** Resolves once Network and Page events flow on the session. */
  readonly ready: Promise<void>;

  constructor(
    readonly pageId: string,
    session: CDPSession,
    targetId: string,
    private readonly settings: CaptureSettings,
    private readonly blacklist: Blacklist = new Blacklist(),
  ) {
    this.cdp = session;
    this.doc = new DocumentState(targetId);
    this.store = new LineStore({
      budgetBytes: settings.budgetBytes,
      maxReplyChars: settings.maxReplyChars,
      redact: settings.redact,
    });
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the context reads the live session
    const self = this;
    const ctx: CaptureContext = {
      get cdp() {
        return self.cdp;
      },
      store: this.store,
      settings,
      doc: this.doc,
      blocked: (url) => this.blocked(url),
    };
    this.http = new HttpTracker(ctx);
    this.sockets = new SocketTracker(ctx);
    this.listen();
    this.ready = this.enable();
  }

  private async enable(): Promise<void> {
    try {
      const { frameTree } = await this.cdp.send('Page.getFrameTree');
      // A commit seen meanwhile is newer than this answer (adopt keeps it).
      this.doc.adopt(frameTree.frame);
    } catch {
      // The page closed while starting: nothing to capture.
    }
  }

  /**
   * The page moved to `session` (a prerendered document was activated): listen there from now
   * on. The activated document is a new one, as after a full load: the lists start over with
   * its navigation line.
   */
  follow(session: CDPSession): Promise<void> {
    if (this.stopped || session === this.cdp) return Promise.resolve();
    for (const off of this.off) off();
    this.off.length = 0;
    this.cdp = session;
    this.listen();
    return session.send('Page.getFrameTree').then(
      ({ frameTree }) => this.onCommit({ frame: frameTree.frame, type: 'Navigation' }),
      () => undefined,
    );
  }

  /** Stops listening and drops every line. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const off of this.off) off();
    this.off.length = 0;
    this.http.stop();
    this.sockets.stop();
    this.store.close();
  }

  get url(): string {
    return this.doc.url;
  }

  /** The session listened on: always the page's own (puppeteer's), never one of ours. */
  get session(): CDPSession {
    return this.cdp;
  }

  /** Received responses whose lines are not in yet (still loading, or their body being read). */
  unsettled(): number {
    return this.http.unsettled;
  }

  query(filter: QueryFilter): Promise<QueryResult> {
    return this.store.query(filter);
  }

  stats(): StoreStats {
    return this.store.stats();
  }

  /** The blacklist patterns in force for the page's current site, as strings. */
  blacklistInForce(): string[] {
    return [...new Set(this.currentPatterns().map(describePattern))];
  }

  private currentPatterns(): BlacklistPattern[] {
    const host = hostnameOf(this.doc.url);
    const cached = this.patterns;
    if (cached && cached.host === host && cached.version === this.blacklist.version) {
      return cached.list;
    }
    const list = this.blacklist.patternsFor(host);
    this.patterns = { host, version: this.blacklist.version, list };
    return list;
  }

  private blocked(url: string, patterns = this.currentPatterns()): boolean {
    return patterns.length > 0 && patterns.some((p) => patternMatches(p, url));
  }

  // ---- events ----

  private on<K extends keyof CDPEvents>(name: K, handler: Handler<K>): void {
    const safe: Handler<K> = (event) => {
      if (this.stopped) return;
      try {
        handler(event);
      } catch {
        // One odd event must never take the capture (or the worker) down.
      }
    };
    this.cdp.on(name, safe);
    this.off.push(() => this.cdp.off(name, safe));
  }

  private listen(): void {
    const { http, sockets } = this;
    this.on('Network.requestWillBeSent', (e) => http.onRequest(e));
    this.on('Network.responseReceived', (e) => http.onResponse(e));
    this.on('Network.dataReceived', (e) => http.onData(e));
    this.on('Network.loadingFinished', (e) => http.onFinished(e));
    this.on('Network.loadingFailed', (e) => {
      if (!sockets.onFailed(e)) http.onFailed(e);
    });
    this.on('Network.webSocketCreated', (e) => sockets.onCreated(e));
    this.on('Network.webSocketHandshakeResponseReceived', (e) => sockets.onHandshake(e));
    this.on('Network.webSocketFrameSent', (e) => sockets.onFrame(e.requestId, 'sent', e.response));
    this.on('Network.webSocketFrameReceived', (e) =>
      sockets.onFrame(e.requestId, 'received', e.response),
    );
    this.on('Network.webSocketFrameError', (e) => sockets.onFrameError(e));
    this.on('Network.webSocketClosed', (e) => sockets.onClosed(e));
    this.on('Page.frameNavigated', (e) => this.onCommit(e));
    this.on('Page.navigatedWithinDocument', (e) => this.onSameDocument(e));
  }

  private onCommit(e: Protocol.Page.FrameNavigatedEvent): void {
    const frame = e.frame;
    if (frame.parentId) return;
    this.doc.commit(frame);
    const patterns = this.currentPatterns();
    this.store.clear(frame.loaderId, (url) => !this.blocked(url, patterns));
    const nav = this.http.committed(frame.loaderId);
    this.navigationLine({
      method: nav?.method ?? null,
      status: nav?.response?.status ?? null,
      contentType: nav?.response?.contentType ?? null,
    });
  }

  private onSameDocument(e: Protocol.Page.NavigatedWithinDocumentEvent): void {
    if (e.frameId !== this.doc.mainFrameId) return;
    this.doc.url = e.url;
    this.navigationLine({ method: null, status: null, contentType: null });
  }

  private navigationLine(d: {
    method: string | null;
    status: number | null;
    contentType: string | null;
  }): void {
    const line = navigationFields(this.doc.url, d);
    if (this.blocked(line.url)) return;
    this.store.appendHttp(line, null, null);
  }
}
