// persona-browser fleet panel: what its parts share. The service key and its card, the call to
// the waker with it, the banner when the waker cannot be reached or refuses the key, the
// message list, and polls that pause while the tab is hidden.
import { byId, el, text } from '/ui/dom.js';
import { noAnswer, request } from '/ui/http.js';
import { KEY_NAMES, keyCard, keyKeeper, keyStore } from '/ui/key-card.js';
import { notifier } from '/ui/messages.js';

/** @template [T=unknown] @typedef {import('/ui/http.js').Answer<T>} Answer */
/** @typedef {import('@persona-browser/contracts').PersonaInfo} PersonaInfo */
/** @typedef {import('@persona-browser/contracts').MetricsBody} MetricsBody */
/**
 * A node of the cluster as `GET /api/nodes` lists it.
 * @typedef {object} ClusterNode
 * @property {string} hostname
 * @property {boolean} ready the engine answers the manager's heartbeats
 * @property {boolean} active new tasks may start there (not drained or paused)
 * @property {number} memory_mb the node's memory
 * @property {string} message the engine's words for its state ("heartbeat failure")
 */

/** How often the persona list is read (the banner says it while the waker is away). */
export const PERSONAS_EVERY_MS = 3000;

const keeper = keyKeeper(keyStore(() => sessionStorage, KEY_NAMES.fleet));

export const state = {
  /** @returns {string | null} the service key in use */
  get key() {
    return keeper.current();
  },
  /** @type {PersonaInfo[] | null} the last persona list (null until read) */
  personas: null,
  /** @type {ClusterNode[]} the cluster's nodes (none on a single server) */
  nodes: [],
  /** @type {MetricsBody | null} the last metrics body */
  metrics: null,
  /** @type {Map<string, { hour: string, count: number }[]>} requests per hour, by persona */
  requests: new Map(),
  /** @type {Set<string>} "name/action" of the calls in flight */
  busy: new Set(),
};

export const notify = notifier(byId('messages'));

/** @param {unknown} s seconds @returns {string} `42 s`, `5 min`, `3 h 12 min`, `2 d 4 h` */
export function fmtDuration(s) {
  if (typeof s !== 'number' || !isFinite(s)) return '?';
  const t = Math.max(0, Math.round(s));
  if (t < 60) return t + ' s';
  if (t < 3600) return Math.floor(t / 60) + ' min';
  if (t < 86400) return Math.floor(t / 3600) + ' h ' + Math.floor((t % 3600) / 60) + ' min';
  return Math.floor(t / 86400) + ' d ' + Math.floor((t % 86400) / 3600) + ' h';
}

/** @param {unknown} iso an ISO 8601 time @returns {string | null} `5 min ago`, null if not a time */
export function ago(iso) {
  const ms = Date.parse(text(iso));
  if (!isFinite(ms)) return null;
  return fmtDuration((Date.now() - ms) / 1000) + ' ago';
}

/**
 * One call to the waker with the service key. A 401 takes the key away and says so; a waker
 * that cannot be reached gets the banner until it answers again.
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {number} [timeoutMs] 15 s when left out
 * @param {unknown} [body] sent as JSON when given
 * @returns {Promise<Answer<T>>}
 */
export async function api(method, path, timeoutMs, body) {
  if (!state.key) return noAnswer('No service key');
  /** @type {Record<string, string>} */
  const headers = { Authorization: 'Bearer ' + state.key };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  /** @type {Answer<T>} */
  const r = await request(
    path,
    { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) },
    { timeoutMs: timeoutMs ?? 15000, service: 'the waker' },
  );
  if (r.status === 401) keyRejected(r.message);
  else if (r.status === 0) setConn('unreachable', r.detail);
  else setConn('ok');
  return r;
}

// ---------------------------------------------------------------- connection banner

/**
 * @param {'ok' | 'unreachable' | 'unauthorized'} conn
 * @param {string} [detail]
 */
function setConn(conn, detail) {
  const banner = byId('conn-banner');
  if (conn === 'ok') {
    banner.hidden = true;
    banner.replaceChildren();
    return;
  }
  banner.hidden = false;
  banner.dataset.conn = conn;
  if (conn === 'unreachable') {
    banner.replaceChildren(
      el('strong', null, 'The waker cannot be reached'),
      ' at ' +
        location.origin +
        ' (' +
        text(detail) +
        '). Is it running? Retrying every ' +
        PERSONAS_EVERY_MS / 1000 +
        ' s.',
    );
  } else {
    banner.replaceChildren(
      el('strong', null, 'Wrong service key'),
      ': the waker answered 401 (' +
        text(detail) +
        '). Enter the SERVICE_KEY the waker was started with.',
    );
  }
}

/** @param {string} detail */
function keyRejected(detail) {
  setKey(null);
  setConn('unauthorized', detail);
  byId('key-input').focus();
}

// ---------------------------------------------------------------- service key

/** Calls `watch` with the key whenever it changes. */
export const onKeyChange = keeper.watch;

/** Uses this key from now on (null: none); what follows the key follows. */
export const setKey = keeper.set;

// Without a key, the persona list and the nodes read with the last one are gone.
onKeyChange((key) => {
  if (!key) {
    state.personas = null;
    state.nodes = [];
  }
});

onKeyChange(
  keyCard({
    heading: 'Service key',
    label: 'service key',
    save: 'Use key',
    keptWhere: 'Kept in this browser tab only (sessionStorage).',
    inUse: 'Service key in use for this tab.',
    onKey(key) {
      setKey(key);
      setConn('ok');
      refreshAll();
    },
    onProblem: (problem) => notify('error', problem),
    onForget() {
      setKey(null);
      notify('ok', 'Service key forgotten.');
    },
  }),
);

// ---------------------------------------------------------------- polling

/** @type {Array<() => Promise<void>>} */
const polls = [];

/**
 * Runs `work` now and then every `ms`, never two at once, paused while the tab is hidden.
 * @param {() => Promise<unknown>} work
 * @param {number} ms
 */
export function addPoll(work, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let running = false;
  const run = async () => {
    clearTimeout(timer);
    timer = undefined;
    if (running || document.hidden) return;
    running = true;
    try {
      await work();
    } finally {
      running = false;
      timer = setTimeout(() => void run(), ms);
    }
  };
  polls.push(run);
  return run;
}

/** Runs every poll now (a new key, the tab back in sight). */
export function refreshAll() {
  for (const run of polls) void run();
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refreshAll();
});
