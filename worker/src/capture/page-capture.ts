import type { CDPEvents, CDPSession, Protocol } from 'puppeteer-core';
import { epochSeconds, withTimeout } from '../util';
import type { BlacklistPattern } from './blacklist';
import { Blacklist, describePattern, hostnameOf, patternMatches } from './blacklist';
import {
  base64Bytes,
  charsetOf,
  cutBase64,
  cutText,
  decodeText,
  headerStrings,
  headerValue,
  isTextType,
} from './body';
import type { NewHttpLine, NewWsLine, ResourceType, WsKind } from './lines';
import { mapResourceType } from './lines';
import type { QueryFilter, QueryResult, Reservation, StoreStats } from './store';
import { LineStore } from './store';

/**
 * The network capture of one page: listens to CDP Network and Page events on the page's own
 * session and turns them into lines in a LineStore. Passive: it never takes the page's lock and
 * never waits on the page.
 *
 * Order: a response takes its place in line (its seq) when it finishes loading. A text body is
 * read afterwards with Network.getResponseBody, a few at a time, once the page's network has
 * been quiet for a moment (at most a second later), so that reading never competes with the
 * page's own loading; lines that come meanwhile wait behind it. Non-text bodies are not read.
 *
 * Generations: every commit of a new document in the main frame (Page.frameNavigated without a
 * parent) starts a generation and empties both lists. A request belongs to the generation in
 * which it was sent; when its line is ready after a later commit it is discarded, except the
 * main-frame navigation request that made the commit (its requestId is its loaderId): its
 * redirect hops and its document response are the new document's own lines and survive.
 * Same-document URL changes (history API, fragment) only add a navigation line.
 */

export interface CaptureSettings {
  budgetBytes?: number;
  bodyLimitChars: number;
  /** Network.getResponseBody calls in flight per page. */
  bodyConcurrency?: number;
  maxReplyChars?: number;
}

/** A request of a captured type (document, xhr, fetch) on its way. */
interface Tracked {
  id: string;
  method: string;
  url: string;
  type: ResourceType;
  frameId: string | undefined;
  loaderId: string;
  gen: number;
  /** The loaderId when this is a main-frame navigation request, else null. */
  nav: string | null;
  response: {
    ts: number;
    url: string;
    status: number;
    headers: Record<string, string>;
    contentType: string | null;
    mime: string;
  } | null;
  /** Decoded bytes received so far (Network.dataReceived). */
  received: number;
}

/** A text body to read, and its place in line. */
interface BodyRead {
  t: Tracked;
  place: Reservation;
  /** performance.now() when the response finished. */
  at: number;
}

interface Socket {
  url: string;
  gen: number;
}

const MAX_TRACKED = 4096;
const MAX_SOCKETS = 512;
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
export const REDIRECT_ERROR = 'redirect response: the browser keeps no body for it';

type Handler<K extends keyof CDPEvents> = (event: CDPEvents[K]) => void;

export class PageCapture {
  readonly store: LineStore;
  private readonly requests = new Map<string, Tracked>();
  private readonly sockets = new Map<string, Socket>();
  /** Main-frame navigation requests that ended before their commit (a failure, an error page). */
  private readonly endedNavs = new Map<string, Tracked>();
  private readonly bodyQueue: BodyRead[] = [];
  private readonly bodiesReading = new Set<BodyRead>();
  private bodiesInFlight = 0;
  /** performance.now() of the page's last network event. */
  private lastNetworkAt = 0;
  private bodyTimer: NodeJS.Timeout | null = null;
  private readonly bodyConcurrency: number;
  private readonly off: (() => void)[] = [];
  private gen = 0;
  /** The main frame's id (a page target's main frame id is its target id) and document. */
  private mainFrameId: string;
  private loaderId: string | null = null;
  private pageUrl = 'about:blank';
  private patterns: { host: string; version: number; list: BlacklistPattern[] } | null = null;
  private stopped = false;
  /** Resolves once Network and Page events flow on the session. */
  readonly ready: Promise<void>;

  constructor(
    readonly pageId: string,
    private readonly cdp: CDPSession,
    targetId: string,
    private readonly settings: CaptureSettings,
    private readonly blacklist: Blacklist = new Blacklist(),
  ) {
    this.mainFrameId = targetId;
    this.bodyConcurrency = settings.bodyConcurrency ?? DEFAULT_BODY_CONCURRENCY;
    this.store = new LineStore({
      budgetBytes: settings.budgetBytes,
      maxReplyChars: settings.maxReplyChars,
    });
    this.listen();
    this.ready = this.enable();
  }

