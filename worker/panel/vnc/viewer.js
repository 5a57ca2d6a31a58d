// persona-browser live view: noVNC (from the worker's node_modules) against the worker's own
// WebSocket bridge. The service key or a token is taken from the URL fragment (never sent to the
// server), from the control panel's saved key, or typed in; it is exchanged once for an HttpOnly
// session cookie and then forgotten by this page. Watching is read-only; the server enforces it.
// A link made for a person (`/vnc/#token=…` from ask-person) opens a session limited to one
// page: the viewer takes control of that page at once and offers to hand it back.
import RFB from '/vnc/novnc/core/rfb.js';
import { byId, el, text } from '/ui/dom.js';
import { KEY_NAMES, keyStore } from '/ui/key-card.js';
import { call, passing } from './worker-call.js';

/**
 * What GET /vnc/control answers: who controls which page.
 * @typedef {{ controlled: boolean, by_you?: boolean, page_id: string | null }} Control
 */

/**
 * What POST and GET /vnc/session answer: the page the session is limited to, and what is asked.
 * @typedef {{ page_limit?: string | null, asked?: string | null }} Session
 */

const CONTROL_EVERY_MS = 2000;
const PAGES_EVERY_MS = 4000;
const RECONNECT_MS = 2000;

const params = new URLSearchParams(location.search);
const embed = params.get('embed') === '1';
if (embed) document.body.classList.add('embed');

/** The control panel's saved key, when this browser has one. */
const panelKey = keyStore(() => localStorage, KEY_NAMES.worker);

const state = {
  /** @type {RFB | null} */
  rfb: null,
  connected: false,
  /** @type {Control | null} the last GET /vnc/control answer */
  control: null,
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  reconnectTimer: undefined,
  /** @type {string | null} the one page this session may drive (a link for a person) */
  limit: null,
  /** The page was opened with a token from its address: its end is the link's end. */
  viaLink: false,
  /** The link's session has ended: nothing more to do here. */
  ended: false,
  /**
   * The key the address gave (#key=…), kept in memory only: a session it opened ends with its
   * worker (the persona slept and woke), and the key opens the next one, as the panel's saved
   * key does. A link's token is not reused: its session's end is the link's end.
   * @type {string | null}
   */
  fragmentKey: null,
};

// ------------------------------------------------------------------ key out of the address bar

/** Takes `key` out of the fragment (and out of a query, where it should never have been). */
function takeKeyFromUrl() {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
  state.viaLink = Boolean(fragment.get('token'));
  const key = fragment.get('key') || fragment.get('token');
  const query = new URLSearchParams(location.search);
  const leaked = query.get('key') || query.get('token');
  if (location.hash || leaked) {
    query.delete('key');
    query.delete('token');
    const q = query.toString();
    history.replaceState(null, '', location.pathname + (q ? '?' + q : ''));
  }
  if (leaked && !key) {
    message(
      'The key was put in the address as ?key=…, which the server may have received: use ' +
        '/vnc/#key=… instead (the part after # never leaves this browser).',
    );
  }
  return key || null;
}

// ------------------------------------------------------------------ small UI helpers

/** @param {'connecting' | 'connected' | 'error'} kind @param {string} said */
function setStatus(kind, said) {
  const s = byId('status');
  s.dataset.state = kind;
  s.textContent = said;
}

/** @param {string} said what to tell the person ('' takes the message away) */
function message(said) {
  const m = byId('message');
  m.textContent = said;
  m.hidden = !said;
}

// ------------------------------------------------------------------ session

/** @param {Session} s the session's answer: its page limit and what is asked there */
function noteSession(s) {
  state.limit = typeof s.page_limit === 'string' ? s.page_limit : null;
  document.body.classList.toggle('limited', state.limit !== null);
  const ask = byId('ask');
  if (state.limit === null) {
    ask.hidden = true;
    return;
  }
  const said = s.asked ? text(s.asked) : '';
  const asked = said ? 'Asked of you: ' + said + (/[.!?]$/.test(said) ? ' ' : '. ') : '';
  ask.textContent =
    asked + 'This link lets you drive page ' + state.limit + '; press "Hand back" when done.';
  ask.hidden = false;
}

/**
 * @param {string} key
 * @returns {Promise<'open' | 'retry' | 'refused'>} the key opened a session, the worker did not
 *   answer (ask again later), or the key was refused
 */
