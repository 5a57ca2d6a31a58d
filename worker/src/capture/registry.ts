import type { ManagedPage } from '../browser/managed-page';
import type { SecretValues } from '@persona-browser/service-kit';
import { Blacklist } from './blacklist';
import { BODY_LIMIT_CHARS } from './body';
import { PageCapture } from './page-capture';
import type { StoreStats } from './store';
import { DEFAULT_BUDGET_BYTES } from './store';

export interface CaptureOptions {
  /** false: pages are not captured at all and the network route answers empty lists. */
  enabled?: boolean;
  /** Compressed bytes per page, shared by both lists (30 MB, docs/api.md). */
  budgetBytes?: number;
  /** Bodies and payloads are cut past this many characters (2,000,000, docs/api.md). */
  bodyLimitChars?: number;
  /** Network.getResponseBody calls in flight per page. */
  bodyConcurrency?: number;
  /** Body and payload characters in one network reply before the rest are left out. */
  maxReplyChars?: number;
  /** Values never stored: each is replaced with `[redacted]` in URLs, headers and bodies. */
  secrets?: SecretValues;
}

/** One network capture per pooled page, from its creation to its close, and the blacklist. */
export class CaptureRegistry {
  readonly blacklist = new Blacklist();
  readonly enabled: boolean;
  private readonly captures = new Map<string, PageCapture>();

  constructor(private readonly opts: CaptureOptions = {}) {
    this.enabled = opts.enabled ?? true;
  }

  /**
   * Starts capturing a page (the pool calls this before handing the page out). Listening
   * starts at once; `ready(pageId)` resolves when the browser has confirmed it.
   */
  attach(page: ManagedPage): void {
    if (!this.enabled) return;
    this.captures.get(page.id)?.stop();
    const secrets = this.opts.secrets;
    const capture = new PageCapture(
      page.id,
      page.session,
      page.targetId,
      {
        budgetBytes: this.opts.budgetBytes ?? DEFAULT_BUDGET_BYTES,
        bodyLimitChars: this.opts.bodyLimitChars ?? BODY_LIMIT_CHARS,
        bodyConcurrency: this.opts.bodyConcurrency,
        maxReplyChars: this.opts.maxReplyChars,
        redact: secrets && ((text) => secrets.redact(text)),
      },
      this.blacklist,
    );
    this.captures.set(page.id, capture);
    page.onSessionSwap((session) => void capture.follow(session));
  }

  /** `text` with the secrets the capture never stores taken out. */
  redact(text: string): string {
    return this.opts.secrets ? this.opts.secrets.redact(text) : text;
  }

  /** Resolves once the page's capture is enabled in the browser (at once when there is none). */
  ready(pageId: string): Promise<void> {
    return this.captures.get(pageId)?.ready ?? Promise.resolve();
  }

  detach(pageId: string): void {
    this.captures.get(pageId)?.stop();
    this.captures.delete(pageId);
  }

  get(pageId: string): PageCapture | undefined {
    return this.captures.get(pageId);
  }

  /** Compressed bytes that every page's capture holds together. */
  heldBytes(): number {
    let bytes = 0;
    for (const capture of this.captures.values()) bytes += capture.stats().bytes;
    return bytes;
  }

  /** Live figures of a page's store (bytes used, lines held and dropped…), or null. */
  stats(pageId: string): StoreStats | null {
    return this.captures.get(pageId)?.stats() ?? null;
  }
}
