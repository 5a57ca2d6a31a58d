// persona-browser panels: the service key card (`#key-form`, `#key-input`, `#key-saved`,
// `#key-forget`) and where each page keeps its key.
import { byId, el } from './dom.js';

/** Where the worker's pages (panel, plugin runner, live view) and the fleet panel keep their key. */
export const KEY_NAMES = Object.freeze({
  worker: 'persona-browser.api-key',
  fleet: 'persona-browser.fleet-key',
});

/** The topic of the messages a key causes: they go once a key works. */
export const KEY_TOPIC = 'key';

/**
 * The service key kept in a browser storage under `name`. `storage` is a function, because
 * merely touching a disabled storage throws: the key then lasts for this page only.
 * @param {() => Storage} storage
 * @param {string} name
 */
export function keyStore(storage, name) {
  return {
    /** @returns {string | null} */
    read() {
      try {
        return storage().getItem(name) || null;
      } catch {
        return null;
      }
    },
    /** @param {string | null} key */
    write(key) {
      try {
        if (key) storage().setItem(name, key);
        else storage().removeItem(name);
      } catch {
        // Storage disabled: the key still works for this page.
      }
    },
  };
}

/**
 * The key a page uses, kept in `store` across reloads, and the parts of the page that follow it
 * (called in the order they asked, whenever the key changes).
 * @param {ReturnType<typeof keyStore>} store
 */
export function keyKeeper(store) {
  let key = store.read();
  /** @type {Array<(key: string | null) => void>} */
  const watchers = [];
  return {
    /** @returns {string | null} the key in use */
    current: () => key,
    /** @param {string | null} next the key to use from now on (null: none) */
    set: (next) => {
      key = next;
      store.write(next);
      for (const watch of watchers) watch(next);
    },
    /** @param {(key: string | null) => void} watch */
    watch: (watch) => {
      watchers.push(watch);
    },
  };
}

/**
 * Why a typed key cannot be a key (a bearer token is printable ASCII), or null.
 * @param {string} key
 * @param {string} label what the page calls it ('API key', 'service key')
 */
export function keyProblem(key, label) {
  if (!key) return 'Type the ' + label + ' first.';
  if (/[^\x20-\x7e]/.test(key)) {
    return 'The ' + label + ' can only contain printable ASCII characters.';
  }
  return null;
}

/**
 * @typedef {object} KeyCardOptions
 * @property {string} heading the card's title ('API key', 'Service key')
 * @property {string} label what the page calls the key in messages ('API key', 'service key')
 * @property {string} save the submit button's text
 * @property {string} keptWhere where the key is kept, told under the field
 * @property {string} inUse what the card says while a key is in use
 * @property {(key: string) => void} onKey a key was typed in and looks like one
 * @property {(problem: string) => void} onProblem a typed key cannot be one
 * @property {() => void} onForget "Forget key" was pressed
 */

/**
 * Builds the key card in `#key-section`: the form (`#key-form`, `#key-input`, `#key-save`)
 * while there is no key, "Forget key" (`#key-saved`, `#key-forget`) while there is one.
 * @param {KeyCardOptions} opts
 * @returns {(key: string | null) => void} shows the card for the key in use
 */
export function keyCard(opts) {
  const input = el('input', {
    attrs: { id: 'key-input', type: 'password', spellcheck: 'false', required: '' },
  });
  const label = el('label', { attrs: { for: 'key-input' } }, 'Service key (');
  label.append(el('code', null, 'SERVICE_KEY'), ')');
  const form = el(
    'form',
    { className: 'row', attrs: { id: 'key-form', autocomplete: 'off' } },
    label,
    input,
    el('button', { attrs: { id: 'key-save', type: 'submit' } }, opts.save),
    el('span', { className: 'muted' }, opts.keptWhere),
  );
  const forget = el(
    'button',
    { className: 'secondary', attrs: { id: 'key-forget', type: 'button' } },
    'Forget key',
  );
  const saved = el(
    'div',
    { className: 'row', attrs: { id: 'key-saved' } },
    el('span', { attrs: { id: 'key-state' } }, opts.inUse),
    forget,
  );
  byId('key-section').replaceChildren(
    el('h2', { attrs: { id: 'key-heading' } }, opts.heading),
    form,
    saved,
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = input.value.trim();
    const problem = keyProblem(key, opts.label);
    if (problem) opts.onProblem(problem);
    else opts.onKey(key);
  });
  forget.addEventListener('click', () => {
    opts.onForget();
    input.focus();
  });
  return (key) => {
    form.hidden = Boolean(key);
    saved.hidden = !key;
    if (!key) input.value = '';
  };
}
