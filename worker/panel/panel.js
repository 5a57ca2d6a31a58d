// persona-browser control panel, served by the worker at `/`: plain ES modules, no build step,
// nothing loaded from elsewhere. Every string that comes from the API reaches the DOM through
// textContent or setAttribute, never through HTML parsing, so a page title such as
// "<img onerror=…>" stays text. The parts: key.js (the key card), status.js (Browser card and
// Pages table), shots.js (the chosen page), live.js (the live view), actions.js (the forms and
// buttons), plugins.js (the plugin runner), records.js (failure bundles and recordings);
// core.js holds what they share.
import { byId, text } from '/ui/dom.js';
import { api, refreshStatus, setKey, state } from './core.js';
import { verifyKey } from './key.js';
import './status.js';
import './actions.js';
import './plugins.js';
import './records.js';

/** @typedef {import('@persona-browser/contracts').PingResult} PingResult */

/** The persona and the commit this worker runs, beside the panel's name. */
async function showIdentity() {
  /** @type {import('/ui/http.js').Answer<PingResult>} */
  const r = await api('GET', '/system/ping', { timeoutMs: 15000 });
  if (!r.ok) return;
  const b = r.body;
  const parts = [b.persona ? 'persona ' + text(b.persona) : 'no persona'];
  if (b.commit && b.commit.hash) parts.push('commit ' + text(b.commit.hash).slice(0, 7));
  const identity = byId('identity');
  identity.textContent = parts.join(' · ');
  if (b.commit && b.commit.subject) identity.setAttribute('title', text(b.commit.subject));
  if (b.persona) document.title = 'persona-browser · ' + text(b.persona);
}

// The key found in this browser: the card, the buttons, the live view and screenshots follow it.
setKey(state.key);
refreshStatus();
void showIdentity();
if (state.key) void verifyKey(false);
