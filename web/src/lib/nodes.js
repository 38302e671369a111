// @ts-check
// Messages (/api/nodes): the thread a page draws, a page at a time from its end
// (`before`: the first message already shown; a share link's page reads the same
// shape through its capability, `/api/s/<token>/...`, and writes nothing), a message's
// relatives, writes (append, edit, overlay), a branch's removal, and generation
// streamed as server-sent events.
import { get, post, del, bytes, sse, enc, query } from "./api.js";

/** @typedef {import("./types.js").NodeOut} NodeOut */

//: messages in one page (the server caps it)
export const PAGE = 100;

/** @param {string|null} shared */
function base(shared) {
  return shared ? `/api/s/${enc(shared)}` : "/api/nodes";
}

/** One page of the path to `headish` (a share link: the branch its link names).
 *  @param {{headish?: string|null, shared?: string|null, before?: string|null, limit?: number, signal?: AbortSignal}} a */
export function loadThread({ headish = null, shared = null, before = null, limit = PAGE, signal }) {
  const q = query({ limit, before });
  const path = shared ? `${base(shared)}/thread${q}` : `${base(shared)}/${enc(headish ?? "")}/thread${q}`;
  return get(path, { signal, anonymous: !!shared });
}

/** A blob a message holds, as an object URL (the request carries the bearer token,
 *  which an <img src> could not); the caller revokes it when done.
 *  @param {{node: string, ref: string, shared?: string|null}} a */
export async function blobUrl({ node, ref, shared = null }) {
  const path = shared
    ? `/api/s/${enc(shared)}/blobs/${enc(ref)}${query({ node })}`
    : `/api/blobs/${enc(ref)}${query({ node })}`;
  return URL.createObjectURL(await bytes(path, { anonymous: !!shared }));
}

/** @param {string} node */
export const show = (node) => get(`/api/nodes/${enc(node)}`);
/** @param {string} node */
export const logprobs = (node) => get(`/api/nodes/${enc(node)}/logprobs`);
/** @param {string} node @returns {Promise<{nodes: string[]}>} */
export const children = (node) => get(`/api/nodes/${enc(node)}/children`);
/** @param {string} node @returns {Promise<{nodes: string[]}>} */
export const leaves = (node) => get(`/api/nodes/${enc(node)}/leaves`);
/** A new version of a message (through a session: selected there). @param {string} headish @param {string} text */
export const edit = (headish, text) => post(`/api/nodes/${enc(headish)}/edit`, { text });
/** @param {string} headish @param {string} text @param {string} [role] */
export const append = (headish, text, role = "user") =>
  post(`/api/nodes/${enc(headish)}/append`, { text, role });
/** Bookmark, tag, exclude or prune a message.
 *  @param {string} headish @param {{bookmark?: string|null, tags?: string[], excluded?: boolean, pruned?: boolean}} flags */
export const overlay = (headish, flags) => post(`/api/nodes/${enc(headish)}/overlay`, flags);
/** Delete a message and everything after it. @param {string} headish */
export const remove = (headish) => del(`/api/nodes/${enc(headish)}?force=true`);
/** Redact a message's text (kept in place, its content replaced). @param {string} headish */
export const redact = (headish) => post(`/api/nodes/${enc(headish)}/redact`, {});
/** What deleting `headish` would take, nothing written: `ids` (the message and all
 *  that follows it) and the `refs` at or below it. @param {string} headish
 *  @returns {Promise<{ids: string[], refs: string[]}>} */
export const removal = (headish) => del(`/api/nodes/${enc(headish)}?dry_run=true`);
/** The context a model receives at `headish`: normalized, or the request body of a
 *  provider's format (`model` names the model it is written for).
 *  @param {string} headish @param {string} [format] @param {string|null} [model] */
export const context = (headish, format = "normalized", model = null) =>
  get(`/api/nodes/${enc(headish)}/context${query({ format, model })}`);

/** The deepest first continuation below a node: a branch is shown down to a leaf.
 *  @param {string} node */
export async function leafBelow(node) {
  for (let i = 0; i < 10000; i++) {
    const { nodes } = await children(node);
    if (!nodes.length) return node;
    node = nodes[0];
  }
  return node;
}

/**
 * Generate at `headish`, streamed: `onToken(key, delta)` for each piece of text
 * (`key` = "<model job>.<alternative>"); resolves to the new nodes' ids. Aborting
 * `signal` (Stop) ends the stream: the server keeps what was written, marked
 * incomplete, and the promise rejects with an AbortError.
 * @param {string} headish
 * @param {{n?: number, models?: string[], max_tokens?: number, signal?: AbortSignal}} opts
 * @param {(key: string, delta: string) => void} onToken
 * @returns {Promise<string[]>}
 */
export async function generate(headish, { n = 1, models = [], max_tokens = 256, signal }, onToken) {
  /** @type {Record<string, any>} */
  const body = { n, stream: true, max_tokens };
  if (models.length) body.models = models;
  /** @type {string[]|null} */
  let nodes = null;
  await sse("POST", `/api/nodes/${enc(headish)}/generate`, { body, signal }, ({ event, data }) => {
    if (event === "token") onToken(`${data.job}.${data.index}`, data.delta);
    else if (event === "done") { nodes = data.nodes; return true; }
  });
  if (!nodes) throw new Error("the stream ended before the answer was stored");
  return nodes;
}

// red (unlikely) through yellow to green (certain)
/** @param {number} p */
export function probabilityColour(p) {
  const hue = Math.round(120 * Math.max(0, Math.min(1, p)));
  return `hsl(${hue}, 75%, 82%)`;
}
