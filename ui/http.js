// persona-browser panels: one way to call the worker and the waker from a panel. Never throws:
// every outcome, a refusal, a lost connection or a timeout, is an answer with a message to show.
import { isObject, text } from './dom.js';

/**
 * @template [T=unknown]
 * @typedef {object} Answer
 * @property {boolean} ok 2xx with JSON, and not the API's `success: false`
 * @property {number} status the HTTP status; 0 when no answer came
 * @property {T} body the parsed JSON (trusted to be T on success), null when not JSON
 * @property {string} raw the answer's text ('' when it was read as a Blob)
 * @property {string} message what went wrong, '' on success
 * @property {string} detail with status 0: why no answer came ('' otherwise)
 * @property {Blob} [blob] with `asBlob`, the bytes of a success
 * @property {Headers} [headers] with `asBlob`, the success's headers
 */

/**
 * @typedef {object} RequestOptions
 * @property {number} [timeoutMs] give up after this long (none when left out)
 * @property {string} [service] who answers, for the messages ('the worker', 'the waker')
 * @property {boolean} [asBlob] read a success as bytes, not JSON
 */

/**
 * The message a failed answer carries: the envelope's `error`, the 401 body's `detail`, a
 * `message`; else the status and the start of the text.
 * @param {number} status
 * @param {unknown} body
 * @param {string} raw
 */
export function errorText(status, body, raw) {
  if (isObject(body)) {
    for (const k of ['error', 'detail', 'message']) {
      const v = body[k];
      if (typeof v === 'string' && v) return v;
    }
    if (body.detail !== undefined) return JSON.stringify(body.detail);
  }
  const snippet = raw.trim().slice(0, 200);
  return 'HTTP ' + status + (snippet ? ': ' + snippet : '');
}

/**
 * The answer to a call that got none (or was not made): status 0 and why.
 * @template [T=unknown]
 * @param {string} message
 * @param {string} [detail]
 * @returns {Answer<T>}
 */
export function noAnswer(message, detail) {
  const body = /** @type {T} */ (/** @type {unknown} */ (null));
  return { ok: false, status: 0, body, raw: '', message, detail: detail ?? '' };
}

/**
 * One call. A 200 with `success: false` is a failure too (docs/api.md).
 * @template [T=unknown]
 * @param {string} url
 * @param {RequestInit} [init]
 * @param {RequestOptions} [opts]
 * @returns {Promise<Answer<T>>}
 */
export async function request(url, init, opts) {
  const o = opts ?? {};
  const service = o.service ?? 'the server';
  const ctl = new AbortController();
  const timer = o.timeoutMs ? setTimeout(() => ctl.abort(), o.timeoutMs) : null;
  try {
    const res = await fetch(url, { cache: 'no-store', ...init, signal: ctl.signal });
    if (o.asBlob && res.ok) {
      const blob = await res.blob();
      const body = /** @type {T} */ (/** @type {unknown} */ (null));
      return {
        ok: true,
        status: res.status,
        body,
        raw: '',
        message: '',
        detail: '',
        blob,
        headers: res.headers,
      };
    }
    const raw = await res.text();
    /** @type {unknown} */
    let parsed = null;
    try {
      parsed = JSON.parse(raw);
    } catch {
      // not JSON: errorText shows the start of it
    }
    // Every API answers JSON: a 2xx that is not JSON is a broken answer, shown as such.
    const json = typeof parsed === 'object' && parsed !== null;
    const ok = res.ok && json && !(isObject(parsed) && parsed.success === false);
    const body = /** @type {T} */ (parsed);
    const message = ok ? '' : errorText(res.status, parsed, raw);
    return { ok, status: res.status, body, raw, message, detail: '' };
  } catch (err) {
    const detail = ctl.signal.aborted
      ? 'no answer within ' + Math.round((o.timeoutMs ?? 0) / 1000) + ' s'
      : text(err instanceof Error ? err.message : err) || 'network error';
    return noAnswer('Cannot reach ' + service + ' (' + detail + ')', detail);
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}
