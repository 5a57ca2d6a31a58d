// persona-browser control panel: the plugin runner. Lists the installed plugins, builds a form
// from the chosen plugin's parameter descriptors, runs it on a page and shows the answer. Plain
// browser JavaScript beside panel.js; API strings reach the DOM as text only.
'use strict';

(function () {
  const API = '/api/v1';
  const MEDIA_PREFIX = API + '/media/';
  // The key the user saved in the API key card (panel.js keeps it under this name).
  const keys = window.PersonaUi.keyStore(() => localStorage, 'persona-browser.api-key');
  const { el, text } = window.PersonaUi;
  const form = window.PersonaPluginForm;
  const POOL_EVERY_MS = 3000;
  const $ = (id) => document.getElementById(id);

  const runner = {
    /** The descriptor whose form is shown, or null. */
    current: null,
    running: false,
    /** The page list last shown in the selector, to leave an unchanged (maybe open) list alone. */
    pagesShown: null,
    /** True once the user picked a page here: the panel's chosen page no longer decides. */
    pagePicked: false,
    /** The object URL of the last fetched file, revoked when a new answer replaces it. */
    blobUrl: null,
    poll: null,
  };

  // ---------------------------------------------------------------- HTTP

  /** The message a failed answer carries: `error` (envelope) or `detail` (auth bodies). */
  function errorText(status, body, raw) {
    if (body && typeof body === 'object') {
      if (typeof body.error === 'string' && body.error) return body.error;
      if (typeof body.detail === 'string' && body.detail) return body.detail;
    }
    const snippet = text(raw).trim().slice(0, 200);
    return 'HTTP ' + status + (snippet ? ': ' + snippet : '');
  }

  /**
   * Never throws: {ok, status, body (parsed JSON or null), raw, message}; status 0 = no answer.
   * With `asBlob`, a success is the bytes instead: {ok, status, blob, headers}.
   */
  async function request(url, init, asBlob) {
    try {
      const res = await fetch(url, Object.assign({ cache: 'no-store' }, init));
      if (asBlob && res.ok) {
        return { ok: true, status: res.status, blob: await res.blob(), headers: res.headers };
      }
      const raw = await res.text();
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // not JSON: shown raw
      }
      const ok = res.ok && body !== null && typeof body === 'object' && body.success !== false;
      return {
        ok,
        status: res.status,
        body,
        raw,
        message: ok ? '' : errorText(res.status, body, raw),
      };
    } catch (err) {
      const message = 'Cannot reach the worker (' + text(err && err.message) + ')';
      return { ok: false, status: 0, body: null, raw: '', message };
    }
  }

  /** The panel's key (panel.js), else the stored one. */
  const readKey = () => (window.PersonaPanelKey ? window.PersonaPanelKey() : keys.read());
  const auth = () => ({ Authorization: 'Bearer ' + (readKey() || '') });

  // ---------------------------------------------------------------- plugin list

  /** `a/b/c` is plugin `c` of family `a/b`. */
  const familyOf = (name) => (name.includes('/') ? name.slice(0, name.lastIndexOf('/')) : '');
  const shortName = (name) => name.slice(name.lastIndexOf('/') + 1);
  /** `/api/v1/plugins/a/b/docs`: the registry name keeps its slashes, each part encoded. */
  const docsUrl = (name) =>
    API + '/plugins/' + name.split('/').map(encodeURIComponent).join('/') + '/docs';

  async function loadPlugins() {
    const summary = $('plugins-summary');
    summary.textContent = 'Loading plugins…';
    const r = await request(API + '/plugins');
    if (!r.ok || !Array.isArray(r.body.plugins)) {
      summary.textContent = 'Cannot read the plugins: ' + (r.message || 'no list in the answer');
      $('plugins-retry').hidden = false;
      return;
    }
    $('plugins-retry').hidden = true;
    const plugins = r.body.plugins;
    summary.textContent = plugins.length === 1 ? '1 plugin' : plugins.length + ' plugins';
    renderSkipped(Array.isArray(r.body.skipped) ? r.body.skipped : []);
    const families = new Map();
    for (const p of plugins) {
      const family = familyOf(text(p.name));
      if (!families.has(family)) families.set(family, []);
      families.get(family).push(p);
    }
    $('plugin-list').replaceChildren(
      ...Array.from(families, ([family, members]) =>
        el(
          'div',
          { className: 'plugin-family' },
          el('h3', null, family || 'other plugins'),
          el('div', { className: 'plugin-buttons' }, ...members.map(pluginButton)),
        ),
      ),
    );
    $('plugins-empty').hidden = plugins.length > 0;
  }

  function renderSkipped(skipped) {
    const box = $('plugins-skipped');
    box.hidden = skipped.length === 0;
    box.replaceChildren(
      el('strong', null, 'Not loaded: '),
      skipped.map((s) => text(s.name) + ' (' + text(s.error) + ')').join('; '),
    );
  }

  /** A manifest's colour, if the browser reads it as one (nothing else reaches the style). */
  const colour = (c, fallback) =>
    typeof c === 'string' && CSS.supports('color', c) ? c : fallback;

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

  function openPlugin(p) {
    runner.current = p;
    for (const b of document.querySelectorAll('.plugin-btn')) {
      b.setAttribute('aria-pressed', b.dataset.plugin === p.name ? 'true' : 'false');
    }
    $('plugin-title').textContent = text(p.name);
    $('plugin-description').textContent = text(p.description);
    $('plugin-docs').setAttribute('href', docsUrl(text(p.name)));
    const methods = Array.isArray(p.methods) && p.methods.length ? p.methods : ['POST'];
    const method = $('plugin-method');
    method.replaceChildren(...methods.map((m) => el('option', { attrs: { value: m } }, text(m))));
    method.disabled = methods.length < 2;
    const params = Array.isArray(p.parameters) ? p.parameters : [];
    $('plugin-fields').replaceChildren(...params.map(form.field));
    $('plugin-no-params').hidden = params.length > 0;
    $('plugin-form').hidden = false;
    clearAnswer();
    void refreshPages();
  }

  // ---------------------------------------------------------------- pages

  async function refreshPages() {
    const r = await request(API + '/system/status/pages');
    const pages = r.ok && Array.isArray(r.body.pages) ? r.body.pages : [];
    const ids = pages.map((p) => text(p.page_id));
    const shown = JSON.stringify([r.ok, ids]);
    if (shown === runner.pagesShown) return;
    runner.pagesShown = shown;
    const select = $('plugin-page');
    const panelChoice = $('chosen-id') ? $('chosen-id').textContent : '';
    const keep = runner.pagePicked && select.value ? select.value : panelChoice;
    select.replaceChildren(...ids.map((id) => el('option', { attrs: { value: id } }, id)));
    if (!ids.length) {
      const why = r.ok ? 'no pages: create one above' : 'cannot read the pages';
      select.append(el('option', { attrs: { value: '' } }, why));
    }
    select.value = ids.includes(keep) ? keep : ids.length ? ids[0] : '';
  }

  /** While a form is open and the tab is seen, the page list follows the pool. */
  function pollPages() {
    clearTimeout(runner.poll);
    runner.poll = setTimeout(async () => {
      if (runner.current && !document.hidden) await refreshPages();
      pollPages();
    }, POOL_EVERY_MS);
  }

  // ---------------------------------------------------------------- running

  function clearAnswer() {
    if (runner.blobUrl) URL.revokeObjectURL(runner.blobUrl);
    runner.blobUrl = null;
    $('plugin-answer').hidden = true;
    $('plugin-status').textContent = '';
    $('plugin-media').replaceChildren();
    $('plugin-json').textContent = '';
  }

  function showStatus(message, good) {
    $('plugin-answer').hidden = false;
    const s = $('plugin-status');
    s.className = good ? 'summary good' : 'summary bad';
    s.textContent = message;
  }

  async function run(ev) {
    ev.preventDefault();
    const p = runner.current;
    if (!p || runner.running) return;
    clearAnswer();
    const key = readKey();
    if (!key) return showStatus('Enter the API key first (in the API key card above).', false);
    const pageId = $('plugin-page').value;
    if (!pageId)
      return showStatus('Choose a page first (create one above if there is none).', false);
    const got = form.read($('plugin-fields'));
    if (got.error) return showStatus(got.error, false);
    const method = $('plugin-method').value || 'POST';
    let url = text(p.route).replace('{page_id}', encodeURIComponent(pageId));
    const init = { method, headers: auth() };
    if (method === 'GET') {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(got.values)) query.append(k, String(v));
      const qs = query.toString();
      if (qs) url += '?' + qs;
    } else {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(got.values);
    }
    runner.running = true;
    const button = $('plugin-run');
    // data-auth: panel.js also turns it off without a key, and keeps it off while busy.
    button.dataset.busy = '1';
    button.disabled = true;
    button.textContent = 'Running…';
    showStatus('Running ' + text(p.name) + ' on ' + pageId + '…', true);
    const started = performance.now();
    try {
      const r = await request(url, init);
      const took = ((performance.now() - started) / 1000).toFixed(1) + ' s';
      const head = method + ' ' + url.split('?')[0] + ' → ';
      const outcome =
        r.status === 0
          ? r.message
          : 'HTTP ' + r.status + ' in ' + took + (r.ok ? '' : ': ' + r.message);
      showStatus(head + outcome, r.ok);
      $('plugin-json').textContent = r.body !== null ? JSON.stringify(r.body, null, 2) : r.raw;
      if (r.ok && typeof r.body.media_url === 'string') offerMedia(r.body.media_url);
    } finally {
      runner.running = false;
      delete button.dataset.busy;
      button.disabled = !readKey();
      button.textContent = 'Run';
    }
  }

  // ---------------------------------------------------------------- media

  /** `filename*=UTF-8''…` first, then `filename="…"`, from a Content-Disposition header. */
  function filenameOf(disposition) {
    const d = text(disposition);
    const star = /filename\*=UTF-8''([^;]+)/i.exec(d);
    if (star) {
      try {
        return decodeURIComponent(star[1].trim());
      } catch {
        // malformed: the plain name below
      }
    }
    const plain = /filename="([^"]*)"/i.exec(d) || /filename=([^;]+)/i.exec(d);
    return plain ? plain[1].trim() : 'download';
  }

  /** A file link needs the key, so it is fetched here and offered as a saved blob. */
  function offerMedia(mediaUrl) {
    const box = $('plugin-media');
    const target = new URL(mediaUrl, location.origin);
    // The key goes to this worker's media route only, whatever a plugin answered.
    if (target.origin !== location.origin || !target.pathname.startsWith(MEDIA_PREFIX)) {
      box.replaceChildren(
        el('span', { className: 'error-text' }, 'Unexpected media_url: ' + mediaUrl),
      );
      return;
    }
    const fetchBtn = el(
      'button',
      { className: 'secondary', attrs: { type: 'button', id: 'plugin-fetch' } },
      'Fetch the file',
    );
    const note = el(
      'span',
      { className: 'muted' },
      'The link works once; fetching uses the API key.',
    );
    const say = (cls, message) => {
      note.className = cls;
      note.textContent = message;
    };
    box.replaceChildren(fetchBtn, note);
    fetchBtn.addEventListener('click', async () => {
      fetchBtn.disabled = true;
      say('muted', 'Fetching…');
      const r = await request(target.pathname + target.search, { headers: auth() }, true);
      if (!box.contains(fetchBtn)) return; // a newer answer replaced this one meanwhile
      if (!r.ok) {
        fetchBtn.disabled = r.status !== 0; // only a lost connection may be tried again
        return say('error-text', 'Download failed: ' + r.message);
      }
      const name = filenameOf(r.headers.get('Content-Disposition'));
      if (runner.blobUrl) URL.revokeObjectURL(runner.blobUrl);
      runner.blobUrl = URL.createObjectURL(r.blob);
      const attrs = { id: 'plugin-download', href: runner.blobUrl, download: name };
      const size = r.blob.size + ' bytes, ' + (r.blob.type || 'unknown type');
      box.replaceChildren(
        el('a', { attrs }, 'Save ' + name),
        el('span', { className: 'muted' }, size),
      );
    });
  }

  // ---------------------------------------------------------------- start up

  $('plugin-form').addEventListener('submit', (ev) => void run(ev));
  $('plugin-page').addEventListener('change', () => {
    runner.pagePicked = true;
  });
  $('plugins-retry').addEventListener('click', () => void loadPlugins());
  void loadPlugins();
  pollPages();
})();
