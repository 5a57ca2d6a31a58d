import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { ApiError, BrowserFailure, errorMessage } from '../errors';
import type { Logger } from '@persona-browser/service-kit';
import { AuthError, isRecord } from '@persona-browser/service-kit';
import { callerOf } from './call-credential';

/** What express's body parser puts on the errors it raises (a body too large, bad JSON). */
interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
}

function bodyParserFields(err: unknown): BodyParserError {
  if (!isRecord(err)) return {};
  const { type, status, limit } = err;
  return {
    type: typeof type === 'string' ? type : undefined,
    status: typeof status === 'number' ? status : undefined,
    limit: typeof limit === 'number' ? limit : undefined,
  };
}

/** The page a failed request addressed, as the route layer recorded it. */
function pageIdOf(res: Response): string | null {
  const id: unknown = res.locals.pageId;
  return typeof id === 'string' ? id : null;
}

/** Unknown routes under the API answer with the envelope, naming the path as it was sent. */
export const notFound: RequestHandler = (req, res) => {
  const path = req.originalUrl.split('?')[0] ?? req.originalUrl;
  res.status(404).json({ success: false, error: `No route ${req.method} ${path}`, page_id: null });
};

/** The one place errors become responses, and the one place they are logged. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.end();
      return;
    }
    if (err instanceof AuthError) {
      // Not logged one by one: a scan would flood the log; the refusal metric counts them.
      res.status(err.status).set(err.headers).json(err.body);
      return;
    }
    const pageId = pageIdOf(res);
    if (err instanceof ApiError) {
      if (err.status >= 500 && err.status !== 501)
        logger.error('request failed', {
          path: req.path,
          error: err.message,
          credential: callerOf(res.locals),
        });
      // A failure's details come first: they never replace the envelope's own fields.
      const details = err instanceof BrowserFailure ? err.details : {};
      const debug = err.debugId === null ? {} : { debug_id: err.debugId };
      res.status(err.status).json({
        ...details,
        success: false,
        error: err.message,
        page_id: err.pageId ?? pageId,
        ...debug,
      });
      return;
    }
    const parser = bodyParserFields(err);
    if (parser.type === 'entity.too.large') {
      res.status(413).json({
        success: false,
        error: `Request body too large (limit ${parser.limit ?? 0} bytes)`,
        page_id: pageId,
      });
      return;
    }
    if (parser.type === 'entity.parse.failed') {
      res.status(400).json({ success: false, error: 'Malformed JSON body', page_id: pageId });
      return;
    }
    if (typeof parser.status === 'number' && parser.status >= 400 && parser.status < 500) {
      res.status(parser.status).json({ success: false, error: errorMessage(err), page_id: pageId });
      return;
    }
    logger.error('unexpected error', { path: req.path, credential: callerOf(res.locals), err });
    res.status(500).json({ success: false, error: 'Internal server error', page_id: pageId });
  };
}
