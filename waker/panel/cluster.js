// persona-browser fleet panel: a persona's node on a cluster (WAKER_DRIVER=swarm), and moving it
// to another node. On a single server the waker lists no nodes and none of this is drawn.
//
// Stable hooks for tests and scripts: the column's cells are `td[data-field="node"]`, with
// `[data-field="node-down"]` while the persona's node is down; the control is
// `button[data-move="open|confirm|cancel"][data-persona]` and `select[data-field="move-target"]`;
// `[data-field="move-status"]` while a move runs; `[data-field="move-result"]` with
// `data-outcome="ok|error"` after it.
import { el, text } from '/ui/dom.js';
import { api, notify, state } from './core.js';

/** @typedef {import('@persona-browser/contracts').PersonaInfo} PersonaInfo */
/** @typedef {import('./core.js').ClusterNode} ClusterNode */
/**
 * What a move answered with: the persona, and what was copied.
 * @typedef {object} MoveAnswer
 * @property {{ from: string, to: string, copy: { entries: number, files: number, bytes: number, ms: number } }} [move]
 */
/**
 * A persona's move control: closed, a node being picked, or a move under way; and how the last
 * move ended.
 * @typedef {object} MoveState
 * @property {'closed' | 'picking' | 'moving'} phase
 * @property {string} target the node picked (or being moved to)
 * @property {{ ok: boolean, text: string } | null} result
 */

// Moving a large profile copies it across the network: tens of seconds, minutes for big ones.
const MOVE_TIMEOUT_MS = 10 * 60_000;

/** @type {Map<string, MoveState>} */
const moves = new Map();

let hooks = {
  /** Draws the personas again (a control changed). */
  render: () => {},
  /** Reads the persona list again (a move ended). */
  refresh: async () => {},
};

/** @param {typeof hooks} h what redraws and rereads the persona list */
export function onClusterChange(h) {
  hooks = h;
}

/** True when the waker runs a cluster (its node list is not empty). */
export const isCluster = () => state.nodes.length > 0;

/** @param {string} hostname @returns {ClusterNode | undefined} */
export const nodeNamed = (hostname) => state.nodes.find((n) => n.hostname === hostname);

/** @param {number} bytes */
function fmtBytes(bytes) {
  if (bytes >= 1e9) return (bytes / 1e9).toFixed(1) + ' GB';
  if (bytes >= 1e6) return (bytes / 1e6).toFixed(1) + ' MB';
  if (bytes >= 1e3) return (bytes / 1e3).toFixed(1) + ' kB';
  return bytes + ' B';
}

/** @param {number} mb @returns {string} `512 MB`, `7.8 GB` */
export function fmtMemory(mb) {
  return mb >= 1024 ? (mb / 1024).toFixed(1) + ' GB' : Math.round(mb) + ' MB';
}

/** @param {string} name @returns {MoveState} */
function moveOf(name) {
  let m = moves.get(name);
  if (!m) {
    m = { phase: 'closed', target: '', result: null };
    moves.set(name, m);
  }
  return m;
}

/**
 * The nodes a persona can move to: ready, active, not its own.
 * @param {PersonaInfo} p
 */
const targetsFor = (p) =>
  state.nodes.filter((n) => n.ready && n.active && n.hostname !== p.node).map((n) => n.hostname);

/** Shows the Node column's heading on a cluster only. */
export function showNodeColumn() {
  for (const th of document.querySelectorAll('th[data-cluster]')) {
    if (th instanceof HTMLElement) th.hidden = !isCluster();
  }
}

/** A row's Node cell: empty and hidden until the waker lists nodes. */
export const nodeCell = () => el('td', { className: 'node-cell', data: { field: 'node' } });

/**
 * Draws a persona's node, whether it is down, and its move control; the cell is redrawn only
 * when what it shows changed, so a select being used is not replaced under the pointer.
 * @param {HTMLTableCellElement} cell
 * @param {PersonaInfo} p
 */
export function updateNodeCell(cell, p) {
  cell.hidden = !isCluster();
  const name = text(p.name);
  const node = p.node ? nodeNamed(p.node) : undefined;
  const down = node && !node.ready ? node : null;
  const m = moveOf(name);
  const targets = targetsFor(p);
  // Why the persona cannot move now ('' when it can).
  let reason = '';
  if (!p.node) reason = 'Not on a node yet: wake it once, or set NODE in its persona.env';
  else if (down) reason = 'Its node ' + p.node + ' is down: its folder cannot be copied off it';
  else if (!targets.length) reason = 'No other node is ready and active';
  const key = isCluster()
    ? JSON.stringify([p.node, down?.message, m.phase, m.phase === 'moving' && m.target, m.result]) +
      (m.phase === 'picking' ? targets.join() : '') +
      reason
    : '';
  if (cell.dataset.sig === key) return;
  cell.dataset.sig = key;
  if (!isCluster()) {
    cell.replaceChildren();
    return;
  }
  if (m.phase === 'picking' && !targets.includes(m.target)) m.target = targets[0] ?? '';
  cell.replaceChildren(
    p.node ? el('code', null, p.node) : el('span', { className: 'muted' }, 'not placed yet'),
    down
      ? el(
          'span',
          {
            className: 'badge node-down',
            title: 'The engine says: ' + (down.message || 'down'),
            data: { field: 'node-down' },
          },
          'node down',
        )
      : '',
    moveControl(name, m, targets, reason),
    m.result
      ? el(
          'div',
          {
            className: m.result.ok ? 'move-ok' : 'error-text',
            attrs: { role: 'status' },
            data: { field: 'move-result', outcome: m.result.ok ? 'ok' : 'error' },
          },
          m.result.text,
        )
      : '',
  );
}

