// persona-browser fleet panel, served by the waker at `/`: plain ES modules, no build step,
// nothing loaded from elsewhere (uPlot comes from the waker at /vendor/uplot/). Every string
// from the API reaches the DOM through textContent or setAttribute, never through HTML
// parsing. The parts: personas.js (the table), charts.js (Host and Load), updates.js (the
// supervisor); core.js holds the key, the call to the waker and the polls.
import {
  PERSONAS_EVERY_MS,
  addPoll,
  notify,
  onKeyChange,
  refreshAll,
  setKey,
  state,
} from './core.js';
import { onMetrics, refreshMetrics, refreshRequests } from './charts.js';
import { onNamesChange, refreshPersonas, renderPersonas } from './personas.js';
import './updates.js';

const METRICS_EVERY_MS = 5000;
const REQUESTS_EVERY_MS = 60000;

onKeyChange(renderPersonas);
// A persona's numbers come with each metrics sample; new names get their requests read.
onMetrics(() => {
  if (state.personas) renderPersonas();
});
onNamesChange(() => void refreshRequests());

addPoll(refreshPersonas, PERSONAS_EVERY_MS);
addPoll(refreshMetrics, METRICS_EVERY_MS);
addPoll(refreshRequests, REQUESTS_EVERY_MS);

if (typeof uPlot === 'undefined') {
  notify('error', 'The chart library did not load (/vendor/uplot/uPlot.iife.min.js): no plots.');
}
setKey(state.key);
refreshAll();
