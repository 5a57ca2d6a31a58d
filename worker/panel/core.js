// persona-browser control panel: what its parts share. The key in use, the page chosen, the
// message list, the API call with the key, and the buttons that need either. Plain ES module,
// no build step; strings from the API reach the DOM as text only.
import { byId } from '/ui/dom.js';
import { noAnswer, request } from '/ui/http.js';
import { KEY_NAMES, KEY_TOPIC, keyKeeper, keyStore } from '/ui/key-card.js';
import { notifier } from '/ui/messages.js';

/** @template [T=unknown] @typedef {import('/ui/http.js').Answer<T>} Answer */

const API = '/api/v1';

const keeper = keyKeeper(keyStore(() => localStorage, KEY_NAMES.worker));

/** @typedef {'start' | 'stop' | 'create' | 'destroy' | 'navigate'} Action */

export const state = {
  /** @returns {string | null} the key in use */
  get key() {
    return keeper.current();
  },
  /** @type {string | null} the chosen page id */
  chosen: null,
  /** performance.now() when the page was chosen: older pool snapshots cannot un-choose it. */
  chosenAt: 0,
  /** @type {string[] | null} page ids of the last pool snapshot (null: it could not be read) */
  pageIds: null,
  pageCount: 0,
  /** @type {boolean | null} */
  initialized: null,
  /** @type {Record<Action, boolean>} */
  busy: { start: false, stop: false, create: false, destroy: false, navigate: false },
};

export const notify = notifier(byId('messages'));

/**
 * @typedef {object} ApiOptions
 * @property {boolean} [auth] send the key (refused at once without one)
 * @property {unknown} [body] sent as JSON
 * @property {number} [timeoutMs] 15 s when left out
 */

/**
 * One call to the worker: `path` under /api/v1, or a live view route (/vnc/…) beside it.
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {ApiOptions} [opts]
 * @returns {Promise<Answer<T>>}
 */
export async function api(method, path, opts) {
  const o = opts ?? {};
  /** @type {Record<string, string>} */
  const headers = {};
  if (o.auth) {
    if (!state.key) return noAnswer('Enter the API key first');
    headers.Authorization = 'Bearer ' + state.key;
  }
  /** @type {RequestInit} */
  const init = { method, headers };
  if (o.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(o.body);
  }
  const url = path.startsWith('/vnc/') ? path : API + path;
  return request(url, init, { timeoutMs: o.timeoutMs ?? 15000, service: 'the worker' });
}

// ---------------------------------------------------------------- the key and what follows it

/** Calls `watch` with the key whenever it changes (the card, live view, screenshots). */
export const onKeyChange = keeper.watch;

/** Uses this key from now on (null: none); what follows the key follows. */
export const setKey = keeper.set;

// The buttons that need a key follow it too.
onKeyChange(() => updateButtons());

/**
 * Reports a failed call; a 401 also forgets the key so the user is asked again. What a wrong
 * key caused is a key message: it goes once a key works.
 * @param {string} action
 * @param {Answer} r
 */
export function reportFailure(action, r) {
  const topic = r.status === 401 ? KEY_TOPIC : undefined;
  notify('error', action + ' failed: ' + r.message, topic);
  if (r.status === 401) {
    setKey(null);
    notify('error', 'The saved API key was rejected and forgotten: enter the right key.', topic);
  }
}

// ---------------------------------------------------------------- reading the status again

let refresher = () => {};

/** The status part registers how to read the status and the pool again. */
export function setRefresher(/** @type {() => void} */ fn) {
  refresher = fn;
}

/** Reads the status and the pool now (after an action), whoever asks. */
export const refreshStatus = () => refresher();

// ---------------------------------------------------------------- buttons

/** Which label a button shows, idle and busy. */
const LABELS = /** @type {const} */ ({
  'stop-btn': ['Stop', 'Stopping…', 'stop'],
  'nav-btn': ['Navigate', 'Navigating…', 'navigate'],
  'create-btn': ['Create page', 'Creating…', 'create'],
  'destroy-btn': ['Destroy page', 'Destroying…', 'destroy'],
});

/** Turns off what needs a key (and a chosen page) while there is none, and names busy buttons. */
export function updateButtons() {
  for (const b of document.querySelectorAll('button[data-auth]')) {
    if (!(b instanceof HTMLButtonElement)) continue;
    const needsPage = b.hasAttribute('data-page');
    let reason = '';
    if (!state.key) reason = 'Enter the API key first';
    else if (needsPage && !state.chosen) reason = 'Choose a page first';
    b.disabled = Boolean(reason) || b.dataset.busy === '1';
    if (reason) b.setAttribute('title', reason);
    else b.removeAttribute('title');
  }
  byId('start-btn').textContent = state.busy.start
    ? 'Starting…'
    : state.initialized
      ? 'Restart'
      : 'Start';
  for (const [id, [idle, working, action]] of Object.entries(LABELS)) {
    byId(id).textContent = state.busy[action] ? working : idle;
  }
}

/**
 * Runs `work` with the action's buttons marked busy (no double submits).
 * @param {Action} name
 * @param {HTMLElement[]} buttons
 * @param {() => Promise<unknown>} work
 */
export async function busy(name, buttons, work) {
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
