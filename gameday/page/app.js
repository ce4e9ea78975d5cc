// chaosrun game day page: plain JS, no libraries, nothing from the network.
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

const NS = 'http://www.w3.org/2000/svg';
function plot(id, pts, keys, spans, legend) {
  const svg = $(id);
  svg.textContent = '';
  if (!pts.length) return;
  const W = 600, H = 140;
  const t0 = pts[0].t, t1 = Math.max(pts[pts.length - 1].t, t0 + 10);
  let ymax = 0;
  for (const p of pts) for (const k of keys) ymax = Math.max(ymax, p[k]);
  ymax = ymax > 0 ? ymax * 1.1 : 1;
  const x = (t) => ((t - t0) / (t1 - t0)) * W;
  const y = (v) => H - (v / ymax) * (H - 12);
  for (const s of spans) {
    const a = Math.max(x(s.from), 0), b = Math.min(x(s.to || t1 + 1), W);
    if (b <= a) continue;
    const r = document.createElementNS(NS, 'rect');
    r.setAttribute('class', 'shade'); r.setAttribute('x', a); r.setAttribute('y', 0);
    r.setAttribute('width', b - a); r.setAttribute('height', H);
    svg.appendChild(r);
  }
  keys.forEach((k, i) => {
    const p = document.createElementNS(NS, 'polyline');
    p.setAttribute('class', 'l' + (i + 1));
    p.setAttribute('points', pts.map((q) => x(q.t).toFixed(1) + ',' + y(q[k]).toFixed(1)).join(' '));
    svg.appendChild(p);
  });
  const lab = document.createElementNS(NS, 'text');
  lab.setAttribute('x', 4); lab.setAttribute('y', 10);
  lab.textContent = 'max ' + (Math.round(ymax / 1.1 * 10) / 10) + (legend ? '   ' + keys.map((k, i) => '[' + (i + 1) + '] ' + k).join('  ') : '');
  svg.appendChild(lab);
}

// shedPoints flattens each point's sheds by reason into one key per reason.
function shedPoints(pts) {
  const keys = [...new Set(pts.flatMap((p) => Object.keys(p.sheds || {})))].sort().slice(0, 4);
  const flat = pts.map((p) => {
    const q = { t: p.t };
    for (const k of keys) q[k] = (p.sheds || {})[k] || 0;
    return q;
  });
  return [flat, keys];
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
  plot('plot-latency', pts, ['p50', 'p99'], s.spans || []);
  plot('plot-rate', pts, ['rate'], s.spans || []);
  plot('plot-errors', pts, ['errors'], s.spans || []);
  const [sheds, reasons] = shedPoints(pts);
  plot('plot-sheds', sheds, reasons, s.spans || [], true);
  plot('plot-ejected', pts, ['ejected'], s.spans || []);
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
