// persona-browser control panel: the Browser card and the Pages table, read every
// STATUS_EVERY_MS (and after every action).
import { byId, el, text } from '/ui/dom.js';
import { api, setRefresher, state, updateButtons } from './core.js';
import { controlCell, readControl, renderLive } from './live.js';
import { choose } from './shots.js';

/** @typedef {import('@persona-browser/contracts').NavigatorStatus} NavigatorStatus */
/** @typedef {import('@persona-browser/contracts').PoolStatus} PoolStatus */
/** @typedef {import('@persona-browser/contracts').PageEntry} PageEntry */
/** @template [T=unknown] @typedef {import('/ui/http.js').Answer<T>} Answer */

const STATUS_EVERY_MS = 2000;

/** @param {unknown} s seconds @returns {string} `5 min 3 s`, `42 s` */
function fmtSeconds(s) {
  if (typeof s !== 'number' || !isFinite(s)) return '?';
  const total = Math.max(0, Math.ceil(s));
  if (total < 60) return total + ' s';
  const m = Math.floor(total / 60);
  const rest = total % 60;
  return rest ? m + ' min ' + rest + ' s' : m + ' min';
}

/** @param {Answer<NavigatorStatus>} r */
function renderNav(r) {
  const summary = byId('nav-summary');
  const details = byId('nav-details');
  const warnings = byId('nav-warnings');
  details.replaceChildren();
  const lines = r.ok && Array.isArray(r.body.warnings) ? r.body.warnings : [];
  warnings.replaceChildren(...lines.map((line) => el('li', null, line)));
  warnings.hidden = lines.length === 0;
  if (!r.ok) {
    state.initialized = null;
    summary.className = 'summary bad';
    summary.textContent = 'Cannot read the browser status: ' + r.message;
    return;
  }
  const s = r.body;
  state.initialized = Boolean(s.initialized);
  summary.className = s.initialized ? 'summary good' : 'summary bad';
  summary.textContent = s.initialized ? 'Running' : 'Stopped: the browser is not running';
  /** @param {boolean} v */
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
  for (const [k, v] of rows) {
    details.append(el('div', null, el('dt', null, k), el('dd', null, v)));
  }
}

/**
 * @param {Answer<PoolStatus>} r
 * @param {number} startedAt performance.now() when the read began
 */
function renderPool(r, startedAt) {
  const body = byId('pool-body');
  const down = byId('pool-down');
  const summary = byId('pool-summary');
  // Rows are rebuilt on every refresh: keep keyboard focus on the same page's row.
  const focusedRow = document.activeElement?.closest('#pool-body tr');
  const refocus = focusedRow instanceof HTMLElement ? focusedRow.dataset.pageId : undefined;

  if (!r.ok) {
    body.replaceChildren();
    byId('pool-empty').hidden = true;
    state.pageIds = null;
    state.pageCount = 0;
    if (r.status === 500) {
      down.hidden = false;
      byId('pool-down-detail').textContent = 'Server says: ' + r.message + '.';
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

  const rows = pages.map(pageRow);
  body.replaceChildren(...rows);
  byId('pool-empty').hidden = pages.length > 0;
  if (refocus !== undefined) rows.find((tr) => tr.dataset.pageId === refocus)?.focus();
  if (state.chosen && startedAt > state.chosenAt && !state.pageIds.includes(state.chosen)) {
    choose(null, 'it no longer exists');
  }
}

/** @param {PageEntry} p */
function pageRow(p) {
  const id = text(p.page_id);
  const st = text(p.state);
  /** @type {HTMLElement} */
  let stateCell = el('span', { className: 'badge state-' + st.replace(/[^a-z]/g, '') }, st);
  if (p.current_operation) {
    const dur =
      typeof p.operation_duration === 'number' ? ' ' + p.operation_duration.toFixed(1) + ' s' : '';
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

/** @type {ReturnType<typeof setTimeout> | undefined} */
let statusTimer;
let statusRunning = false;
let statusAgain = false;

/** Reads status and pool now (or right after the read in flight), then every STATUS_EVERY_MS. */
function refreshStatus() {
  if (statusRunning) {
    statusAgain = true;
    return;
  }
  clearTimeout(statusTimer);
  statusTimer = undefined;
  if (document.hidden) return; // resumed by visibilitychange
  statusRunning = true;
  const startedAt = performance.now();
  void Promise.all([
    api('GET', '/system/status'),
    api('GET', '/system/status/pages'),
    readControl(),
  ])
    .then(([nav, pool]) => {
      renderLive();
      renderNav(/** @type {Answer<NavigatorStatus>} */ (nav));
      renderPool(/** @type {Answer<PoolStatus>} */ (pool), startedAt);
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

setRefresher(refreshStatus);
