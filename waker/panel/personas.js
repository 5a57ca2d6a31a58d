// persona-browser fleet panel: the Personas table, one row per persona kept and updated in
// place, with its links and its wake, sleep and restart buttons.
//
// Stable hooks for tests and scripts: each persona row is `tr[data-persona="<name>"]` with
// `data-state`; its buttons are `button[data-action="wake|sleep|restart"][data-persona]`; its
// links are `a[data-link="panel|live"]`; its node cell (clusters only, cluster.js) is
// `[data-field="node"]`; its proxy cell is `[data-field="proxy"]`, with
// `[data-field="proxy-failing"]` ("proxy failing") while the worker's proxy errors grow.
import { byId, el, localTime, text } from '/ui/dom.js';
import { ago, api, notify, state } from './core.js';
import { nodeCell, showNodeColumn, updateNodeCell } from './cluster.js';
import { siteCheckParts, updateSiteChecks } from './site-checks.js';
import { personaBase, shareButton } from './live-links.js';

/** @typedef {import('@persona-browser/contracts').PersonaInfo} PersonaInfo */
/** @typedef {import('@persona-browser/contracts').ProxyStatus} ProxyStatus */
/** @typedef {{ action: 'wake' | 'sleep' | 'restart', label: string, busy: string, cls: string }} Action */
/**
 * @typedef {object} Row
 * @property {HTMLTableRowElement} tr
 * @property {Record<'name' | 'node' | 'state' | 'port' | 'proxy' | 'commit' | 'last' | 'usage' | 'links' | 'actions', HTMLTableCellElement>} cells
 * @property {Record<string, HTMLButtonElement>} buttons
 * @property {HTMLElement} siteChecks its site checks' buttons and outcomes (site-checks.js)
 */

/** @type {Action[]} */
const ACTIONS = [
  { action: 'wake', label: 'Wake', busy: 'Waking…', cls: '' },
  { action: 'sleep', label: 'Sleep', busy: 'Sleeping…', cls: 'secondary' },
  { action: 'restart', label: 'Restart', busy: 'Restarting…', cls: 'danger' },
];

/** Whatever reads the persona list again wants to know when the names change. */
/** @type {() => void} */
let namesChanged = () => {};
export const onNamesChange = (/** @type {() => void} */ fn) => {
  namesChanged = fn;
};

/** Whatever counts the personas (the Nodes card) redraws when they are drawn. */
/** @type {() => void} */
let personasShown = () => {};
export const onPersonasShown = (/** @type {() => void} */ fn) => {
  personasShown = fn;
};

/** @type {Map<string, Row>} rows are kept and updated in place, never rebuilt */
const rows = new Map();

/** Shows the persona list last read (or why there is none). */
export function renderPersonas() {
  showNodeColumn();
  const body = byId('personas-body');
  const list = state.personas;
  const empty = byId('personas-empty');
  if (!list) {
    body.replaceChildren();
    rows.clear();
    empty.hidden = false;
    empty.textContent = state.key
      ? 'Loading the personas…'
      : 'Enter the service key to see the personas.';
    byId('personas-summary').textContent = '';
    byId('fleet-summary').textContent = '';
    personasShown();
    return;
  }
  empty.hidden = list.length > 0;
  empty.textContent = 'The waker has no personas: add a folder with a persona.env.';
  // A row that is replaced under the pointer would swallow a click (and lose focus): rows
  // stay, and only the cells whose content changed are redrawn.
  const names = list.map((p) => text(p.name));
  for (const [name, row] of rows) {
    if (!names.includes(name)) {
      row.tr.remove();
      rows.delete(name);
    }
  }
  list.forEach((p, i) => {
    const name = text(p.name);
    let row = rows.get(name);
    if (!row) {
      row = createRow(name);
      rows.set(name, row);
    }
    updateRow(row, p);
    if (body.children[i] !== row.tr) body.insertBefore(row.tr, body.children[i] || null);
  });
  /** @type {Record<string, number>} */
  const counts = {};
  for (const p of list) counts[p.state] = (counts[p.state] ?? 0) + 1;
  const summary =
    list.length +
    (list.length === 1 ? ' persona' : ' personas') +
    (list.length
      ? ' · ' +
        Object.entries(counts)
          .map(([k, n]) => n + ' ' + k)
          .join(', ')
      : '');
  byId('personas-summary').textContent = summary;
  byId('fleet-summary').textContent = summary;
  personasShown();
}

