// persona-browser control panel: what plugin calls left behind. Failure bundles (a failed
// call's screenshot, HTML, network lines and log) and screen recordings (an animated PNG the
// <img> plays). Files are fetched with the key and shown from blob: URLs; a page's HTML is
// only offered as a download, never opened here.
import { byId, text } from '/ui/dom.js';
import { api, onKeyChange, reportFailure, state } from './core.js';

/**
 * @typedef {{ debug_id: string, plugin: string, page_id: string, error: string, time: string,
 *   size: number }} BundleRow
 * @typedef {{ id: string, plugin: string, page_id: string, time: string, duration_ms: number,
 *   outcome: string, frames: number, size: number, missing: string | null, kind?: string }} RecordingRow
 */

/** The blob: URLs in use, revoked when the view shows something else. */
/** @type {string[]} */
let shown = [];

/** @param {number} n */
const kb = (n) =>
  n < 1024 * 1024 ? (n / 1024).toFixed(0) + ' kB' : (n / 1048576).toFixed(1) + ' MB';
/** @param {string} iso */
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

/** @param {string} tag @param {string} [content] @param {string} [cls] */
function el(tag, content, cls) {
  const e = document.createElement(tag);
  if (content !== undefined) e.textContent = content;
  if (cls) e.className = cls;
  return e;
}

/**
 * A file of a bundle or recording, fetched with the key, as a blob: URL (null: refused).
 * @param {string} path under /api/v1
 */
async function blobUrl(path) {
  if (!state.key) return null;
  try {
    const res = await fetch('/api/v1' + path, {
      headers: { Authorization: 'Bearer ' + state.key },
    });
    if (!res.ok) return null;
    const url = URL.createObjectURL(await res.blob());
    shown.push(url);
    return url;
  } catch {
    return null;
  }
}

function clearView() {
  for (const u of shown) URL.revokeObjectURL(u);
  shown = [];
  const img = byId('record-img', HTMLImageElement);
  img.hidden = true;
  img.removeAttribute('src');
  byId('record-files').replaceChildren();
  byId('record-meta').textContent = '';
  byId('record-note').textContent = '';
}

/** @param {string} title */
function openView(title) {
  clearView();
  byId('record-view').hidden = false;
  byId('record-title').textContent = title;
  // In sight: a browser animates no image it does not show.
  byId('record-view').scrollIntoView({ block: 'start' });
}

/** Plays a recording in the view. @param {string} id */
async function playRecording(id) {
  openView('Recording ' + id);
  /** @type {import('/ui/http.js').Answer<{ recording?: Record<string, unknown> }>} */
  const r = await api('GET', '/recordings/' + encodeURIComponent(id), { auth: true });
  if (!r.ok || !r.body.recording) return void (byId('record-note').textContent = r.message);
  const m = r.body.recording;
  byId('record-meta').textContent = JSON.stringify(m, null, 2);
  if (typeof m.missing === 'string') {
    byId('record-note').textContent = 'No file: ' + m.missing;
    return;
  }
  const url = await blobUrl('/recordings/' + encodeURIComponent(id) + '/recording.png');
  if (!url) return void (byId('record-note').textContent = 'The recording could not be read.');
  const img = byId('record-img', HTMLImageElement);
  img.alt = 'Recording of ' + text(m.plugin) + ' on page ' + text(m.page_id);
  img.src = url;
  img.hidden = false;
  byId('record-note').textContent =
    text(m.plugin) + ' on ' + text(m.page_id) + ' · ' + text(m.outcome) + ' · plays in a loop';
}

const BUNDLE_DOWNLOADS = ['page.html', 'network.json', 'log.jsonl'];

