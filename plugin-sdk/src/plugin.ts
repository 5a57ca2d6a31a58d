import type { PluginContext } from './context';

/** The fields a success adds to the API's envelope (`success` and `page_id` are the worker's). */
export type PluginResult = Record<string, unknown>;

/** What a plugin folder's `index` exports as `default`. */
export interface PluginModule<P = Record<string, unknown>> {
  /**
   * Checks the parameters together, after each passed its own rules and before the page is
   * touched; answers a message (a 400) or null.
   */
  validate?(params: P): string | null;
  run(ctx: PluginContext, params: P): Promise<PluginResult>;
}

/** Declares a plugin with typed parameters (the manifest declares the same names). */
export const definePlugin = <P>(plugin: PluginModule<P>): PluginModule<P> => plugin;

const SITE_ERROR = Symbol.for('persona-browser.site-error');

/**
 * The site did not look as the plugin expected (a selector not found, an unexpected page, an
 * anti-bot check): answered 200 `success: false`, with `error` saying what was expected and
 * what was found, and `details` beside it for a client to act on (the state found, a hint).
 */
export class SiteError extends Error {
  readonly [SITE_ERROR] = true;

  constructor(
    readonly expected: string,
    readonly found: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(`Expected ${expected}, found ${found}`);
    this.name = 'SiteError';
  }

  /** Recognises a SiteError from any copy of this package. */
  static is(err: unknown): err is SiteError {
    return typeof err === 'object' && err !== null && SITE_ERROR in err;
  }
}
