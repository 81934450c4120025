// Plexus web console: plain JavaScript, no build step, nothing fetched from elsewhere.
//
// WHAT: a query editor (history, parameters, Ctrl/Cmd-Enter), results as a virtualised table
// and as a cytoscape graph (colours per label, caption property, zoom/pan, double-click to
// expand a node's neighbours), the EXPLAIN/PROFILE plan as a tree, a schema sidebar, a live
// chart from /metrics, and errors with line and column.
// INVARIANT: every value from the database reaches the page as text (textContent, or
// cytoscape labels, which are drawn on a canvas) — never as markup — so a stored
// "<script>" shows as those characters.
// It talks typed JSON (application/vnd.neo4j.query) so that nodes, relationships and paths
// are unambiguous and big integers keep their digits.
// The graph library (cytoscape, ~440 KB) is not in the page's first load: it is fetched once
// the editor is usable, and a graph waits for it (loadGraphLibrary), so the login form and
// the editor appear without parsing it first.
"use strict";

const TYPED = "application/vnd.neo4j.query";
const ROW_HEIGHT = 26;          // px, must match #table .row in console.css
const HISTORY_MAX = 50;         // statements kept in localStorage
const METRICS_PERIOD_MS = 2000; // how often /metrics is read for the chart
const CHART_POINTS = 60;        // samples the chart shows
const EXPAND_LIMIT = 100;       // neighbours added by one double-click
// Up to this many nodes the graph is laid out force-directed (cytoscape's `cose`), which
// reads well but costs O(n²) per iteration; larger graphs get `concentric` (rings by degree),
// which is linear. Above it edges are also drawn straight and unlabelled, and labels are
// skipped while they would be too small to read: a software-rendered canvas spends most of
// a large graph's time on bezier curves and text.
const FORCE_LAYOUT_MAX_NODES = 300;
const PALETTE = ["#f6b26b", "#8fd18f", "#7fb2f0", "#e59ac8", "#f2e07c", "#9fe0dc",
                 "#c7a6f2", "#f29b8f", "#b5c97a", "#d9b38c"];

const $ = (id) => document.getElementById(id);
const state = {
  auth: sessionStorage.getItem("plexus-auth"),
  rows: [], fields: [], nodes: new Map(), rels: new Map(),
  cy: null, graphStale: false, labelColours: new Map(), metricsTimer: null, samples: [], last: null,
};

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

async function api(method, path, body) {
  const headers = { "Authorization": "Basic " + state.auth, "Accept": TYPED };
  if (body !== undefined) headers["Content-Type"] = TYPED;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") || type.includes(TYPED) ? await response.json() : await response.text();
  return { status: response.status, data };
}

// ---- login -------------------------------------------------------------------------------

async function login(user, password) {
  state.auth = btoa(unescape(encodeURIComponent(user + ":" + password)));
  const { status, data } = await api("GET", "/db/neo4j/schema");
  if (status !== 200) {
    state.auth = null;
    const message = data && data.errors ? data.errors[0].message : "HTTP " + status;
    $("login-error").textContent = message;
    return false;
  }
  sessionStorage.setItem("plexus-auth", state.auth);
  showApp(data);
  return true;
}

function showApp(schema) {
  $("login").hidden = true;
  $("app").hidden = false;
  renderSchema(schema);
  renderHistory();
  startMetrics();
  $("editor").focus();
  document.body.dataset.ready = "true";
  setTimeout(loadGraphLibrary);  // after the editor is drawn, not before
}

// The vendored cytoscape, loaded once on first need (a promise of its global).
let graphLibrary = null;
function loadGraphLibrary() {
  if (!graphLibrary) {
    graphLibrary = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/console/cytoscape.min.js";
      script.onload = () => resolve(window.cytoscape);
      script.onerror = () => { graphLibrary = null; reject(new Error("the graph library did not load")); };
      document.head.append(script);
    });
  }
  return graphLibrary;
}

function logout() {
  sessionStorage.removeItem("plexus-auth");
  state.auth = null;
  clearInterval(state.metricsTimer);
  $("app").hidden = true;
  $("login").hidden = false;
  delete document.body.dataset.ready;
}

// ---- values ------------------------------------------------------------------------------

