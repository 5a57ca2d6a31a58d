// persona-browser fleet panel: plain browser JavaScript, no build step, nothing loaded from
// elsewhere (uPlot comes from the waker at /vendor/uplot/). Every string from the API reaches
// the DOM through textContent or setAttribute, never through HTML parsing.
//
// Stable hooks for tests and scripts: each persona row is `tr[data-persona="<name>"]` with
// `data-state`; its buttons are `button[data-action="wake|sleep|restart"][data-persona]`; its
// links are `a[data-link="panel|live"]`; its proxy cell is `[data-field="proxy"]`, with
// `[data-field="proxy-failing"]` ("proxy failing") while the worker's proxy errors grow; each chart is `[data-chart="cpu|mem|requests"]` with
// `data-series` (persona names drawn, comma-separated) and `data-points` (x values drawn).
'use strict';

(function () {
  const KEY_STORAGE = 'persona-browser.fleet-key';
  const { el, text, clock } = window.PersonaUi;
  const keys = window.PersonaUi.keyStore(() => sessionStorage, KEY_STORAGE);
  const readStoredKey = keys.read;
  const storeKey = keys.write;
  const PERSONAS_EVERY_MS = 3000;
  const METRICS_EVERY_MS = 5000;
  const REQUESTS_EVERY_MS = 60000;
  const REQUEST_HOURS = 48;
  const MAX_MESSAGES = 8;
  const OK_MESSAGE_MS = 8000;
  const ACTIONS = [
    { action: 'wake', label: 'Wake', busy: 'Waking…', cls: '' },
    { action: 'sleep', label: 'Sleep', busy: 'Sleeping…', cls: 'secondary' },
    { action: 'restart', label: 'Restart', busy: 'Restarting…', cls: 'danger' },
  ];
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

  const $ = (id) => document.getElementById(id);

  const state = {
    key: readStoredKey(),
    /** Last PersonaList rows (null until read). */
    personas: null,
    /** Last metrics body. */
    metrics: null,
    /** name → [{hour, count}] */
    requests: new Map(),
    /** "name/action" of calls in flight. */
    busy: new Set(),
    /** 'ok' | 'unreachable' | 'unauthorized' */
    conn: 'ok',
  };

  // ---------------------------------------------------------------- small helpers

  function fmtDuration(s) {
    if (typeof s !== 'number' || !isFinite(s)) return '?';
    const t = Math.max(0, Math.round(s));
    if (t < 60) return t + ' s';
    if (t < 3600) return Math.floor(t / 60) + ' min';
    if (t < 86400) return Math.floor(t / 3600) + ' h ' + Math.floor((t % 3600) / 60) + ' min';
    return Math.floor(t / 86400) + ' d ' + Math.floor((t % 86400) / 3600) + ' h';
  }

  function ago(iso) {
    const ms = Date.parse(text(iso));
    if (!isFinite(ms)) return null;
    return fmtDuration((Date.now() - ms) / 1000) + ' ago';
  }

  function localTime(iso) {
    const d = new Date(text(iso));
    return isFinite(d.getTime()) ? d.toLocaleString() : text(iso);
  }

  /** The persona's own port on the host this panel was loaded from. */
  function personaBase(port) {
    return 'http://' + location.hostname + ':' + port;
  }

  // ---------------------------------------------------------------- API access

  function errorText(status, body, raw) {
    if (body && typeof body === 'object') {
      for (const k of ['error', 'detail', 'message']) {
        if (typeof body[k] === 'string' && body[k]) return body[k];
      }
    }
    const snippet = text(raw).trim().slice(0, 200);
    return 'HTTP ' + status + (snippet ? ': ' + snippet : '');
  }

  /**
   * One call to the waker with the service key. Never throws: resolves to {ok, status, body,
   * message}; `status` 0 when the waker could not be reached.
   */
  async function api(method, path, timeoutMs) {
    if (!state.key) return { ok: false, status: 0, body: null, message: 'No service key' };
    const ctl = new AbortController();
    const ms = timeoutMs || 15000;
    const timer = setTimeout(() => ctl.abort(), ms);
    try {
      const res = await fetch(path, {
        method,
        headers: { Authorization: 'Bearer ' + state.key },
        signal: ctl.signal,
        cache: 'no-store',
      });
      const raw = await res.text();
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // not JSON: errorText shows the start of it
      }
      if (res.status === 401) keyRejected(errorText(res.status, body, raw));
      else setConn('ok');
      if (res.ok) return { ok: true, status: res.status, body, message: '' };
      return { ok: false, status: res.status, body, message: errorText(res.status, body, raw) };
    } catch (err) {
      const message = ctl.signal.aborted
        ? 'no answer within ' + Math.round(ms / 1000) + ' s'
        : text(err && err.message) || 'network error';
      setConn('unreachable', message);
      return {
        ok: false,
        status: 0,
        body: null,
        message: 'Cannot reach the waker (' + message + ')',
      };
    } finally {
      clearTimeout(timer);
    }
  }

  // ---------------------------------------------------------------- connection state

  function setConn(conn, detail) {
    state.conn = conn;
    const banner = $('conn-banner');
    if (conn === 'ok') {
      banner.hidden = true;
      banner.replaceChildren();
      return;
    }
    banner.hidden = false;
    banner.dataset.conn = conn;
    if (conn === 'unreachable') {
      banner.replaceChildren(
        el('strong', null, 'The waker cannot be reached'),
        ' at ' +
          location.origin +
          ' (' +
          text(detail) +
          '). Is it running? Retrying every ' +
          PERSONAS_EVERY_MS / 1000 +
          ' s.',
      );
    } else {
      banner.replaceChildren(
        el('strong', null, 'Wrong service key'),
        ': the waker answered 401 (' +
          text(detail) +
          '). Enter the SERVICE_KEY the waker was started with.',
      );
    }
  }

  function keyRejected(detail) {
    setKey(null);
    setConn('unauthorized', detail);
    $('key-input').focus();
  }

  // ---------------------------------------------------------------- messages

  const notify = window.PersonaUi.notifier($('messages'), MAX_MESSAGES, OK_MESSAGE_MS);

  // ---------------------------------------------------------------- service key

  function setKey(key) {
    state.key = key;
    storeKey(key);
    $('key-form').hidden = Boolean(key);
    $('key-saved').hidden = !key;
    if (!key) {
      $('key-input').value = '';
      state.personas = null;
      renderPersonas();
    }
  }

  $('key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = $('key-input').value.trim();
    if (!key) return notify('error', 'Type the service key first.');
    if (/[^\x20-\x7e]/.test(key)) {
      return notify('error', 'The service key can only contain printable ASCII characters.');
    }
    setKey(key);
    setConn('ok');
    refreshAll();
  });

  $('key-forget').addEventListener('click', () => {
    setKey(null);
    notify('ok', 'Service key forgotten.');
    $('key-input').focus();
  });

  // ---------------------------------------------------------------- personas

  /** name → {tr, cells, buttons}: rows are kept and updated in place, never rebuilt. */
  const rows = new Map();

  function renderPersonas() {
    const body = $('personas-body');
    const list = state.personas;
    const empty = $('personas-empty');
    if (!list) {
      body.replaceChildren();
      rows.clear();
      empty.hidden = false;
      empty.textContent = state.key
        ? 'Loading the personas…'
        : 'Enter the service key to see the personas.';
      $('personas-summary').textContent = '';
      $('fleet-summary').textContent = '';
      return;
    }
    empty.hidden = list.length > 0;
    empty.textContent = 'The waker has no personas: add a folder with a persona.env.';
    // A row that is replaced under the pointer would swallow a click (and lose focus): rows
    // stay, and only the cells whose content changed are redrawn.
    const names = list.map((p) => text(p.name));
    for (const [name, row] of rows) {
      if (!names.includes(name)) {
        row.tr.remove();
        rows.delete(name);
      }
    }
    list.forEach((p, i) => {
      const name = text(p.name);
      let row = rows.get(name);
      if (!row) {
        row = createRow(name);
        rows.set(name, row);
      }
      updateRow(row, p);
      if (body.children[i] !== row.tr) body.insertBefore(row.tr, body.children[i] || null);
    });
    const counts = {};
    for (const p of list) counts[p.state] = (counts[p.state] || 0) + 1;
    const summary =
      list.length +
      (list.length === 1 ? ' persona' : ' personas') +
      (list.length
        ? ' · ' +
          Object.entries(counts)
            .map(([k, n]) => n + ' ' + k)
            .join(', ')
        : '');
    $('personas-summary').textContent = summary;
    $('fleet-summary').textContent = summary;
  }

  function createRow(name) {
    const cells = {
      name: el('td', { className: 'name-cell' }, name),
      state: el('td', { className: 'state-cell' }),
      port: el('td', { className: 'num' }),
      proxy: el('td', { className: 'proxy-cell', data: { field: 'proxy' } }),
      commit: el('td'),
      last: el('td'),
      usage: el('td', { className: 'num usage-cell', data: { field: 'usage' } }),
      links: el('td', { className: 'links-cell' }),
      actions: el('td', { className: 'actions-cell' }),
    };
    const buttons = {};
    for (const a of ACTIONS) {
      const b = el(
        'button',
        {
          className: a.cls,
          attrs: { type: 'button', 'aria-label': a.label + ' ' + name },
          data: { action: a.action, persona: name },
        },
        a.label,
      );
      b.addEventListener('click', () => void act(name, a));
      buttons[a.action] = b;
      cells.actions.append(b);
    }
    const tr = el('tr', { data: { persona: name } }, ...Object.values(cells));
    return { tr, cells, buttons };
  }

  /** Replaces a cell's content only when it would look different. */
  function setCell(cell, key, build) {
    if (cell.dataset.sig === key) return;
    cell.dataset.sig = key;
    cell.replaceChildren(...build());
  }

  function updateRow(row, p) {
    const st = text(p.state);
    const c = row.cells;
    row.tr.dataset.state = st;
    const since = 'for ' + (ago(p.since) || '?').replace(/ ago$/, '');
    setCell(c.state, [st, since, p.mode, p.error].join('\u0000'), () => [
      el('span', { className: 'badge state-' + st.replace(/[^a-z]/g, '') }, st),
      ' ',
      el('span', { className: 'muted', title: localTime(p.since) }, since),
      ' ',
      el('span', { className: 'muted mode' }, text(p.mode)),
      p.error
        ? el('div', { className: 'error-text', data: { field: 'error' } }, text(p.error))
        : '',
    ]);
    setCell(c.port, text(p.port), () => [text(p.port)]);
    const proxy = p.proxy || null;
    row.tr.dataset.proxy = !proxy ? 'none' : proxy.failing ? 'failing' : 'ok';
    setCell(c.proxy, JSON.stringify(proxy), () => proxyCell(proxy));
    const commit = p.commit && p.commit.hash ? p.commit : null;
    setCell(c.commit, commit ? JSON.stringify(commit) : '', () => [
      commit
        ? el(
            'code',
            { title: text(commit.subject) + ' (' + localTime(commit.date) + ')' },
            text(commit.hash).slice(0, 7),
          )
        : el('span', { className: 'muted' }, '—'),
    ]);
    let last = null;
    if (p.idle_seconds === null && p.last_request) last = 'request in progress';
    else if (p.last_request) last = ago(p.last_request);
    c.last.title = p.last_request ? localTime(p.last_request) : '';
    setCell(c.last, text(last), () => [last || el('span', { className: 'muted' }, 'none yet')]);
    const u = latestUsage(text(p.name));
    const usage = u ? u.cpu_pct.toFixed(1) + ' % · ' + Math.round(u.rss_mb) + ' MB' : '—';
    c.usage.title = u ? u.procs + ' processes under pid ' + u.pid : 'No sample while down';
    setCell(c.usage, usage, () => [usage]);
    const base = personaBase(Number(p.port));
    // The key travels in the fragment: a browser never sends it to the server, so it ends up
    // in no request log.
    const live = base + '/vnc/#key=' + encodeURIComponent(state.key || '');
    setCell(c.links, base + '\u0000' + live, () => [
      el(
        'a',
        { attrs: { href: base + '/', target: '_blank', rel: 'noopener' }, data: { link: 'panel' } },
        'Panel',
      ),
      ' ',
      el(
        'a',
        {
          attrs: { href: live, target: '_blank', rel: 'noopener noreferrer' },
          data: { link: 'live' },
        },
        'Live view',
      ),
    ]);
    for (const a of ACTIONS) updateButton(row.buttons[a.action], p, a);
  }

  /** A persona's proxy: country, exit address (session in its title), errors, failing. */
  function proxyCell(proxy) {
    if (!proxy) return [el('span', { className: 'muted' }, '—')];
    const errors = proxy.proxy_errors;
    return [
      el('code', { title: 'PROXY_COUNTRY' }, text(proxy.country)),
      ' ',
      proxy.exit_ip
        ? el(
            'span',
            { title: proxy.session ? 'session ' + text(proxy.session) : '' },
            text(proxy.exit_ip),
          )
        : el('span', { className: 'muted' }, 'no identity yet'),
      typeof errors === 'number'
        ? el(
            'div',
            { className: 'muted', data: { field: 'proxy-errors' } },
            errors + (errors === 1 ? ' proxy error' : ' proxy errors'),
          )
        : '',
      proxy.failing
        ? el(
            'div',
            {},
            el(
              'span',
              {
                className: 'badge proxy-failing',
                attrs: { role: 'status' },
                data: { field: 'proxy-failing' },
              },
              'proxy failing',
            ),
          )
        : '',
    ];
  }

  /** The persona's numbers in the newest metrics sample, or null while it is down. */
  function latestUsage(name) {
    const m = state.metrics;
    const last = m && m.samples.length ? m.samples[m.samples.length - 1] : null;
    return last && last.instances ? last.instances[name] || null : null;
  }

  function updateButton(b, p, a) {
    const busy = state.busy.has(p.name + '/' + a.action);
    let reason = '';
    if (a.action === 'wake' && (p.state === 'running' || p.state === 'waking'))
      reason = 'Already ' + p.state;
    if (a.action === 'sleep' && (p.state === 'sleeping' || p.state === 'stopping'))
      reason = 'Already ' + p.state;
    const label = busy ? a.busy : a.label;
    if (b.textContent !== label) b.textContent = label;
    b.disabled = busy || Boolean(reason);
    if (reason) b.setAttribute('title', reason);
    else b.removeAttribute('title');
  }

  async function act(name, a) {
    const id = name + '/' + a.action;
    if (state.busy.has(id)) return;
    state.busy.add(id);
    renderPersonas();
    try {
      const r = await api(
        'POST',
        '/api/personas/' + encodeURIComponent(name) + '/' + a.action,
        120000,
      );
      if (r.ok) {
        const said = r.body && (r.body.message || r.body.state);
        notify('ok', a.label + ' ' + name + ': ' + (said ? text(said) : 'done'));
      } else if (r.status !== 401) {
        // 401: the banner says the key is wrong and the key form is back.
        notify('error', a.label + ' ' + name + ' failed: ' + r.message);
      }
    } finally {
      state.busy.delete(id);
      await refreshPersonas();
    }
  }

  async function refreshPersonas() {
    if (!state.key) return;
    const r = await api('GET', '/api/personas');
    if (r.ok && r.body && Array.isArray(r.body.personas)) {
      const before = state.personas ? state.personas.map((p) => p.name).join(',') : null;
      state.personas = r.body.personas;
      renderPersonas();
      if (before !== state.personas.map((p) => p.name).join(',')) void refreshRequests();
    } else if (r.status !== 401 && r.status !== 0 && !r.ok) {
      notify('error', 'Reading the personas failed: ' + r.message);
    } else if (r.ok) {
      notify('error', 'Reading the personas failed: the answer has no persona list');
    }
  }

  // ---------------------------------------------------------------- host and charts

  function renderHost() {
    const dl = $('host-details');
    const m = state.metrics;
    const last = m && m.samples.length ? m.samples[m.samples.length - 1] : null;
    dl.replaceChildren();
    if (!last) {
      $('host-summary').textContent = m
        ? 'No sample yet: the first comes within ' + m.interval_s + ' s.'
        : 'No sample yet.';
      return;
    }
    const s = last.system;
    $('host-summary').textContent =
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
    const m = state.metrics;
    if (m) {
      for (const s of m.samples) {
        for (const n of Object.keys(s.instances || {})) if (!names.includes(n)) names.push(n);
      }
    }
    return names;
  }

  const charts = {};

  /**
   * Draws one chart: x values (epoch seconds) and one y array per series. The uPlot instance
   * is rebuilt when the series change and fed new data otherwise.
   */
  function draw(kind, xs, series, yLabel, opts) {
    const box = document.querySelector('[data-chart="' + kind + '"]');
    const names = series.map((s) => s.label);
    const signature = names.join('\u0000');
    const width = Math.max(280, box.clientWidth || 600);
    const data = [xs, ...series.map((s) => s.values)];
    let c = charts[kind];
    if (!c || c.signature !== signature) {
      if (c) c.plot.destroy();
      const plot = new uPlot(
        {
          width,
          height: 220,
          scales: {
            // The metrics charts always span the whole window, so the time axis keeps its scale.
            x: opts.xRange ? { time: true, range: opts.xRange } : { time: true },
            y: { range: (u, min, max) => [0, Math.max(max, opts.minTop)] },
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
      c = charts[kind] = { plot, signature };
    } else {
      c.plot.setData(data);
    }
    box.dataset.series = series
      .filter((s) => !s.host)
      .map((s) => s.label)
      .join(',');
    box.dataset.points = String(xs.length);
  }

  /** The x range of the metrics charts: the window up to the newest sample. */
  function windowRange(u, min, max) {
    const w = state.metrics ? state.metrics.window_s : 0;
    return [Math.min(min, max - w), max];
  }

  const colorOf = (names, name) => PALETTE[names.indexOf(name) % PALETTE.length];

  function renderMetricCharts() {
    const m = state.metrics;
    if (!m || typeof uPlot === 'undefined') return;
    const names = plotNames();
    const xs = m.samples.map((s) => s.ts);
    const field = (name, key) =>
      m.samples.map((s) => {
        const i = s.instances ? s.instances[name] : null;
        return i ? i[key] : null;
      });
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
      { minTop: 10, points: xs.length < 3, xRange: windowRange },
    );
    draw(
      'mem',
      xs,
      names.map((n) => ({ label: n, color: colorOf(names, n), values: field(n, 'rss_mb') })),
      'MB',
      { minTop: 10, points: xs.length < 3, xRange: windowRange },
    );
    $('charts-summary').textContent =
      m.samples.length + (m.samples.length === 1 ? ' sample' : ' samples');
  }

  function renderRequestChart() {
    if (typeof uPlot === 'undefined') return;
    const names = plotNames().filter((n) => state.requests.has(n));
    if (!names.length) return;
    const hours = state.requests.get(names[0]).map((h) => Date.parse(h.hour) / 1000);
    const series = names.map((n) => {
      const byHour = new Map(
        state.requests.get(n).map((h) => [Date.parse(h.hour) / 1000, h.count]),
      );
      return {
        label: n,
        color: colorOf(plotNames(), n),
        values: hours.map((x) => (byHour.has(x) ? byHour.get(x) : null)),
      };
    });
    draw('requests', hours, series, 'requests', { minTop: 5, points: true });
  }

  async function refreshMetrics() {
    if (!state.key) return;
    const r = await api('GET', '/api/metrics');
    if (r.ok && r.body && Array.isArray(r.body.samples)) {
      state.metrics = r.body;
      renderHost();
      if (state.personas) renderPersonas();
      renderMetricCharts();
    } else if (!r.ok && r.status !== 401 && r.status !== 0) {
      $('host-summary').textContent = 'Reading the metrics failed: ' + r.message;
    }
  }

  async function refreshRequests() {
    if (!state.key || !state.personas) return;
    const names = state.personas.map((p) => text(p.name));
    const answers = await Promise.all(
      names.map((n) =>
        api(
          'GET',
          '/api/personas/' + encodeURIComponent(n) + '/requests?hours=' + REQUEST_HOURS,
        ).then((r) => [n, r]),
      ),
    );
    const failed = [];
    state.requests = new Map();
    for (const [n, r] of answers) {
      if (r.ok && r.body && Array.isArray(r.body.requests)) state.requests.set(n, r.body.requests);
      else if (r.status !== 401 && r.status !== 0) failed.push(n + ' (' + r.message + ')');
    }
    if (failed.length) notify('error', 'Reading requests per hour failed for ' + failed.join(', '));
    renderRequestChart();
  }

  window.addEventListener('resize', () => {
    for (const [kind, c] of Object.entries(charts)) {
      const box = document.querySelector('[data-chart="' + kind + '"]');
      c.plot.setSize({ width: Math.max(280, box.clientWidth || 600), height: 220 });
    }
  });

  // ---------------------------------------------------------------- polling

  /** Runs `work` now and then every `ms`, never two at once, paused while the tab is hidden. */
  function poll(work, ms) {
    let timer = null;
    let running = false;
    const run = async () => {
      clearTimeout(timer);
      timer = null;
      if (running || document.hidden) return;
      running = true;
      try {
        await work();
      } finally {
        running = false;
        timer = setTimeout(run, ms);
      }
    };
    return run;
  }

  const pollPersonas = poll(refreshPersonas, PERSONAS_EVERY_MS);
  const pollMetrics = poll(refreshMetrics, METRICS_EVERY_MS);
  const pollRequests = poll(refreshRequests, REQUESTS_EVERY_MS);

  /** Polls of the panel's other parts (updates.js), started and resumed with the rest. */
  const morePolls = [];

  function refreshAll() {
    void pollPersonas();
    void pollMetrics();
    void pollRequests();
    for (const run of morePolls) void run();
  }

  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) refreshAll();
  });

  // ---------------------------------------------------------------- for the other parts

  /** What updates.js uses: the keyed API call, and a poll that runs with the panel's own. */
  window.PersonaFleet = Object.freeze({
    api,
    hasKey: () => Boolean(state.key),
    addPoll(work, ms) {
      const run = poll(work, ms);
      morePolls.push(run);
      void run();
    },
  });

  // ---------------------------------------------------------------- start up

  if (typeof uPlot === 'undefined') {
    notify('error', 'The chart library did not load (/vendor/uplot/uPlot.iife.min.js): no plots.');
  }
  setKey(state.key);
  renderPersonas();
  refreshAll();
})();
