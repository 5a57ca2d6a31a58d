import type { components } from './generated/api';

/** The API's error envelope; a browser-level failure may add fields of its own. */
export type ErrorBody = components['schemas']['ErrorResponse'];
/** What a missing or wrong key gets (401), or a worker without a key (500). */
export type AuthErrorBody = components['schemas']['AuthError'];

export interface Success<D> {
  ok: true;
  status: number;
  data: D;
}

export interface Failure {
  ok: false;
  /** The HTTP status: 200 for a browser-level failure (`success: false`), else the error's. */
  status: number;
  /** The API's `error`, or an authentication failure's `detail`. */
  error: string;
  page_id: string | null;
  /** The whole body, when it was JSON: a failure may carry fields of its own (a plugin's state). */
  body: ErrorBody | AuthErrorBody | null;
}

/** Every call's outcome: the API's failures are values to look at, never exceptions. */
export type Result<D> = Success<D> | Failure;

/** What an openapi-fetch call resolves to, whichever route it named. */
export interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

function failure(status: number, body: unknown): Failure {
  if (isRecord(body) && typeof body.error === 'string') {
    const pageId = typeof body.page_id === 'string' ? body.page_id : null;
    return {
      ok: false,
      status,
      error: body.error,
      page_id: pageId,
      body: { ...body, success: false, error: body.error, page_id: pageId },
    };
  }
  if (isRecord(body) && typeof body.detail === 'string') {
    return { ok: false, status, error: body.detail, page_id: null, body: { detail: body.detail } };
  }
  // Not the API's answer (a proxy's page, an empty body): the status says what there is to say.
  const text = typeof body === 'string' && body ? `: ${body.slice(0, 200)}` : '';
  return { ok: false, status, error: `HTTP ${status}${text}`, page_id: null, body: null };
}

/**
 * An openapi-fetch answer as a Result: ok for a 2xx whose body is not `success: false`, a
 * Failure for any error status and for the 200 answers with `success: false` (a browser-level
 * failure: an unreachable site, a stuck tab, a plugin that found the wrong page). Transport
 * failures (no connection) still throw, from the call itself.
 */
export async function settle<D>(call: Promise<Answer<D>>): Promise<Result<D>> {
  const { data, error, response } = await call;
  const body: unknown = response.ok ? data : error;
  if (!response.ok || (isRecord(body) && body.success === false)) {
    return failure(response.status, body);
  }
  // openapi-fetch leaves `data` undefined only for an empty body, which no route of ours sends.
  if (data === undefined) return failure(response.status, null);
  return { ok: true, status: response.status, data };
}