// A typed-JSON value as display text.
function text(v) {
  if (v === null || v === undefined) return "null";
  switch (v.$type) {
    case "Null": return "null";
    case "Boolean": return String(v._value);
    case "Integer": case "Float": case "Date": case "Time": case "LocalTime":
    case "LocalDateTime": case "OffsetDateTime": case "ZonedDateTime": case "Duration":
      return String(v._value);
    case "String": return JSON.stringify(v._value);
    case "List": return "[" + v._value.map(text).join(", ") + "]";
    case "Map": return "{" + Object.entries(v._value).map(([k, x]) => k + ": " + text(x)).join(", ") + "}";
    case "Node": return "(" + v._value._labels.map((l) => ":" + l).join("") + " " + props(v._value._properties) + ")";
    case "Relationship": return "[:" + v._value._type + " " + props(v._value._properties) + "]";
    case "Path": return v._value.map(text).join("-");
    default: return JSON.stringify(v);
  }
}

function props(map) {
  return "{" + Object.entries(map || {}).map(([k, x]) => k + ": " + text(x)).join(", ") + "}";
}

function plain(v) {  // a typed scalar as a caption
  if (!v) return "";
  return v.$type === "String" ? v._value : text(v);
}

// Collects the nodes and relationships a value holds.
function collect(v, nodes, rels) {
  if (!v || typeof v !== "object") return;
  switch (v.$type) {
    case "Node": nodes.set(v._value._element_id, v._value); break;
    case "Relationship": rels.set(v._value._element_id, v._value); break;
    case "Path": case "List": v._value.forEach((x) => collect(x, nodes, rels)); break;
    case "Map": Object.values(v._value).forEach((x) => collect(x, nodes, rels)); break;
  }
}

// ---- running -----------------------------------------------------------------------------

function parameters() {
  const raw = $("params").value.trim();
  if (!raw) return {};
  const parsed = JSON.parse(raw);  // a SyntaxError is shown by run()
  const typed = {};
  for (const [k, v] of Object.entries(parsed)) typed[k] = toTyped(v);
  return typed;
}

function toTyped(v) {
  if (v === null) return { $type: "Null", _value: null };
  if (typeof v === "boolean") return { $type: "Boolean", _value: v };
  if (typeof v === "number") return Number.isInteger(v) ? { $type: "Integer", _value: String(v) } : { $type: "Float", _value: String(v) };
  if (typeof v === "string") return { $type: "String", _value: v };
  if (Array.isArray(v)) return { $type: "List", _value: v.map(toTyped) };
  const m = {};
  for (const [k, x] of Object.entries(v)) m[k] = toTyped(x);
  return { $type: "Map", _value: m };
}

async function run(statement) {
  statement = statement === undefined ? $("editor").value : statement;
  if (!statement.trim()) return;
  let params;
  try { params = parameters(); } catch (e) { return showError("Parameters are not valid JSON: " + e.message); }
  remember(statement);
  $("status").textContent = "running…";
  $("error").hidden = true;
  const started = performance.now();
  const { status, data } = await api("POST", "/db/neo4j/query/v2", { statement, parameters: params, includeCounters: true });
  const ms = (performance.now() - started).toFixed(1);
  if (status === 401) return logout();
  if (data.errors && data.errors.length) {
    showError(describeError(data.errors[0], statement));
    $("status").textContent = "failed after " + ms + " ms";
    if (!data.data) return;
  }
  await showResult(data);
  const c = data.counters || {};
  const changes = ["nodesCreated", "nodesDeleted", "relationshipsCreated", "relationshipsDeleted", "propertiesSet", "labelsAdded", "labelsRemoved"]
    .filter((k) => c[k]).map((k) => k + " " + c[k]).join(", ");
  $("status").textContent = state.rows.length + " rows in " + ms + " ms" + (changes ? " — " + changes : "");
  if (c.containsUpdates) refreshSchema();
}

function describeError(error, statement) {
  let out = error.code + "\n" + error.message;
  const p = error.position;
  if (p) {
    const line = statement.split("\n")[p.line - 1] || "";
    out += "\n\nline " + p.line + ", column " + p.column + ":\n" + line + "\n" + " ".repeat(Math.max(0, p.column - 1)) + "^";
  }
  return out;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = false;
}

// Shows a result; resolves once the visible view is drawn.
async function showResult(data) {
  state.fields = data.data.fields;
  state.rows = data.data.values;
  state.nodes = new Map();
  state.rels = new Map();
  state.rows.forEach((row) => row.forEach((v) => collect(v, state.nodes, state.rels)));
  const tab = data.profiledQueryPlan || data.queryPlan ? "plan" : state.nodes.size ? "graph" : "table";
  state.graphStale = true;
  // The view is visible before it is drawn (cytoscape and the table measure it); showing the
  // graph tab draws the graph.
  const drawn = showTab(tab);
  renderTable();
  renderPlan(data.profiledQueryPlan || data.queryPlan);
  await drawn;
}

// ---- table (virtualised: only the visible rows exist in the DOM) ---------------------------

