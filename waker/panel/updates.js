// persona-browser fleet panel, "Updates": what the supervisor that runs this waker is doing,
// read through the waker's relay (GET /api/supervisor). The section stays hidden while the waker
// answers 404 (no supervisor started it). Strings from the API reach the DOM as text only.
//
// Stable hooks for tests: `#updates` (the section), `#updates-state` (`data-state`),
// `#updates-commit` (`data-hash`), `#updates-healthy`, `#updates-last` (`data-result`),
// `#updates-bad` (one `li[data-hash]` per bad commit), `#updates-log` (one `li` per line),
// `#updates-alert` (halted or a failed rollback), `#updates-note` (an update refused) and
// `#updates-remote` (the remote the supervisor cannot reach, with git's whole reason).
import { byId, el, isObject, localTime, text } from '/ui/dom.js';
import { addPoll, api, state } from './core.js';
// The steps in the order they run, as the contract lists them (served by the waker).
import { UPDATE_STEPS as STEPS } from '/update-steps.js';

/** @typedef {import('@persona-browser/contracts').SupervisorStatus} SupervisorStatus */
/** @typedef {import('@persona-browser/contracts').UpdateRecord} UpdateRecord */

const EVERY_MS = 5000;
const LOG_LINES = 10;

/** @param {unknown} hash */
const short = (hash) => text(hash).slice(0, 7);

/** @param {string | null | undefined} hash */
function hashCode(hash) {
  return hash ? el('code', { title: text(hash) }, short(hash)) : el('span', null, 'none');
}

/** @param {SupervisorStatus} s */
function renderState(s) {
  const st = text(s.state);
  const box = byId('updates-state');
  box.dataset.state = st;
  box.replaceChildren(
    el('span', { className: 'badge update-' + st.replace(/[^a-z_]/g, '') }, st),
    s.upstream ? el('span', { className: 'muted' }, ' polling ' + text(s.upstream)) : '',
  );
}

/** @param {SupervisorStatus} s */
function renderCommit(s) {
  const box = byId('updates-commit');
  const c = s.commit;
  box.dataset.hash = c ? text(c.hash) : '';
  box.replaceChildren(
    ...(c
      ? [hashCode(c.hash), ' ', el('span', { title: localTime(c.date) }, text(c.subject))]
      : [el('span', { className: 'muted' }, 'unknown')]),
  );
  const healthy = byId('updates-healthy');
  healthy.dataset.hash = text(s.healthy_commit);
  healthy.replaceChildren(hashCode(s.healthy_commit));
}

/** @param {UpdateRecord['timings']} t */
function timings(t) {
  const parts = STEPS.flatMap((k) => {
    const ms = t[k];
    return typeof ms === 'number' ? [k + ' ' + (ms / 1000).toFixed(1) + ' s'] : [];
  });
  return parts.length ? parts.join(' · ') : 'no step timed yet';
}

/** @param {SupervisorStatus} s */
function renderLast(s) {
  const box = byId('updates-last');
  const u = s.last_update;
  box.dataset.result = u ? text(u.result) : '';
  if (!u) {
    box.replaceChildren(
      el('span', { className: 'muted' }, 'No update since the supervisor started.'),
    );
    return;
  }
  const ended = u.finished_at ? 'finished ' + localTime(u.finished_at) : 'still running';
  box.replaceChildren(
    el(
      'div',
      { data: { field: 'commits' } },
      hashCode(u.from),
      ' → ',
      hashCode(u.to),
      ' ',
      el(
        'span',
        { className: 'badge result-' + text(u.result).replace(/[^a-z_]/g, '') },
        text(u.result),
      ),
      el('span', { className: 'muted' }, ' (' + text(u.trigger) + ')'),
    ),
    u.reason
      ? el('div', { className: 'error-text', data: { field: 'reason' } }, text(u.reason))
      : '',
    el('div', { data: { field: 'timings' } }, timings(u.timings || {})),
    el('div', { className: 'muted' }, 'started ' + localTime(u.started_at) + ', ' + ended),
  );
}

/** @param {SupervisorStatus} s */
function renderBad(s) {
  const list = byId('updates-bad');
  const bad = Array.isArray(s.bad_commits) ? s.bad_commits : [];
  list.replaceChildren(
    ...(bad.length
      ? bad.map((b) =>
          el(
            'li',
            { data: { hash: text(b.hash) }, title: localTime(b.at) },
            hashCode(b.hash),
            ' ' + text(b.reason),
          ),
        )
      : [el('li', { className: 'muted' }, 'none')]),
  );
}

