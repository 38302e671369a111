// The thread view's calls. A thread is read a page at a time from its end
// (`before`: the first message already shown); a share link's page reads the same shape
// through its capability (`/api/s/<token>/...`) and writes nothing.
import { get, post, enc, token, ApiError } from "./api.js";

//: messages in one page (the server caps it)
export const PAGE = 100;

function base(shared) {
  return shared ? `/api/s/${enc(shared)}` : "/api/nodes";
}

export function loadThread({ headish, shared = null, before = null, limit = PAGE }) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (before) q.set("before", before);
  return get(`${base(shared)}/${enc(headish)}/thread?${q}`);
}

// A blob a message holds, as an object URL (the request carries the bearer token,
// which an <img src> could not); the caller revokes it when done.
export async function blobUrl({ node, ref, shared = null }) {
  const path = shared
    ? `/api/s/${enc(shared)}/blobs/${enc(ref)}?node=${enc(node)}`
    : `/api/blobs/${enc(ref)}?node=${enc(node)}`;
  const headers = {};
  const t = token();
  if (t && !shared) headers.Authorization = `Bearer ${t}`;
  const res = await fetch(path, { headers });
  if (!res.ok) throw new ApiError(res.status, "HTTP", `the blob could not be read (${res.status})`);
  return URL.createObjectURL(await res.blob());
}

export const logprobs = (node) => get(`/api/nodes/${enc(node)}/logprobs`);
export const children = (node) => get(`/api/nodes/${enc(node)}/children`);
export const edit = (headish, text) => post(`/api/nodes/${enc(headish)}/edit`, { text });
export const append = (headish, text, role) =>
  post(`/api/nodes/${enc(headish)}/append`, { text, role });
export const fork = (at, name) => post("/api/refs", { name, kind: "session", at });
export const select = (ref, node) => post(`/api/refs/${enc(ref)}/select`, { node });

// The deepest first continuation below a node: a branch is shown down to a leaf.
export async function leafBelow(node) {
  for (let i = 0; i < 10000; i++) {
    const { nodes } = await children(node);
    if (!nodes.length) return node;
    node = nodes[0];
  }
  return node;
}

// Generate at `headish`, streamed: `onToken(key, delta)` for each piece of text
// (`key` = "<model job>.<alternative>"); resolves to the new nodes' ids.
export async function generate(headish, { n = 1, models = [], max_tokens = 256 }, onToken) {
  const headers = { "Content-Type": "application/json" };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const body = { n, stream: true, max_tokens };
  if (models.length) body.models = models;
  const res = await fetch(`/api/nodes/${enc(headish)}/generate`, {
    method: "POST", headers, body: JSON.stringify(body),
  });
  if (!res.ok) {
    const data = await res.json().catch(() => ({}));
    const e = data.error || { type: "HTTP", message: String(res.status) };
    throw new ApiError(res.status, e.type, e.message);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const chunk = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const event = (chunk.match(/^event: (.*)$/m) || [])[1];
      const data = JSON.parse((chunk.match(/^data: (.*)$/m) || [])[1] || "null");
      if (event === "token") onToken(`${data.job}.${data.index}`, data.delta);
      else if (event === "done") return data.nodes;
      else if (event === "error") throw new ApiError(500, data.error.type, data.error.message);
    }
  }
  throw new ApiError(500, "Stream", "the stream ended without an answer");
}

// red (unlikely) through yellow to green (certain)
export function probabilityColour(p) {
  const hue = Math.round(120 * Math.max(0, Math.min(1, p)));
  return `hsl(${hue}, 75%, 82%)`;
}
