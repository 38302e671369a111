// loomdb's web page: plain JavaScript over the JSON API, no outside assets.
// The page shows one "head" at a time (a session, a view or a node id), kept in the URL
// hash so it can be bookmarked and reloaded.
"use strict";

const $ = (sel) => document.querySelector(sel);
let head = null;        // the headish being shown
let thread = null;      // the last /thread answer

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    // through the CSSOM: the Content-Security-Policy refuses style attributes
    else if (k === "style") node.style.cssText = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function status(text, error = false) {
  const s = $("#status");
  s.textContent = text;
  s.className = error ? "error" : "";
}

function headers(extra = {}) {
  const token = localStorage.getItem("loomdb-token");
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

// Every write goes as JSON (a file as application/octet-stream): the server refuses
// what a plain HTML form can send, so no other site can post here.
async function api(method, path, body) {
  const init = { method, headers: headers() };
  if (body instanceof Blob) {
    init.headers["Content-Type"] = "application/octet-stream";
    init.body = body;
  } else if (body !== undefined || method !== "GET") {
    init.headers["Content-Type"] = "application/json";
    if (body !== undefined) init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const type = res.headers.get("content-type") || "";
  const data = type.includes("json") ? await res.json() : await res.text();
  if (res.status === 401) $("#token-form").hidden = false;
  if (!res.ok) {
    const msg = data && data.error ? `${data.error.type}: ${data.error.message}` : `HTTP ${res.status}`;
    status(msg, true);
    throw new Error(msg);
  }
  return data;
}

const enc = encodeURIComponent;

// -- trees and refs -------------------------------------------------------------------
async function loadTrees() {
  const [{ trees }, { refs }] = await Promise.all([api("GET", "/api/trees"), api("GET", "/api/refs")]);
  const list = $("#trees");
  list.replaceChildren();
  for (const t of trees) {
    const mine = refs.filter((r) => r.tree === t.id);
    const sub = el("ul", { class: "refs" });
    for (const r of mine) {
      const from = r.origin && r.origin.forked_from;
      const lineage = from ? ` forked from ${from.ref || from.node.slice(-6)}` : "";
      sub.append(el("li", {},
        el("a", { onclick: () => go(r.name), dataset: { ref: r.name } }, `${r.kind} ${r.name}`),
        el("span", { class: "lineage" }, lineage)));
    }
    const imported = t.lineage && t.lineage.imported ? ` (imported ${t.lineage.imported.format})` : "";
    list.append(el("li", { dataset: { tree: t.id } },
      el("span", { class: "tree", onclick: () => go(mine[0] ? mine[0].name : t.root) }, t.title),
      el("span", { class: "lineage" }, ` ${t.mode}, ${t.nodes} nodes${imported}`), sub));
  }
}

$("#new-tree").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const body = { text: f.get("text"), mode: f.get("mode") };
  for (const k of ["system", "session"]) if (f.get(k)) body[k] = f.get(k);
  const made = await api("POST", "/api/trees", body);
  ev.target.reset();
  await loadTrees();
  go(body.session || made.node);
});

$("#import").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const file = new FormData(ev.target).get("file");
  const report = await api("POST", `/api/import?filename=${enc(file.name)}`, file);
  $("#import-result").textContent =
    `imported ${report.trees.length} tree(s), ${report.nodes} node(s)` +
    (report.errors.length ? `, ${report.errors.length} error(s)` : "");
  await loadTrees();
});

// -- the thread -----------------------------------------------------------------------
function go(headish) {
  location.hash = `#/h/${enc(headish)}`;
}

