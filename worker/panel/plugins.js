// persona-browser control panel: the plugin runner. Lists the installed plugins, builds a form
// from the chosen plugin's parameter descriptors, runs it on a page and shows the answer. API
// strings reach the DOM as text only.
import { byId, el, isObject, text } from '/ui/dom.js';
import { request } from '/ui/http.js';
import { state } from './core.js';
import { forgetMedia, offerMedia } from './plugin-media.js';
import { field, read } from './plugin-form.js';

/**
 * A plugin as GET /api/v1/plugins lists it.
 * @typedef {object} PluginDescriptor
 * @property {string} name
 * @property {string} [description]
 * @property {string} [route] its call, with `{page_id}` in it
 * @property {string[]} [methods]
 * @property {unknown[]} [bg_color]
 * @property {import('./plugin-form.js').ParamDescriptor[]} [parameters]
 */
/** @typedef {{ plugins?: PluginDescriptor[], skipped?: { name: string, error: string }[] }} PluginList */

const API = '/api/v1';
const POOL_EVERY_MS = 3000;

const runner = {
  /** @type {PluginDescriptor | null} the descriptor whose form is shown */
  current: null,
  running: false,
  /** @type {string | null} the page list last shown in the selector, left alone when unchanged */
  pagesShown: null,
  /** True once the user picked a page here: the panel's chosen page no longer decides. */
  pagePicked: false,
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  poll: undefined,
};

/** @returns {Record<string, string>} */
const auth = () => ({ Authorization: 'Bearer ' + (state.key || '') });

// ---------------------------------------------------------------- plugin list

/** @param {string} name @returns {string} `a/b` for plugin `a/b/c` */
const familyOf = (name) => (name.includes('/') ? name.slice(0, name.lastIndexOf('/')) : '');
/** @param {string} name */
const shortName = (name) => name.slice(name.lastIndexOf('/') + 1);
/** `/api/v1/plugins/a/b/docs`: the registry name keeps its slashes, each part encoded. */
const docsUrl = (/** @type {string} */ name) =>
  API + '/plugins/' + name.split('/').map(encodeURIComponent).join('/') + '/docs';

async function loadPlugins() {
  const summary = byId('plugins-summary');
  summary.textContent = 'Loading plugins…';
  /** @type {import('/ui/http.js').Answer<PluginList>} */
  const r = await request(API + '/plugins', {}, { service: 'the worker' });
  const plugins = r.ok && isObject(r.body) ? r.body.plugins : undefined;
  if (!Array.isArray(plugins)) {
    summary.textContent = 'Cannot read the plugins: ' + (r.message || 'no list in the answer');
    byId('plugins-retry').hidden = false;
    return;
  }
  byId('plugins-retry').hidden = true;
  summary.textContent = plugins.length === 1 ? '1 plugin' : plugins.length + ' plugins';
  renderSkipped(Array.isArray(r.body.skipped) ? r.body.skipped : []);
  /** @type {Map<string, PluginDescriptor[]>} */
  const families = new Map();
  for (const p of plugins) {
    const family = familyOf(text(p.name));
    const members = families.get(family) ?? [];
    members.push(p);
    families.set(family, members);
  }
  byId('plugin-list').replaceChildren(
    ...Array.from(families, ([family, members]) =>
      el(
        'div',
        { className: 'plugin-family' },
        el('h3', null, family || 'other plugins'),
        el('div', { className: 'plugin-buttons' }, ...members.map(pluginButton)),
      ),
    ),
  );
  byId('plugins-empty').hidden = plugins.length > 0;
}

/** @param {{ name: string, error: string }[]} skipped */
function renderSkipped(skipped) {
  const box = byId('plugins-skipped');
  box.hidden = skipped.length === 0;
  box.replaceChildren(
    el('strong', null, 'Not loaded: '),
    skipped.map((s) => text(s.name) + ' (' + text(s.error) + ')').join('; '),
  );
}

/** A manifest's colour, if the browser reads it as one (nothing else reaches the style). */
const colour = (/** @type {unknown} */ c, /** @type {string} */ fallback) =>
  typeof c === 'string' && CSS.supports('color', c) ? c : fallback;

/** @param {PluginDescriptor} p */
function pluginButton(p) {
  const name = text(p.name);
  const b = el(
    'button',
    {
      className: 'plugin-btn',
      title: text(p.description),
      data: { plugin: name },
      attrs: { type: 'button', 'aria-pressed': 'false' },
    },
    shortName(name),
  );
  const [from, to] = Array.isArray(p.bg_color) ? p.bg_color : [];
  b.style.backgroundImage =
    'linear-gradient(135deg, ' + colour(from, '#2458d3') + ', ' + colour(to, '#1b45a8') + ')';
  b.addEventListener('click', () => openPlugin(p));
  return b;
}

// ---------------------------------------------------------------- the form

