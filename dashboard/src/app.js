// inferd dashboard: polls GET /dashboard/data and turns counter and histogram deltas between
// polls into requests/s and p99 per model (as PromQL's rate() and histogram_quantile() do),
// charted with uPlot over the last WINDOW_S seconds this page has seen.
"use strict";

const params = new URLSearchParams(location.search);
const POLL_MS = Math.max(250, Number(params.get("interval_ms")) || 2000);
const WINDOW_S = 10 * 60;
const SERVER_ERRORS = new Set(["backend_error", "timeout", "rejected"]);
const COLORS = ["#3b6fd8", "#e0782b", "#2a9d5c", "#b23ad6", "#c62828", "#0097a7", "#795548", "#607d8b"];

const state = {
  history: [],   // [{t, models: {name: {total, errors, buckets: Map(le -> cumulative)}}}]
  charts: {},    // id -> {plot, models}
  polls: 0,
  lastData: null,
  prevData: null,  // the previous poll's data (token rates)
};
window.inferdDashboard = state;  // for the browser tests and for curious operators

function family(data, name) {
  return data.metrics.find((f) => f.name === name)?.series ?? [];
}

// Per model: requests (all outcomes), server-side errors, latency buckets summed over versions.
function digest(data) {
  const models = {};
  const get = (name) => (models[name] ??= { total: 0, errors: 0, buckets: new Map() });
  for (const s of family(data, "inferd_requests_total")) {
    const m = get(s.labels.model);
    m.total += s.value;
    if (SERVER_ERRORS.has(s.labels.outcome)) m.errors += s.value;
  }
  for (const s of family(data, "inferd_request_duration_seconds")) {
    const m = get(s.labels.model);
    for (const [le, count] of s.buckets) {
      const key = le === null ? Infinity : le;
      m.buckets.set(key, (m.buckets.get(key) ?? 0) + count);
    }
  }
  return { t: data.time_ms / 1000, models };
}

// histogram_quantile over cumulative bucket counts [[le, count]] sorted by le.
function quantile(q, buckets) {
  if (buckets.length === 0) return null;
  const total = buckets[buckets.length - 1][1];
  if (total <= 0) return null;
  const rank = q * total;
  let prevLe = 0, prevCount = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (le === Infinity) return prevLe;
      return prevLe + (le - prevLe) * ((rank - prevCount) / Math.max(count - prevCount, 1e-12));
    }
    prevLe = le; prevCount = count;
  }
  return prevLe;
}

// Rates between two digests for one model (null when it has no traffic).
function rates(prev, cur, name) {
  const a = prev.models[name], b = cur.models[name];
  const dt = cur.t - prev.t;
  if (!a || !b || dt <= 0) return { qps: null, errors: null, p99: null };
  const deltas = [...b.buckets.entries()].sort((x, y) => x[0] - y[0])
    .map(([le, count]) => [le, count - (a.buckets.get(le) ?? 0)]);
  const p99 = quantile(0.99, deltas);
  return { qps: (b.total - a.total) / dt, errors: (b.errors - a.errors) / dt,
           p99: p99 === null ? null : p99 * 1000 };
}

function allRates(prev, cur) {
  const names = Object.keys(cur.models).sort();
  const perModel = Object.fromEntries(names.map((n) => [n, rates(prev, cur, n)]));
  // Overall p99: the buckets of every model together.
  const merged = (d) => {
    const m = new Map();
    for (const x of Object.values(d.models)) for (const [le, c] of x.buckets) m.set(le, (m.get(le) ?? 0) + c);
    return { total: 0, errors: 0, buckets: m };
  };
  const all = rates({ t: prev.t, models: { all: merged(prev) } }, { t: cur.t, models: { all: merged(cur) } }, "all");
  const sum = (key) => names.reduce((s, n) => s + (perModel[n][key] ?? 0), 0);
  return { perModel, qps: sum("qps"), errors: sum("errors"), p99: all.p99 };
}

function chart(id, names, series, unit) {
  const el = document.getElementById(id);
  const key = names.join("|");
  let c = state.charts[id];
  if (!c || c.key !== key) {
    if (c) c.plot.destroy();
    const opts = {
      width: el.clientWidth || 600, height: 240,
      scales: { x: { time: true } },
      axes: [{}, { label: unit, size: 60 }],
      series: [{}, ...names.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 2,
                                             spanGaps: true }))],
    };
    el.textContent = "";
    c = state.charts[id] = { key, plot: new uPlot(opts, series, el) };
  } else {
    c.plot.setData(series);
  }
}

function fmt(value, digits = 1) {
  return value === null || value === undefined || Number.isNaN(value) ? "–" : value.toFixed(digits);
}

