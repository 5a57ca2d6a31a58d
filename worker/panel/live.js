// persona-browser control panel: the live view (noVNC at /vnc/) beside the pages, "Take
// control" per page and "Hand back". The key is traded once for the viewer's session cookie.
import { byId, el, text } from '/ui/dom.js';
import { api, notify, onKeyChange, refreshStatus, reportFailure, state } from './core.js';

/**
 * What GET /vnc/control answers: who controls which page.
 * @typedef {{ controlled: boolean, by_you?: boolean, page_id: string | null }} Control
 */

const LIVE_SRC = '/vnc/?embed=1';

const live = {
  /** A viewer session (cookie) exists. */
  session: false,
  /** @type {Control | null} the last GET /vnc/control */
  control: null,
  taking: false,
};

/** @param {string} message @param {string} [cls] */
function setLiveStatus(message, cls) {
  const s = byId('live-status');
  s.className = cls || 'muted';
  s.textContent = message;
}

/** Trades the key for the live view's session cookie, then shows the viewer beside the pool. */
async function startLive() {
  if (!state.key) return;
  const r = await api('POST', '/vnc/session', { auth: true, timeoutMs: 10000 });
  if (!r.ok) {
    live.session = false;
    if (r.status === 401) setLiveStatus('The live view needs a valid API key.', 'error-text');
    else setLiveStatus(r.message, 'error-text');
    return;
  }
  live.session = true;
  const frame = byId('live-frame', HTMLIFrameElement);
  if (frame.getAttribute('src') !== LIVE_SRC) frame.setAttribute('src', LIVE_SRC);
  frame.hidden = false;
  renderLive();
  refreshStatus();
}

async function endLive() {
  const frame = byId('live-frame', HTMLIFrameElement);
  frame.hidden = true;
  frame.setAttribute('src', 'about:blank');
  if (live.session) await api('DELETE', '/vnc/session', { timeoutMs: 5000 });
  live.session = false;
  live.control = null;
  setLiveStatus('Enter the API key to watch the browser.');
  byId('handback-btn', HTMLButtonElement).disabled = true;
}

/** Reads who controls which page (with the status); a lost session ends the watching. */
export async function readControl() {
  if (!state.key || !live.session) return;
  /** @type {import('/ui/http.js').Answer<Control>} */
  const r = await api('GET', '/vnc/control', { auth: true });
  if (r.ok) live.control = r.body;
  else if (r.status === 401) live.session = false;
}

export function renderLive() {
  const c = live.control;
  byId('handback-btn', HTMLButtonElement).disabled = !(state.key && c && c.controlled);
  if (!live.session) return;
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

/** @param {string} id @returns {HTMLElement} the page's cell in the "Live view" column */
export function controlCell(id) {
  const c = live.control;
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
  else if (!live.session) reason = 'The live view is not available';
  else if (c && c.controlled && !c.by_you) reason = 'Another viewer is in control';
  b.disabled = Boolean(reason) || live.taking;
  if (reason) b.setAttribute('title', reason);
  b.addEventListener('click', (ev) => {
    ev.stopPropagation();
    void takeControl(id);
  });
  b.addEventListener('keydown', (ev) => ev.stopPropagation());
  return b;
}

/** @param {string} id */
async function takeControl(id) {
  if (live.taking) return;
  live.taking = true;
  try {
    /** @type {import('/ui/http.js').Answer<Control>} */
    const r = await api('POST', '/vnc/control', {
      auth: true,
      body: { page_id: id },
      timeoutMs: 45000,
    });
    if (!r.ok) return reportFailure('Take control of ' + id, r);
    live.control = r.body;
    notify('ok', 'You are in control of page ' + id + ': drive it in the live view.');
    byId('live-frame').focus();
  } finally {
    live.taking = false;
    renderLive();
    refreshStatus();
  }
}

byId('handback-btn').addEventListener('click', () => void handBack());

async function handBack() {
  /** @type {import('/ui/http.js').Answer<{ page_id: string | null }>} */
  const r = await api('DELETE', '/vnc/control', { auth: true });
  if (!r.ok) return reportFailure('Hand back', r);
  notify(
    'ok',
    r.body.page_id ? 'Page ' + text(r.body.page_id) + ' handed back.' : 'Nothing to hand back.',
  );
  live.control = null;
  renderLive();
  refreshStatus();
}

onKeyChange((key) => void (key ? startLive() : endLive()));