/** @param {PluginDescriptor} p */
function openPlugin(p) {
  runner.current = p;
  for (const b of document.querySelectorAll('.plugin-btn')) {
    if (!(b instanceof HTMLElement)) continue;
    b.setAttribute('aria-pressed', b.dataset.plugin === p.name ? 'true' : 'false');
  }
  byId('plugin-title').textContent = text(p.name);
  byId('plugin-description').textContent = text(p.description);
  byId('plugin-docs').setAttribute('href', docsUrl(text(p.name)));
  const methods = Array.isArray(p.methods) && p.methods.length ? p.methods : ['POST'];
  const method = byId('plugin-method', HTMLSelectElement);
  method.replaceChildren(...methods.map((m) => el('option', { attrs: { value: m } }, text(m))));
  method.disabled = methods.length < 2;
  const params = Array.isArray(p.parameters) ? p.parameters : [];
  byId('plugin-fields').replaceChildren(...params.map(field));
  byId('plugin-no-params').hidden = params.length > 0;
  byId('plugin-form').hidden = false;
  clearAnswer();
  void refreshPages();
}

// ---------------------------------------------------------------- pages

async function refreshPages() {
  /** @type {import('/ui/http.js').Answer<{ pages?: { page_id: string }[] }>} */
  const r = await request(API + '/system/status/pages', {}, { service: 'the worker' });
  const pages = r.ok && Array.isArray(r.body.pages) ? r.body.pages : [];
  const ids = pages.map((p) => text(p.page_id));
  const shown = JSON.stringify([r.ok, ids]);
  if (shown === runner.pagesShown) return;
  runner.pagesShown = shown;
  const select = byId('plugin-page', HTMLSelectElement);
  const keep = runner.pagePicked && select.value ? select.value : text(state.chosen);
  select.replaceChildren(...ids.map((id) => el('option', { attrs: { value: id } }, id)));
  if (!ids.length) {
    const why = r.ok ? 'no pages: create one above' : 'cannot read the pages';
    select.append(el('option', { attrs: { value: '' } }, why));
  }
  select.value = ids.includes(keep) ? keep : (ids[0] ?? '');
  select.setAttribute('aria-busy', 'false');
}

/** While a form is open and the tab is seen, the page list follows the pool. */
function pollPages() {
  clearTimeout(runner.poll);
  runner.poll = setTimeout(() => {
    const again = runner.current && !document.hidden ? refreshPages() : Promise.resolve();
    void again.then(pollPages);
  }, POOL_EVERY_MS);
}

// ---------------------------------------------------------------- running

function clearAnswer() {
  forgetMedia();
  byId('plugin-answer').hidden = true;
  byId('plugin-status').textContent = '';
  byId('plugin-media').replaceChildren();
  byId('plugin-json').textContent = '';
}

/** @param {string} message @param {boolean} good */
function showStatus(message, good) {
  byId('plugin-answer').hidden = false;
  const s = byId('plugin-status');
  s.className = good ? 'summary good' : 'summary bad';
  s.textContent = message;
}

async function run() {
  const p = runner.current;
  if (!p || runner.running) return;
  clearAnswer();
  if (!state.key) return showStatus('Enter the API key first (in the API key card above).', false);
  const pageId = byId('plugin-page', HTMLSelectElement).value;
  if (!pageId) return showStatus('Choose a page first (create one above if there is none).', false);
  const got = read(byId('plugin-fields'));
  if (got.error !== undefined) return showStatus(got.error, false);
  const method = byId('plugin-method', HTMLSelectElement).value || 'POST';
  let url = text(p.route).replace('{page_id}', encodeURIComponent(pageId));
  const headers = auth();
  /** @type {RequestInit} */
  const init = { method, headers };
  if (method === 'GET') {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(got.values)) query.append(k, String(v));
    const qs = query.toString();
    if (qs) url += '?' + qs;
  } else {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(got.values);
  }
  runner.running = true;
  const button = byId('plugin-run', HTMLButtonElement);
  // data-auth: core.js also turns it off without a key, and keeps it off while busy.
  button.dataset.busy = '1';
  button.disabled = true;
  button.textContent = 'Running…';
  showStatus('Running ' + text(p.name) + ' on ' + pageId + '…', true);
  const started = performance.now();
  try {
    /** @type {import('/ui/http.js').Answer<{ media_url?: unknown }>} */
    const r = await request(url, init, { service: 'the worker' });
    const took = ((performance.now() - started) / 1000).toFixed(1) + ' s';
    const head = method + ' ' + url.split('?')[0] + ' → ';
    const outcome =
      r.status === 0
        ? r.message
        : 'HTTP ' + r.status + ' in ' + took + (r.ok ? '' : ': ' + r.message);
    showStatus(head + outcome, r.ok);
    byId('plugin-json').textContent = r.body !== null ? JSON.stringify(r.body, null, 2) : r.raw;
    if (r.ok && isObject(r.body) && typeof r.body.media_url === 'string') {
      offerMedia(byId('plugin-media'), r.body.media_url, auth);
    }
  } finally {
    runner.running = false;
    // The call may have left a failure bundle or a recording (records.js lists them).
    document.dispatchEvent(new Event('plugin-ran'));
    delete button.dataset.busy;
    button.disabled = !state.key;
    button.textContent = 'Run';
  }
}

// ---------------------------------------------------------------- start up

byId('plugin-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void run();
});
byId('plugin-page').addEventListener('change', () => {
  runner.pagePicked = true;
});
byId('plugins-retry').addEventListener('click', () => void loadPlugins());
void loadPlugins();
pollPages();
