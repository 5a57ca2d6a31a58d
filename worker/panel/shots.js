// persona-browser control panel: the chosen page and its live screenshot, taken every
// SHOT_EVERY_MS while the page is chosen, the key known and the tab in sight.
import { byId, clock, text } from '/ui/dom.js';
import {
  api,
  notify,
  onKeyChange,
  refreshStatus,
  reportFailure,
  state,
  updateButtons,
} from './core.js';

/** @template [T=unknown] @typedef {import('/ui/http.js').Answer<T>} Answer */
/** @typedef {{ screenshot?: unknown, url?: unknown }} ShotBody */

const SHOT_EVERY_MS = 3000;

/**
 * Chooses a page (null: none), in the list and for the screenshot.
 * @param {string | null} id
 * @param {string} [goneReason] why the page chosen before is no longer shown
 */
export function choose(id, goneReason) {
  if (id === state.chosen) return;
  const previous = state.chosen;
  state.chosen = id;
  state.chosenAt = performance.now();
  byId('chosen-id').textContent = id === null ? 'none' : id;
  for (const tr of byId('pool-body').children) {
    if (!(tr instanceof HTMLElement)) continue;
    const on = tr.dataset.pageId === id;
    tr.classList.toggle('chosen', on);
    tr.setAttribute('aria-selected', on ? 'true' : 'false');
  }
  if (id !== null) byId('destroy-id', HTMLInputElement).value = id;
  const img = byId('shot-img', HTMLImageElement);
  img.hidden = true;
  img.removeAttribute('src');
  setShotStatus(
    id === null ? 'Choose a page in the list to see it.' : 'Loading a screenshot…',
    'muted',
  );
  if (goneReason && previous !== null) {
    notify('info', 'Page ' + previous + ' is no longer shown: ' + goneReason + '.');
  }
  updateButtons();
  restartShots();
}

/** @param {string} message @param {string} cls */
export function setShotStatus(message, cls) {
  const s = byId('shot-status');
  s.className = cls;
  s.textContent = message;
}

/** @type {ReturnType<typeof setTimeout> | null} */
let shotTimer = null;
let shotRunning = false;
/** Bumped whenever the chosen page changes: an answer for an older choice is dropped. */
let shotGeneration = 0;

function shotsWanted() {
  const live = byId('live-toggle', HTMLInputElement).checked;
  return Boolean(state.chosen && state.key && live && !document.hidden);
}

/** Takes a screenshot soon; never two at once (the one in flight schedules the next). */
export function restartShots() {
  shotGeneration += 1;
  if (shotTimer !== null) clearTimeout(shotTimer);
  shotTimer = null;
  if (!shotRunning && shotsWanted()) shotTimer = setTimeout(() => void takeShot(), 0);
}

async function takeShot() {
  shotTimer = null;
  const id = state.chosen;
  if (shotRunning || !shotsWanted() || id === null) return;
  shotRunning = true;
  const generation = shotGeneration;
  /** @type {Answer<ShotBody>} */
  let r;
  try {
    r = await api('GET', '/ops/' + encodeURIComponent(id) + '/screenshot', {
      auth: true,
      timeoutMs: 45000,
    });
  } finally {
    shotRunning = false;
  }
  const current = generation === shotGeneration;
  if (current) showShot(id, r);
  if (shotsWanted() && shotTimer === null) {
    shotTimer = setTimeout(() => void takeShot(), current ? SHOT_EVERY_MS : 0);
  }
}

/** @param {string} id @param {Answer<ShotBody>} r */
function showShot(id, r) {
  const png = r.ok ? r.body.screenshot : undefined;
  if (typeof png === 'string' && /^[A-Za-z0-9+/=]+$/.test(png)) {
    const img = byId('shot-img', HTMLImageElement);
    img.src = 'data:image/png;base64,' + png;
    img.hidden = false;
    setShotStatus('Updated ' + clock() + ' · ' + text(r.body.url), 'muted');
    return;
  }
  if (r.ok) {
    setShotStatus('Screenshot failed: the answer carried no PNG', 'error-text');
    return;
  }
  if (r.status === 423) {
    // Leased (a person driving it in the live view, or an API client): not an error here.
    setShotStatus('Page ' + id + ' is leased, so no screenshot: ' + r.message, 'muted');
    return;
  }
  setShotStatus('Screenshot of ' + id + ' failed: ' + r.message, 'error-text');
  if (r.status === 401) reportFailure('Screenshot', r);
  else if (r.status === 404) choose(null, r.message);
}

byId('live-toggle').addEventListener('change', () => {
  if (byId('live-toggle', HTMLInputElement).checked) restartShots();
  else if (state.chosen) setShotStatus('Live screenshot paused.', 'muted');
});

document.addEventListener('visibilitychange', () => {
  if (document.hidden) return;
  refreshStatus();
  restartShots();
});

onKeyChange((key) => {
  if (key) restartShots();
});
