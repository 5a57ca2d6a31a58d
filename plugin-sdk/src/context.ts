import type { PageGestures } from './gestures';

/**
 * The bounds of one call. Every wait a plugin makes goes through `sleep` or is raced against
 * `signal`, so the call stops cleanly at its deadline and the page is handed back usable.
 */
export interface CallScope {
  /** Fires when the call must stop: its deadline passed, the page got stuck or closed. */
  readonly signal: AbortSignal;
  /** Epoch milliseconds by which the call must have answered. */
  readonly deadline: number;
  /** Milliseconds left before the deadline (never negative). */
  remainingMs(): number;
  /** Waits `ms`, or rejects as soon as `signal` fires. */
  sleep(ms: number): Promise<void>;
  /** Rejects with the reason of `signal` if it has fired. */
  throwIfAborted(): void;
}

export interface PluginLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface NavigationResult {
  status_code: number | null;
  final_url: string;
}

/**
 * The page a plugin holds: navigation and reads of the DOM. Reads run in an isolated world
 * (the page's scripts never see them); waits end at the call's deadline.
 */
export interface PluginPage {
  /** The main frame's URL as last seen (never waits). */
  url(): string;
  title(): Promise<string>;
  /** Full HTML of the document. */
  content(): Promise<string>;
  /**
   * Goes to `url` as ops `navigate` does (a person's pause first, DOM content loaded; 408
   * past the navigation timeout; a failed load is a browser-level failure).
   */
  goto(url: string): Promise<NavigationResult>;
  /**
   * Waits for the main frame to load a new document after `action` (a click, Enter) and
   * returns it; null when no navigation started within `timeoutMs` (default 10 s).
   */
  navigationAfter(
    action: () => Promise<unknown>,
    timeoutMs?: number,
  ): Promise<NavigationResult | null>;
  /** Whether `selector` matches an element now. */
  exists(selector: string): Promise<boolean>;
  /** Trimmed text of the first match, or null. */
  text(selector: string): Promise<string | null>;
  /** Trimmed text of every match, in document order. */
  texts(selector: string): Promise<string[]>;
  /** An attribute of the first match (`href` resolved to an absolute URL), or null. */
  attr(selector: string, name: string): Promise<string | null>;
  /** An attribute of every match (`href` resolved), in document order. */
  attrs(selector: string, name: string): Promise<string[]>;
  /** The value of a form field, or null when there is no such field. */
  value(selector: string): Promise<string | null>;
  /**
   * Polls until one of `selectors` (name → CSS selector) matches, and answers its name; null
   * when none did within `timeoutMs` (default 10 s). Names are tried in the order given.
   */
  waitForAny(selectors: Record<string, string>, timeoutMs?: number): Promise<string | null>;
  /**
   * Loads `url` through the browser's own network stack, as the page's frame would (its
   * cookies, proxy and user agent; not in any of the page's worlds, so the site's scripts never
   * see it), and answers the bytes. For a file the page shows: an image, a video. Fails (a
   * browser-level failure) on a network error, and on a body larger than `maxBytes` (default
   * 100 MB). A status other than 2xx is answered, not thrown: check `status`.
   */
  fetchFile(url: string, maxBytes?: number): Promise<FetchedFile>;
  /**
   * Runs `fn` in the isolated world with JSON `args` and answers its JSON result. `fn` is sent
   * as source: it may use only its arguments and the DOM.
   */
  evaluate<T, A extends unknown[]>(fn: (...args: A) => T | Promise<T>, ...args: A): Promise<T>;
  /**
   * A PNG of the first element `selector` matches, as the page paints it (an off-screen element
   * is captured where it is, without scrolling). Fails (a browser-level failure) when nothing
   * matches or the element has no size.
   */
  screenshot(selector: string): Promise<Uint8Array>;
}

/** A file loaded by `PluginPage.fetchFile`. */
export interface FetchedFile {
  status: number;
  /** The response's content type without parameters (`image/jpeg`), or null. */
  content_type: string | null;
  bytes: Uint8Array;
}

