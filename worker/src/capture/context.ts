import type { CDPSession } from 'puppeteer-core';
import type { DocumentState } from './document';
import type { LineStore } from './store';

export interface CaptureSettings {
  budgetBytes?: number;
  bodyLimitChars: number;
  /** Network.getResponseBody calls in flight per page. */
  bodyConcurrency?: number;
  maxReplyChars?: number;
  /** Takes secrets out of URLs, headers and bodies before they are stored. */
  redact?: (text: string) => string;
}

/** What a page's capture shares with the parts that track its HTTP requests and WebSockets. */
export interface CaptureContext {
  /** The page's current session (a prerender activation swaps it). */
  readonly cdp: CDPSession;
  readonly store: LineStore;
  readonly settings: CaptureSettings;
  readonly doc: DocumentState;
  /** Whether the blacklist in force for the page's current site leaves `url`'s lines out. */
  blocked(url: string): boolean;
}
