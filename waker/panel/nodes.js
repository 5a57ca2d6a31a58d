// persona-browser fleet panel: the Nodes card of a cluster (WAKER_DRIVER=swarm): each node,
// whether it is up, its memory and how many personas it holds, and draining it, which is
// moving its personas to the other nodes one after another. Hidden on a single server.
//
// Stable hooks for tests and scripts: each node row is `tr[data-node="<hostname>"]` with
// `data-ready`; its button is `button[data-drain="<hostname>"]`; the confirmation is
// `#drain-confirm` with `button[data-drain-confirm]` and `button[data-drain-cancel]`; progress
// and the outcome are in `#drain-status` (`data-outcome="running|ok|error"`).
import { byId, el, text } from '/ui/dom.js';
import { api, notify, state } from './core.js';
import { fmtMemory, isCluster, movePersona, nodeNamed } from './cluster.js';

/** @typedef {import('./core.js').ClusterNode} ClusterNode */

/** @type {{ asked: string, running: string }} the node a drain is asked for / runs on ('' none) */
const drain = { asked: '', running: '' };

/** @type {() => void} */
let nodesChanged = () => {};
/** @param {() => void} fn called when the node list read differs from the last one */
export const onNodesChange = (fn) => {
  nodesChanged = fn;
};

/** Reads the cluster's nodes; a waker from before clusters (404) has none. */
export async function refreshNodes() {
  if (!state.key) return;
  /** @type {import('/ui/http.js').Answer<{ nodes?: ClusterNode[] }>} */
  const r = await api('GET', '/api/nodes');
  /** @type {ClusterNode[] | null} */
  let nodes = null;
  if (r.ok && Array.isArray(r.body?.nodes)) nodes = r.body.nodes;
  else if (r.status === 404) nodes = [];
  else if (r.status !== 401 && r.status !== 0) {
    notify(
      'error',
      'Reading the nodes failed: ' + (r.ok ? 'the answer has no node list' : r.message),
    );
  }
  if (!nodes) return;
  const before = JSON.stringify(state.nodes);
  state.nodes = nodes;
  if (JSON.stringify(nodes) !== before) nodesChanged();
  renderNodes();
}

/** @param {string} hostname @returns {string[]} the personas listed on that node */
const personasOn = (hostname) =>
  (state.personas ?? []).filter((p) => p.node === hostname).map((p) => text(p.name));

/** Draws the Nodes card (hidden on a single server); its table only when it changed. */
export function renderNodes() {
  const section = byId('nodes');
  section.hidden = !isCluster() || !state.personas;
  if (section.hidden) return;
  const ready = state.nodes.filter((n) => n.ready).length;
  byId('nodes-summary').textContent =
    state.nodes.length + (state.nodes.length === 1 ? ' node' : ' nodes') + ' · ' + ready + ' ready';
  const body = byId('nodes-body');
  const counts = state.nodes.map((n) => personasOn(n.hostname).length);
  const key = JSON.stringify([state.nodes, counts, drain]);
  if (body.dataset.sig !== key) {
    body.dataset.sig = key;
    body.replaceChildren(...state.nodes.map((n, i) => nodeRow(n, counts[i] ?? 0)));
  }
  renderConfirm();
}

/** @param {ClusterNode} n @param {number} count personas it holds */
function nodeRow(n, count) {
  const host = text(n.hostname);
  let reason = '';
  if (drain.running) reason = 'A drain is under way';
  else if (!n.ready) reason = host + ' is down: its personas’ folders cannot be copied off it';
  else if (!count) reason = host + ' holds no personas';
  const b = el(
    'button',
    {
      className: 'danger',
      attrs: { type: 'button', 'aria-label': 'Drain ' + host },
      data: { drain: host },
    },
    drain.running === host ? 'Draining…' : 'Drain',
  );
  b.disabled = Boolean(reason);
  if (reason) b.setAttribute('title', reason);
  b.addEventListener('click', () => {
    drain.asked = host;
    renderNodes();
  });
  return el(
    'tr',
    { data: { node: host, ready: String(Boolean(n.ready)) } },
    el('td', { className: 'name-cell' }, host),
    el(
      'td',
      { data: { field: 'node-state' } },
      el(
        'span',
        { className: 'badge ' + (n.ready ? 'state-running' : 'state-crashed') },
        n.ready ? 'ready' : 'down',
      ),
      n.active ? '' : el('span', { className: 'muted' }, ' not active (drained or paused)'),
      n.message ? el('div', { className: n.ready ? 'muted' : 'error-text' }, text(n.message)) : '',
    ),
    el('td', { className: 'num' }, fmtMemory(Number(n.memory_mb) || 0)),
    el('td', { className: 'num', data: { field: 'node-personas' } }, String(count)),
    el('td', { className: 'actions-cell' }, b),
  );
}