/** A captured HTTP line (docs/api.md, Network capture). */
export interface NetworkLine {
  seq: number;
  ts: number;
  kind: string;
  /** null on a same-document navigation line (no request). */
  method?: string | null;
  url: string;
  resource_type?: string;
  /** 0 when the request failed before any response; null when no response applies. */
  status?: number | null;
  content_type?: string | null;
  headers?: Record<string, string>;
  body?: string | null;
  body_length?: number;
  body_truncated?: boolean;
  error?: string | null;
}

export interface NetworkQuery {
  since?: number;
  url_contains?: string;
  resource_type?: 'document' | 'xhr' | 'fetch';
  include_body?: boolean;
}

/** The page's passive network capture, as the network route reads it. */
export interface PluginNetwork {
  /** HTTP lines after `since`, filtered as the network route filters them. */
  http(query?: NetworkQuery): Promise<NetworkLine[]>;
  /** The highest `seq` so far: pass it as `since` to see only what comes after. */
  mark(): Promise<number>;
  /** The family's blacklist patterns in force for the page's current site. */
  blacklist(): string[];
  /**
   * Waits until the capture has read the body of every response that has finished (it reads
   * them once the page's network is quiet, so a line can appear up to about a second after its
   * response). Answers false when bodies were still pending after `timeoutMs` (default 5 s).
   */
  settled(timeoutMs?: number): Promise<boolean>;
}

export interface MediaLink {
  token: string;
  /** Relative: `/api/v1/media/{token}`, downloadable once. */
  media_url: string;
}

export interface PluginMedia {
  /** Stores a file for one download; throws (a plugin failure) when the store is full. */
  put(bytes: Uint8Array, filename: string, contentType: string): MediaLink;
}

/** Machine-readable codes in images. */
export interface PluginCodes {
  /** The texts of the QR codes in an image (PNG or JPEG bytes), in reading order; [] when none. */
  readQr(image: Uint8Array): Promise<string[]>;
}

export interface LocatedObject {
  /** `[x1, y1, x2, y2]` in viewport CSS pixels. */
  bounding_box: [number, number, number, number];
  center_x: number;
  center_y: number;
  tokens_used: number;
  costs_usd: number;
  duration_seconds: number;
}

export interface PluginVision {
  /** Screenshots the viewport and asks the vision model where `description` is. */
  locate(description: string): Promise<LocatedObject>;
}

/** What a plugin receives for one call on a page it holds (it never sees express). */
export interface PluginContext extends CallScope {
  readonly pageId: string;
  /** Registry name of the running plugin. */
  readonly plugin: string;
  readonly gestures: PageGestures;
  readonly page: PluginPage;
  readonly network: PluginNetwork;
  readonly media: PluginMedia;
  readonly vision: PluginVision;
  readonly codes: PluginCodes;
  readonly log: PluginLogger;
  /** A random source in [0, 1) for the probability parameters (seeded with PLUGIN_SEED). */
  random(): number;
  /** True with probability `p` (0 never, 1 always). */
  chance(p: number): boolean;
  /** A setting its family declares: the environment's value, else the declared default. */
  setting(name: string): string | undefined;
  /**
   * A secret its family declares, from the environment. Its value never reaches the worker's
   * log, the network capture or an error message.
   */
  secret(name: string): string | undefined;
  /**
   * Hides a value the plugin came to know (a one-time code, a QR code's content) as a secret is
   * hidden: from now on it is `[redacted]` in the worker's log, in lines the network capture
   * stores and in the error messages of plugin calls. Values under 4 characters are not hidden.
   */
  conceal(value: string): void;
  /**
   * Runs `work` (a wait that polls the page) while the page waits for the person at the live
   * view: to type a one-time code, to confirm a login on their phone. Meanwhile their "Take
   * control" is granted at once (it would otherwise wait for this call to end), and the log
   * says what is awaited.
   */
  waitingForPerson<T>(what: string, work: () => Promise<T>): Promise<T>;
}
