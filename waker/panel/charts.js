// persona-browser fleet panel: the Host card and the Load charts (uPlot, served by the waker at
// /vendor/uplot/): CPU and memory per persona over the metrics window, requests per hour.
//
// Stable hooks for tests: each chart is `[data-chart="cpu|mem|requests"]` with `data-series`
// (persona names drawn, comma-separated) and `data-points` (x values drawn).
import { byId, el, text } from '/ui/dom.js';
import { api, fmtDuration, notify, state } from './core.js';

/** @typedef {import('@persona-browser/contracts').MetricsBody} MetricsBody */
/**
 * One line of a chart.
 * @typedef {object} Series
 * @property {string} label
 * @property {string} color
 * @property {(number | null)[]} values
 * @property {number} [width]
 * @property {number[]} [dash]
 * @property {boolean} [host] the host's line, not a persona's
 */

const REQUEST_HOURS = 48;
// Colour-blind-safe palette; a persona keeps its colour while the set of names is the same.
const PALETTE = [
  '#2458d3',
  '#d55e00',
  '#009e73',
  '#cc79a7',
  '#e69f00',
  '#56b4e9',
  '#8c564b',
  '#6a3d9a',
  '#b15928',
  '#1b9e77',
];

/** Whatever shows numbers of the newest sample wants to know when one arrives. */
/** @type {() => void} */
let metricsArrived = () => {};
export const onMetrics = (/** @type {() => void} */ fn) => {
  metricsArrived = fn;
};

function renderHost() {
  const dl = byId('host-details');
  const m = state.metrics;
  const last = m?.samples.at(-1);
  dl.replaceChildren();
  if (!m || !last) {
    byId('host-summary').textContent = m
      ? 'No sample yet: the first comes within ' + m.interval_s + ' s.'
      : 'No sample yet.';
    return;
  }
  const s = last.system;
  byId('host-summary').textContent =
    'Sampled ' +
    new Date(last.ts * 1000).toLocaleTimeString() +
    ' · every ' +
    m.interval_s +
    ' s, ' +
    fmtDuration(m.window_s) +
    ' kept';
  const rows = [
    ['CPU', s.cpu_pct.toFixed(1) + ' %'],
    ['Memory used', Math.round(s.mem_used_mb) + ' of ' + Math.round(s.mem_total_mb) + ' MB'],
    ['Load (1 min, 5 min)', s.load1.toFixed(2) + ', ' + s.load5.toFixed(2)],
    ['Temperature', s.temp_c === null ? 'no sensor' : s.temp_c.toFixed(1) + ' °C'],
  ];
  for (const [k, v] of rows) dl.append(el('div', null, el('dt', null, k), el('dd', null, v)));
}

/** Persona names to plot: those listed by the waker, then any seen only in samples. */
function plotNames() {
  const names = state.personas ? state.personas.map((p) => text(p.name)) : [];
  for (const s of state.metrics?.samples ?? []) {
    for (const n of Object.keys(s.instances || {})) if (!names.includes(n)) names.push(n);
  }
  return names;
}

/** @type {Map<string, { plot: import('uplot'), signature: string }>} one uPlot per chart kind */
const charts = new Map();

/** @param {string} kind @returns {HTMLElement} the chart's box */
function chartBox(kind) {
  const box = document.querySelector('[data-chart="' + kind + '"]');
  if (!(box instanceof HTMLElement)) throw new Error('no chart ' + kind);
  return box;
}

/** @param {HTMLElement} box */
const chartWidth = (box) => Math.max(280, box.clientWidth || 600);

/**
 * @typedef {object} DrawOptions
 * @property {number} minTop the y axis goes at least this high
 * @property {boolean} points mark each value (few values)
 * @property {import('uplot').Range.Function} [xRange]
 */

/**
 * Draws one chart: x values (epoch seconds) and one y array per series. The uPlot instance
 * is rebuilt when the series change and fed new data otherwise.
 * @param {string} kind
 * @param {number[]} xs
 * @param {Series[]} series
 * @param {string} yLabel
 * @param {DrawOptions} opts
 */
