import Joi from 'joi';
import type {
  ParameterDescriptor,
  ParameterSpec,
  ParameterValue,
} from '@persona-browser/plugin-sdk';

/** `paste_probability` → `Paste probability`. */
export const labelFor = (name: string): string => {
  const words = name.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/** The API's descriptor of a declared parameter: every field present, defaults filled in. */
export function describeParameter(p: ParameterSpec): ParameterDescriptor {
  return {
    name: p.name,
    type: p.type,
    label: p.label ?? labelFor(p.name),
    required: p.required ?? false,
    default: p.default ?? null,
    placeholder: p.placeholder ?? null,
    options: p.options ?? [],
    help_text: p.help_text ?? null,
  };
}

/** Bounds as a person writes probabilities: 0.0 and 1.0, 0.25 as it is. */
const bound = (n: number): string => (Number.isInteger(n) ? n.toFixed(1) : String(n));

/** The one message a parameter's value is refused with (its own `message` first). */
export function invalidMessage(p: ParameterSpec): string {
  if (p.message) return p.message;
  const n = p.name;
  switch (p.type) {
    case 'number':
      if (p.min !== undefined && p.max !== undefined)
        return `${n} must be between ${bound(p.min)} and ${bound(p.max)}`;
      if (p.min !== undefined) return `${n} must be a number of at least ${bound(p.min)}`;
      if (p.max !== undefined) return `${n} must be a number of at most ${bound(p.max)}`;
      return `${n} must be a number`;
    case 'checkbox':
      return `${n} must be true or false`;
    case 'select':
      return `${n} must be one of: ${(p.options ?? []).join(', ')}`;
    case 'url':
      return `${n} must be an http or https URL` + lengthNote(p);
    default:
      if (p.pattern) return `${n} must match ${p.pattern}` + lengthNote(p);
      return `${n} must be text` + lengthNote(p);
  }
}

const lengthNote = (p: ParameterSpec): string =>
  p.max_length === undefined ? '' : ` of at most ${p.max_length} characters`;

function requiredMessage(p: ParameterSpec): string {
  if (p.message) return p.message;
  return p.required_unless
    ? `${p.name} is required unless ${p.required_unless} is true`
    : `${p.name} is required`;
}

/** Every joi error code a parameter can raise, mapped to its one message. */
const INVALID_CODES = [
  'any.only',
  'any.invalid',
  'boolean.base',
  'number.base',
  'number.min',
  'number.max',
  'number.infinity',
  'number.unsafe',
  'string.base',
  'string.empty',
  'string.max',
  'string.min',
  'string.pattern.base',
  'string.uri',
  'string.uriCustomScheme',
];

function baseSchema(p: ParameterSpec): Joi.Schema {
  switch (p.type) {
    case 'number': {
      let s = Joi.number();
      if (p.min !== undefined) s = s.min(p.min);
      if (p.max !== undefined) s = s.max(p.max);
      return s;
    }
    case 'checkbox':
      return Joi.boolean();
    case 'select':
      return Joi.string().valid(...(p.options ?? []));
    case 'url': {
      let s = Joi.string()
        .trim()
        .uri({ scheme: ['http', 'https'] });
      if (p.max_length !== undefined) s = s.max(p.max_length);
      return s;
    }
    default: {
      let s = Joi.string();
      if (p.max_length !== undefined) s = s.max(p.max_length);
      if (p.pattern) s = s.pattern(new RegExp(`^(?:${p.pattern})$`));
      return s;
    }
  }
}

/** One parameter's schema: type and rules, its default, whether it is required, its message. */
export function parameterSchema(p: ParameterSpec): Joi.Schema {
  const invalid = invalidMessage(p);
  const messages: Record<string, string> = { 'any.required': requiredMessage(p) };
  for (const code of INVALID_CODES) messages[code] = invalid;
  // A form's empty field is an absent one: its default applies, or it is missing.
  let s = baseSchema(p).empty('').messages(messages);
  if (p.default !== undefined && p.default !== null) s = s.default(p.default);
  if (p.help_text) s = s.description(p.help_text);
  if (p.required) return s.required();
  if (p.required_unless) {
    return s.when(p.required_unless, { is: true, otherwise: Joi.required() });
  }
  return s;
}

/** The request model of a plugin: its declared parameters (the route refuses any other field). */
export function parametersSchema(params: ParameterSpec[]): Joi.ObjectSchema {
  const keys: Record<string, Joi.Schema> = {};
  for (const p of params) keys[p.name] = parameterSchema(p);
  return Joi.object(keys);
}

const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;
const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * The API's GET rules: query values of declared numbers become floats, checkboxes accept
 * true/false/1/0/yes/no/on/off; anything unparseable is passed on for validation to refuse.
 * The JSON body wins over the query on a name both carry.
 */
export function mergeQueryAndBody(
  params: ParameterSpec[],
  query: Record<string, unknown>,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const types = new Map(params.map((p) => [p.name, p.type]));
  for (const [name, raw] of Object.entries(query)) {
    out[name] = typeof raw === 'string' ? coerce(types.get(name), raw) : raw;
  }
  return { ...out, ...body };
}

function coerce(type: ParameterSpec['type'] | undefined, raw: string): ParameterValue {
  if (type === 'number' && NUMBER.test(raw)) return parseFloat(raw);
  if (type === 'checkbox') {
    const v = raw.trim().toLowerCase();
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
  }
  return raw;
}
