import type { Protocol } from 'puppeteer-core';
import { epochSeconds } from '../util';
import { BodyReader } from './body-reader';
import { headerStrings, headerValue, isTextType } from './body';
import type { CaptureContext } from './context';
import type { Tracked } from './http-lines';
import { redirectFields, responseFields } from './http-lines';
import type { NewHttpLine } from './lines';
import { mapResourceType } from './lines';

/**
 * The HTTP side of a page's capture: requests of a captured type (document, xhr, fetch) from
 * their sending to their response line.
 *
 * Order: a response takes its place in line (its seq) when it finishes loading. A text body is
 * read afterwards (see body-reader.ts); lines that come meanwhile wait behind it. Non-text
 * bodies are not read.
 */

const MAX_TRACKED = 4096;

export class HttpTracker {
  private readonly requests = new Map<string, Tracked>();
  /** Main-frame navigation requests that ended before their commit (a failure, an error page). */
  private readonly endedNavs = new Map<string, Tracked>();
  private readonly bodies: BodyReader;

  /**
   * Responses the page has received whose lines are not in the lists yet: those still loading
   * (a page's fetch resolves on the headers, before the body ends) and finished ones whose body
   * is being read.
   */
  get unsettled(): number {
    let loading = 0;
    for (const t of this.requests.values()) if (t.response && this.ctx.doc.fresh(t)) loading += 1;
    return loading + this.bodies.pending;
  }

  constructor(private readonly ctx: CaptureContext) {
    this.bodies = new BodyReader(ctx);
  }

  stop(): void {
    this.requests.clear();
    this.endedNavs.clear();
    this.bodies.stop();
  }

  /**
   * After a commit: requests of the previous document will never make a line now; their places
   * are freed so that the new document's lines never wait on an old body. Returns the
   * navigation request that made the commit, if known.
   */
  committed(loaderId: string): Tracked | undefined {
    const { doc } = this.ctx;
    for (const [id, t] of this.requests) if (!doc.fresh(t)) this.requests.delete(id);
    this.bodies.cancelStale();
    const nav = this.requests.get(loaderId) ?? this.endedNavs.get(loaderId);
    this.endedNavs.clear();
    return nav;
  }

  onRequest(e: Protocol.Network.RequestWillBeSentEvent): void {
    const { doc } = this.ctx;
    this.bodies.networkEvent();
    const prev = this.requests.get(e.requestId);
    if (prev && e.redirectResponse) {
      if (doc.fresh(prev)) this.httpLine(redirectFields(prev, e.redirectResponse), null, prev.nav);
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
      type === 'document' && e.requestId === e.loaderId && e.frameId === doc.mainFrameId
        ? e.loaderId
        : null;
    this.requests.set(e.requestId, {
      id: e.requestId,
      method: e.request.method,
      url: e.request.url + (e.request.urlFragment ?? ''),
      type,
      frameId: e.frameId,
      loaderId: e.loaderId,
      gen: prev?.gen ?? doc.gen,
      nav,
      response: null,
      received: 0,
    });
  }

  onResponse(e: Protocol.Network.ResponseReceivedEvent): void {
    const { doc } = this.ctx;
    const t = this.requests.get(e.requestId);
    if (!t) return;
    // A late response for the previous document of the main frame.
    const stale =
      !t.nav && t.frameId === doc.mainFrameId && t.loaderId && doc.loaderId !== null
        ? t.loaderId !== doc.loaderId
        : false;
    if (!doc.fresh(t) || stale) {
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

  onData(e: Protocol.Network.DataReceivedEvent): void {
    this.bodies.networkEvent();
    const t = this.requests.get(e.requestId);
    if (t) t.received += e.dataLength;
  }

  onFinished(e: Protocol.Network.LoadingFinishedEvent): void {
    this.bodies.networkEvent();
    const t = this.requests.get(e.requestId);
    if (!t) return;
    this.ended(t);
    if (!t.response || !this.ctx.doc.fresh(t)) return;
    if (!isTextType(t.response.mime || t.response.contentType)) {
      this.responseLine(t, this.binaryLength(t), null);
      return;
    }
    if (this.bodies.full) {
      this.responseLine(t, t.received, 'body not read: too many bodies waiting');
      return;
    }
    if (this.ctx.blocked(t.response.url)) return;
    // The line takes its place now; lines that come later wait until the body is in.
    this.bodies.add(t);
  }

  onFailed(e: Protocol.Network.LoadingFailedEvent): void {
    const t = this.requests.get(e.requestId);
    if (!t) return;
    this.ended(t);
    if (!this.ctx.doc.fresh(t)) return;
    const reason = [e.errorText, e.blockedReason && `blocked: ${e.blockedReason}`]
      .filter(Boolean)
      .join('; ');
    this.responseLine(t, t.received, `loading failed: ${reason}`);
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

  /** Decoded bytes received; else the declared Content-Length; else 0. */
  private binaryLength(t: Tracked): number {
    if (t.received > 0) return t.received;
    const declared = Number(headerValue(t.response?.headers ?? {}, 'content-length') ?? NaN);
    return Number.isInteger(declared) && declared >= 0 ? declared : 0;
  }

  /** A response line with no body. */
  private responseLine(t: Tracked, bodyLength: number, error: string | null): void {
    this.httpLine(responseFields(t, bodyLength, false, error), null, t.nav);
  }

  private httpLine(line: NewHttpLine, body: string | null, tag: string | null): void {
    if (this.ctx.blocked(line.url)) return;
    this.ctx.store.appendHttp(line, body, tag);
  }
}