function draw(kind, xs, series, yLabel, opts) {
  if (typeof uPlot === 'undefined') return;
  const box = chartBox(kind);
  const signature = series.map((s) => s.label).join('\u0000');
  /** @type {import('uplot').AlignedData} */
  const data = [xs, ...series.map((s) => s.values)];
  const c = charts.get(kind);
  if (c && c.signature === signature) {
    c.plot.setData(data);
  } else {
    c?.plot.destroy();
    const plot = new uPlot(
      {
        width: chartWidth(box),
        height: 220,
        scales: {
          // The metrics charts always span the whole window, so the time axis keeps its scale.
          x: opts.xRange ? { time: true, range: opts.xRange } : { time: true },
          y: { range: (_u, _min, max) => [0, Math.max(max, opts.minTop)] },
        },
        axes: [{}, { label: yLabel, size: 60 }],
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: s.width || 2,
            dash: s.dash,
            points: { show: opts.points },
            spanGaps: false,
          })),
        ],
        legend: { live: true },
      },
      data,
      box,
    );
    charts.set(kind, { plot, signature });
  }
  box.dataset.series = series
    .filter((s) => !s.host)
    .map((s) => s.label)
    .join(',');
  box.dataset.points = String(xs.length);
}

/** @type {import('uplot').Range.Function} the metrics' x range: the window up to the newest sample */
function windowRange(_u, min, max) {
  const w = state.metrics ? state.metrics.window_s : 0;
  return [Math.min(min, max - w), max];
}

/** @param {string[]} names @param {string} name */
const colorOf = (names, name) => PALETTE[names.indexOf(name) % PALETTE.length] ?? '#2458d3';

function renderMetricCharts() {
  const m = state.metrics;
  if (!m) return;
  const names = plotNames();
  const xs = m.samples.map((s) => s.ts);
  /** @param {string} name @param {'cpu_pct' | 'rss_mb'} key */
  const field = (name, key) => m.samples.map((s) => s.instances?.[name]?.[key] ?? null);
  const few = xs.length < 3;
  draw(
    'cpu',
    xs,
    [
      ...names.map((n) => ({ label: n, color: colorOf(names, n), values: field(n, 'cpu_pct') })),
      {
        label: 'host (all)',
        color: '#9aa4b5',
        dash: [6, 4],
        width: 1.5,
        host: true,
        values: m.samples.map((s) => s.system.cpu_pct),
      },
    ],
    '%',
    { minTop: 10, points: few, xRange: windowRange },
  );
  draw(
    'mem',
    xs,
    names.map((n) => ({ label: n, color: colorOf(names, n), values: field(n, 'rss_mb') })),
    'MB',
    { minTop: 10, points: few, xRange: windowRange },
  );
  byId('charts-summary').textContent =
    m.samples.length + (m.samples.length === 1 ? ' sample' : ' samples');
}

function renderRequestChart() {
  const names = plotNames().filter((n) => state.requests.has(n));
  const first = names[0] === undefined ? undefined : state.requests.get(names[0]);
  if (!first) return;
  const hours = first.map((h) => Date.parse(h.hour) / 1000);
  const series = names.map((n) => {
    const byHour = new Map(
      (state.requests.get(n) ?? []).map((h) => [Date.parse(h.hour) / 1000, h.count]),
    );
    return {
      label: n,
      color: colorOf(plotNames(), n),
      values: hours.map((x) => byHour.get(x) ?? null),
    };
  });
  draw('requests', hours, series, 'requests', { minTop: 5, points: true });
}

/** Reads the metrics window: the Host card, the charts and each persona's numbers follow. */
export async function refreshMetrics() {
  if (!state.key) return;
  /** @type {import('/ui/http.js').Answer<MetricsBody>} */
  const r = await api('GET', '/api/metrics');
  if (r.ok && Array.isArray(r.body?.samples)) {
    state.metrics = r.body;
    renderHost();
    metricsArrived();
    renderMetricCharts();
  } else if (!r.ok && r.status !== 401 && r.status !== 0) {
    byId('host-summary').textContent = 'Reading the metrics failed: ' + r.message;
  }
}

/** Reads the requests per hour of every persona listed. */
export async function refreshRequests() {
  if (!state.key || !state.personas) return;
  const names = state.personas.map((p) => text(p.name));
  const answers = await Promise.all(
    names.map(async (n) => {
      /** @type {import('/ui/http.js').Answer<{ requests?: { hour: string, count: number }[] }>} */
      const r = await api(
        'GET',
        '/api/personas/' + encodeURIComponent(n) + '/requests?hours=' + REQUEST_HOURS,
      );
      return { n, r };
    }),
  );
  const failed = [];
  state.requests = new Map();
  for (const { n, r } of answers) {
    const requests = r.ok ? r.body?.requests : undefined;
    if (Array.isArray(requests)) state.requests.set(n, requests);
    else if (r.status !== 401 && r.status !== 0) failed.push(n + ' (' + r.message + ')');
  }
  if (failed.length) notify('error', 'Reading requests per hour failed for ' + failed.join(', '));
  renderRequestChart();
}

window.addEventListener('resize', () => {
  for (const [kind, c] of charts)
    c.plot.setSize({ width: chartWidth(chartBox(kind)), height: 220 });
});
