/**
 * The small error hierarchy that the one error middleware maps to the API's envelopes.
 * Errors never log themselves; the middleware logs once.
 */
export class ApiError extends Error {
  /** The failure bundle a failed plugin call left (`debug_id` in the error body), if any. */
  debugId: string | null = null;

  constructor(
    readonly status: number,
    message: string,
    readonly pageId: string | null = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequest extends ApiError {
  constructor(message: string, pageId: string | null = null) {
    super(400, message, pageId);
  }
}

export class NotFound extends ApiError {
  constructor(message: string, pageId: string | null = null) {
    super(404, message, pageId);
  }
}

export class PageNotFound extends NotFound {
  constructor(pageId: string) {
    super('Page not found', pageId);
  }
}

export class Timeout extends ApiError {
  constructor(message: string, pageId: string | null = null) {
    super(408, message, pageId);
  }
}

export class Busy extends ApiError {
  constructor(message: string, pageId: string | null = null) {
    super(409, message, pageId);
  }
}

export class PayloadTooLarge extends ApiError {
  constructor(message: string) {
    super(413, message, null);
  }
}

export class Locked extends ApiError {
  constructor(message: string, pageId: string | null = null) {
    super(423, message, pageId);
  }
}

export class NotInitialized extends ApiError {
  constructor(message = 'Navigator or page pool not initialized') {
    super(500, message, null);
  }
}

/** A route that exists but is not built yet (a placeholder plugin). */
export class NotImplemented extends ApiError {
  constructor(message: string, pageId: string | null = null) {
    super(501, message, pageId);
  }
}

/** A browser-level failure: answered as HTTP 200 with `success: false` (see docs/api.md). */
export class BrowserFailure extends ApiError {
  /** More fields of the answer beside the envelope's (a plugin's state found, its hint). */
  readonly details: Record<string, unknown>;

  constructor(
    message: string,
    pageId: string | null = null,
    details: Record<string, unknown> = {},
  ) {
    super(200, message, pageId);
    this.details = details;
  }
}

/** One reading of a caught value for every program of the product. */
export { errorMessage } from '@persona-browser/service-kit';
