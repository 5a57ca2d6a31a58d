// persona-browser control panel: the API key card, and the check that a key works.
import { isObject } from '/ui/dom.js';
import { KEY_TOPIC, keyCard } from '/ui/key-card.js';
import { api, notify, onKeyChange, reportFailure, setKey, state } from './core.js';

const showKey = keyCard({
  heading: 'API key',
  label: 'API key',
  save: 'Save key',
  keptWhere: 'Kept in this browser only (localStorage).',
  inUse: 'API key saved in this browser.',
  onKey(key) {
    setKey(key);
    void verifyKey(true);
  },
  onProblem: (problem) => notify('error', problem, KEY_TOPIC),
  onForget() {
    setKey(null);
    notify('ok', 'API key forgotten.');
  },
});

onKeyChange(showKey);

/**
 * Checks the key with a side-effect-free authenticated call (metrics: 404 without a waker). A
 * key that works takes away the messages a wrong one left.
 * @param {boolean} announce say so when it works
 */
export async function verifyKey(announce) {
  const r = await api('GET', '/system/metrics', { auth: true, timeoutMs: 10000 });
  if (r.status === 401) return reportFailure('Checking the API key', r);
  // A worker started without a key answers 500 with a `detail` saying so.
  if (r.status === 500 && isObject(r.body) && r.body.detail) {
    return reportFailure('Checking the API key', r);
  }
  if (r.status === 0 && state.key) {
    return notify('error', 'Checking the API key: ' + r.message, KEY_TOPIC);
  }
  notify.clear(KEY_TOPIC);
  if (announce) notify('ok', 'API key accepted.');
}