/**
 * @param {string} name
 * @param {MoveState} m
 * @param {string[]} targets
 * @param {string} reason why it cannot move ('' when it can)
 * @returns {HTMLElement}
 */
function moveControl(name, m, targets, reason) {
  if (m.phase === 'moving') {
    return el(
      'div',
      { className: 'move-control', attrs: { role: 'status' }, data: { field: 'move-status' } },
      el('button', { className: 'secondary', attrs: { type: 'button', disabled: '' } }, 'Moving…'),
      ' ',
      el(
        'span',
        { className: 'muted' },
        'Moving to ' + m.target + ': copying its folder, this can take a minute',
      ),
    );
  }
  if (m.phase === 'picking') {
    const select = el('select', {
      attrs: { 'aria-label': 'Node to move ' + name + ' to' },
      data: { field: 'move-target', persona: name },
    });
    for (const t of targets) select.append(el('option', { attrs: { value: t } }, t));
    select.value = m.target;
    select.addEventListener('change', () => {
      m.target = select.value;
    });
    const confirm = button('Move', 'confirm', name, '');
    confirm.addEventListener('click', () => void movePersona(name, m.target));
    const cancel = button('Cancel', 'cancel', name, 'secondary');
    cancel.addEventListener('click', () => {
      m.phase = 'closed';
      hooks.render();
    });
    return el('div', { className: 'move-control' }, select, ' ', confirm, ' ', cancel);
  }
  const open = button('Move…', 'open', name, 'secondary');
  open.disabled = Boolean(reason);
  if (reason) open.setAttribute('title', reason);
  open.setAttribute('aria-label', 'Move ' + name + ' to another node');
  open.addEventListener('click', () => {
    m.phase = 'picking';
    m.target = targets[0] ?? '';
    hooks.render();
  });
  return el('div', { className: 'move-control' }, open);
}

/**
 * @param {string} label
 * @param {'open' | 'confirm' | 'cancel'} what
 * @param {string} name
 * @param {string} cls
 */
function button(label, what, name, cls) {
  return el(
    'button',
    { className: cls, attrs: { type: 'button' }, data: { move: what, persona: name } },
    label,
  );
}

/**
 * What a move did, in words: where from and to, and what was copied.
 * @param {MoveAnswer['move']} move
 * @param {string} target
 */
function movedText(move, target) {
  const copy = move?.copy;
  if (!move || !copy) return 'Moved to ' + target;
  const files = Number(copy.files);
  return (
    'Moved from ' +
    text(move.from) +
    ' to ' +
    text(move.to) +
    ': ' +
    files +
    (files === 1 ? ' file' : ' files') +
    ' (' +
    fmtBytes(Number(copy.bytes)) +
    ') copied in ' +
    (Number(copy.ms) / 1000).toFixed(1) +
    ' s'
  );
}

/**
 * Moves a persona to a node; its row says so while it runs and shows how it ended, and the
 * persona list is read again.
 * @param {string} name
 * @param {string} target
 * @returns {Promise<{ ok: boolean, message: string }>}
 */
export async function movePersona(name, target) {
  const m = moveOf(name);
  if (m.phase === 'moving') return { ok: false, message: name + ' is being moved already' };
  m.phase = 'moving';
  m.target = target;
  m.result = null;
  hooks.render();
  /** @type {import('/ui/http.js').Answer<MoveAnswer>} */
  const r = await api(
    'POST',
    '/api/personas/' + encodeURIComponent(name) + '/move',
    MOVE_TIMEOUT_MS,
    { node: target },
  );
  const said = r.ok
    ? movedText(r.body?.move, target)
    : 'Moving to ' + target + ' failed: ' + r.message;
  m.phase = 'closed';
  m.result = { ok: r.ok, text: said };
  notify(r.ok ? 'ok' : 'error', name + ': ' + said);
  hooks.render();
  await hooks.refresh();
  return { ok: r.ok, message: r.ok ? said : r.message };
}
