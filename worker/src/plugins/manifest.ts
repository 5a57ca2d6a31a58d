import fs from 'node:fs';
import Joi from 'joi';
import type { FamilyFile, ManifestFile } from '@persona-browser/plugin-sdk';
import { PARAMETER_TYPES } from '@persona-browser/plugin-sdk';
import { errorMessage } from '../errors';

const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'];
const NAME = /^[a-z][a-z0-9_]*$/;
const value = Joi.alternatives(Joi.string(), Joi.number(), Joi.boolean());

const parameter = Joi.object({
  name: Joi.string().pattern(NAME).required(),
  type: Joi.string()
    .valid(...PARAMETER_TYPES)
    .required(),
  label: Joi.string(),
  required: Joi.boolean(),
  default: value.allow(null),
  placeholder: Joi.string().allow(null, ''),
  options: Joi.array()
    .items(Joi.string())
    .when('type', {
      is: 'select',
      then: Joi.array().min(1).required(),
    }),
  help_text: Joi.string().allow(null, ''),
  min: Joi.number(),
  max: Joi.number(),
  max_length: Joi.number().integer().min(1),
  pattern: Joi.string(),
  required_unless: Joi.string().pattern(NAME),
  message: Joi.string(),
});

const manifestSchema = Joi.object<ManifestFile>({
  description: Joi.string().min(1).required(),
  methods: Joi.array().items(Joi.string().valid('POST', 'GET')).min(1).unique().required(),
  bg_color: Joi.array().items(Joi.string().min(1)).length(2).required(),
  parameters: Joi.array().items(parameter).unique('name').required(),
  response: Joi.object().pattern(
    Joi.string(),
    Joi.string().valid(...FIELD_TYPES, ...FIELD_TYPES.map((t) => `${t}|null`)),
  ),
  timeout_s: Joi.number().positive().max(3600),
  placeholder: Joi.boolean(),
});

const familySchema = Joi.object<FamilyFile>({
  settings: Joi.object().pattern(
    Joi.string(),
    Joi.object({ default: Joi.string().allow(''), help: Joi.string() }),
  ),
  secrets: Joi.array().items(Joi.string()),
  blacklist: Joi.object({
    site_setting: Joi.string().required(),
    also_sites: Joi.array().items(Joi.string().hostname()),
    patterns: Joi.array().items(Joi.string().min(1)).required(),
  }),
});

/** What is wrong with a plugin or family file, said so that its author can fix it. */
export class ManifestError extends Error {}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ManifestError(`cannot read ${file}: ${errorMessage(err)}`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch (err) {
    throw new ManifestError(`${file} is not JSON: ${errorMessage(err)}`);
  }
}

function checked<T>(schema: Joi.ObjectSchema<T>, file: string): T {
  const result = schema.validate(readJson(file), { abortEarly: true });
  if (result.error) throw new ManifestError(`${file}: ${result.error.message}`);
  return result.value;
}

/** A plugin's manifest, with the rules that joi alone does not say. */
export function readManifest(file: string): ManifestFile {
  const m = checked(manifestSchema, file);
  const names = new Set(m.parameters.map((p) => p.name));
  for (const p of m.parameters) {
    if (
      p.required_unless &&
      !m.parameters.some((q) => q.name === p.required_unless && q.type === 'checkbox')
    )
      throw new ManifestError(`${file}: ${p.name}.required_unless must name a checkbox parameter`);
    if (p.min !== undefined && p.max !== undefined && p.min > p.max)
      throw new ManifestError(`${file}: ${p.name}.min is above its max`);
    if (p.pattern) {
      try {
        new RegExp(p.pattern);
      } catch {
        throw new ManifestError(`${file}: ${p.name}.pattern is not a regular expression`);
      }
    }
  }
  if (names.size !== m.parameters.length) throw new ManifestError(`${file}: duplicate parameters`);
  return m;
}

export function readFamily(file: string): FamilyFile {
  const f = checked(familySchema, file);
  const bl = f.blacklist;
  if (bl && !(bl.site_setting in (f.settings ?? {})))
    throw new ManifestError(`${file}: blacklist.site_setting ${bl.site_setting} is not a setting`);
  return f;
}
