// persona-browser live view: noVNC (from the worker's node_modules) against the worker's own
// WebSocket bridge. The service key is taken from the URL fragment (never sent to the server),
// from the control panel's saved key, or typed in; it is exchanged once for an HttpOnly session
// cookie and then forgotten by this page. Watching is read-only; the server enforces it.
import RFB from '/vnc/novnc/core/rfb.js';

const KEY_STORAGE = 'persona-browser.api-key';
const CONTROL_EVERY_MS = 2000;
const PAGES_EVERY_MS = 4000;
const RECONNECT_MS = 2000;

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const embed = params.get('embed') === '1';
if (embed) document.body.classList.add('embed');

const state = {
  rfb: null,
  connected: false,
  /** Last GET /vnc/control answer. */
  control: null,
  reconnectTimer: null,
};

// ------------------------------------------------------------------ key out of the address bar

/** Takes `key` out of the fragment (and out of a query, where it should never have been). */
function takeKeyFromUrl() {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ''));
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

function setStatus(kind, text) {
  const s = $('status');
  s.dataset.state = kind;
  s.textContent = text;
}

function message(text, kind) {
  const m = $('message');
  m.textContent = text || '';
  m.className = 'message' + (kind === 'info' ? ' info' : '');
  m.hidden = !text;
}

async function call(method, path, opts) {
  const o = opts || {};
  const headers = {};
  if (o.key) headers.Authorization = 'Bearer ' + o.key;
  if (o.body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const res = await fetch(path, {
      method,
      headers,
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
    let body = null;
    try {
      body = await res.json();
    } catch {
      // not JSON
    }
    const error = body && (body.error || body.detail);
    return { ok: res.ok, status: res.status, body, error: error || 'HTTP ' + res.status };
  } catch (err) {
    return { ok: false, status: 0, body: null, error: 'Cannot reach the worker: ' + err.message };
  }
}

// ------------------------------------------------------------------ session

function storedKey() {
  try {
    return localStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

async function openSession(key) {
  const r = await call('POST', '/vnc/session', { key });
  if (!r.ok) {
    message(r.status === 401 ? 'That key was refused: ' + r.error : r.error);
    return false;
  }
  return true;
}

/** A valid session cookie, from the fragment's key, an existing cookie or the panel's key. */
async function ensureSession(fragmentKey) {
  if (fragmentKey && (await openSession(fragmentKey))) return true;
  const existing = await call('GET', '/vnc/session');
  if (existing.ok) return true;
  if (existing.status === 503 || existing.status === 0) {
    message(existing.error);
    return false;
  }
  const saved = storedKey();
  if (saved && (await openSession(saved))) return true;
  askForKey();
  return false;
}

function askForKey() {
  setStatus('error', 'Not connected');
  $('key-form').hidden = false;
  $('key-input').focus();
}

$('key-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const key = $('key-input').value.trim();
  $('key-input').value = '';
  if (!key) return;
  if (await openSession(key)) {
    $('key-form').hidden = true;
    message('');
    void begin();
  }
});

// ------------------------------------------------------------------ the VNC connection

function wsUrl() {
  return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/vnc/websockify';
}

function connect() {
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = null;
  if (state.rfb) return;
  setStatus('connecting', 'Connecting…');
  let rfb;
  try {
    rfb = new RFB($('screen'), wsUrl(), { shared: true });
  } catch (err) {
    setStatus('error', 'Cannot open the live view: ' + err.message);
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
    setStatus('connecting', 'Disconnected: reconnecting…');
    state.reconnectTimer = setTimeout(reconnect, RECONNECT_MS);
  });
  rfb.addEventListener('securityfailure', (e) => {
    message('VNC security failure: ' + ((e.detail && e.detail.reason) || 'unknown'));
  });
  state.rfb = rfb;
}

async function reconnect() {
  // A refused WebSocket looks like any other close: ask whether the session still stands.
  const r = await call('GET', '/vnc/session');
  if (r.ok) return connect();
  if (r.status === 401) {
    const saved = storedKey();
    if (saved && (await openSession(saved))) return connect();
    state.control = null;
    renderControl();
    return askForKey();
  }
  setStatus('error', r.error);
  state.reconnectTimer = setTimeout(reconnect, RECONNECT_MS * 2);
}

// ------------------------------------------------------------------ control

function inControl() {
  const c = state.control;
  return Boolean(c && c.controlled && c.by_you);
}

function renderControl() {
  const c = state.control;
  const mode = $('mode');
  if (c && c.controlled && c.by_you) {
    mode.dataset.mode = 'control';
    mode.textContent = 'You are in control of ' + c.page_id;
  } else if (c && c.controlled) {
    mode.dataset.mode = 'other';
    mode.textContent = 'View only · another viewer controls ' + c.page_id;
  } else {
    mode.dataset.mode = 'view';
    mode.textContent = 'View only';
  }
  if (state.rfb) state.rfb.viewOnly = !inControl();
  $('handback-btn').hidden = !(c && c.controlled);
  $('take-btn').disabled = !$('page-select').value;
}

async function refreshControl() {
  const r = await call('GET', '/vnc/control');
  if (r.ok) state.control = r.body;
  else if (r.status === 401) state.control = null;
  renderControl();
}

async function refreshPages() {
  if (embed) return;
  const r = await call('GET', '/api/v1/system/status/pages');
  const select = $('page-select');
  const pages = r.ok && Array.isArray(r.body.pages) ? r.body.pages : [];
  const chosen = select.value;
  const options = pages.map((p) => {
    const o = document.createElement('option');
    o.value = String(p.page_id);
    o.textContent = String(p.page_id) + (p.title ? ' · ' + String(p.title).slice(0, 40) : '');
    return o;
  });
  select.replaceChildren(...options);
  if (pages.some((p) => String(p.page_id) === chosen)) select.value = chosen;
  renderControl();
}

$('take-btn').addEventListener('click', async () => {
  const id = $('page-select').value;
  if (!id) return;
  $('take-btn').disabled = true;
  const r = await call('POST', '/vnc/control', { body: { page_id: id } });
  if (!r.ok) message('Take control of ' + id + ' failed: ' + r.error);
  else message('');
  await refreshControl();
  if (inControl() && state.rfb) state.rfb.focus();
});

$('handback-btn').addEventListener('click', async () => {
  const r = await call('DELETE', '/vnc/control');
  if (!r.ok) message('Hand back failed: ' + r.error);
  await refreshControl();
});

// ------------------------------------------------------------------ start

let begun = false;

/** With a session: connect, and keep the control state and the page list fresh. */
async function begin() {
  await refreshControl();
  connect();
  if (begun) return;
  begun = true;
  void refreshPages();
  setInterval(() => void refreshControl(), CONTROL_EVERY_MS);
  setInterval(() => void refreshPages(), PAGES_EVERY_MS);
}

async function start() {
  const key = takeKeyFromUrl();
  if (await ensureSession(key)) await begin();
}

void start();