async function show() {
  const m = location.hash.match(/^#\/h\/(.+)$/);
  head = m ? decodeURIComponent(m[1]) : null;
  delete document.body.dataset.shown;  // set again once this head is drawn
  $("#empty").hidden = !!head;
  $("#view").hidden = !head;
  $("#where").textContent = head || "";
  if (!head) return;
  thread = await api("GET", `/api/nodes/${enc(head)}/thread`);
  const buffer = thread.tree.mode === "buffer";
  $("#thread").hidden = buffer;
  $("#composer").hidden = buffer;
  $("#buffer").hidden = !buffer;
  if (buffer) await showBuffer();
  else drawThread();
  status(`${thread.tree.title} — ${thread.messages.length} messages`);
  document.body.dataset.shown = head;
}

// the headish of message i as seen through the shown ref (so edits select there)
function at(i) {
  const n = thread.messages.length;
  if (thread.ref && thread.ref.kind !== "bookmark" && thread.ref.name === head) {
    return i === n - 1 ? head : `${head}~${n - 1 - i}`;
  }
  return thread.messages[i].id;
}

function drawThread() {
  const box = $("#thread");
  box.replaceChildren();
  thread.messages.forEach((m, i) => box.append(message(m, i)));
}

function message(m, i) {
  const body = el("div", { class: "body" });
  body.innerHTML = m.html;  // rendered and sanitized by the server
  const tools = el("span", { class: "tools" },
    el("button", { onclick: () => editMessage(i, card, m), title: "Write a new version" }, "Edit"),
    el("button", { onclick: () => forkAt(at(i)) }, "Fork"),
    el("button", { onclick: () => bookmark(i) }, "Bookmark"),
    el("button", { onclick: () => tag(i, m) }, "Tag"),
    el("button", { onclick: () => overlay(i, { excluded: !m.meta.excluded }) },
      m.meta.excluded ? "Include" : "Exclude"),
    el("button", { onclick: () => redact(i), title: "Erase this message's text everywhere",
                   dataset: { testid: "redact" } }, "Redact"),
    el("button", { onclick: () => remove(i), title: "Delete this message and all below it",
                   dataset: { testid: "delete" } }, "Delete"));
  if (m.has_logprobs) {
    tools.prepend(el("button", {
      onclick: () => toggleLogprobs(m, body), title: "Colour each token by its probability",
      dataset: { testid: "logprobs-toggle" },
    }, "Logprobs"));
  }
  const marks = el("span", {});
  if (m.meta.label) marks.append(el("span", { class: "label" }, m.meta.label), " ");
  for (const t of m.meta.tags) marks.append(el("span", { class: "tag" }, t), " ");
  const head = el("div", { class: "head" }, el("span", { class: "role" }, m.role),
    el("span", {}, m.author), marks, switcher("branch", m.branches, m.slot, (s) => toBranch(s)),
    switcher("version", m.versions, m.id, (v) => toVersion(i, v)), tools);
  const card = el("div", {
    class: `msg ${m.role}${m.meta.excluded ? " excluded" : ""}`,
    dataset: { testid: "message", node: m.id, index: i },
  }, head, body);
  return card;
}

// -- logprobs: each generated token coloured by its probability ------------------------
// red (unlikely) through yellow to green (certain); the title holds the alternatives
function probabilityColour(p) {
  const hue = Math.round(120 * Math.max(0, Math.min(1, p)));
  return `hsl(${hue}, 75%, 82%)`;
}

async function toggleLogprobs(m, body) {
  if (body.dataset.logprobs) {  // shown: back to the rendered message
    delete body.dataset.logprobs;
    body.innerHTML = m.html;
    return;
  }
  const found = await api("GET", `/api/nodes/${enc(m.id)}/logprobs`);
  const tokens = el("div", { class: "logprobs", dataset: { testid: "logprobs" } });
  for (const t of found.tokens) {
    const p = t.probability;
    const alts = t.top.map((a) => `${JSON.stringify(a.token)} ${a.probability.toFixed(3)}`).join(", ");
    tokens.append(el("span", {
      class: "token",
      style: p === null ? "" : `background: ${probabilityColour(p)}`,
      title: `${JSON.stringify(t.token)} p=${p === null ? "?" : p.toFixed(3)}` +
        (alts ? `\nalternatives: ${alts}` : ""),
      dataset: { testid: "logprob-token", probability: p === null ? "" : p.toFixed(4) },
    }, t.token));
  }
  const legend = el("div", { class: "legend", dataset: { testid: "logprobs-legend" } },
    "probability: ",
    ...[0.05, 0.25, 0.5, 0.75, 0.95].map((p) =>
      el("span", { class: "token", style: `background: ${probabilityColour(p)}` }, p.toFixed(2))));
  body.dataset.logprobs = "shown";
  body.replaceChildren(tokens, legend);
}

function switcher(what, ids, current, pick) {
  const span = el("span", { class: "switch", dataset: { testid: `${what}-switch` } });
  if (ids.length < 2) return span;
  const k = ids.indexOf(current);
  span.append(
    el("button", { onclick: () => pick(ids[(k - 1 + ids.length) % ids.length]), title: `previous ${what}` }, "‹"),
    el("span", { dataset: { testid: `${what}-count` } }, `${what} ${k + 1}/${ids.length}`),
    el("button", { onclick: () => pick(ids[(k + 1) % ids.length]), title: `next ${what}`,
                   dataset: { testid: `next-${what}` } }, "›"));
  return span;
}

// a branch is shown down to its first leaf
async function toBranch(slot) {
  let node = slot;
  for (;;) {
    const { nodes } = await api("GET", `/api/nodes/${enc(node)}/children`);
    if (!nodes.length) break;
    node = nodes[0];
  }
  go(node);
}

async function toVersion(i, version) {
  if (thread.ref && thread.ref.kind !== "bookmark" && thread.ref.name === head) {
    await api("POST", `/api/refs/${enc(head)}/select`, { node: version });
    await show();
  } else {
    go(version);
  }
}

function editMessage(i, card, m) {
  const text = m.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  const area = el("textarea", { rows: 4, dataset: { testid: "edit-text" } });
  area.value = text;
  const save = el("button", { dataset: { testid: "edit-save" }, onclick: async () => {
    const { node } = await api("POST", `/api/nodes/${enc(at(i))}/edit`, { text: area.value });
    if (at(i) === m.id) go(node); else await show();
  } }, "Save version");
  card.querySelector(".body").replaceChildren(area, save);
}

async function forkAt(headish) {
  const name = prompt("Name of the new session");
  if (!name) return;
  await api("POST", "/api/refs", { name, kind: "session", at: headish });
  await loadTrees();
  go(name);
}

async function overlay(i, body) {
  await api("POST", `/api/nodes/${enc(thread.messages[i].id)}/overlay`, body);
  await show();
}

// -- forgetting (docs/forget.md): each asks first, nothing happens without a yes -------
async function redact(i) {
  if (!confirm("Redact this message? Its text is erased everywhere it is stored " +
               "(the same text in other messages too); it stays as [redacted].")) return;
  await api("POST", `/api/nodes/${enc(thread.messages[i].id)}/redact`, {});
  await show();
}

async function remove(i) {
  if (!confirm("Delete this message and everything below it, for real? " +
               "Sessions and views pointing there are deleted too.")) return;
  const id = thread.messages[i].id;
  await api("DELETE", `/api/nodes/${enc(id)}?force=true`, {});  // JSON, as every write sends
  await loadTrees();
  if (i === 0) location.hash = "";
  else go(thread.messages[i - 1].id);
  await show();
}

function bookmark(i) {
  const label = prompt("Bookmark label");
  if (label) overlay(i, { bookmark: label });
}

function tag(i, m) {
  const tags = prompt("Tags (comma-separated)", m.meta.tags.join(", "));
  if (tags !== null) overlay(i, { tags: tags.split(",").map((t) => t.trim()).filter(Boolean) });
}

$("#fork-head").addEventListener("click", () => forkAt(head));

$("#composer").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const text = $("#message").value;
  if (!text) return;
  const { node } = await api("POST", `/api/nodes/${enc(head)}/append`, { role: $("#role").value, text });
  $("#message").value = "";
  if (thread.ref && thread.ref.kind === "session" && thread.ref.name === head) await show();
  else go(node);
});