async function openSession(key) {
  /** @type {import('/ui/http.js').Answer<Session>} */
  const r = await call('POST', '/vnc/session', { key });
  if (!r.ok) {
    const refused = state.viaLink ? 'This link was refused: ' : 'That key was refused: ';
    message(r.status === 401 || r.status === 403 ? refused + r.message : r.message);
    return passing(r) ? 'retry' : 'refused';
  }
  noteSession(r.body);
  return 'open';
}

/**
 * A valid session cookie, from the fragment's key, an existing cookie or the panel's key; or
 * 'retry' when the worker did not answer, or 'asked' when the person is asked for the key.
 * @param {string | null} fragmentKey
 * @returns {Promise<'open' | 'retry' | 'asked'>}
 */
async function ensureSession(fragmentKey) {
  if (fragmentKey) {
    const opened = await openSession(fragmentKey);
    if (opened !== 'refused') return opened;
  }
  /** @type {import('/ui/http.js').Answer<Session>} */
  const existing = await call('GET', '/vnc/session');
  if (existing.ok) {
    noteSession(existing.body);
    return 'open';
  }
  if (passing(existing)) {
    message(existing.message);
    return 'retry';
  }
  const saved = panelKey.read();
  if (saved) {
    const opened = await openSession(saved);
    if (opened !== 'refused') return opened;
  }
  askForKey();
  return 'asked';
}

const keyForm = byId('key-form', HTMLFormElement);
const keyInput = byId('key-input', HTMLInputElement);

function askForKey() {
  setStatus('error', 'Not connected');
  keyForm.hidden = false;
  keyInput.focus();
}

keyForm.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const key = keyInput.value.trim();
  keyInput.value = '';
  if (key) void useTypedKey(key);
});

/** @param {string} key */
async function useTypedKey(key) {
  if ((await openSession(key)) !== 'open') return;
  keyForm.hidden = true;
  message('');
  void begin();
}

// ------------------------------------------------------------------ the VNC connection

function wsUrl() {
  return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/vnc/websockify';
}

function connect() {
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = undefined;
  if (state.rfb) return;
  setStatus('connecting', 'Connecting…');
  /** @type {RFB} */
  let rfb;
  try {
    rfb = new RFB(byId('screen'), wsUrl(), { shared: true });
  } catch (err) {
    setStatus(
      'error',
      'Cannot open the live view: ' + text(err instanceof Error ? err.message : err),
    );
    return;
  }
  rfb.scaleViewport = true;
  rfb.resizeSession = false;
  rfb.clipViewport = false;
  rfb.focusOnClick = true;
  rfb.background = '#1d1f21';
  rfb.viewOnly = !inControl();
  rfb.addEventListener('connect', () => {
    state.connected = true;
    setStatus('connected', 'Live');
    message('');
    void refreshControl();
  });
  rfb.addEventListener('desktopname', (e) => {
    if (!embed && e.detail && e.detail.name) document.title = 'Live · ' + e.detail.name;
  });
  rfb.addEventListener('disconnect', () => {
    state.rfb = null;
    state.connected = false;
    if (state.ended) return;
    setStatus('connecting', 'Disconnected: reconnecting…');
    state.reconnectTimer = setTimeout(() => void reconnect(), RECONNECT_MS);
  });
  rfb.addEventListener('securityfailure', (e) => {
    message('VNC security failure: ' + (e.detail?.reason || 'unknown'));
  });
  state.rfb = rfb;
}

async function reconnect() {
  if (state.ended) return;
  // A refused WebSocket looks like any other close: ask whether the session still stands.
  const r = await call('GET', '/vnc/session');
  if (r.ok) return connect();
  if (r.status === 401 && state.viaLink) return linkEnded();
  if (r.status === 401) {
    const saved = state.fragmentKey || panelKey.read();
    if (saved && (await openSession(saved)) === 'open') return connect();
    state.control = null;
    renderControl();
    return askForKey();
  }
  setStatus('error', r.message);
  state.reconnectTimer = setTimeout(() => void reconnect(), RECONNECT_MS * 2);
}

/** The link's session is over (handed back, expired or revoked): say so, and stop. */
function linkEnded() {
  state.ended = true;
  clearTimeout(state.reconnectTimer);
  state.control = null;
  renderControl();
  byId('ask').hidden = true;
  setStatus('error', 'Link ended');
  message(
    'This live-view link has ended (the page was handed back, or the link expired or was ' +
      'revoked). You can close this tab.',
  );
  state.rfb?.disconnect();
}

// ------------------------------------------------------------------ control

function inControl() {
  const c = state.control;
  return Boolean(c && c.controlled && c.by_you);
}