function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function cell(row, text, cls) {
  const td = row.insertCell();
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function renderModels(data, latest) {
  const body = document.querySelector("#models-table tbody");
  body.textContent = "";
  const memory = {};
  for (const s of family(data, "inferd_model_memory_bytes")) {
    memory[s.labels.model] = (memory[s.labels.model] ?? 0) + s.value;
  }
  for (const m of data.models) {
    const row = body.insertRow();
    row.dataset.model = m.name;
    const r = latest?.perModel[m.name] ?? {};
    cell(row, m.name);
    cell(row, m.version ?? "–");
    cell(row, m.state, m.state);
    cell(row, fmt(r.qps));
    cell(row, r.p99 === null || r.p99 === undefined ? "–" : `${fmt(r.p99, 2)} ms`);
    cell(row, m.queue_depth ?? "–");
    cell(row, memory[m.name] === undefined ? "–" : bytes(memory[m.name]));
    cell(row, m.reason, "reason");
  }
  document.getElementById("models-ready").textContent =
    `${data.models.filter((m) => m.state === "READY").length} / ${data.models.length}`;
}

// Language models (the "generation" statistics of /dashboard/data): token rates between this
// poll and the last, mean time to first token and per output token over that interval (the
// whole run's mean until there are two polls), sequences, queue and KV cache use.
function renderLlm(data, prev) {
  const models = data.models.filter((m) => m.generation);
  document.getElementById("llm-section").hidden = models.length === 0;
  const body = document.querySelector("#llm-table tbody");
  body.textContent = "";
  const dt = prev ? (data.time_ms - prev.time_ms) / 1000 : 0;
  for (const m of models) {
    const g = m.generation;
    const p = prev?.models.find((x) => x.name === m.name && x.version === m.version)?.generation;
    const rate = (key) => (p && dt > 0 ? Math.max(0, g[key] - p[key]) / dt : null);
    const row = body.insertRow();
    row.dataset.model = m.name;
    cell(row, m.name);
    cell(row, fmt(rate("completion_tokens")));
    cell(row, fmt(rate("prompt_tokens")));
    cell(row, `${fmt(g.time_to_first_token_ms_mean)} ms`);
    cell(row, `${fmt(g.time_per_output_token_ms_mean, 2)} ms`);
    cell(row, `${g.active_sequences} / ${g.parallel}`);
    cell(row, String(g.queued));
    cell(row, `${g.kv_cache_used_tokens} / ${g.kv_cache_tokens} tokens`);
  }
}

function renderMemory(data) {
  const el = document.getElementById("memory");
  el.textContent = "";
  const devices = {};
  for (const s of family(data, "inferd_device_memory_budget_bytes")) (devices[s.labels.device] ??= {}).budget = s.value;
  for (const s of family(data, "inferd_device_memory_used_bytes")) (devices[s.labels.device] ??= {}).used = s.value;
  const rss = family(data, "process_resident_memory_bytes")[0]?.value;
  if (Object.keys(devices).length === 0) {
    // No budget configured: the process's resident memory is what there is to show.
    devices.cpu = { used: rss, budget: null, note: "process resident memory; no budget set" };
  }
  for (const [name, d] of Object.entries(devices).sort()) {
    const row = document.createElement("div");
    row.className = "device";
    row.dataset.device = name;
    const label = document.createElement("div");
    label.textContent = name;
    const meter = document.createElement("div");
    meter.className = "meter";
    const fill = document.createElement("div");
    const share = d.budget ? Math.min(1, (d.used ?? 0) / d.budget) : 0;
    fill.style.width = `${(share * 100).toFixed(1)}%`;
    if (share > 0.9) meter.classList.add("high");
    meter.appendChild(fill);
    const text = document.createElement("div");
    text.textContent = d.budget
      ? `${bytes(d.used)} of ${bytes(d.budget)} (${(share * 100).toFixed(0)} %)`
      : `${bytes(d.used)} — ${d.note ?? "no budget set"}`;
    row.append(label, meter, text);
    el.appendChild(row);
  }
}

function renderErrors(data) {
  const body = document.querySelector("#errors-table tbody");
  body.textContent = "";
  for (const e of data.recent_errors.slice(0, 20)) {
    const row = body.insertRow();
    cell(row, new Date(e.time_ms).toLocaleTimeString());
    cell(row, String(e.status));
    cell(row, e.request);
    cell(row, e.model ? `${e.model}:${e.version}` : "–");
    cell(row, e.request_id);
    cell(row, e.message);
  }
  if (data.recent_errors.length === 0) {
    const row = body.insertRow();
    const td = cell(row, "none", "muted");
    td.colSpan = 6;
  }
}

function render(data) {
  const cur = digest(data);
  const h = state.history;
  h.push(cur);
  while (h.length > 2 && cur.t - h[0].t > WINDOW_S) h.shift();
  const steps = [];
  for (let i = 1; i < h.length; i++) steps.push({ t: h[i].t, ...allRates(h[i - 1], h[i]) });
  const latest = steps[steps.length - 1];

  document.getElementById("server-version").textContent = `version ${data.server_version}`;
  document.getElementById("total-qps").textContent = latest ? fmt(latest.qps) : "–";
  document.getElementById("total-p99").textContent =
    latest && latest.p99 !== null ? `${fmt(latest.p99, 2)} ms` : "–";
  document.getElementById("total-errors").textContent = latest ? fmt(latest.errors, 2) : "–";
  renderModels(data, latest);
  renderLlm(data, state.prevData);
  state.prevData = data;
  renderMemory(data);
  renderErrors(data);

  const names = data.models.filter((m) => m.state === "READY").map((m) => m.name).sort();
  const xs = steps.map((s) => s.t);
  chart("qps-chart", names, [xs, ...names.map((n) => steps.map((s) => s.perModel[n]?.qps ?? null))], "req/s");
  chart("p99-chart", names, [xs, ...names.map((n) => steps.map((s) => s.perModel[n]?.p99 ?? null))], "ms");
}

async function poll() {
  const status = document.getElementById("status");
  try {
    const r = await fetch("/dashboard/data", { cache: "no-store" });
    if (!r.ok) throw new Error(`HTTP ${r.status}`);
    const data = await r.json();
    state.lastData = data;
    render(data);
    state.polls++;
    status.textContent = `live · every ${POLL_MS / 1000} s`;
    status.className = "status ok";
  } catch (e) {
    // The server may be restarting: say so and keep polling.
    status.textContent = `no data: ${e.message}`;
    status.className = "status bad";
  }
  setTimeout(poll, POLL_MS);
}

poll();
