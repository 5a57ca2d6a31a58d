import type Joi from 'joi';

/** The fields a schema declares, sorted, for a message naming them. */
function declaredFields(schema: Joi.ObjectSchema | undefined): string[] {
  // An object schema's description lists its fields under `keys` (absent when it has none).
  const keys: unknown = schema?.describe().keys;
  return keys && typeof keys === 'object' ? Object.keys(keys).sort() : [];
}

/**
 * A field the route does not take: a misspelled optional field (`timout_s`) would otherwise be
 * dropped without a word, so it is refused, naming the field and the ones the route takes.
 */
export function unknownFieldMessage(field: string, schema: Joi.ObjectSchema | undefined): string {
  const allowed = declaredFields(schema);
  return allowed.length
    ? `Unknown field '${field}' (allowed: ${allowed.join(', ')})`
    : `Unknown field '${field}' (this route takes no fields)`;
}

export type FieldCheck<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Validates a request's fields (a JSON body or a query) against the route's schema: the
 * converted value, or the first problem as one sentence. A field the schema does not declare
 * is refused unless `unknown` is 'ignore' (then it is dropped); without a schema the route
 * takes no fields at all.
 */
export function checkFields<T>(
  schema: Joi.ObjectSchema<T> | undefined,
  input: object,
  unknown: 'refuse' | 'ignore' = 'refuse',
): FieldCheck<T> {
  if (!schema) {
    const [extra] = Object.keys(input);
    return extra !== undefined && unknown === 'refuse'
      ? { ok: false, message: unknownFieldMessage(extra, undefined) }
      : // A route without a schema takes nothing: its handler's fields type is empty.
        { ok: true, value: {} as T };
  }
  const result = schema.validate(input, {
    convert: true,
    allowUnknown: unknown === 'ignore',
    stripUnknown: unknown === 'ignore',
    abortEarly: true,
  });
  if (!result.error) return { ok: true, value: result.value };
  const [detail] = result.error.details;
  if (detail?.type === 'object.unknown' && detail.path.length === 1)
    return { ok: false, message: unknownFieldMessage(String(detail.path[0]), schema) };
  return { ok: false, message: detail?.message.replace(/"/g, "'") ?? result.error.message };
}