/** The question before a drain: which personas will move, and that each stops meanwhile. */
function renderConfirm() {
  const box = byId('drain-confirm');
  const host = drain.asked;
  const sig = host + '\u0000' + (host ? personasOn(host).join() : '');
  if (box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  box.hidden = !host;
  if (!host) {
    box.replaceChildren();
    return;
  }
  const names = personasOn(host);
  const go = el(
    'button',
    { className: 'danger', attrs: { type: 'button' }, data: { drainConfirm: host } },
    'Drain ' + host,
  );
  go.addEventListener('click', () => void drainNode(host));
  const cancel = el(
    'button',
    { className: 'secondary', attrs: { type: 'button' }, data: { drainCancel: host } },
    'Cancel',
  );
  cancel.addEventListener('click', () => {
    drain.asked = '';
    renderNodes();
  });
  box.replaceChildren(
    el('strong', null, 'Drain ' + host + '?'),
    ' Moves ' +
      names.join(', ') +
      ' to the other nodes, one after another; each persona stops while its folder is copied.',
    ' ',
    go,
    cancel,
  );
}

/** @param {string} textShown @param {'running' | 'ok' | 'error'} outcome */
function drainStatus(textShown, outcome) {
  const status = byId('drain-status');
  status.hidden = false;
  status.dataset.outcome = outcome;
  status.className =
    'banner' + (outcome === 'error' ? ' banner-error' : outcome === 'ok' ? ' banner-ok' : '');
  status.textContent = textShown;
}

/**
 * Where a drained persona goes. The panel knows each node's memory but not the memory limits
 * of the personas on it, so it does not guess what is left: it takes the ready, active node
 * with the fewest personas (the most memory on a tie, then the name). The waker's own placement
 * of new personas weighs the memory.
 * @param {string} from the node being drained
 * @param {Map<string, string>} movedTo where this drain has moved personas so far
 * @returns {string | null}
 */
function drainTarget(from, movedTo) {
  const held = new Map();
  for (const p of state.personas ?? []) {
    const at = movedTo.get(p.name) ?? p.node;
    if (at) held.set(at, (held.get(at) ?? 0) + 1);
  }
  const candidates = state.nodes.filter((n) => n.ready && n.active && n.hostname !== from);
  candidates.sort(
    (a, b) =>
      (held.get(a.hostname) ?? 0) - (held.get(b.hostname) ?? 0) ||
      b.memory_mb - a.memory_mb ||
      a.hostname.localeCompare(b.hostname),
  );
  return candidates[0]?.hostname ?? null;
}

/**
 * Moves every persona of a node away, one after another, stopping at the first failure.
 * @param {string} host
 */
async function drainNode(host) {
  drain.asked = '';
  drain.running = host;
  renderNodes();
  const names = personasOn(host);
  /** @type {Map<string, string>} */
  const movedTo = new Map();
  let failed = false;
  try {
    for (const [i, name] of names.entries()) {
      const of = ' (' + (i + 1) + ' of ' + names.length + ')';
      const target = drainTarget(host, movedTo);
      if (!target || !nodeNamed(target)) {
        drainStatus(
          'Draining ' + host + ' stopped at ' + name + of + ': no other node is ready and active',
          'error',
        );
        failed = true;
        break;
      }
      drainStatus('Draining ' + host + ': moving ' + name + ' to ' + target + of + '…', 'running');
      const r = await movePersona(name, target);
      if (!r.ok) {
        drainStatus('Draining ' + host + ' stopped at ' + name + of + ': ' + r.message, 'error');
        failed = true;
        break;
      }
      movedTo.set(name, target);
    }
    if (!failed) {
      const moved = [...movedTo].map(([n, t]) => n + ' → ' + t).join(', ');
      drainStatus(
        'Drained ' +
          host +
          ': ' +
          movedTo.size +
          (movedTo.size === 1 ? ' persona' : ' personas') +
          ' moved' +
          (moved ? ' (' + moved + ')' : '') +
          '.',
        'ok',
      );
    }
  } finally {
    drain.running = '';
    renderNodes();
  }
}
