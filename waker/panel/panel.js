// persona-browser fleet panel, served by the waker at `/`: plain ES modules, no build step,
// nothing loaded from elsewhere (uPlot comes from the waker at /vendor/uplot/). Every string
// from the API reaches the DOM through textContent or setAttribute, never through HTML
// parsing. The parts: personas.js (the table), cluster.js and nodes.js (a persona's node and
// moving it, the Nodes card; on a cluster only), charts.js (Host and Load), updates.js (the
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
import { onNamesChange, onPersonasShown, refreshPersonas, renderPersonas } from './personas.js';
import { onClusterChange } from './cluster.js';
import { onNodesChange, refreshNodes, renderNodes } from './nodes.js';
import { onSiteChecksChange, refreshSiteChecks } from './site-checks.js';
import './updates.js';

const METRICS_EVERY_MS = 5000;
const REQUESTS_EVERY_MS = 60000;
const NODES_EVERY_MS = 5000;

onKeyChange(renderPersonas);
onKeyChange(renderNodes);
// A persona's numbers come with each metrics sample; new names get their requests read.
onMetrics(() => {
  if (state.personas) renderPersonas();
});
onNamesChange(() => void refreshRequests());
// The Node column and the move controls follow the node list; the Nodes card counts the
// personas of each node.
onNodesChange(() => {
  if (state.personas) renderPersonas();
});
onPersonasShown(renderNodes);
onClusterChange({ render: renderPersonas, refresh: refreshPersonas });

addPoll(refreshPersonas, PERSONAS_EVERY_MS);
addPoll(refreshMetrics, METRICS_EVERY_MS);
addPoll(refreshRequests, REQUESTS_EVERY_MS);
addPoll(refreshNodes, NODES_EVERY_MS);
// Site checks run on schedules of hours: a read every 10 s shows one soon enough.
onSiteChecksChange(() => {
  if (state.personas) renderPersonas();
});
addPoll(refreshSiteChecks, 10000);

if (typeof uPlot === 'undefined') {
  notify('error', 'The chart library did not load (/vendor/uplot/uPlot.iife.min.js): no plots.');
}
setKey(state.key);
refreshAll();
