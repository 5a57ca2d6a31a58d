// The live view's calls to its worker: with the session cookie, a key where one opens a session,
// and a deadline, so that no answer that never comes leaves the viewer waiting for ever.
import { request } from '/ui/http.js';

/** No call waits longer: the viewer says so and asks again, never showing "Starting…" for ever. */
const CALL_TIMEOUT_MS = 20000;

/**
 * One call to the worker, with the session cookie (and a key, to open a session).
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {{ key?: string, body?: unknown }} [opts]
 * @returns {Promise<import('/ui/http.js').Answer<T>>}
 */
export function call(method, path, opts) {
  const o = opts ?? {};
  /** @type {Record<string, string>} */
  const headers = {};
  if (o.key) headers.Authorization = 'Bearer ' + o.key;
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin' };
  if (o.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(o.body);
  }
  return request(path, init, { service: 'the worker', timeoutMs: CALL_TIMEOUT_MS });
}

/**
 * An answer that may change by itself: no answer (the worker restarting, a call that timed
 * out) or the worker's or the door's 5xx. Asked again later; a refusal is not.
 * @param {import('/ui/http.js').Answer<unknown>} r
 */
export const passing = (r) => r.status === 0 || r.status >= 500;
