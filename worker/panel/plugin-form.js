// persona-browser control panel: the plugin runner's form, built from a plugin's parameter
// descriptors (docs/api.md, Plugins) and read back as the API takes it. Used by plugins.js;
// descriptor strings reach the DOM as text only.
import { el, text } from '/ui/dom.js';

/**
 * A parameter descriptor as GET /api/v1/plugins lists it.
 * @typedef {object} ParamDescriptor
 * @property {string} name
 * @property {string} [type] text, textarea, number, url, select, checkbox
 * @property {string} [label]
 * @property {boolean} [required]
 * @property {unknown} [default]
 * @property {unknown[]} [options]
 * @property {string} [placeholder]
 * @property {string} [help_text]
 */

/** @typedef {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} Control */

/**
 * One labelled control for a parameter descriptor, by its `type`.
 * @param {ParamDescriptor} p
 */
export function field(p) {
  const id = 'plugin-param-' + text(p.name);
  const value = p.default === null || p.default === undefined ? '' : text(p.default);
  /** @type {Control} */
  let input;
  if (p.type === 'textarea') {
    input = el('textarea', { attrs: { rows: '3' } });
    input.value = value;
  } else if (p.type === 'select') {
    const options = Array.isArray(p.options) ? p.options.map(text) : [];
    const select = el('select');
    // An empty choice: optional selects can stay unset, required ones must be picked.
    if (!p.required || !options.includes(value)) {
      select.append(el('option', { attrs: { value: '' } }, p.required ? 'choose…' : '(none)'));
    }
    for (const o of options) select.append(el('option', { attrs: { value: o } }, o));
    select.value = options.includes(value) ? value : '';
    input = select;
  } else if (p.type === 'checkbox') {
    const box = el('input', { attrs: { type: 'checkbox' } });
    box.checked = p.default === true;
    input = box;
  } else {
    const type = p.type === 'number' ? 'number' : p.type === 'url' ? 'url' : 'text';
    input = el('input', { attrs: { type } });
    if (type === 'number') input.setAttribute('step', 'any');
    if (type === 'url') input.setAttribute('spellcheck', 'false');
    input.value = value;
  }
  input.id = id;
  input.name = text(p.name);
  input.dataset.type = text(p.type);
  if (p.placeholder && p.type !== 'select' && p.type !== 'checkbox') {
    input.setAttribute('placeholder', text(p.placeholder));
  }
  if (p.required) input.setAttribute('aria-required', 'true');
  const help = p.help_text ? el('p', { className: 'plugin-help muted' }, text(p.help_text)) : null;
  if (help) {
    help.id = id + '-help';
    input.setAttribute('aria-describedby', help.id);
  }
  const label = el(
    'label',
    { attrs: { for: id } },
    text(p.label) || text(p.name),
    p.required ? el('span', { className: 'required', title: 'required' }, ' *') : null,
  );
  const kind = p.type === 'checkbox' ? 'plugin-field check' : 'plugin-field';
  return el('div', { className: kind }, label, input, help);
}

/**
 * The parameters in `fields` as the API takes them: empty fields left out, numbers and
 * booleans typed.
 * @param {HTMLElement} fields
 * @returns {{ values: Record<string, string | number | boolean>, error?: undefined } | { error: string }}
 */
export function read(fields) {
  /** @type {Record<string, string | number | boolean>} */
  const values = {};
  for (const input of fields.querySelectorAll('[data-type]')) {
    if (
      !(input instanceof HTMLInputElement) &&
      !(input instanceof HTMLTextAreaElement) &&
      !(input instanceof HTMLSelectElement)
    ) {
      continue;
    }
    const type = input.dataset.type;
    if (input instanceof HTMLInputElement && type === 'checkbox') {
      values[input.name] = input.checked;
    } else if (input instanceof HTMLInputElement && type === 'number') {
      // The browser empties a number field it cannot read: say so rather than drop it.
      if (input.validity.badInput) return { error: input.name + ' is not a number' };
      if (input.value !== '') values[input.name] = input.valueAsNumber;
    } else if (input.value !== '') {
      values[input.name] = input.value;
    }
  }
  return { values };
}