/** @param {string} name @returns {Row} */
function createRow(name) {
  const cells = {
    name: el('td', { className: 'name-cell' }, name),
    node: nodeCell(),
    state: el('td', { className: 'state-cell' }),
    port: el('td', { className: 'num' }),
    proxy: el('td', { className: 'proxy-cell', data: { field: 'proxy' } }),
    commit: el('td'),
    last: el('td'),
    usage: el('td', { className: 'num usage-cell', data: { field: 'usage' } }),
    links: el('td', { className: 'links-cell' }),
    actions: el('td', { className: 'actions-cell' }),
  };
  /** @type {Record<string, HTMLButtonElement>} */
  const buttons = {};
  for (const a of ACTIONS) {
    const b = el(
      'button',
      {
        className: a.cls,
        attrs: { type: 'button', 'aria-label': a.label + ' ' + name },
        data: { action: a.action, persona: name },
      },
      a.label,
    );
    b.addEventListener('click', () => void act(name, a));
    buttons[a.action] = b;
    cells.actions.append(b);
  }
  const siteChecks = siteCheckParts(name);
  cells.actions.append(siteChecks);
  const share = shareButton(
    name,
    () => Number(state.personas?.find((p) => p.name === name)?.port),
    cells.actions,
  );
  buttons.share = share;
  cells.actions.append(share);
  const tr = el('tr', { data: { persona: name } }, ...Object.values(cells));
  return { tr, cells, buttons, siteChecks };
}

/**
 * Replaces a cell's content only when it would look different.
 * @param {HTMLElement} cell
 * @param {string} key what the content shows, as a string
 * @param {() => (Node | string)[]} build
 */
function setCell(cell, key, build) {
  if (cell.dataset.sig === key) return;
  cell.dataset.sig = key;
  cell.replaceChildren(...build());
}

/** What each depth of sleep means, on hover. @type {Record<string, string>} */
const DEPTH_TITLES = {
  paused: 'Paused: its worker is frozen with its memory; a call wakes it in milliseconds',
  light: 'Light sleep: its worker stays, its browser is closed; a call wakes it in about a second',
  deep: 'Deep sleep: nothing runs; a call starts its worker',
};

/** @param {Row} row @param {PersonaInfo} p */
function updateRow(row, p) {
  const st = text(p.state);
  const c = row.cells;
  row.tr.dataset.state = st;
  updateNodeCell(c.node, p);
  const since = 'for ' + (ago(p.since) || '?').replace(/ ago$/, '');
  const retry = p.retry_at ? 'next try at ' + localTime(p.retry_at) : '';
  const depth = p.depth ? text(p.depth) : '';
  row.tr.dataset.depth = depth;
  setCell(c.state, [st, depth, since, p.mode, p.error, retry].join('\u0000'), () => [
    el('span', { className: 'badge state-' + st.replace(/[^a-z]/g, '') }, st),
    ' ',
    depth
      ? el(
          'span',
          { className: 'muted', data: { field: 'depth' }, title: DEPTH_TITLES[depth] },
          depth,
        )
      : '',
    depth ? ' ' : '',
    el('span', { className: 'muted', title: localTime(p.since) }, since),
    ' ',
    el('span', { className: 'muted mode' }, text(p.mode)),
    p.error ? el('div', { className: 'error-text', data: { field: 'error' } }, text(p.error)) : '',
    retry ? el('div', { className: 'muted', data: { field: 'retry' } }, retry) : '',
  ]);
  setCell(c.port, text(p.port), () => [text(p.port)]);
  const proxy = p.proxy || null;
  row.tr.dataset.proxy = !proxy ? 'none' : proxy.failing ? 'failing' : 'ok';
  setCell(c.proxy, JSON.stringify(proxy), () => proxyCell(proxy));
  const commit = p.commit && p.commit.hash ? p.commit : null;
  setCell(c.commit, commit ? JSON.stringify(commit) : '', () => [
    commit
      ? el(
          'code',
          { title: text(commit.subject) + ' (' + localTime(commit.date) + ')' },
          text(commit.hash).slice(0, 7),
        )
      : el('span', { className: 'muted' }, '—'),
  ]);
  let last = null;
  if (p.idle_seconds === null && p.last_request) last = 'request in progress';
  else if (p.last_request) last = ago(p.last_request);
  c.last.title = p.last_request ? localTime(p.last_request) : '';
  setCell(c.last, text(last), () => [last || el('span', { className: 'muted' }, 'none yet')]);
  const u = latestUsage(text(p.name));
  const usage = u ? u.cpu_pct.toFixed(1) + ' % · ' + Math.round(u.rss_mb) + ' MB' : '—';
  c.usage.title = u ? u.procs + ' processes under pid ' + u.pid : 'No sample while down';
  setCell(c.usage, usage, () => [usage]);
  const base = personaBase(Number(p.port));
  // The key travels in the fragment: a browser never sends it to the server, so it ends up
  // in no request log.
  const live = base + '/vnc/#key=' + encodeURIComponent(state.key || '');
  setCell(c.links, base + '\u0000' + live, () => [
    el(
      'a',
      { attrs: { href: base + '/', target: '_blank', rel: 'noopener' }, data: { link: 'panel' } },
      'Panel',
    ),
    ' ',
    el(
      'a',
      {
        attrs: { href: live, target: '_blank', rel: 'noopener noreferrer' },
        data: { link: 'live' },
      },
      'Live view',
    ),
  ]);
  for (const a of ACTIONS) {
    const b = row.buttons[a.action];
    if (b) updateButton(b, p, a);
  }
  const share = row.buttons.share;
  if (share) {
    // Pages live in a running worker only.
    share.disabled = p.state !== 'running';
    if (share.disabled) share.setAttribute('title', 'Pages exist while the persona runs');
    else share.removeAttribute('title');
  }
  updateSiteChecks(row.siteChecks, text(p.name));
}

