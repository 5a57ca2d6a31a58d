// persona-browser control panel: the file a plugin stored (its `media_url`), fetched with the
// key and offered to save. The link works once, so the panel fetches it only when asked.
import { el, text } from '/ui/dom.js';
import { request } from '/ui/http.js';

const MEDIA_PREFIX = '/api/v1/media/';

/** @type {string | null} the object URL of the last fetched file, revoked when replaced */
let blobUrl = null;

/** Lets go of the last fetched file (a new answer replaces it). */
export function forgetMedia() {
  if (blobUrl) URL.revokeObjectURL(blobUrl);
  blobUrl = null;
}

/**
 * `filename*=UTF-8''…` first, then `filename="…"`, from a Content-Disposition header.
 * @param {string | null | undefined} disposition
 */
export function filenameOf(disposition) {
  const d = text(disposition);
  const star = /filename\*=UTF-8''([^;]+)/i.exec(d);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {
      // malformed: the plain name below
    }
  }
  const plain = /filename="([^"]*)"/i.exec(d) || /filename=([^;]+)/i.exec(d);
  return plain?.[1] ? plain[1].trim() : 'download';
}

/**
 * Offers the file at `mediaUrl` in `box`: a button that fetches it with the key, then a link
 * that saves it. The key goes to this worker's media route only, whatever a plugin answered.
 * @param {HTMLElement} box
 * @param {string} mediaUrl
 * @param {() => Record<string, string>} auth the Authorization header of the key in use
 */
export function offerMedia(box, mediaUrl, auth) {
  const target = new URL(mediaUrl, location.origin);
  if (target.origin !== location.origin || !target.pathname.startsWith(MEDIA_PREFIX)) {
    box.replaceChildren(
      el('span', { className: 'error-text' }, 'Unexpected media_url: ' + mediaUrl),
    );
    return;
  }
  const fetchBtn = el(
    'button',
    { className: 'secondary', attrs: { type: 'button', id: 'plugin-fetch' } },
    'Fetch the file',
  );
  const note = el(
    'span',
    { className: 'muted' },
    'The link works once; fetching uses the API key.',
  );
  /** @param {string} cls @param {string} message */
  const say = (cls, message) => {
    note.className = cls;
    note.textContent = message;
  };
  box.replaceChildren(fetchBtn, note);
  fetchBtn.addEventListener('click', () => {
    fetchBtn.disabled = true;
    say('muted', 'Fetching…');
    void fetchFile();
  });

  async function fetchFile() {
    const r = await request(
      target.pathname + target.search,
      { headers: auth() },
      { service: 'the worker', asBlob: true },
    );
    if (!box.contains(fetchBtn)) return; // a newer answer replaced this one meanwhile
    if (!r.ok || !r.blob) {
      fetchBtn.disabled = r.status !== 0; // only a lost connection may be tried again
      return say('error-text', 'Download failed: ' + r.message);
    }
    const name = filenameOf(r.headers?.get('Content-Disposition'));
    if (blobUrl) URL.revokeObjectURL(blobUrl);
    blobUrl = URL.createObjectURL(r.blob);
    const attrs = { id: 'plugin-download', href: blobUrl, download: name };
    const size = r.blob.size + ' bytes, ' + (r.blob.type || 'unknown type');
    box.replaceChildren(
      el('a', { attrs }, 'Save ' + name),
      el('span', { className: 'muted' }, size),
    );
  }
}