/** Opens a failure bundle in the view. @param {string} id */
async function openBundle(id) {
  openView('Failure bundle ' + id);
  /** @type {import('/ui/http.js').Answer<{ bundle?: Record<string, unknown> }>} */
  const r = await api('GET', '/bundles/' + encodeURIComponent(id), { auth: true });
  if (!r.ok || !r.body.bundle) return void (byId('record-note').textContent = r.message);
  const m = r.body.bundle;
  byId('record-meta').textContent = JSON.stringify(m, null, 2);
  const missing = /** @type {Record<string, unknown>} */ (m.missing ?? {});
  const base = '/bundles/' + encodeURIComponent(id) + '/';
  const files = byId('record-files');
  if (typeof m.recording === 'string') {
    const rec = m.recording;
    const play = el('button', 'Play its recording', 'secondary');
    play.setAttribute('type', 'button');
    play.addEventListener('click', () => void playRecording(rec));
    files.append(play);
  }
  for (const name of BUNDLE_DOWNLOADS) {
    if (name in missing) continue;
    const a = el('a', 'Download ' + name);
    a.setAttribute('href', '#');
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      void blobUrl(base + name).then((url) => {
        if (!url) return;
        const save = document.createElement('a');
        save.href = url;
        save.download = id + '-' + name;
        save.click();
      });
    });
    files.append(a);
  }
  const note =
    'screenshot.png' in missing ? 'No screenshot: ' + text(missing['screenshot.png']) : '';
  byId('record-note').textContent =
    text(m.plugin) +
    ': ' +
    text(/** @type {any} */ (m.error)?.message) +
    (note ? ' · ' + note : '');
  if ('screenshot.png' in missing) return;
  const url = await blobUrl(base + 'screenshot.png');
  if (!url) return;
  const img = byId('record-img', HTMLImageElement);
  img.alt = 'Screenshot of the failed call';
  img.src = url;
  img.hidden = false;
}

/**
 * @param {HTMLElement} body
 * @param {string[]} cells
 * @param {string} label
 * @param {() => void} open
 */
function addRow(body, cells, label, open) {
  const tr = el('tr');
  for (const c of cells) {
    const td = el('td', c);
    td.setAttribute('title', c);
    tr.append(td);
  }
  const td = el('td');
  const b = el('button', label, 'secondary');
  b.setAttribute('type', 'button');
  b.addEventListener('click', (ev) => {
    ev.stopPropagation();
    open();
  });
  td.append(b);
  tr.append(td);
  tr.addEventListener('click', open);
  body.append(tr);
}

let loading = false;

/** Reads both lists again. */
export async function refreshRecords() {
  if (loading) return;
  const status = byId('records-status');
  if (!state.key) {
    status.textContent = 'Enter the API key to list them.';
    return;
  }
  loading = true;
  try {
    /** @type {import('/ui/http.js').Answer<{ bundles?: BundleRow[] }>} */
    const b = await api('GET', '/bundles', { auth: true });
    /** @type {import('/ui/http.js').Answer<{ recording?: boolean, recordings?: RecordingRow[] }>} */
    const r = await api('GET', '/recordings', { auth: true });
    if (!b.ok) return reportFailure('Listing failure bundles', b);
    if (!r.ok) return reportFailure('Listing recordings', r);
    const bundles = b.body.bundles ?? [];
    const recordings = r.body.recordings ?? [];
    const bBody = byId('bundles-body');
    bBody.replaceChildren();
    for (const x of bundles)
      addRow(
        bBody,
        [when(x.time), x.plugin, x.page_id, x.error, kb(x.size)],
        'Open',
        () => void openBundle(x.debug_id),
      );
    byId('bundles-empty').hidden = bundles.length > 0;
    const rBody = byId('recordings-body');
    rBody.replaceChildren();
    for (const x of recordings) {
      const length = (x.duration_ms / 1000).toFixed(1) + ' s';
      const size = x.missing ? 'withheld' : kb(x.size);
      addRow(
        rBody,
        [
          when(x.time),
          x.kind === 'lease' ? '(lease)' : x.plugin,
          x.page_id,
          x.outcome,
          length,
          size,
        ],
        'Play',
        () => void playRecording(x.id),
      );
    }
    byId('recordings-empty').hidden = recordings.length > 0 || !r.body.recording;
    byId('recordings-off').hidden = Boolean(r.body.recording);
    status.textContent = bundles.length + ' failure bundles, ' + recordings.length + ' recordings.';
  } finally {
    loading = false;
  }
}

byId('records-refresh').addEventListener('click', () => void refreshRecords());
byId('record-close').addEventListener('click', () => {
  clearView();
  byId('record-view').hidden = true;
});
// A plugin call may have left one of each.
document.addEventListener('plugin-ran', () => void refreshRecords());
onKeyChange((key) => {
  if (key) void refreshRecords();
});
void refreshRecords();