  private async enable(): Promise<void> {
    try {
      // Post data is never part of a line: Chrome need not copy it into every event.
      await Promise.all([
        this.cdp.send('Network.enable', { maxPostDataSize: 0 }),
        this.cdp.send('Page.enable'),
      ]);
      const { frameTree } = await this.cdp.send('Page.getFrameTree');
      // A commit seen meanwhile is newer than this answer.
      if (this.loaderId === null) {
        this.mainFrameId = frameTree.frame.id;
        this.loaderId = frameTree.frame.loaderId;
        this.pageUrl = frameTree.frame.url + (frameTree.frame.urlFragment ?? '');
      }
    } catch {
      // The page closed while starting: nothing to capture.
    }
  }

  /** Stops listening and drops every line. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const off of this.off) off();
    this.off.length = 0;
    if (this.bodyTimer) clearTimeout(this.bodyTimer);
    this.bodyTimer = null;
    this.requests.clear();
    this.sockets.clear();
    this.endedNavs.clear();
    this.bodyQueue.length = 0;
    this.bodiesReading.clear();
    this.store.close();
    // A page that lives on (a registry replaced, a bench) stops paying for the events; a closed
    // one refuses, which is fine.
    this.cdp.send('Network.disable').catch(() => undefined);
  }

  get url(): string {
    return this.pageUrl;
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
    const host = hostnameOf(this.pageUrl);
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
    const safe = ((event: CDPEvents[K]) => {
      if (this.stopped) return;
      try {
        handler(event);
      } catch {
        // One odd event must never take the capture (or the worker) down.
      }
    }) as Handler<K>;
    this.cdp.on(name, safe);
    this.off.push(() => this.cdp.off(name, safe));
  }

  private listen(): void {
    this.on('Network.requestWillBeSent', (e) => this.onRequest(e));
    this.on('Network.responseReceived', (e) => this.onResponse(e));
    this.on('Network.dataReceived', (e) => {
      this.lastNetworkAt = performance.now();
      const t = this.requests.get(e.requestId);
      if (t) t.received += e.dataLength;
    });
    this.on('Network.loadingFinished', (e) => this.onFinished(e));
    this.on('Network.loadingFailed', (e) => this.onFailed(e));
    this.on('Network.webSocketCreated', (e) => {
      if (this.sockets.size >= MAX_SOCKETS) {
        const oldest = this.sockets.keys().next();
        if (!oldest.done) this.sockets.delete(oldest.value);
      }
      this.sockets.set(e.requestId, { url: e.url, gen: this.gen });
    });
    this.on('Network.webSocketHandshakeResponseReceived', (e) => {
      const status = e.response.status;
      if (status === 101) this.socketLine(e.requestId, 'open', null, false);
      else this.socketLine(e.requestId, 'error', `handshake answered ${status}`, false);
    });
    this.on('Network.webSocketFrameSent', (e) => this.onFrame(e.requestId, 'sent', e.response));
    this.on('Network.webSocketFrameReceived', (e) =>
      this.onFrame(e.requestId, 'received', e.response),
    );
    this.on('Network.webSocketFrameError', (e) =>
      this.socketLine(e.requestId, 'error', e.errorMessage, false),
    );
    this.on('Network.webSocketClosed', (e) => {
      this.socketLine(e.requestId, 'close', null, false);
      this.sockets.delete(e.requestId);
    });
    this.on('Page.frameNavigated', (e) => this.onCommit(e));
    this.on('Page.navigatedWithinDocument', (e) => this.onSameDocument(e));
  }

  /** A line made now still belongs to the lists: same generation, or the committed document's. */
  private fresh(t: { gen: number; nav?: string | null }): boolean {
    return t.gen === this.gen || (!!t.nav && t.nav === this.loaderId);
  }

  private onRequest(e: Protocol.Network.RequestWillBeSentEvent): void {
    this.lastNetworkAt = performance.now();
    const prev = this.requests.get(e.requestId);
    if (prev && e.redirectResponse) {
      if (this.fresh(prev)) this.redirectLine(prev, e.redirectResponse);
    }
    const type = mapResourceType(e.type);
    if (!type) {
      if (prev) this.requests.delete(e.requestId);
      return;
    }
    if (this.requests.size >= MAX_TRACKED && !prev) {
      const oldest = this.requests.keys().next();
      if (!oldest.done) this.requests.delete(oldest.value);
    }
    const nav =
      type === 'document' && e.requestId === e.loaderId && e.frameId === this.mainFrameId
        ? e.loaderId
        : null;
    this.requests.set(e.requestId, {
      id: e.requestId,
      method: e.request.method,
      url: e.request.url + (e.request.urlFragment ?? ''),
      type,
      frameId: e.frameId,
      loaderId: e.loaderId,
      gen: prev?.gen ?? this.gen,
      nav,
      response: null,
      received: 0,
    });
  }

