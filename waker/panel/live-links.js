// persona-browser fleet panel: a live-view link for one page of a running persona, to hand to a
// person (a captcha to solve, a login to confirm) without handing them the service key.
//
// The link carries a `live` token of the waker (POST /api/tokens) limited to that page: opened,
// the persona's viewer trades it for a session and takes control of that page, and of no other.
// The token travels in the link's fragment, which a browser never sends to a server.
//
// Stable hooks: the row's button is `button[data-action="share"][data-persona]`; its form is
// `form[data-share="<persona>"]` with `select[name="page"]`, `select[name="ttl"]`, the link in
// `input[data-field="live-url"]` and its expiry in `[data-field="live-expires"]`.
import { el, localTime, text } from '/ui/dom.js';
import { api, notify } from './core.js';

/** How long a link may work, as the form offers it (seconds). */
const TTLS = [
  [900, '15 minutes'],
  [3600, '1 hour'],
  [8 * 3600, '8 hours'],
  [24 * 3600, '1 day'],
];

/** The persona's own port on the host this panel was loaded from. */
export const personaBase = (/** @type {number} */ port) =>
  location.protocol + '//' + location.hostname + ':' + port;

/**
 * The row's "Share a page" button: it opens the form below the persona's links.
 * @param {string} name
 * @param {() => number} port the persona's port (read when clicked)
 * @param {HTMLElement} where the element the form goes in
 */
export function shareButton(name, port, where) {
  const b = el(
    'button',
    {
      className: 'secondary',
      attrs: { type: 'button', 'aria-label': 'Share a live view of a page of ' + name },
      data: { action: 'share', persona: name },
    },
    'Share',
  );
  b.addEventListener('click', () => void openForm(name, port(), where));
  return b;
}

/**
 * Reads the persona's pages and shows the form that makes a link for one of them.
 * @param {string} name @param {number} port @param {HTMLElement} where
 */
async function openForm(name, port, where) {
  /** @type {import('/ui/http.js').Answer<{ pages?: Array<{ page_id: string, url: string, title: string }> }>} */
  const r = await api('GET', '/api/personas/' + encodeURIComponent(name) + '/pages');
  if (!r.ok) {
    if (r.status !== 401) notify('error', 'Reading the pages of ' + name + ' failed: ' + r.message);
    return;
  }
  const pages = Array.isArray(r.body?.pages) ? r.body.pages : [];
  if (pages.length === 0) {
    notify('error', name + ' has no page open: a link is made for one of its pages');
    return;
  }
  const page = el(
    'select',
    { attrs: { name: 'page', 'aria-label': 'Page' } },
    ...pages.map((p) =>
      el(
        'option',
        { attrs: { value: text(p.page_id) } },
        text(p.page_id) + (p.title ? ' · ' + text(p.title) : p.url ? ' · ' + text(p.url) : ''),
      ),
    ),
  );
  const ttl = el(
    'select',
    { attrs: { name: 'ttl', 'aria-label': 'Link works for' } },
    ...TTLS.map(([s, label]) => el('option', { attrs: { value: String(s) } }, String(label))),
  );
  ttl.value = '3600';
  const url = el('input', {
    attrs: { readonly: '', 'aria-label': 'Live-view link', placeholder: 'the link appears here' },
    data: { field: 'live-url' },
  });
  const expires = el('span', { className: 'muted', data: { field: 'live-expires' } });
  const copy = el('button', { className: 'secondary', attrs: { type: 'button' } }, 'Copy');
  copy.addEventListener('click', () => {
    url.select();
    void navigator.clipboard?.writeText(url.value).catch(() => undefined);
  });
  const close = el('button', { className: 'secondary', attrs: { type: 'button' } }, 'Close');
  const form = el(
    'form',
    { className: 'share-form', data: { share: name } },
    el('label', {}, 'Page ', page),
    ' ',
    el('label', {}, 'for ', ttl),
    ' ',
    el('button', { attrs: { type: 'submit' } }, 'Make link'),
    el('div', {}, url, ' ', copy, ' ', expires),
    close,
  );
  close.addEventListener('click', () => form.remove());
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void makeLink(name, port, page.value, Number(ttl.value), url, expires);
  });
  where.querySelector('form[data-share]')?.remove();
  where.append(form);
  page.focus();
}

/**
 * @param {string} name @param {number} port @param {string} pageId @param {number} ttlS
 * @param {HTMLInputElement} url @param {HTMLElement} expires
 */
async function makeLink(name, port, pageId, ttlS, url, expires) {
  /** @type {import('/ui/http.js').Answer<{ token?: string, expires_at?: string }>} */
  const r = await api('POST', '/api/tokens', 15000, {
    persona: name,
    scope: 'live',
    page_id: pageId,
    ttl_s: ttlS,
    label: 'fleet panel: ' + pageId,
  });
  if (!r.ok || !r.body?.token) {
    if (r.status !== 401) notify('error', 'Making the link failed: ' + r.message);
    return;
  }
  url.value = personaBase(port) + '/vnc/#token=' + encodeURIComponent(r.body.token);
  expires.textContent = 'works until ' + localTime(text(r.body.expires_at));
  url.select();
}
