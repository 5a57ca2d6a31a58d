// persona-browser control panel: plain browser JavaScript, no build step, no external resources.
// Every string that comes from the API reaches the DOM through textContent or setAttribute,
// never through HTML parsing, so a page title such as "<img onerror=…>" stays text.
'use strict';

(function () {
  const API = '/api/v1';
  const KEY_STORAGE = 'persona-browser.api-key';
  const { el, text, clock } = window.PersonaUi;
  const keys = window.PersonaUi.keyStore(() => localStorage, KEY_STORAGE);
  const readStoredKey = keys.read;
  const storeKey = keys.write;
  const STATUS_EVERY_MS = 2000;
  const SHOT_EVERY_MS = 3000;
  const MAX_MESSAGES = 8;
  const OK_MESSAGE_MS = 8000;
  const KEY_TOPIC = 'key';

  const $ = (id) => document.getElementById(id);

  const state = {
    key: readStoredKey(),
    /** The chosen page id, or null. */
    chosen: null,
    /** performance.now() when the page was chosen: older pool snapshots cannot un-choose it. */
    chosenAt: 0,
    /** Page ids of the last pool snapshot (null when the pool could not be read). */
    pageIds: null,
    pageCount: 0,
    initialized: null,
    busy: { start: false, stop: false, create: false, destroy: false, navigate: false },
    /** The live view: a viewer session (cookie) exists, and the last GET /vnc/control. */
    live: { session: false, control: null, taking: false },
  };

  // ---------------------------------------------------------------- small helpers

  function fmtSeconds(s) {
    if (typeof s !== 'number' || !isFinite(s)) return '?';
    const total = Math.max(0, Math.ceil(s));
    if (total < 60) return total + ' s';
    const m = Math.floor(total / 60);
    const rest = total % 60;
    return rest ? m + ' min ' + rest + ' s' : m + ' min';
  }

  // ---------------------------------------------------------------- API access

  /** The message a failed response carries: `error` (envelope) or `detail` (auth bodies). */
  function errorText(status, body, raw) {
    if (body && typeof body === 'object') {
      if (typeof body.error === 'string' && body.error) return body.error;
      if (typeof body.detail === 'string' && body.detail) return body.detail;
      if (body.detail !== undefined) return JSON.stringify(body.detail);
    }
    const snippet = text(raw).trim().slice(0, 200);
    return 'HTTP ' + status + (snippet ? ': ' + snippet : '');
  }

  /**
   * One API call. Never throws: resolves to {ok, status, body, message}. `status` is 0 when the
   * worker could not be reached. A 200 with `success: false` is a failure too (SPEC).
   */
  async function api(method, path, opts) {
    const o = opts || {};
    const headers = {};
    if (o.auth) {
      if (!state.key)
        return { ok: false, status: 0, body: null, message: 'Enter the API key first' };
      headers.Authorization = 'Bearer ' + state.key;
    }
    let payload;
    if (o.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      payload = JSON.stringify(o.body);
    }
    const timeoutMs = o.timeoutMs || 15000;
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), timeoutMs);
    try {
      // The live view's routes live beside the API, under /vnc/ (session cookie + bearer).
      const res = await fetch(path.startsWith('/vnc/') ? path : API + path, {
        method,
        headers,
        body: payload,
        signal: ctl.signal,
        cache: 'no-store',
      });
      const raw = await res.text();
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // not JSON: errorText shows the start of it
      }
      if (res.ok && body && typeof body === 'object' && body.success !== false) {
        return { ok: true, status: res.status, body, message: '' };
      }
      return { ok: false, status: res.status, body, message: errorText(res.status, body, raw) };
    } catch (err) {
      const message = ctl.signal.aborted
        ? 'No answer from the worker within ' + Math.round(timeoutMs / 1000) + ' s'
        : 'Cannot reach the worker (' + text(err && err.message) + ')';
      return { ok: false, status: 0, body: null, message };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reports a failed call; a 401 also forgets the key so the user is asked again. What a wrong
   * key caused is a "key" message: it goes once a key works.
   */
  function reportFailure(action, r) {
    const topic = r.status === 401 ? KEY_TOPIC : undefined;
    notify('error', action + ' failed: ' + r.message, topic);
    if (r.status === 401) {
      setKey(null);
      notify('error', 'The saved API key was rejected and forgotten: enter the right key.', topic);
    }
  }

  // ---------------------------------------------------------------- messages

  const notify = window.PersonaUi.notifier($('messages'), MAX_MESSAGES, OK_MESSAGE_MS);

  // ---------------------------------------------------------------- API key

  // The plugin runner reads the key here: without localStorage it lives in this state only.
  window.PersonaPanelKey = () => state.key;

  function setKey(key) {
    state.key = key;
    storeKey(key);
    renderKey();
    updateButtons();
    if (key) restartShots();
    if (key) void startLive();
    else void endLive();
  }

  function renderKey() {
    $('key-form').hidden = Boolean(state.key);
    $('key-saved').hidden = !state.key;
    if (!state.key) $('key-input').value = '';
  }

  /** Checks the key with a side-effect-free authenticated call (metrics: 404 without a waker). */
  async function verifyKey(announce) {
    const r = await api('GET', '/system/metrics', { auth: true, timeoutMs: 10000 });
    if (r.status === 401) return reportFailure('Checking the API key', r);
    if (r.status === 500 && r.body && r.body.detail)
      return reportFailure('Checking the API key', r);
    if (r.status === 0 && state.key)
      return notify('error', 'Checking the API key: ' + r.message, KEY_TOPIC);
    notify.clear(KEY_TOPIC);
    if (announce) notify('ok', 'API key accepted.');
  }

  $('key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = $('key-input').value.trim();
    if (!key) return notify('error', 'Type the API key first.', KEY_TOPIC);
    if (/[^\x20-\x7e]/.test(key)) {
      return notify('error', 'The API key can only contain printable ASCII characters.', KEY_TOPIC);
    }
    setKey(key);
    void verifyKey(true);
  });

  $('key-forget').addEventListener('click', () => {
    setKey(null);
    notify('ok', 'API key forgotten.');
    $('key-input').focus();
  });

  // ---------------------------------------------------------------- buttons state

  function updateButtons() {
    for (const b of document.querySelectorAll('button[data-auth]')) {
      const needsPage = b.hasAttribute('data-page');
      let reason = '';
      if (!state.key) reason = 'Enter the API key first';
      else if (needsPage && !state.chosen) reason = 'Choose a page first';
      b.disabled = Boolean(reason) || b.dataset.busy === '1';
      if (reason) b.setAttribute('title', reason);
      else b.removeAttribute('title');
    }
    $('start-btn').textContent = state.busy.start
      ? 'Starting…'
      : state.initialized
        ? 'Restart'
        : 'Start';
    $('stop-btn').textContent = state.busy.stop ? 'Stopping…' : 'Stop';
    $('nav-btn').textContent = state.busy.navigate ? 'Navigating…' : 'Navigate';
    $('create-btn').textContent = state.busy.create ? 'Creating…' : 'Create page';
    $('destroy-btn').textContent = state.busy.destroy ? 'Destroying…' : 'Destroy page';
  }

  /** Runs `work` with the named action's buttons marked busy (no double submits). */
  async function busy(name, buttons, work) {
    if (state.busy[name]) return;
    state.busy[name] = true;
    for (const b of buttons) b.dataset.busy = '1';
    updateButtons();
    try {
      await work();
    } finally {
      state.busy[name] = false;
      for (const b of buttons) delete b.dataset.busy;
      updateButtons();
    }
  }

  // ---------------------------------------------------------------- navigator and pool

  function renderNav(r) {
    const summary = $('nav-summary');
    const details = $('nav-details');
    details.replaceChildren();
    if (!r.ok) {
      state.initialized = null;
      summary.className = 'summary bad';
      summary.textContent = 'Cannot read the browser status: ' + r.message;
      return;
    }
    const s = r.body;
    state.initialized = Boolean(s.initialized);
    if (s.initialized) {
      summary.className = 'summary good';
      summary.textContent = 'Running';
    } else {
      summary.className = 'summary bad';
      summary.textContent = 'Stopped: the browser is not running';
    }
    const yes = (v) => (v ? 'yes' : 'no');
    const rows = [
      ['Initialized', yes(s.initialized)],
      ['Browser context', s.browser_context_active ? 'active' : 'inactive'],
      ['Page pool', s.page_pool_active ? 'active' : 'inactive'],
      ['Pages', s.page_count === null ? '—' : text(s.page_count) + ' of ' + text(s.max_pages)],
      ['Idle and free', s.available_pages === null ? '—' : text(s.available_pages)],
      ['Slowmo', text(s.slowmo) + ' ms'],
    ];
    // Each label and its value in one box: the grid moves pairs, never a label from its value.
    for (const [k, v] of rows)
      details.append(el('div', null, el('dt', null, k), el('dd', null, v)));
  }

  function renderPool(r, startedAt) {
    const body = $('pool-body');
    const down = $('pool-down');
    const summary = $('pool-summary');
    // Rows are rebuilt on every refresh: keep keyboard focus on the same page's row.
    const active = document.activeElement;
    const focusedRow = active && active.closest ? active.closest('#pool-body tr') : null;
    const refocus = focusedRow ? focusedRow.dataset.pageId : undefined;

    if (!r.ok) {
      body.replaceChildren();
      $('pool-empty').hidden = true;
      state.pageIds = null;
      state.pageCount = 0;
      if (r.status === 500) {
        down.hidden = false;
        $('pool-down-detail').textContent = 'Server says: ' + r.message + '.';
        summary.textContent = '';
        // Every page is gone with the pool.
        if (state.chosen && startedAt > state.chosenAt) choose(null, 'the browser is not running');
      } else {
        down.hidden = true;
        summary.textContent = 'Cannot read the pages: ' + r.message;
      }
      return;
    }
    down.hidden = true;
    const pool = r.body;
    const pages = Array.isArray(pool.pages) ? pool.pages : [];
    state.pageIds = pages.map((p) => text(p.page_id));
    state.pageCount = pages.length;
    const counts = Object.entries(pool.status_by_state || {})
      .filter(([, n]) => n > 0)
      .map(([k, n]) => n + ' ' + k);
    summary.textContent =
      text(pool.total_pages) +
      ' of ' +
      text(pool.max_pages) +
      ' pages' +
      (counts.length ? ' · ' + counts.join(', ') : '');

    const rows = pages.map((p) => pageRow(p));
    body.replaceChildren(...rows);
    $('pool-empty').hidden = pages.length > 0;
    if (refocus !== undefined) {
      const again = rows.find((tr) => tr.dataset.pageId === refocus);
      if (again) again.focus();
    }
    if (state.chosen && startedAt > state.chosenAt && !state.pageIds.includes(state.chosen)) {
      choose(null, 'it no longer exists');
    }
  }

  function pageRow(p) {
    const id = text(p.page_id);
    const st = text(p.state);
    let stateCell = el('span', { className: 'badge state-' + st.replace(/[^a-z]/g, '') }, st);
    if (p.current_operation) {
      const dur =
        typeof p.operation_duration === 'number'
          ? ' ' + p.operation_duration.toFixed(1) + ' s'
          : '';
      stateCell = el(
        'span',
        null,
        stateCell,
        ' ',
        el('span', { className: 'muted' }, text(p.current_operation) + dur),
      );
    }
    const lease = p.leased
      ? el(
          'span',
          { className: 'badge leased' },
          'leased, expires in ' + fmtSeconds(p.lease_expires_in),
        )
      : el('span', { className: 'muted' }, 'free');
    const title = text(p.title);
    const url = text(p.url);
    const chosen = id === state.chosen;
    const tr = el(
      'tr',
      {
        className: chosen ? 'chosen' : '',
        data: { pageId: id },
        attrs: { tabindex: '0', 'aria-selected': chosen ? 'true' : 'false' },
      },
      el('td', { className: 'id-cell' }, el('span', { className: 'pick' }), id),
      el('td', null, stateCell),
      el('td', { className: 'title-cell', title }, title || '(no title)'),
      el('td', { className: 'url-cell', title: url }, url),
      el('td', { className: 'lease-cell' }, lease),
      el('td', { className: 'num' }, text(p.error_count)),
      el('td', { className: 'live-cell' }, controlCell(id)),
    );
    tr.addEventListener('click', () => choose(id));
    tr.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        choose(id);
      }
    });
    return tr;
  }

  let statusTimer = null;
  let statusRunning = false;
  let statusAgain = false;

  /** Reads status and pool now (or right after the read in flight), then every STATUS_EVERY_MS. */
  function refreshStatus() {
    if (statusRunning) {
      statusAgain = true;
      return;
    }
    clearTimeout(statusTimer);
    statusTimer = null;
    if (document.hidden) return; // resumed by visibilitychange
    statusRunning = true;
    const startedAt = performance.now();
    const live =
      state.key && state.live.session
        ? api('GET', '/vnc/control', { auth: true })
        : Promise.resolve(null);
    Promise.all([api('GET', '/system/status'), api('GET', '/system/status/pages'), live])
      .then(([nav, pool, control]) => {
        if (control && control.ok) state.live.control = control.body;
        else if (control && control.status === 401) state.live.session = false;
        renderLive();
        renderNav(nav);
        renderPool(pool, startedAt);
        updateButtons();
      })
      .finally(() => {
        statusRunning = false;
        if (statusAgain) {
          statusAgain = false;
          refreshStatus();
        } else {
          statusTimer = setTimeout(refreshStatus, STATUS_EVERY_MS);
        }
      });
  }

  // ---------------------------------------------------------------- chosen page and screenshot

  function choose(id, goneReason) {
    if (id === state.chosen) return;
    const previous = state.chosen;
    state.chosen = id;
    state.chosenAt = performance.now();
    $('chosen-id').textContent = id === null ? 'none' : id;
    for (const tr of $('pool-body').children) {
      const on = tr.dataset.pageId === id;
      tr.classList.toggle('chosen', on);
      tr.setAttribute('aria-selected', on ? 'true' : 'false');
    }
    if (id !== null) $('destroy-id').value = id;
    const img = $('shot-img');
    img.hidden = true;
    img.removeAttribute('src');
    setShotStatus(
      id === null ? 'Choose a page in the list to see it.' : 'Loading a screenshot…',
      'muted',
    );
    if (goneReason && previous !== null) {
      notify('info', 'Page ' + previous + ' is no longer shown: ' + goneReason + '.');
    }
    updateButtons();
    restartShots();
  }

  function setShotStatus(message, cls) {
    const s = $('shot-status');
    s.className = cls;
    s.textContent = message;
  }

  let shotTimer = null;
  let shotRunning = false;
  /** Bumped whenever the chosen page changes: an answer for an older choice is dropped. */
  let shotGeneration = 0;

  function shotsWanted() {
    return Boolean(state.chosen && state.key && $('live-toggle').checked && !document.hidden);
  }

  /** Takes a screenshot soon; never two at once (the one in flight schedules the next). */
  function restartShots() {
    shotGeneration += 1;
    clearTimeout(shotTimer);
    shotTimer = null;
    if (!shotRunning && shotsWanted()) shotTimer = setTimeout(takeShot, 0);
  }

  async function takeShot() {
    shotTimer = null;
    if (shotRunning || !shotsWanted()) return;
    shotRunning = true;
    const generation = shotGeneration;
    const id = state.chosen;
    let r;
    try {
      r = await api('GET', '/ops/' + encodeURIComponent(id) + '/screenshot', {
        auth: true,
        timeoutMs: 45000,
      });
    } finally {
      shotRunning = false;
    }
    const current = generation === shotGeneration;
    if (current) showShot(id, r);
    if (shotsWanted() && shotTimer === null) {
      shotTimer = setTimeout(takeShot, current ? SHOT_EVERY_MS : 0);
    }
  }

  function showShot(id, r) {
    if (
      r.ok &&
      typeof r.body.screenshot === 'string' &&
      /^[A-Za-z0-9+/=]+$/.test(r.body.screenshot)
    ) {
      const img = $('shot-img');
      img.src = 'data:image/png;base64,' + r.body.screenshot;
      img.hidden = false;
      setShotStatus('Updated ' + clock() + ' · ' + text(r.body.url), 'muted');
      return;
    }
    if (r.ok) {
      setShotStatus('Screenshot failed: the answer carried no PNG', 'error-text');
      return;
    }
    if (r.status === 423) {
      // Leased (a person driving it in the live view, or an API client): not an error here.
      setShotStatus('Page ' + id + ' is leased, so no screenshot: ' + r.message, 'muted');
      return;
    }
    setShotStatus('Screenshot of ' + id + ' failed: ' + r.message, 'error-text');
    if (r.status === 401) reportFailure('Screenshot', r);
    else if (r.status === 404) choose(null, r.message);
  }

  $('live-toggle').addEventListener('change', () => {
    if ($('live-toggle').checked) restartShots();
    else if (state.chosen) setShotStatus('Live screenshot paused.', 'muted');
  });

  document.addEventListener('visibilitychange', () => {
    if (document.hidden) return;
    refreshStatus();
    restartShots();
  });

  // ---------------------------------------------------------------- actions

  $('create-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    void busy('create', [$('create-btn')], async () => {
      const id = $('create-id').value.trim();
      const r = await api('POST', '/ops/create-page', {
        auth: true,
        body: id ? { page_id: id } : {},
        timeoutMs: 30000,
      });
      if (!r.ok) return reportFailure('Create page', r);
      const created = text(r.body.page_id);
      notify('ok', text(r.body.message) || 'Page ' + created + ' created');
      $('create-id').value = '';
      choose(created);
      refreshStatus();
    });
  });

  $('destroy-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    void busy('destroy', [$('destroy-btn')], async () => {
      const id = $('destroy-id').value.trim();
      if (!id) return notify('error', 'Type the id of the page to destroy.');
      const r = await api('DELETE', '/ops/' + encodeURIComponent(id) + '/destroy-page', {
        auth: true,
        timeoutMs: 45000,
      });
      if (!r.ok) return reportFailure('Destroy page ' + id, r);
      notify('ok', text(r.body.message) || 'Page ' + id + ' destroyed');
      $('destroy-id').value = '';
      if (state.chosen === id) choose(null);
      refreshStatus();
    });
  });

  $('nav-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const id = state.chosen;
    if (!id) return notify('error', 'Choose a page first.');
    const url = $('nav-url').value.trim();
    if (!url) return notify('error', 'Type a URL first.');
    void busy('navigate', [$('nav-btn')], async () => {
      setShotStatus('Navigating ' + id + ' to ' + url + '…', 'muted');
      refreshStatus();
      const r = await api('POST', '/ops/' + encodeURIComponent(id) + '/navigate', {
        auth: true,
        body: { url },
        timeoutMs: 75000,
      });
      if (!r.ok) {
        reportFailure('Navigate ' + id, r);
      } else {
        const code = r.body.status_code === null ? 'no HTTP status' : 'HTTP ' + r.body.status_code;
        notify('ok', 'Page ' + id + ' loaded ' + text(r.body.final_url) + ' (' + code + ')');
      }
      refreshStatus();
      if (state.chosen === id) restartShots();
    });
  });

  function confirmLoss(verb) {
    if (!state.pageCount) return true;
    const n = state.pageCount;
    return window.confirm(
      verb + ' the browser? ' + n + (n === 1 ? ' page' : ' pages') + ' will be closed.',
    );
  }

  async function start() {
    if (!confirmLoss(state.initialized ? 'Restart' : 'Start')) return;
    await busy('start', [$('start-btn'), $('pool-start-btn')], async () => {
      const r = await api('GET', '/system/start', { auth: true, timeoutMs: 90000 });
      if (!r.ok) return reportFailure('Start', r);
      notify('ok', text(r.body.message) || 'Browser started');
      choose(null);
      refreshStatus();
    });
  }

  $('start-btn').addEventListener('click', () => void start());
  $('pool-start-btn').addEventListener('click', () => void start());

  $('stop-btn').addEventListener('click', () => {
    if (!confirmLoss('Stop')) return;
    void busy('stop', [$('stop-btn')], async () => {
      const r = await api('GET', '/system/stop', { auth: true, timeoutMs: 60000 });
      if (!r.ok) return reportFailure('Stop', r);
      notify('ok', text(r.body.message) || 'Browser stopped');
      choose(null);
      refreshStatus();
    });
  });

  // ---------------------------------------------------------------- live view (noVNC)

  const LIVE_SRC = '/vnc/?embed=1';

  function setLiveStatus(message, cls) {
    const s = $('live-status');
    s.className = cls || 'muted';
    s.textContent = message;
  }

  /** Trades the key for the live view's session cookie, then shows the viewer beside the pool. */
  async function startLive() {
    if (!state.key) return;
    const r = await api('POST', '/vnc/session', { auth: true, timeoutMs: 10000 });
    if (!r.ok) {
      state.live.session = false;
      if (r.status === 401) setLiveStatus('The live view needs a valid API key.', 'error-text');
      else setLiveStatus(r.message, 'error-text');
      return;
    }
    state.live.session = true;
    const frame = $('live-frame');
    if (frame.getAttribute('src') !== LIVE_SRC) frame.setAttribute('src', LIVE_SRC);
    frame.hidden = false;
    renderLive();
    refreshStatus();
  }

  async function endLive() {
    const frame = $('live-frame');
    frame.hidden = true;
    frame.setAttribute('src', 'about:blank');
    if (state.live.session) await api('DELETE', '/vnc/session', { timeoutMs: 5000 });
    state.live.session = false;
    state.live.control = null;
    setLiveStatus('Enter the API key to watch the browser.');
    $('handback-btn').disabled = true;
  }

  function renderLive() {
    const c = state.live.control;
    const back = $('handback-btn');
    back.disabled = !(state.key && c && c.controlled);
    if (!state.live.session) return;
    if (c && c.controlled && c.by_you) {
      setLiveStatus(
        'You are in control of page ' +
          text(c.page_id) +
          ': API calls to it get 423 until you hand it back.',
        'controlled',
      );
    } else if (c && c.controlled) {
      setLiveStatus('Page ' + text(c.page_id) + ' is controlled by another viewer.', 'controlled');
    } else {
      setLiveStatus('Watching (read-only). "Take control" on a page lets you drive it.');
    }
  }

  function controlCell(id) {
    const c = state.live.control;
    if (c && c.controlled && c.page_id === id) {
      return el(
        'span',
        { className: 'badge leased' },
        c.by_you ? 'you are in control' : 'another viewer',
      );
    }
    const b = el(
      'button',
      { className: 'control-btn', attrs: { type: 'button', 'data-take': id } },
      'Take control',
    );
    let reason = '';
    if (!state.key) reason = 'Enter the API key first';
    else if (!state.live.session) reason = 'The live view is not available';
    else if (c && c.controlled && !c.by_you) reason = 'Another viewer is in control';
    b.disabled = Boolean(reason) || state.live.taking;
    if (reason) b.setAttribute('title', reason);
    b.addEventListener('click', (ev) => {
      ev.stopPropagation();
      void takeControl(id);
    });
    b.addEventListener('keydown', (ev) => ev.stopPropagation());
    return b;
  }

  async function takeControl(id) {
    if (state.live.taking) return;
    state.live.taking = true;
    try {
      const r = await api('POST', '/vnc/control', {
        auth: true,
        body: { page_id: id },
        timeoutMs: 45000,
      });
      if (!r.ok) return reportFailure('Take control of ' + id, r);
      state.live.control = r.body;
      notify('ok', 'You are in control of page ' + id + ': drive it in the live view.');
      $('live-frame').focus();
    } finally {
      state.live.taking = false;
      renderLive();
      refreshStatus();
    }
  }

  $('handback-btn').addEventListener('click', async () => {
    const r = await api('DELETE', '/vnc/control', { auth: true });
    if (!r.ok) return reportFailure('Hand back', r);
    notify(
      'ok',
      r.body.page_id ? 'Page ' + text(r.body.page_id) + ' handed back.' : 'Nothing to hand back.',
    );
    state.live.control = null;
    renderLive();
    refreshStatus();
  });

  // ---------------------------------------------------------------- identity (persona, version)

  async function showIdentity() {
    const r = await api('GET', '/system/ping', { timeoutMs: 15000 });
    if (!r.ok) return;
    const b = r.body;
    const parts = [b.persona ? 'persona ' + text(b.persona) : 'no persona'];
    if (b.commit && b.commit.hash) parts.push('commit ' + text(b.commit.hash).slice(0, 7));
    const identity = $('identity');
    identity.textContent = parts.join(' · ');
    if (b.commit && b.commit.subject) identity.setAttribute('title', text(b.commit.subject));
    if (b.persona) document.title = 'persona-browser · ' + text(b.persona);
  }

  // ---------------------------------------------------------------- start up

  renderKey();
  updateButtons();
  refreshStatus();
  void showIdentity();
  if (state.key) void verifyKey(false);
  if (state.key) void startLive();
})();
