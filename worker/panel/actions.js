// persona-browser control panel: what the person does from the panel. Create, destroy and
// navigate a page; start, restart and stop the browser.
import { byId, text } from '/ui/dom.js';
import { api, busy, notify, refreshStatus, reportFailure, state } from './core.js';
import { choose, restartShots, setShotStatus } from './shots.js';

/** @typedef {{ page_id?: unknown, message?: unknown }} PageAnswer */
/** @typedef {{ final_url?: unknown, status_code?: unknown }} NavigateAnswer */

const createId = byId('create-id', HTMLInputElement);
const destroyId = byId('destroy-id', HTMLInputElement);
const navUrl = byId('nav-url', HTMLInputElement);

byId('create-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void busy('create', [byId('create-btn')], async () => {
    const id = createId.value.trim();
    /** @type {import('/ui/http.js').Answer<PageAnswer>} */
    const r = await api('POST', '/ops/create-page', {
      auth: true,
      body: id ? { page_id: id } : {},
      timeoutMs: 30000,
    });
    if (!r.ok) return reportFailure('Create page', r);
    const created = text(r.body.page_id);
    notify('ok', text(r.body.message) || 'Page ' + created + ' created');
    createId.value = '';
    choose(created);
    refreshStatus();
  });
});

byId('destroy-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void busy('destroy', [byId('destroy-btn')], async () => {
    const id = destroyId.value.trim();
    if (!id) return notify('error', 'Type the id of the page to destroy.');
    /** @type {import('/ui/http.js').Answer<PageAnswer>} */
    const r = await api('DELETE', '/ops/' + encodeURIComponent(id) + '/destroy-page', {
      auth: true,
      timeoutMs: 45000,
    });
    if (!r.ok) return reportFailure('Destroy page ' + id, r);
    notify('ok', text(r.body.message) || 'Page ' + id + ' destroyed');
    destroyId.value = '';
    if (state.chosen === id) choose(null);
    refreshStatus();
  });
});

byId('nav-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const id = state.chosen;
  if (!id) return notify('error', 'Choose a page first.');
  const url = navUrl.value.trim();
  if (!url) return notify('error', 'Type a URL first.');
  void busy('navigate', [byId('nav-btn')], async () => {
    setShotStatus('Navigating ' + id + ' to ' + url + '…', 'muted');
    refreshStatus();
    /** @type {import('/ui/http.js').Answer<NavigateAnswer>} */
    const r = await api('POST', '/ops/' + encodeURIComponent(id) + '/navigate', {
      auth: true,
      body: { url },
      timeoutMs: 75000,
    });
    if (!r.ok) {
      reportFailure('Navigate ' + id, r);
    } else {
      const code =
        r.body.status_code === null ? 'no HTTP status' : 'HTTP ' + text(r.body.status_code);
      notify('ok', 'Page ' + id + ' loaded ' + text(r.body.final_url) + ' (' + code + ')');
    }
    refreshStatus();
    if (state.chosen === id) restartShots();
  });
});

/** Asks before closing pages: true when there are none or the person agrees. */
function confirmLoss(/** @type {string} */ verb) {
  if (!state.pageCount) return true;
  const n = state.pageCount;
  return window.confirm(
    verb + ' the browser? ' + n + (n === 1 ? ' page' : ' pages') + ' will be closed.',
  );
}

async function start() {
  if (!confirmLoss(state.initialized ? 'Restart' : 'Start')) return;
  await busy('start', [byId('start-btn'), byId('pool-start-btn')], async () => {
    /** @type {import('/ui/http.js').Answer<PageAnswer>} */
    const r = await api('GET', '/system/start', { auth: true, timeoutMs: 90000 });
    if (!r.ok) return reportFailure('Start', r);
    notify('ok', text(r.body.message) || 'Browser started');
    choose(null);
    refreshStatus();
  });
}

byId('start-btn').addEventListener('click', () => void start());
byId('pool-start-btn').addEventListener('click', () => void start());

byId('stop-btn').addEventListener('click', () => {
  if (!confirmLoss('Stop')) return;
  void busy('stop', [byId('stop-btn')], async () => {
    /** @type {import('/ui/http.js').Answer<PageAnswer>} */
    const r = await api('GET', '/system/stop', { auth: true, timeoutMs: 60000 });
    if (!r.ok) return reportFailure('Stop', r);
    notify('ok', text(r.body.message) || 'Browser stopped');
    choose(null);
    refreshStatus();
  });
});
