// persona-browser control panel: the plugin runner's form, built from a plugin's parameter
// descriptors (docs/api.md, Plugins) and read back as the API takes it. Used by plugins.js
// as `window.PersonaPluginForm`; descriptor strings reach the DOM as text only.
'use strict';

(function () {
  const { el, text } = window.PersonaUi;

  /** One labelled control for a parameter descriptor, by its `type`. */
  function field(p) {
    const id = 'plugin-param-' + text(p.name);
    const value = p.default === null || p.default === undefined ? '' : String(p.default);
    let input;
    if (p.type === 'textarea') {
      input = el('textarea', { attrs: { rows: '3' } });
      input.value = value;
    } else if (p.type === 'select') {
      const options = Array.isArray(p.options) ? p.options : [];
      input = el('select');
      // An empty choice: optional selects can stay unset, required ones must be picked.
      if (!p.required || !options.includes(value)) {
        input.append(el('option', { attrs: { value: '' } }, p.required ? 'choose…' : '(none)'));
      }
      for (const o of options) input.append(el('option', { attrs: { value: text(o) } }, text(o)));
      input.value = options.includes(value) ? value : '';
    } else if (p.type === 'checkbox') {
      input = el('input', { attrs: { type: 'checkbox' } });
      input.checked = p.default === true;
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
    const help = p.help_text
      ? el('p', { className: 'plugin-help muted' }, text(p.help_text))
      : null;
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

  /** The parameters in `fields` as the API takes them: empty fields left out, numbers and booleans typed. */
  function read(fields) {
    const values = {};
    for (const input of fields.querySelectorAll('[data-type]')) {
      const type = input.dataset.type;
      if (type === 'checkbox') {
        values[input.name] = input.checked;
      } else if (type === 'number') {
        // The browser empties a number field it cannot read: say so rather than drop it.
        if (input.validity.badInput) return { error: input.name + ' is not a number' };
        if (input.value !== '') values[input.name] = input.valueAsNumber;
      } else if (input.value !== '') {
        values[input.name] = input.value;
      }
    }
    return { values };
  }

  window.PersonaPluginForm = Object.freeze({ field, read });
})();