// -- generation, streamed -------------------------------------------------------------
$("#generate").addEventListener("click", async () => {
  const n = Number($("#gen-n").value) || 1;
  const live = $("#live");
  live.replaceChildren();
  const alts = {};
  status("generating…");
  const res = await fetch(`/api/nodes/${enc(head)}/generate`, {
    method: "POST", headers: headers({ "Content-Type": "application/json" }),
    body: JSON.stringify({ n, stream: true, max_tokens: Number($("#gen-max").value) || 256 }),
  });
  if (!res.ok) {
    const data = await res.json();
    status(`${data.error.type}: ${data.error.message}`, true);
    return;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "", done = null;
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const chunk = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const event = (chunk.match(/^event: (.*)$/m) || [])[1];
      const data = JSON.parse((chunk.match(/^data: (.*)$/m) || [])[1] || "null");
      if (event === "token") {
        const key = `${data.job}.${data.index}`;
        if (!alts[key]) live.append(alts[key] = el("div", { class: "alt" }));
        alts[key].textContent += data.delta;
      } else if (event === "done") done = data;
      else if (event === "error") status(`${data.error.type}: ${data.error.message}`, true);
    }
  }
  if (!done) return;
  status(`generated ${done.nodes.length}`);
  live.replaceChildren();
  if (thread.ref && thread.ref.kind === "session" && thread.ref.name === head) await show();
  else go(done.nodes[0]);
  await loadTrees();
});

// -- context preview ------------------------------------------------------------------
$("#show-context").addEventListener("click", async () => {
  const format = $("#ctx-format").value;
  const body = await api("GET", `/api/nodes/${enc(head)}/context?format=${format}`);
  $("#context-box").hidden = false;
  $("#context").textContent = JSON.stringify(body, null, 2);
});

// -- buffer documents -----------------------------------------------------------------
async function showBuffer() {
  const doc = await api("GET", `/api/buffer/${enc(head)}?authorship=true`);
  const box = $("#document");
  box.replaceChildren();
  for (const s of doc.spans) {
    const cls = s.node === null ? "draft" : s.model ? "model" : "human";
    box.append(el("span", { class: cls, title: s.author }, doc.text.slice(s.start, s.end)));
  }
  $("#draft").value = "";
  const alts = await api("GET", `/api/buffer/${enc(head)}/alternatives?index=-1`);
  const list = $("#continuations");
  list.replaceChildren();
  for (const a of alts.branches) {
    list.append(el("li", { onclick: () => go(a.node) },
      `${a.current ? "● " : "○ "}${a.author}: ${a.text.slice(0, 80)}`));
  }
}

$("#draft-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  await api("POST", `/api/buffer/${enc(head)}`, { append: $("#draft").value });
  await showBuffer();
});

$("#token-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  localStorage.setItem("loomdb-token", $("#token").value.trim());
  $("#token-form").hidden = true;
  loadTrees().then(show);
});

window.addEventListener("hashchange", () => show().catch(() => {}));
loadTrees().then(show).catch(() => {});