/** @param {SupervisorStatus} s */
function renderLog(s) {
  const lines = (Array.isArray(s.log) ? s.log : []).slice(-LOG_LINES);
  byId('updates-log').replaceChildren(
    ...lines.map((l) =>
      el(
        'li',
        {
          className: 'log-' + text(l.level).replace(/[^a-z]/g, ''),
          data: { level: text(l.level) },
        },
        el('span', { className: 'muted' }, new Date(text(l.at)).toLocaleTimeString() + ' '),
        text(l.message),
      ),
    ),
  );
}

/**
 * The loud banner (nothing more is tried until someone acts) and the milder note.
 * @param {SupervisorStatus} s
 */
function renderBanners(s) {
  const alert = byId('updates-alert');
  const u = s.last_update;
  const why = [];
  if (s.halted) why.push('Updates halted: ' + text(s.halted) + '.');
  if (u && u.result === 'rollback_failed') {
    why.push(
      'The rollback from ' +
        short(u.to) +
        ' failed' +
        (u.reason ? ': ' + text(u.reason) : '') +
        '.',
    );
  }
  alert.hidden = why.length === 0;
  alert.replaceChildren(
    ...(why.length
      ? [
          el('strong', null, why.join(' ')),
          ' Check the fleet by hand, then touch .update-trigger or restart the supervisor.',
        ]
      : []),
  );
  const note = byId('updates-note');
  note.hidden = !s.refused;
  note.replaceChildren(...(s.refused ? ['Last update refused: ' + text(s.refused)] : []));
}

/**
 * The supervisor's remote when it could not reach it, else null (reachable, or not checked
 * yet). Read defensively: a supervisor from before the check does not report it.
 * @param {SupervisorStatus} s
 * @returns {{ url: string, error: string, checkedAt: string } | null}
 */
function unreachableRemote(s) {
  const remote = /** @type {{ remote?: unknown }} */ (s).remote;
  if (!isObject(remote) || remote.reachable !== false) return null;
  return { url: text(remote.url), error: text(remote.error), checkedAt: text(remote.checked_at) };
}

/**
 * A remote the supervisor cannot reach: no update can come until it can, so the card says so
 * first, with the remote and git's whole message (its last line alone explains nothing).
 * @param {SupervisorStatus} s
 */
function renderRemote(s) {
  const box = byId('updates-remote');
  const r = unreachableRemote(s);
  box.hidden = !r;
  if (!r) {
    box.replaceChildren();
    return;
  }
  box.replaceChildren(
    el('strong', null, 'The supervisor cannot reach its remote'),
    ' ',
    r.url ? el('code', null, r.url) : '(no remote URL)',
    ', so no update can be fetched. The remote must be reachable from where the supervisor ' +
      'runs: in a container, a clone whose origin is a path on the host is not. git said:',
    el('pre', { className: 'git-said' }, r.error || 'nothing'),
    r.checkedAt ? el('div', { className: 'muted' }, 'Checked ' + localTime(r.checkedAt) + '.') : '',
  );
}

let shown = '';

/** @param {SupervisorStatus} s */
function render(s) {
  const sig = JSON.stringify(s);
  if (sig === shown) return;
  shown = sig;
  renderState(s);
  renderCommit(s);
  renderLast(s);
  renderBad(s);
  renderLog(s);
  renderBanners(s);
  renderRemote(s);
}

async function refresh() {
  const section = byId('updates');
  if (!state.key) {
    section.hidden = true;
    return;
  }
  /** @type {import('/ui/http.js').Answer<SupervisorStatus>} */
  const r = await api('GET', '/api/supervisor', 10000);
  // 404: no supervisor started this waker. A wrong key (401) and a waker that cannot be
  // reached (0) have the panel's banner; what was shown stays as it was.
  if (r.status === 404) section.hidden = true;
  if (r.status === 404 || r.status === 401 || r.status === 0) return;
  section.hidden = false;
  if (r.ok && r.body && typeof r.body.state === 'string') {
    byId('updates-summary').textContent = 'Read ' + new Date().toLocaleTimeString();
    render(r.body);
  } else {
    byId('updates-summary').textContent = 'Reading the supervisor failed: ' + r.message;
  }
}

addPoll(refresh, EVERY_MS);
