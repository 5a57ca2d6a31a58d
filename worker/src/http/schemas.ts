import Joi from 'joi';

/** Shared pieces of the request and response schemas (one source for validation and docs). */
export const pageIdSchema = Joi.string()
  .min(1)
  .max(128)
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  .pattern(/^[^\u0000-\u001f\u007f]+$/, 'printable characters')
  .description('Page identifier (any printable string up to 128 characters)');

export const envelope = (fields: Record<string, Joi.Schema>): Joi.ObjectSchema =>
  Joi.object({
    success: Joi.boolean().valid(true).required(),
    page_id: Joi.string().allow(null).required(),
    ...fields,
  });

/** The API's error envelope; a plugin's failure may add fields of its own (the state it found). */
export const errorEnvelope = Joi.object({
  success: Joi.boolean().valid(false).required(),
  error: Joi.string().required(),
  page_id: Joi.string().allow(null).required(),
  debug_id: Joi.string().description(
    'A failed plugin call: the failure bundle it left (GET /api/v1/bundles/{debug_id})',
  ),
})
  .unknown(true)
  .label('ErrorResponse');

export const authError = Joi.object({ detail: Joi.string().required() }).label('AuthError');

export const messageResponse = envelope({ message: Joi.string().required() });

/** A boolean as a query string or JSON sends it: true/false, 1/0, yes/no, on/off. */
export const flag = Joi.boolean().truthy('1', 'yes', 'on').falsy('0', 'no', 'off');
