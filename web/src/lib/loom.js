// @ts-check
// Loom (buffer) mode as the page calls it: a buffer tree read as one document with who
// wrote each span, its draft, N continuations, switching, span edits and the likeliest
// next tokens.
import { get, post, enc } from "./api.js";
import { generate as generateAt, overlay } from "./nodes.js";

export const documentAt = (h) => get(`/api/buffer/${enc(h)}?authorship=true`);
export const setDraft = (h, text) => post(`/api/buffer/${enc(h)}?authorship=true`, { set: text });
export const appendDraft = (h, text) => post(`/api/buffer/${enc(h)}?authorship=true`, { append: text });
export const alternatives = (h, index) =>
  get(`/api/buffer/${enc(h)}/alternatives?index=${enc(String(index))}`);
export const switchTo = (h, node) => post(`/api/buffer/${enc(h)}/switch`, { node });
export const editSpan = (h, start, end, text) =>
  post(`/api/buffer/${enc(h)}/span?authorship=true`, { start, end, text });
export const nextTokens = (h, top) => post(`/api/buffer/${enc(h)}/next`, { top }).then((d) => d.tokens);

// N continuations per model, every model at once (the server asks the models in
// parallel), written as server-sent events: `onDelta(job, index, text)` for each piece
// of alternative `index` of model `job` (its place in `models`); resolves to the nodes.
/** @param {string} h @param {number} n @param {number} maxTokens
 *  @param {(job: number, index: number, delta: string) => void} [onDelta] @param {string[]} [models] */
export const generate = (h, n, maxTokens, onDelta, models = []) =>
  generateAt(h, { n, max_tokens: maxTokens, models }, (key, delta) => {
    const [job, index] = key.split(".").map(Number);
    onDelta?.(job, index, delta);
  });

/** Bookmark a message of the document under `label`. @param {string} node @param {string} label */
export const bookmark = (node, label) => overlay(node, { bookmark: label });

//: one colour per model (distinct hues, each readable as a border and a tint)
export const PALETTE = ["#2f6fdb", "#c2410c", "#15803d", "#9333ea", "#b91c1c", "#0e7490", "#a16207", "#be185d"];

/** Each model's colour, by its place among the served models (stable for a page).
 *  @param {string[]} names @returns {Record<string, string>} */
export function colours(names) {
  return Object.fromEntries(names.map((m, i) => [m, PALETTE[i % PALETTE.length]]));
}

/** The tree panel's lines from a map model and its outline: each line's node id, its
 *  depth, role, text and whether the document passes through it.
 *  @param {any} model @param {import("./outline.js").Line[]} lines */
export function panelLines(model, lines) {
  return lines.map((l) => ({ ...l, node: model.id[l.row] }));
}

// A token as a person can read it: spaces and line breaks made visible.
export function showToken(token) {
  return token.replace(/ /g, "␣").replace(/\n/g, "⏎").replace(/\t/g, "⇥") || "∅";
}

export const percent = (p) => `${(p * 100).toFixed(p >= 0.1 ? 0 : 1)}%`;

export const KINDS = [
  ["user", "written by a person"],
  ["model", "written by a model"],
  ["edit", "changed by an edit"],
  ["draft", "draft, not committed"],
];

// The document offset of a point in the rendered document (a text node inside a
// span that carries data-start, or the container itself).
export function offsetOf(root, node, offset) {
  if (node.nodeType === Node.TEXT_NODE) {
    const span = node.parentElement?.closest("[data-start]");
    return span && root.contains(span) ? Number(span.dataset.start) + offset : null;
  }
  if (node === root) {
    const child = root.children[offset];
    if (child?.dataset.start !== undefined) return Number(child.dataset.start);
    const last = root.lastElementChild;
    return last ? Number(last.dataset.end) : 0;
  }
  const span = node.closest?.("[data-start]");
  if (!span || !root.contains(span)) return null;
  return offset === 0 ? Number(span.dataset.start) : Number(span.dataset.end);
}