function renderControl() {
  const c = state.control;
  const mode = byId('mode');
  if (c && c.controlled && c.by_you) {
    mode.dataset.mode = 'control';
    mode.textContent = 'You are in control of ' + text(c.page_id);
  } else if (c && c.controlled) {
    mode.dataset.mode = 'other';
    mode.textContent = 'View only · another viewer controls ' + text(c.page_id);
  } else {
    mode.dataset.mode = 'view';
    mode.textContent = 'View only';
  }
  if (state.rfb) state.rfb.viewOnly = !inControl();
  const take = byId('take-btn', HTMLButtonElement);
  const handBack = byId('handback-btn', HTMLButtonElement);
  if (state.limit !== null) {
    // One page only: no choice of page; its own take-over and hand-back, said plainly.
    take.textContent = 'Take control of ' + state.limit;
    take.hidden = state.ended || inControl();
    take.disabled = false;
    handBack.textContent = 'Hand back ' + state.limit;
    handBack.hidden = state.ended || !inControl();
    return;
  }
  handBack.hidden = !(c && c.controlled);
  take.disabled = !pageSelect.value;
}

async function refreshControl() {
  if (state.ended) return;
  /** @type {import('/ui/http.js').Answer<Control>} */
  const r = await call('GET', '/vnc/control');
  if (r.ok) state.control = r.body;
  else if (r.status === 401 && state.viaLink) return linkEnded();
  else if (r.status === 401) state.control = null;
  renderControl();
}

const pageSelect = byId('page-select', HTMLSelectElement);

async function refreshPages() {
  if (embed || state.limit !== null) return;
  /** @type {import('/ui/http.js').Answer<import('@persona-browser/contracts').PoolStatus>} */
  const r = await call('GET', '/api/v1/system/status/pages');
  const pages = r.ok && Array.isArray(r.body.pages) ? r.body.pages : [];
  const chosen = pageSelect.value;
  const options = pages.map((p) => {
    const id = text(p.page_id);
    const title = p.title ? ' · ' + text(p.title).slice(0, 40) : '';
    return el('option', { attrs: { value: id } }, id + title);
  });
  pageSelect.replaceChildren(...options);
  if (pages.some((p) => text(p.page_id) === chosen)) pageSelect.value = chosen;
  renderControl();
}

byId('take-btn').addEventListener('click', () => void takeControl());

async function takeControl() {
  const id = state.limit ?? pageSelect.value;
  if (!id) return;
  byId('take-btn', HTMLButtonElement).disabled = true;
  const r = await call('POST', '/vnc/control', { body: { page_id: id } });
  message(r.ok ? '' : 'Take control of ' + id + ' failed: ' + r.message);
  await refreshControl();
  if (inControl() && state.rfb) state.rfb.focus();
}

byId('handback-btn').addEventListener('click', () => void handBack());

async function handBack() {
  const r = await call('DELETE', '/vnc/control');
  if (!r.ok) message('Hand back failed: ' + r.message);
  else if (state.limit !== null) message('Handed back. Thank you.');
  await refreshControl();
}

/**
 * A session limited to one page takes it over at once; while another viewer holds the screen
 * (423), it says so and tries again.
 */
async function takeLimitedPage() {
  const id = state.limit;
  if (id === null || state.ended) return;
  const r = await call('POST', '/vnc/control', { body: { page_id: id } });
  if (r.ok) {
    message('');
    await refreshControl();
    if (inControl() && state.rfb) state.rfb.focus();
    return;
  }
  if (r.status === 401 && state.viaLink) return linkEnded();
  message('Taking control of ' + id + ' failed: ' + r.message);
  if (r.status === 423) setTimeout(() => void takeLimitedPage(), CONTROL_EVERY_MS);
}

// ------------------------------------------------------------------ start

let begun = false;

/** With a session: connect, and keep the control state and the page list fresh. */
async function begin() {
  await refreshControl();
  if (state.limit !== null && !inControl()) await takeLimitedPage();
  connect();
  if (begun) return;
  begun = true;
  void refreshPages();
  setInterval(() => void refreshControl(), CONTROL_EVERY_MS);
  setInterval(() => void refreshPages(), PAGES_EVERY_MS);
}

/** Opens the session and begins; while the worker does not answer, asks again. */
async function openView(/** @type {string | null} */ key) {
  const opened = await ensureSession(key);
  if (opened === 'open') return begin();
  if (opened === 'retry') {
    setStatus('connecting', 'Waiting for the browser…');
    state.reconnectTimer = setTimeout(() => void openView(key), RECONNECT_MS * 2);
  }
}

async function start() {
  const key = takeKeyFromUrl();
  if (!state.viaLink) state.fragmentKey = key;
  await openView(key);
}

void start();