function renderTable() {
  const box = $("table");
  box.replaceChildren();
  const head = el("div", "head");
  head.append(el("div", "cell num", "#"));
  state.fields.forEach((f) => head.append(el("div", "cell", f)));
  const body = el("div", "body");
  body.style.position = "relative";
  body.style.height = state.rows.length * ROW_HEIGHT + "px";
  body.style.width = (56 + 260 * state.fields.length) + "px";
  box.append(head, body);
  box.dataset.rows = String(state.rows.length);
  box.onscroll = () => drawRows(box, body);
  drawRows(box, body);
}

function drawRows(box, body) {
  const first = Math.max(0, Math.floor(box.scrollTop / ROW_HEIGHT) - 5);
  const count = Math.ceil(box.clientHeight / ROW_HEIGHT) + 10;
  const rows = [];
  for (let i = first; i < Math.min(state.rows.length, first + count); i++) {
    const row = el("div", "row");
    row.style.top = i * ROW_HEIGHT + "px";
    row.append(el("div", "cell num", String(i + 1)));
    state.rows[i].forEach((v) => {
      const cell = el("div", "cell", text(v));
      cell.title = cell.textContent;
      row.append(cell);
    });
    rows.push(row);
  }
  body.replaceChildren(...rows);
}

// ---- graph -------------------------------------------------------------------------------

function colour(label) {
  if (!state.labelColours.has(label)) {
    state.labelColours.set(label, PALETTE[state.labelColours.size % PALETTE.length]);
  }
  return state.labelColours.get(label);
}

function captionOf(node) {
  const key = $("caption").value;
  if (key && node._properties[key]) return plain(node._properties[key]);
  return node._labels[0] || node._element_id;
}

function nodeElement(n) {
  return { group: "nodes", data: { id: n._element_id, caption: captionOf(n), colour: colour(n._labels[0] || ""), node: n } };
}

function edgeElement(r) {
  return { group: "edges", data: { id: r._element_id, source: r._start_node_element_id, target: r._end_node_element_id, caption: r._type } };
}

function graphElements(nodes, rels) {
  const out = [];
  nodes.forEach((n) => out.push(nodeElement(n)));
  rels.forEach((r) => { if (nodes.has(r._start_node_element_id) && nodes.has(r._end_node_element_id)) out.push(edgeElement(r)); });
  return out;
}

function updateCaptions() {
  const keys = new Set();
  state.nodes.forEach((n) => Object.keys(n._properties).forEach((k) => keys.add(k)));
  const select = $("caption");
  const current = select.value;
  select.replaceChildren(el("option", "", "(label)"));
  select.firstChild.value = "";
  [...keys].sort().forEach((k) => { const o = el("option", "", k); o.value = k; select.append(o); });
  select.value = keys.has(current) ? current : keys.has("name") ? "name" : keys.has("title") ? "title" : "";
}

async function renderGraph() {
  state.graphStale = false;
  let cytoscape;
  try {
    cytoscape = await loadGraphLibrary();
  } catch (e) {
    state.graphStale = true;
    return showError(e.message);
  }
  updateCaptions();
  if (state.cy) state.cy.destroy();
  const small = state.nodes.size <= FORCE_LAYOUT_MAX_NODES;
  const edge = { "font-size": 8, "curve-style": small ? "bezier" : "straight", "target-arrow-shape": "triangle", "width": 1.5, "line-color": "#9aa5b8", "target-arrow-color": "#9aa5b8", "text-rotation": "autorotate" };
  if (small) edge.label = "data(caption)";
  state.cy = cytoscape({
    container: $("graph"),
    elements: graphElements(state.nodes, state.rels),
    wheelSensitivity: 0.3,
    maxZoom: 1.5,
    // Large graphs: a cached bitmap while panning and zooming, one pixel per CSS pixel.
    textureOnViewport: !small,
    hideEdgesOnViewport: !small,
    pixelRatio: small ? "auto" : 1,
    style: [
      { selector: "node", style: { "background-color": "data(colour)", "label": "data(caption)", "font-size": 10, "min-zoomed-font-size": small ? 0 : 7, "text-valign": "center", "width": 34, "height": 34, "text-wrap": "ellipsis", "text-max-width": 80 } },
      { selector: "edge", style: edge },
      { selector: ":selected", style: { "border-width": 3, "border-color": "#2f5fd0" } },
    ],
    layout: small
      ? { name: "cose", animate: false }
      : { name: "concentric", animate: false, concentric: (n) => n.degree(), levelWidth: () => 4 },
  });
  state.cy.on("dbltap", "node", (event) => expand(event.target.id()));
  $("graph").dataset.nodes = String(state.cy.nodes().length);
  $("graph").dataset.edges = String(state.cy.edges().length);
}