  private onResponse(e: Protocol.Network.ResponseReceivedEvent): void {
    const t = this.requests.get(e.requestId);
    if (!t) return;
    // A late response for the previous document of the main frame.
    const stale =
      !t.nav && t.frameId === this.mainFrameId && t.loaderId && this.loaderId !== null
        ? t.loaderId !== this.loaderId
        : false;
    if (!this.fresh(t) || stale) {
      this.requests.delete(e.requestId);
      return;
    }
    t.type = mapResourceType(e.type) ?? t.type;
    const headers = headerStrings(e.response.headers);
    t.response = {
      ts: epochSeconds(),
      url: e.response.url,
      status: e.response.status,
      headers,
      contentType: headerValue(headers, 'content-type') ?? (e.response.mimeType || null),
      mime: e.response.mimeType,
    };
  }

  /** Forgets a request; a main-frame navigation is remembered a little longer for its commit. */
  private ended(t: Tracked): void {
    this.requests.delete(t.id);
    if (!t.nav) return;
    this.endedNavs.set(t.id, t);
    if (this.endedNavs.size > 4) {
      const oldest = this.endedNavs.keys().next();
      if (!oldest.done) this.endedNavs.delete(oldest.value);
    }
  }

  private onFinished(e: Protocol.Network.LoadingFinishedEvent): void {
    this.lastNetworkAt = performance.now();
    const t = this.requests.get(e.requestId);
    if (!t) return;
    this.ended(t);
    if (!t.response || !this.fresh(t)) return;
    if (!isTextType(t.response.mime || t.response.contentType)) {
      this.responseLine(t, null, this.binaryLength(t), false, null);
      return;
    }
    if (this.bodyQueue.length >= MAX_BODY_QUEUE) {
      this.responseLine(t, null, t.received, false, 'body not read: too many bodies waiting');
      return;
    }
    if (this.blocked(t.response.url)) return;
    // The line takes its place now; lines that come later wait until the body is in.
    this.bodyQueue.push({ t, place: this.store.reserve(), at: performance.now() });
    this.pumpBodies();
  }

  /** Decoded bytes received; else the declared Content-Length; else 0. */
  private binaryLength(t: Tracked): number {
    if (t.received > 0) return t.received;
    const declared = Number(headerValue(t.response?.headers ?? {}, 'content-length') ?? NaN);
    return Number.isInteger(declared) && declared >= 0 ? declared : 0;
  }

  private onFailed(e: Protocol.Network.LoadingFailedEvent): void {
    if (this.sockets.has(e.requestId)) {
      this.socketLine(e.requestId, 'error', e.errorText, false);
      return;
    }
    const t = this.requests.get(e.requestId);
    if (!t) return;
    this.ended(t);
    if (!this.fresh(t)) return;
    const reason = [e.errorText, e.blockedReason && `blocked: ${e.blockedReason}`]
      .filter(Boolean)
      .join('; ');
    this.responseLine(t, null, t.received, false, `loading failed: ${reason}`);
  }

  private onCommit(e: Protocol.Page.FrameNavigatedEvent): void {
    const frame = e.frame;
    if (frame.parentId) return;
    this.mainFrameId = frame.id;
    this.gen += 1;
    this.loaderId = frame.loaderId;
    // An error page stands for the URL that could not be reached.
    this.pageUrl = frame.unreachableUrl || frame.url + (frame.urlFragment ?? '');
    const patterns = this.currentPatterns();
    this.store.clear(frame.loaderId, (url) => !this.blocked(url, patterns));
    // Requests of the previous document will never make a line now; their places are freed
    // so that the new document's lines never wait on an old body.
    for (const [id, t] of this.requests) if (!this.fresh(t)) this.requests.delete(id);
    for (const read of [...this.bodyQueue, ...this.bodiesReading]) {
      if (!this.fresh(read.t)) read.place.cancel();
    }
    const nav = this.requests.get(frame.loaderId) ?? this.endedNavs.get(frame.loaderId);
    this.endedNavs.clear();
    this.navigationLine({
      method: nav?.method ?? null,
      status: nav?.response?.status ?? null,
      contentType: nav?.response?.contentType ?? null,
    });
  }

  private onSameDocument(e: Protocol.Page.NavigatedWithinDocumentEvent): void {
    if (e.frameId !== this.mainFrameId) return;
    this.pageUrl = e.url;
    this.navigationLine({ method: null, status: null, contentType: null });
  }

  // ---- bodies ----

  private pumpBodies(): void {
    if (this.stopped) return;
    while (this.bodiesInFlight < this.bodyConcurrency && this.bodyQueue.length > 0) {
      const read = this.bodyQueue[0] as BodyRead;
      if (!this.fresh(read.t)) {
        this.bodyQueue.shift();
        read.place.cancel();
        continue;
      }
      const now = performance.now();
      const wait = Math.min(this.lastNetworkAt + QUIET_MS - now, read.at + MAX_BODY_DELAY_MS - now);
      if (wait > 0) {
        this.bodyTimer ??= setTimeout(() => {
          this.bodyTimer = null;
          this.pumpBodies();
        }, wait + 1);
        return;
      }
      this.bodyQueue.shift();
      this.bodiesInFlight += 1;
      this.bodiesReading.add(read);
      void this.readBody(read).finally(() => {
        this.bodiesInFlight -= 1;
        this.bodiesReading.delete(read);
        this.pumpBodies();
      });
    }
  }

