// chaosrun game day page: plain JS and Chart.js (page/chart.min.js, served
// from the binary); nothing from the network.
'use strict';
const token = new URLSearchParams(location.search).get('token') || '';
const $ = (id) => document.getElementById(id);
let meta = null;
let updates = 0; // snapshots received (read by tests)
window.gameday = { updates: () => updates, last: null };

function api(method, path, body) {
  const h = { 'Content-Type': 'application/json' };
  if (token) h['Authorization'] = 'Bearer ' + token;
  return fetch(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) })
    .then(async (r) => {
      if (!r.ok) {
        let msg = r.status + ' ' + r.statusText;
        try { msg = (await r.json()).error || msg; } catch (e) { /* not JSON */ }
        throw new Error(msg);
      }
      return r.status === 204 ? null : r.json();
    });
}

function who() {
  const w = $('who').value.trim();
  localStorage.setItem('chaosrun-who', w);
  return w;
}

function showError(e) { $('error').textContent = e ? String(e.message || e) : ''; }

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function inject(req) {
  req.by = who();
  showError(null);
  return api('POST', 'api/faults', req).catch(showError);
}

function clearFault(name) {
  showError(null);
  return api('DELETE', 'api/faults/' + encodeURIComponent(name) + '?by=' + encodeURIComponent(who())).catch(showError);
}

function setupMeta(m) {
  meta = m;
  $('scenario').textContent = m.scenario;
  $('slide').textContent = 'over the last ' + m.slide + (m.guards.length ? '; stop conditions: ' + m.guards.join(', ') + ' (grace ' + m.grace + ')' : '');
  const pr = $('presets');
  for (const p of m.presets) {
    const attrs = Object.entries(p.attributes || {}).map(([k, v]) => k + '=' + v).join(' ');
    const b = el('button', { type: 'button', class: 'preset', id: 'preset-' + p.name }, 'inject ' + p.name + ' (' + p.kind + ' ' + attrs + ' on ' + (p.edge || p.host) + ')');
    b.addEventListener('click', () => inject({ name: p.name, kind: p.kind, edge: p.edge, host: p.host, attributes: p.attributes }));
    pr.appendChild(b);
  }
  const kind = $('f-kind');
  for (const k of m.kinds) kind.appendChild(el('option', { value: k.kind }, k.kind));
  kind.addEventListener('change', kindChanged);
  kindChanged();
}

function kindChanged() {
  const k = meta.kinds.find((x) => x.kind === $('f-kind').value);
  const tgt = $('f-target');
  tgt.textContent = '';
  for (const t of (k.host ? meta.hosts : meta.edges)) tgt.appendChild(el('option', { value: t }, t));
  const box = $('f-attrs');
  box.textContent = '';
  for (const a of k.attrs) {
    box.appendChild(el('label', { for: 'attr-' + a.name, title: a.doc || '' }, a.name + (a.required ? '*' : '')));
    box.appendChild(el('input', { id: 'attr-' + a.name, type: 'number', min: a.min, max: a.max, placeholder: a.unit, 'data-attr': a.name }));
  }
}

$('inject').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const k = meta.kinds.find((x) => x.kind === $('f-kind').value);
  const req = { kind: k.kind, name: $('f-name').value.trim(), attributes: {} };
  if (k.host) req.host = $('f-target').value; else req.edge = $('f-target').value;
  for (const i of $('f-attrs').querySelectorAll('input')) {
    if (i.value !== '') req.attributes[i.dataset.attr] = Number(i.value);
  }
  inject(req);
});

$('stop').addEventListener('click', () => {
  if (!window.confirm || window.gamedayNoConfirm || confirm('Stop the game day, revert every fault and write the report?')) {
    api('POST', 'api/stop', { by: who() }).catch(showError);
  }
});

function fmt(v, unit) {
  if (unit === 'ms') return v.toFixed(v < 10 ? 1 : 0) + ' ms';
  if (Math.abs(v) < 1 && v !== 0) return v.toFixed(3);
  return String(Math.round(v * 100) / 100);
}

function renderSLOs(slos) {
  const tb = $('slos').querySelector('tbody');
  tb.textContent = '';
  for (const s of slos) {
    const tr = el('tr', { 'data-state': s.state, id: 'slo-' + s.assertion, title: s.note || s.metric });
    const dot = el('td'); dot.appendChild(el('span', { class: 'dot' }));
    tr.appendChild(dot);
    const name = el('td', {}, s.assertion);
    if (s.guard) name.appendChild(el('span', { class: 'guard' }, 'guard'));
    tr.appendChild(name);
    tr.appendChild(el('td', {}, s.check));
    tr.appendChild(el('td', { class: 'num' }, s.state === 'pending' ? '—' : fmt(s.observed, s.unit)));
    tr.appendChild(el('td', { class: 'num' }, s.state === 'pending' ? (s.note || '').slice(0, 40) : fmt(s.bound, s.unit)));
    tb.appendChild(tr);
  }
}