async function expand(id) {
  const statement = "MATCH (n)-[r]-(m) WHERE elementId(n) = $id RETURN n, r, m LIMIT " + EXPAND_LIMIT;
  const { data } = await api("POST", "/db/neo4j/query/v2", { statement, parameters: { id: { $type: "String", _value: id } } });
  if (data.errors && data.errors.length) return showError(describeError(data.errors[0], statement));
  const nodes = new Map(), rels = new Map();
  data.data.values.forEach((row) => row.forEach((v) => collect(v, nodes, rels)));
  nodes.forEach((n, k) => state.nodes.set(k, n));
  rels.forEach((r, k) => state.rels.set(k, r));
  const added = graphElements(state.nodes, state.rels).filter((e) => state.cy.getElementById(e.data.id).empty());
  state.cy.add(added);
  const around = state.cy.getElementById(id).position();
  state.cy.nodes().filter((n) => added.some((a) => a.data.id === n.id())).positions(() => ({ x: around.x + (Math.random() - 0.5) * 160, y: around.y + (Math.random() - 0.5) * 160 }));
  $("graph").dataset.nodes = String(state.cy.nodes().length);
  $("graph").dataset.edges = String(state.cy.edges().length);
}

// ---- plan --------------------------------------------------------------------------------

function renderPlan(plan) {
  const box = $("plan");
  box.replaceChildren();
  if (!plan) { box.append(el("p", "", "Prefix a statement with EXPLAIN or PROFILE to see its plan.")); return; }
  const tree = (op) => {
    const li = el("li");
    const card = el("span", "op");
    card.append(el("b", "", op.operatorType), document.createTextNode(" " + (op.details || "")));
    const stats = [];
    if (op.estimatedRows !== undefined) stats.push("est. rows " + op.estimatedRows);
    if (op.rows !== undefined) stats.push("rows " + op.rows);
    if (op.timeMs !== undefined) stats.push(op.timeMs + " ms");
    if (stats.length) card.append(el("span", "stat", stats.join(" · ")));
    li.append(card);
    const children = (op.children || []).concat(op.subqueries || []);
    if (children.length) { const ul = el("ul"); children.forEach((c) => ul.append(tree(c))); li.append(ul); }
    return li;
  };
  const ul = el("ul");
  ul.append(tree(plan));
  box.append(ul);
}

// ---- tabs, history, schema ---------------------------------------------------------------

