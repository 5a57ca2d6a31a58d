/** SPEC "Plugin descriptor": what a plugin declares about itself and its parameters. */

export const PARAMETER_TYPES = ['text', 'url', 'textarea', 'select', 'number', 'checkbox'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

/** `text`, `url`, `textarea` and `select` are strings; `number` is a float; `checkbox` a boolean. */
export type ParameterValue = string | number | boolean;

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

export type PluginMethod = 'POST' | 'GET';

export interface PluginManifest {
  /** Registry name, such as `archive/check`. */
  name: string;
  description: string;
  methods: PluginMethod[];
  /** Two colour strings for the panel's button. */
  bg_color: [string, string];
  parameters: ParameterDescriptor[];
}
