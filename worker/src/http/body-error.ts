import type { RequestHandler } from 'express';

/**
 * A body that did not parse (broken JSON, over the limit), held until the route's credential
 * has been checked: docs/api.md checks the key first, then the body, so a caller without the
 * right credential learns nothing of how its body was read.
 */
const BODY_ERROR_KEY = 'bodyError';

/** What express's body parser hands on, kept instead of answered. */
export function deferBodyError(locals: Record<string, unknown>, err: unknown): void {
  locals[BODY_ERROR_KEY] = err;
}

/** Throws the held body error, if any: the mount calls it right after the credential check. */
export function raiseBodyError(locals: Record<string, unknown>): void {
  if (BODY_ERROR_KEY in locals) throw locals[BODY_ERROR_KEY];
}

/**
 * After the route tables: a request no route took (the live view, DevTools, MCP, an unknown
 * path) meets its body error here, as it did before anything looked at it.
 */
export const answerBodyError: RequestHandler = (_req, res, next) => {
  if (BODY_ERROR_KEY in res.locals) next(res.locals[BODY_ERROR_KEY]);
  else next();
};