function renderActive(fs) {
  const ul = $('active');
  ul.textContent = '';
  if (!fs.length) ul.appendChild(el('li', { class: 'muted' }, 'none'));
  for (const f of fs) {
    const li = el('li', { id: 'active-' + f.name }, f.name + ' — ' + f.describe + ' (by ' + f.by + ', since ' + new Date(f.since).toLocaleTimeString() + ') ');
    const b = el('button', { type: 'button', id: 'clear-' + f.name }, 'clear');
    b.addEventListener('click', () => clearFault(f.name));
    li.appendChild(b);
    ul.appendChild(li);
  }
}

function renderTimeline(tl) {
  const ol = $('timeline');
  if (ol.children.length === tl.length) return;
  ol.textContent = '';
  for (const e of tl) {
    ol.appendChild(el('li', { class: e.kind }, new Date(e.time).toLocaleTimeString() + ' — ' + e.by + ': ' + e.what));
  }
  ol.scrollTop = ol.scrollHeight;
}

// Plots: Chart.js line charts over seconds of load, one per panel, with
// axis titles, units and legends; fault windows shaded by a small plugin.
const COLORS = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9']; // Okabe–Ito, as the reports
const SHADE = 'rgba(229, 79, 59, 0.16)';
const charts = {};
window.gameday.charts = charts;
let loadSeconds = 0; // the X axes reach the load's elapsed time (faults after the last point show)

// faultShade fills each fault window [from, to) of chart.options.plugins
// .faultShade.spans across the plot area and names the fault at its top.
const faultShade = {
  id: 'faultShade',
  beforeDatasetsDraw(chart, _args, opts) {
    const { ctx, chartArea: a, scales: { x } } = chart;
    ctx.save();
    for (const s of opts.spans || []) {
      const from = Math.max(x.getPixelForValue(s.from), a.left);
      const to = Math.min(x.getPixelForValue(s.to || x.max), a.right);
      if (to <= from) continue;
      ctx.fillStyle = SHADE;
      ctx.fillRect(from, a.top, to - from, a.bottom - a.top);
      ctx.fillStyle = '#a01';
      ctx.font = '10px system-ui, sans-serif';
      ctx.fillText(s.name, from + 3, a.top + 10);
    }
    ctx.restore();
  },
};

// makeChart sets up one plot: its title, the Y axis' title with the unit,
// logY for latencies.
function makeChart(id, title, yTitle, logY) {
  const opts = {
    animation: false, responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,
    interaction: { mode: 'index', intersect: false },
    elements: { point: { radius: 0 }, line: { borderWidth: 1.5, tension: 0 } },
    scales: {
      x: { type: 'linear', title: { display: true, text: 'seconds of load' }, ticks: { precision: 0, maxTicksLimit: 10 } },
      // A fixed width for the Y axis: every plot's data area starts at the same x.
      y: { type: logY ? 'logarithmic' : 'linear', beginAtZero: !logY, title: { display: true, text: yTitle }, afterFit: (s) => { s.width = 64; },
        ticks: { maxTicksLimit: 6, callback: (v) => (logY && ![1, 2, 5].includes(+String(v)[0]) ? '' : fmtTick(v)) } },
    },
    plugins: {
      legend: { position: 'top', align: 'end', labels: { boxWidth: 12, boxHeight: 8, font: { size: 11 } } },
      tooltip: { callbacks: { title: (items) => items.length ? '+' + items[0].parsed.x + ' s' : '' } },
      title: { display: true, text: title, align: 'start', font: { size: 12, weight: '600' }, padding: { top: 2, bottom: 0 } },
      faultShade: { spans: [] },
    },
  };
  charts[id] = new Chart($(id), { type: 'line', data: { datasets: [] }, options: opts, plugins: [faultShade] });
  return charts[id];
}

function fmtTick(v) {
  if (v >= 1000) return (v / 1000) + 'k';
  return String(Math.round(v * 1000) / 1000);
}