/**
 * A persona's proxy: country, exit address (session in its title), errors, failing.
 * @param {ProxyStatus | null} proxy
 * @returns {(Node | string)[]}
 */
function proxyCell(proxy) {
  if (!proxy) return [el('span', { className: 'muted' }, '—')];
  const errors = proxy.proxy_errors;
  return [
    el('code', { title: 'PROXY_COUNTRY' }, text(proxy.country)),
    ' ',
    proxy.exit_ip
      ? el(
          'span',
          { title: proxy.session ? 'session ' + text(proxy.session) : '' },
          text(proxy.exit_ip),
        )
      : el('span', { className: 'muted' }, 'no identity yet'),
    typeof errors === 'number'
      ? el(
          'div',
          { className: 'muted', data: { field: 'proxy-errors' } },
          errors + (errors === 1 ? ' proxy error' : ' proxy errors'),
        )
      : '',
    proxy.failing
      ? el(
          'div',
          {},
          el(
            'span',
            {
              className: 'badge proxy-failing',
              attrs: { role: 'status' },
              data: { field: 'proxy-failing' },
            },
            'proxy failing',
          ),
        )
      : '',
  ];
}

/** @param {string} name @returns the persona's numbers in the newest sample, null while it is down */
function latestUsage(name) {
  const last = state.metrics?.samples.at(-1);
  return last?.instances?.[name] ?? null;
}

/** @param {HTMLButtonElement} b @param {PersonaInfo} p @param {Action} a */
function updateButton(b, p, a) {
  const busy = state.busy.has(p.name + '/' + a.action);
  let reason = '';
  if (a.action === 'wake' && (p.state === 'running' || p.state === 'waking'))
    reason = 'Already ' + p.state;
  if (a.action === 'sleep' && (p.state === 'sleeping' || p.state === 'stopping'))
    reason = 'Already ' + p.state;
  const label = busy ? a.busy : a.label;
  if (b.textContent !== label) b.textContent = label;
  b.disabled = busy || Boolean(reason);
  if (reason) b.setAttribute('title', reason);
  else b.removeAttribute('title');
}

/** @param {string} name @param {Action} a */
async function act(name, a) {
  const id = name + '/' + a.action;
  if (state.busy.has(id)) return;
  state.busy.add(id);
  renderPersonas();
  try {
    /** @type {import('/ui/http.js').Answer<{ message?: unknown, state?: unknown }>} */
    const r = await api(
      'POST',
      '/api/personas/' + encodeURIComponent(name) + '/' + a.action,
      120000,
    );
    if (r.ok) {
      const said = r.body && (r.body.message || r.body.state);
      notify('ok', a.label + ' ' + name + ': ' + (said ? text(said) : 'done'));
    } else if (r.status !== 401) {
      // 401: the banner says the key is wrong and the key form is back.
      notify('error', a.label + ' ' + name + ' failed: ' + r.message);
    }
  } finally {
    state.busy.delete(id);
    await refreshPersonas();
  }
}

/** Reads the persona list and shows it. */
export async function refreshPersonas() {
  if (!state.key) return;
  /** @type {import('/ui/http.js').Answer<import('@persona-browser/contracts').PersonaList>} */
  const r = await api('GET', '/api/personas');
  if (r.ok && r.body && Array.isArray(r.body.personas)) {
    const before = state.personas ? state.personas.map((p) => p.name).join(',') : null;
    state.personas = r.body.personas;
    renderPersonas();
    if (before !== state.personas.map((p) => p.name).join(',')) namesChanged();
  } else if (r.status !== 401 && r.status !== 0 && !r.ok) {
    notify('error', 'Reading the personas failed: ' + r.message);
  } else if (r.ok) {
    notify('error', 'Reading the personas failed: the answer has no persona list');
  }
}
