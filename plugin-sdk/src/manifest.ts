/**
 * What a plugin declares about itself (its `manifest.json`) and what the worker serves of it
 * (docs/api.md, Plugins). The registry name and the route come from the plugin's folder,
 * never from the manifest: `plugins/archive/check/` is `archive/check`.
 */

export const PARAMETER_TYPES = ['text', 'url', 'textarea', 'select', 'number', 'checkbox'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

/** `text`, `url`, `textarea` and `select` are strings; `number` is a float; `checkbox` a boolean. */
export type ParameterValue = string | number | boolean;

/** The API's parameter descriptor, exactly as `GET /api/v1/plugins` serves it. */
export interface ParameterDescriptor {
  name: string;
  type: ParameterType;
  label: string;
  required: boolean;
  default: ParameterValue | null;
  placeholder: string | null;
  /** The choices of a `select`; empty otherwise. */
  options: string[];
  help_text: string | null;
}

/**
 * A parameter as `manifest.json` declares it: the descriptor (only `name` and `type` are
 * needed) plus the rules the worker checks before the plugin runs. A violation is a 400 whose
 * message is the parameter's own: `message` when given, else one made from the rule, such as
 * `paste_probability must be between 0.0 and 1.0`.
 */
export interface ParameterSpec {
  name: string;
  type: ParameterType;
  label?: string;
  required?: boolean;
  default?: ParameterValue | null;
  placeholder?: string | null;
  options?: string[];
  help_text?: string | null;
  /** `number`: inclusive bounds. */
  min?: number;
  max?: number;
  /** `text`, `textarea`, `url`: at most this many characters. */
  max_length?: number;
  /** `text`, `textarea`: a regular expression the whole value must match. */
  pattern?: string;
  /** Required unless this checkbox parameter is true (`archive/save`'s `from_check`). */
  required_unless?: string;
  /** The 400 message for any violation of this parameter's rules. */
  message?: string;
}

export type PluginMethod = 'POST' | 'GET';

/** The type of one response field, for the OpenAPI document (`string|null` allows null). */
export type FieldType =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'object'
  | 'array'
  | 'string|null'
  | 'number|null'
  | 'integer|null'
  | 'boolean|null'
  | 'object|null'
  | 'array|null';

/** `manifest.json` of one plugin folder. */
export interface ManifestFile {
  description: string;
  methods: PluginMethod[];
  /** Two CSS colours for the panel's button (a gradient from the first to the second). */
  bg_color: [string, string];
  parameters: ParameterSpec[];
  /** The fields a success adds to the API's envelope; documented and, under test, checked. */
  response?: Record<string, FieldType>;
  /** Seconds the call may hold its page (default: the worker's call deadline, 120 s). */
  timeout_s?: number;
  /**
   * A route that exists but is not built yet: no `index.ts`; every call answers 501 with
   * `error` saying the plugin is not implemented.
   */
  placeholder?: boolean;
}

/** The API's plugin descriptor, as `GET /api/v1/plugins` lists it. */
export interface PluginDescriptor {
  /** Registry name: the folder path under `plugins/`, such as `archive/check`. */
  name: string;
  description: string;
  methods: PluginMethod[];
  bg_color: [string, string];
  parameters: ParameterDescriptor[];
  /** `/api/v1/{page_id}/plugin/<folder path, underscores as hyphens>`. */
  route: string;
}

/** A setting of a family: read from the worker's environment, else `default`. */
export interface SettingSpec {
  default?: string;
  help?: string;
}

/**
 * `family.json` in a family folder (`plugins/archive/`): the settings and secrets its plugins
 * may read, and the URLs the network capture never stores while a page is on the family's site.
 * The nearest `family.json` above a plugin's folder is its family.
 */
export interface FamilyFile {
  /** Readable through `ctx.setting(name)`; the environment wins over `default`. */
  settings?: Record<string, SettingSpec>;
  /** Readable through `ctx.secret(name)`; never logged, never defaulted. */
  secrets?: string[];
  blacklist?: {
    /** The site is the host of this setting's value (so a fixture site is covered too). */
    site_setting: string;
    /** Further hostnames of the same site (its mirrors), such as `archive.ph`. */
    also_sites?: string[];
    /** Substrings of URLs, or `/source/flags` regular expressions. */
    patterns: string[];
  };
}