// Shows a tab; resolves once it is drawn (the graph may wait for its library).
async function showTab(name) {
  document.querySelectorAll("#tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
  ["table", "graph", "plan"].forEach((t) => { $("view-" + t).hidden = t !== name; });
  if (name === "graph" && state.graphStale) await renderGraph();
  else if (name === "graph" && state.cy) { state.cy.resize(); state.cy.fit(undefined, 30); }
  if (name === "table") drawRows($("table"), $("table").querySelector(".body") || el("div"));
}

function history() {
  try { return JSON.parse(localStorage.getItem("plexus-history") || "[]"); } catch { return []; }
}

function remember(statement) {
  const list = [statement, ...history().filter((s) => s !== statement)].slice(0, HISTORY_MAX);
  localStorage.setItem("plexus-history", JSON.stringify(list));
  renderHistory();
}

function renderHistory() {
  const ol = $("history");
  ol.replaceChildren(...history().map((s) => {
    const li = el("li", "", s.replace(/\s+/g, " "));
    li.title = s;
    li.onclick = () => { $("editor").value = s; $("editor").focus(); };
    return li;
  }));
}

async function refreshSchema() {
  const { status, data } = await api("GET", "/db/neo4j/schema");
  if (status === 200) renderSchema(data);
}

function renderSchema(schema) {
  const box = $("schema");
  box.replaceChildren();
  const chip = (cls, label, statement, bg) => {
    const c = el("span", "chip " + cls, label);
    if (bg) c.style.background = bg;
    if (statement) c.onclick = () => { $("editor").value = statement; run(statement); };
    return c;
  };
  box.append(el("div", "legend", "Labels"));
  schema.labels.forEach((l) => box.append(chip("label", l.name + " " + l.count, "MATCH (n:`" + l.name.replace(/`/g, "``") + "`) RETURN n LIMIT 25", colour(l.name))));
  box.append(el("div", "legend", "Relationship types"));
  schema.relationshipTypes.forEach((t) => box.append(chip("rel", t.name + " " + t.count, "MATCH p = ()-[:`" + t.name.replace(/`/g, "``") + "`]->() RETURN p LIMIT 25")));
  box.append(el("div", "legend", "Property keys"));
  schema.propertyKeys.forEach((k) => {
    const c = chip("key", k.name);
    c.title = k.on.length ? k.on.map((o) => (o.label || o.relationshipType) + ": " + o.type).join("\n") : "any type (not declared by a table)";
    box.append(c);
  });
  if (schema.indexes.length) {
    box.append(el("div", "legend", "Indexes"));
    schema.indexes.forEach((i) => box.append(el("div", "idx", i.name + " — " + i.labelOrType + "(" + i.property + ")")));
  }
}

// ---- live metrics chart ------------------------------------------------------------------

function metricValue(textBody, name) {
  const line = textBody.split("\n").find((l) => l.startsWith(name + " "));
  return line ? Number(line.slice(name.length + 1)) : null;
}

async function sampleMetrics() {
  let body;
  try {
    const response = await fetch("/metrics", { headers: { "Authorization": "Basic " + state.auth } });
    if (response.status !== 200) return;
    body = await response.text();
  } catch (e) {
    return;  // the server is gone or the page is closing: the next sample tries again
  }
  const now = performance.now();
  const sample = {
    t: now,
    commits: metricValue(body, "plexus_commits_total"),
    latencySum: metricValue(body, "plexus_query_latency_seconds_sum"),
    latencyCount: metricValue(body, "plexus_query_latency_seconds_count"),
    freshness: (body.match(/^plexus_mirror_freshness_ms\{[^}]*quantile="0.5"\} (\S+)/m) || [])[1],
  };
  if (state.last) {
    const dt = (now - state.last.t) / 1000;
    const dc = sample.latencyCount - state.last.latencyCount;
    state.samples.push({
      commitsPerS: (sample.commits - state.last.commits) / dt,
      latencyMs: dc > 0 ? ((sample.latencySum - state.last.latencySum) / dc) * 1000 : 0,
      freshness: sample.freshness === undefined ? null : Number(sample.freshness),
    });
    state.samples = state.samples.slice(-CHART_POINTS);
    drawChart();
  }
  state.last = sample;
}

function drawChart() {
  const canvas = $("chart");
  const g = canvas.getContext("2d");
  g.clearRect(0, 0, canvas.width, canvas.height);
  const series = [["commitsPerS", "#8fd18f"], ["latencyMs", "#f6b26b"], ["freshness", "#7fb2f0"]];
  for (const [key, stroke] of series) {
    const values = state.samples.map((s) => s[key]).filter((v) => v !== null);
    if (!values.length) continue;
    const max = Math.max(1e-9, ...values);
    g.strokeStyle = stroke;
    g.beginPath();
    values.forEach((v, i) => {
      const x = (i / (CHART_POINTS - 1)) * canvas.width;
      const y = canvas.height - 4 - (v / max) * (canvas.height - 8);
      if (i) g.lineTo(x, y); else g.moveTo(x, y);
    });
    g.stroke();
  }
  const last = state.samples[state.samples.length - 1];
  let legend = "commits/s " + last.commitsPerS.toFixed(1) + " · mean latency " + last.latencyMs.toFixed(2) + " ms";
  if (last.freshness !== null) legend += " · mirror p50 " + last.freshness + " ms";
  $("chart-legend").textContent = legend;
}

function startMetrics() {
  clearInterval(state.metricsTimer);
  state.samples = [];
  state.last = null;
  sampleMetrics();
  state.metricsTimer = setInterval(sampleMetrics, METRICS_PERIOD_MS);
}

// ---- wiring ------------------------------------------------------------------------------

function wire() {
  $("login-form").addEventListener("submit", (e) => { e.preventDefault(); login($("login-user").value, $("login-password").value); });
  $("run").onclick = () => run();
  $("logout").onclick = logout;
  $("editor").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); }
  });
  document.querySelectorAll("#tabs button").forEach((b) => { b.onclick = () => showTab(b.dataset.tab); });
  $("caption").onchange = () => state.cy && state.cy.nodes().forEach((n) => n.data("caption", captionOf(n.data("node"))));
}

async function start() {
  wire();
  if (state.auth) {
    const { status, data } = await api("GET", "/db/neo4j/schema");
    if (status === 200) return showApp(data);
  }
  // No credentials needed (--no-auth)? Then go straight in.
  state.auth = state.auth || btoa(":");
  const { status, data } = await api("GET", "/db/neo4j/schema");
  if (status === 200) return showApp(data);
  state.auth = null;
  $("login").hidden = false;
  $("login-user").focus();
}

start();