  private async readBody({ t, place }: BodyRead): Promise<void> {
    let text: string;
    try {
      const r = await withTimeout(
        this.cdp.send('Network.getResponseBody', { requestId: t.id }),
        BODY_READ_TIMEOUT_MS,
        () => new Error(`no answer within ${BODY_READ_TIMEOUT_MS / 1000} s`),
      );
      text = r.base64Encoded
        ? decodeText(Buffer.from(r.body, 'base64'), charsetOf(t.response?.contentType))
        : r.body;
    } catch (err) {
      if (this.stopped || !this.fresh(t)) return place.cancel();
      const why =
        err instanceof Error ? err.message.replace(/^Protocol error \([^)]*\): /, '') : '';
      place.fillHttp(
        this.responseFields(t, t.received, false, `body could not be read: ${why}`),
        null,
        t.nav,
      );
      return;
    }
    if (this.stopped || !this.fresh(t)) return place.cancel();
    const cut = cutText(text, this.settings.bodyLimitChars);
    place.fillHttp(this.responseFields(t, text.length, cut.truncated, null), cut.text, t.nav);
  }

  // ---- lines ----

  private httpLine(line: NewHttpLine, body: string | null, tag: string | null): void {
    if (this.blocked(line.url)) return;
    this.store.appendHttp(line, body, tag);
  }

  private navigationLine(d: {
    method: string | null;
    status: number | null;
    contentType: string | null;
  }): void {
    this.httpLine(
      {
        ts: epochSeconds(),
        kind: 'navigation',
        method: d.method,
        url: this.pageUrl,
        resource_type: 'document',
        status: d.status,
        content_type: d.contentType,
        headers: {},
        body_length: 0,
        body_truncated: false,
        error: null,
      },
      null,
      null,
    );
  }

  private responseFields(
    t: Tracked,
    bodyLength: number,
    truncated: boolean,
    error: string | null,
  ): NewHttpLine {
    const r = t.response;
    return {
      ts: r?.ts ?? epochSeconds(),
      kind: 'response',
      method: t.method,
      url: r?.url ?? t.url,
      resource_type: t.type,
      status: r?.status ?? 0,
      content_type: r?.contentType ?? null,
      headers: r?.headers ?? {},
      body_length: bodyLength,
      body_truncated: truncated,
      error,
    };
  }

  private responseLine(
    t: Tracked,
    body: string | null,
    bodyLength: number,
    truncated: boolean,
    error: string | null,
  ): void {
    this.httpLine(this.responseFields(t, bodyLength, truncated, error), body, t.nav);
  }

  private redirectLine(t: Tracked, r: Protocol.Network.Response): void {
    const headers = headerStrings(r.headers);
    const declared = Number(headerValue(headers, 'content-length'));
    this.httpLine(
      {
        ts: epochSeconds(),
        kind: 'response',
        method: t.method,
        url: r.url,
        resource_type: t.type,
        status: r.status,
        content_type: headerValue(headers, 'content-type') ?? (r.mimeType || null),
        headers,
        body_length: Number.isFinite(declared) && declared > 0 ? declared : 0,
        body_truncated: false,
        error: REDIRECT_ERROR,
      },
      null,
      t.nav,
    );
  }

  private onFrame(
    requestId: string,
    kind: 'sent' | 'received',
    frame: Protocol.Network.WebSocketFrame,
  ): void {
    if (frame.opcode === 1) {
      this.socketLine(requestId, kind, frame.payloadData, false);
    } else {
      this.socketLine(requestId, kind, frame.payloadData, true);
    }
  }

  private socketLine(
    requestId: string,
    kind: WsKind,
    payload: string | null,
    binary: boolean,
  ): void {
    const socket = this.sockets.get(requestId);
    if (!socket || !this.fresh(socket)) return;
    if (this.blocked(socket.url)) return;
    const limit = this.settings.bodyLimitChars;
    let length = 0;
    let stored = payload;
    if (payload !== null) {
      if (binary) {
        length = base64Bytes(payload);
        stored = cutBase64(payload, limit);
      } else {
        length = payload.length;
        stored = cutText(payload, limit).text;
      }
    }
    const line: NewWsLine = {
      ts: epochSeconds(),
      kind,
      url: socket.url,
      binary,
      payload_length: length,
    };
    this.store.appendWs(line, stored);
  }
}
