// @ts-check
import { get, post, patch, del, enc } from "./api.js";

// Collections in the page: the moves a button or a drop asks of
// POST /api/collections/{name}/items/{item}/move, worked out from the items in order
// (a tree's depth-first), and the groupings of the tagged and kanban views.

const siblings = (items, it) => items.filter((x) => x.parent === it.parent);

/** One place up among its siblings, or null when it is first. */
export function upMove(items, it) {
  const sib = siblings(items, it);
  const i = sib.findIndex((x) => x.id === it.id);
  if (i <= 0) return null;
  return i === 1 ? { first: true } : { after: sib[i - 2].id };
}

/** One place down among its siblings, or null when it is last. */
export function downMove(items, it) {
  const sib = siblings(items, it);
  const i = sib.findIndex((x) => x.id === it.id);
  return i < 0 || i >= sib.length - 1 ? null : { after: sib[i + 1].id };
}

/** Everything nested under an item (a tree's items are depth-first). */
export function descendants(items, it) {
  const out = new Set([it.id]);
  for (const x of items) if (x.parent && out.has(x.parent)) out.add(x.id);
  out.delete(it.id);
  return out;
}

/** The move that puts `it` under `parent` (null: the top level, last). */
export function underMove(items, it, parent) {
  if (parent) return { parent };
  const roots = items.filter((x) => !x.parent && x.id !== it.id);
  return roots.length ? { after: roots[roots.length - 1].id } : { first: true };
}

/** Items under each tag (an item with several tags is under each), "" for untagged. */
export function byTag(items) {
  const groups = new Map();
  for (const it of items) for (const t of it.tags.length ? it.tags : [""]) {
    if (!groups.has(t)) groups.set(t, []);
    groups.get(t).push(it);
  }
  return [...groups.entries()].sort(([a], [b]) => (a === "" ? 1 : b === "" ? -1 : a.localeCompare(b)));
}

/** The field names any item has, sorted. */
export function fieldNames(items) {
  return [...new Set(items.flatMap((it) => Object.keys(it.fields)))].sort();
}

/** Kanban columns: one per value of `field` (those of `known` first, in that order, then
 *  the others as the items name them), then "" (no value). */
export function columns(items, field, known = []) {
  const values = [...new Set([...known, ...items.map((it) => it.fields[field] ?? "")])];
  const named = values.filter((v) => v !== "");
  return [...named, ""].map((v) => [v, items.filter((it) => (it.fields[field] ?? "") === v)]);
}

// -- the calls (/api/collections) ------------------------------------------------------
export const list = () => get("/api/collections");
/** @param {string} name @param {string} kind */
export const create = (name, kind) => post("/api/collections", { name, kind });
/** @param {string} name */
export const show = (name) => get(`/api/collections/${enc(name)}`);
/** Add an address (a message, `doc:NAME`, `tree:ID`...) to a collection.
 *  @param {string} name @param {Record<string, any>} item */
export const add = (name, item) => post(`/api/collections/${enc(name)}/items`, item);
/** @param {string} name @param {string} item @param {Record<string, any>} where */
export const move = (name, item, where) => post(`/api/collections/${enc(name)}/items/${enc(item)}/move`, where);
/** @param {string} name @param {string} item @param {Record<string, any>} fields */
export const setFields = (name, item, fields) => patch(`/api/collections/${enc(name)}/items/${enc(item)}/fields`, fields);
/** @param {string} name @param {string} item @param {string[]} tags @param {boolean} [remove] */
export const tag = (name, item, tags, remove = false) => post(`/api/collections/${enc(name)}/items/${enc(item)}/tags`, { tags, remove });
/** @param {string} name @param {string} item */
export const removeItem = (name, item) => del(`/api/collections/${enc(name)}/items/${enc(item)}`);
