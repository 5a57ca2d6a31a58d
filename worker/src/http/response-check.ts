import type { RequestHandler, Response } from 'express';
import type Joi from 'joi';
import type { Logger } from '@persona-browser/service-kit';
import { isRecord } from '@persona-browser/service-kit';
import { authError, errorEnvelope } from './schemas';

/** A field of a JSON body, if the body is an object that has it. */
const fieldOf = (body: unknown, name: string): unknown => (isRecord(body) ? body[name] : undefined);

/** The success schema the route that answers a response declares (see `declare`). */
const declared = new WeakMap<Response, Joi.Schema | undefined>();

/** The check of each watched response: the body to send in place of the one given. */
const vetters = new WeakMap<Response, (body: unknown) => unknown>();

/**
 * Under VALIDATE_RESPONSES (the test suite sets it), every JSON body the worker sends is checked
 * against the schema the OpenAPI document declares for it: a route's `response` for a success,
 * the API's error envelope or the `{detail}` auth body otherwise. A body that does not match is
 * logged and replaced by a 500, so a test fails the moment the served document and what is sent
 * drift apart.
 */
export class ResponseCheck {
  constructor(private readonly logger: Logger) {}

  /** The schema a body sent with `status` must match, given the route's success schema. */
  static schemaFor(
    status: number,
    body: unknown,
    success: Joi.Schema | undefined,
  ): Joi.Schema | undefined {
    if (status === 200 && fieldOf(body, 'success') !== false) return success;
    if (isRecord(body) && 'detail' in body) return authError;
    return errorEnvelope;
  }

  /** Returns the reason `body` does not match, or null. */
  static mismatch(schema: Joi.Schema | undefined, body: unknown): string | null {
    if (!schema) return 'no response schema is declared for it';
    const { error } = schema.validate(body, { abortEarly: true, convert: false });
    return error ? error.message : null;
  }

  /**
   * The app-level middleware for /api/: watches every response before any route or error
   * handler runs, so errors raised before a route matched (bad JSON, unknown routes) are checked
   * too, whether they are sent by res.json or by sendJson.
   */
  middleware(): RequestHandler {
    return (req, res, next) => {
      if (req.path.toLowerCase().startsWith('/api/')) this.watch(res, req.path);
      next();
    };
  }

  /** Tells the check which success schema the matched route declares. */
  static declare(res: Response, schema: Joi.Schema | undefined): void {
    declared.set(res, schema);
  }

  /** Whether the check watches `res` (VALIDATE_RESPONSES, under /api/). */
  static watching(res: Response): boolean {
    return vetters.has(res);
  }

  /**
   * The body `res` sends for `body`: the body itself, or, when the check watches `res` and the
   * body does not match its schema, the 500 envelope that replaces it (the status is set).
   */
  static vetted(res: Response, body: unknown): unknown {
    const vet = vetters.get(res);
    return vet ? vet(body) : body;
  }

  private watch(res: Response, path: string): void {
    const vet = (body: unknown): unknown => this.vet(res, path, body);
    vetters.set(res, vet);
    const json = res.json.bind(res);
    res.json = (body: unknown) => json(vet(body));
  }

  private vet(res: Response, path: string, body: unknown): unknown {
    const success = res.statusCode === 200 && fieldOf(body, 'success') !== false;
    // A success of something that is not a route of a table (the OpenAPI document) is not ours
    // to check; its errors still are.
    if (success && !declared.has(res)) return body;
    const schema = ResponseCheck.schemaFor(res.statusCode, body, declared.get(res));
    const why = ResponseCheck.mismatch(schema, body);
    if (why === null) return body;
    this.logger.error('response does not match its declared schema', {
      path,
      status: res.statusCode,
      why,
    });
    const pageId = fieldOf(body, 'page_id');
    res.status(500);
    return {
      success: false,
      error: `Response did not match its declared schema: ${why}`,
      page_id: typeof pageId === 'string' ? pageId : null,
    };
  }
}
