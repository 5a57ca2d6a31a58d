// persona-browser fleet panel: each persona's site checks (SITE_CHECKS), in its actions cell:
// a button per family its SITE_CHECKS schedules, which runs the check now, and the newest outcome of each family.
//
// Stable hooks: `button[data-action="site-check"][data-persona][data-family]`, and the outcome
// `[data-field="site-check"][data-family]` with `data-result="ok|missing|error|running"`; its
// title names the missing items and the failure bundle.
import { el, localTime, text } from '/ui/dom.js';
import { api, notify, state } from './core.js';

/**
 * @typedef {{ family: string, ok: boolean, checked: number, missing: string[], error: string | null,
 *   debug_id: string | null, at: string }} Outcome
 * @typedef {{ persona: string, error: string | null, schedule: { family: string }[], outcomes: Outcome[],
 *   running: string[] }} PersonaChecks
 */

/** @type {Map<string, PersonaChecks>} the newest read, by persona */
const checks = new Map();

/** Redraws the persona rows when an outcome changes. */
/** @type {() => void} */
let changed = () => {};
export const onSiteChecksChange = (/** @type {() => void} */ fn) => {
  changed = fn;
};

/** Reads every persona's site checks (one call for the fleet). */
export async function refreshSiteChecks() {
  if (!state.key) return;
  /** @type {import('/ui/http.js').Answer<{ personas: PersonaChecks[] }>} */
  const r = await api('GET', '/api/site-checks');
  if (!r.ok || !r.body || !Array.isArray(r.body.personas)) return;
  checks.clear();
  for (const p of r.body.personas) checks.set(text(p.persona), p);
  changed();
}

/** A persona's site checks: its box, made once per row (filled by updateSiteChecks). @param {string} _name */
export function siteCheckParts(_name) {
  return el('div', { className: 'site-checks' });
}

/** The button that runs `family`'s check of `name` now, made the first time it is needed. */
function buttonFor(
  /** @type {HTMLElement} */ box,
  /** @type {string} */ name,
  /** @type {string} */ family,
) {
  for (const b of box.querySelectorAll('button')) if (b.dataset.family === family) return b;
  const b = el(
    'button',
    {
      className: 'secondary',
      attrs: { type: 'button', 'aria-label': 'Check the ' + family + ' site of ' + name },
      data: { action: 'site-check', persona: name, family },
    },
    'Check ' + family,
  );
  b.addEventListener('click', () => void runNow(name, family));
  box.append(b);
  return b;
}

/** @param {HTMLElement} box @param {string} name */
export function updateSiteChecks(box, name) {
  const p = checks.get(name);
  const lines = [];
  if (p?.error) lines.push(el('div', { className: 'error-text' }, text(p.error)));
  // A button per family the persona's SITE_CHECKS schedules (or that has an outcome).
  const families = [
    ...new Set([
      ...(p?.schedule ?? []).map((c) => text(c.family)),
      ...(p?.outcomes ?? []).map((o) => text(o.family)),
    ]),
  ];
  for (const family of families) {
    // A click during a scheduled run joins it: only the panel's own run disables the button.
    const clicked = state.busy.has(name + '/site-check/' + family);
    const running = clicked || (p?.running ?? []).includes(family);
    const button = buttonFor(box, name, family);
    button.disabled = clicked;
    button.textContent = clicked ? 'Checking…' : 'Check ' + family;
    const o = p?.outcomes.find((x) => x.family === family);
    if (!o && !running) continue;
    let result = 'running';
    let says = family + ': checking…';
    let title = '';
    // The newest outcome stays shown while the next run is under way.
    if (o) {
      result = o.error ? 'error' : o.ok ? 'ok' : 'missing';
      says =
        family +
        ': ' +
        (o.error
          ? 'could not check'
          : o.ok
            ? 'all ' + o.checked + ' found'
            : o.missing.length + ' of ' + o.checked + ' missing');
      title =
        localTime(o.at) +
        (o.error ? '\n' + text(o.error) : '') +
        (o.missing.length ? '\nMissing: ' + o.missing.map(text).join(', ') : '') +
        (o.debug_id ? '\nFailure bundle: ' + text(o.debug_id) : '');
    }
    lines.push(
      el(
        'div',
        {
          className: 'site-check site-check-' + result,
          attrs: { title },
          data: { field: 'site-check', family, result },
        },
        says,
      ),
    );
  }
  const sig = JSON.stringify([
    p ?? null,
    ...families.map((f) => state.busy.has(name + '/site-check/' + f)),
  ]);
  if (box.dataset.sig === sig) return;
  box.dataset.sig = sig;
  box.querySelectorAll('div').forEach((d) => d.remove());
  box.append(...lines);
}

/** @param {string} name @param {string} family */
async function runNow(name, family) {
  const id = name + '/site-check/' + family;
  if (state.busy.has(id)) return;
  state.busy.add(id);
  changed();
  try {
    /** @type {import('/ui/http.js').Answer<Outcome>} */
    const r = await api(
      'POST',
      '/api/personas/' + encodeURIComponent(name) + '/site-checks/' + encodeURIComponent(family),
      180000,
    );
    if (r.ok && r.body) {
      const o = r.body;
      if (o.ok)
        notify('ok', 'Site check ' + family + ' of ' + name + ': all ' + o.checked + ' found');
      else
        notify(
          'error',
          'Site check ' +
            family +
            ' of ' +
            name +
            ': ' +
            (o.error
              ? text(o.error)
              : o.missing.length + ' missing: ' + o.missing.map(text).join(', ')),
        );
    } else if (r.status !== 401) {
      notify('error', 'Site check ' + family + ' of ' + name + ' failed: ' + r.message);
    }
  } finally {
    state.busy.delete(id);
    await refreshSiteChecks();
  }
}