// plot sets a chart's lines (label, points key or getter) and fault spans;
// ax is { title, y (the Y axis title), logY, integer (whole ticks) }.
function plot(id, ax, pts, lines, spans) {
  const logY = ax.logY;
  const c = charts[id] || makeChart(id, ax.title, ax.y, logY);
  if (ax.integer) c.options.scales.y.ticks.precision = 0;
  const fault = { label: 'fault in force', data: [], backgroundColor: SHADE, borderColor: SHADE, borderWidth: 0 };
  c.data.datasets = lines.map((l, i) => ({
    label: l.label,
    data: pts.map((p) => ({ x: p.t, y: yValue(typeof l.key === 'function' ? l.key(p) : p[l.key], logY) })),
    borderColor: l.color || COLORS[i % COLORS.length],
    backgroundColor: l.color || COLORS[i % COLORS.length],
    borderWidth: l.width || 1.5,
    borderDash: l.dash || [],
  })).concat(spans.length ? [fault] : []);
  if (pts.length) {
    c.options.scales.x.min = pts[0].t;
    c.options.scales.x.max = Math.ceil(Math.max(pts[pts.length - 1].t, loadSeconds - 1, pts[0].t + 10));
  }
  c.options.plugins.faultShade.spans = spans;
  c.update('none');
}

// yValue keeps a log axis off zero (no samples that second).
function yValue(v, logY) { return logY && !(v > 0) ? null : v; }

// sheds are the reasons servers refused requests, most frequent first.
function shedReasons(pts) {
  const total = {};
  for (const p of pts) for (const [k, v] of Object.entries(p.sheds || {})) total[k] = (total[k] || 0) + v;
  return Object.keys(total).sort((a, b) => total[b] - total[a]).slice(0, 6);
}

// latencyLines: with one API, its p50 and p99 per second; with several,
// each API's p99 per second (the six busiest by seconds seen) rather than
// a p50 and p99 that mix them; and the p99 over the SLOs' sliding window.
function latencyLines(pts, slide) {
  const seen = {};
  for (const p of pts) for (const a of Object.keys(p.apis || {})) seen[a] = (seen[a] || 0) + 1;
  const apis = Object.keys(seen).sort((a, b) => seen[b] - seen[a] || a.localeCompare(b)).slice(0, 6).sort();
  const lines = apis.length ? apis.map((a) => ({ label: 'p99 ' + a, key: (p) => (p.apis || {})[a], width: 1.5 })) : [
    { label: 'p50 per second', key: 'p50', color: '#0072b2', width: 1 },
    { label: 'p99 per second', key: 'p99', color: '#d55e00', width: 1, dash: [3, 2] },
  ];
  return lines.concat([{ label: 'p99, all, over the last ' + slide, key: 'p99w', color: '#000000', width: 2.5 }]);
}

function render(s) {
  if (!s.slos) return;
  updates++;
  window.gameday.last = s;
  $('clock').textContent = Math.floor(s.elapsed) + ' s of load' + (s.stopping ? ' — stopping' : '');
  renderSLOs(s.slos);
  renderActive(s.faults || []);
  renderTimeline(s.timeline || []);
  const pts = s.points || [];
  const spans = s.spans || [];
  loadSeconds = s.elapsed || 0;
  const slide = meta ? meta.slide : 'window';
  plot('plot-latency', { title: 'Latency', y: 'ms (log scale)', logY: true }, pts, latencyLines(pts, slide), spans);
  plot('plot-rate', { title: 'Request rate', y: 'requests / s' }, pts, [{ label: 'requests/s', key: 'rate' }], spans);
  plot('plot-errors', { title: 'Errors', y: 'failed requests / s' }, pts, [{ label: 'failed requests/s', key: 'errors', color: '#d1242f' }], spans);
  plot('plot-sheds', { title: "Sheds by reason (targets' /metrics)", y: 'refused / s' }, pts,
    shedReasons(pts).map((r) => ({ label: r, key: (p) => (p.sheds || {})[r] || 0 })), spans);
  plot('plot-ejected', { title: 'Ejected replicas (smart clients)', y: 'replicas', integer: true }, pts, [{ label: 'ejected replicas', key: 'ejected', color: '#bc4c00' }], spans);
}

function connect() {
  const es = new EventSource('api/events' + (token ? '?token=' + encodeURIComponent(token) : ''));
  es.onopen = () => { $('conn').textContent = 'live'; $('conn').className = 'badge live'; };
  es.onerror = () => { $('conn').textContent = 'disconnected'; $('conn').className = 'badge'; };
  es.onmessage = (ev) => render(JSON.parse(ev.data));
  es.addEventListener('end', () => { es.close(); $('conn').textContent = 'ended'; $('conn').className = 'badge'; });
}

$('who').value = localStorage.getItem('chaosrun-who') || '';
api('GET', 'api/meta').then((m) => { setupMeta(m); connect(); }).catch(showError);
