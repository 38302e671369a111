// @ts-check
// Trees (/api/trees, /api/lineage, /api/import): the caller's conversations, a new
// one, rename and archive, delete, the whole tree's map, export and import.
import { get, post, patch, del, bytes, request, enc, query } from "./api.js";

/** @typedef {import("./types.js").TreeOut} TreeOut */

/** @param {{archived?: boolean}} [o] @returns {Promise<{trees: TreeOut[]}>} */
export const list = ({ archived = false } = {}) => get(`/api/trees${query({ archived: archived || null })}`);
/** The trees as families (subagents under their parent, imports, forks). @param {{archived?: boolean}} [o] */
export const lineage = ({ archived = false } = {}) =>
  get(`/api/lineage${query({ archived: archived || null })}`);
/** @param {{text: string, session?: string, mode?: string, title?: string, system?: string}} body
 *  @returns {Promise<{tree: string, node: string}>} */
export const create = (body) => post("/api/trees", body);
/** A new title. @param {string} tree @param {string} title @returns {Promise<TreeOut>} */
export const rename = (tree, title) => patch(`/api/trees/${enc(tree)}`, { title });
/** Archive (or bring back) a tree. @param {string} tree @param {boolean} on @returns {Promise<TreeOut>} */
export const archive = (tree, on) => patch(`/api/trees/${enc(tree)}`, { archived: on });
/** What deleting the tree would take (its messages, its refs), nothing written. @param {string} tree */
export const removal = (tree) => del(`/api/trees/${enc(tree)}?dry_run=true`);
/** Move a tree, with its sessions, to the trash (restorable until its purge date). @param {string} tree */
export const remove = (tree) => del(`/api/trees/${enc(tree)}`);
/** The caller's trees in the trash, first purged first. */
export const trash = () => get("/api/trash");
/** Take a tree out of the trash. @param {string} tree */
export const restore = (tree) => post(`/api/trash/${enc(tree)}/restore`);
/** Delete a tree (in the trash or not) and its refs for good, now. @param {string} tree */
export const purge = (tree) => del(`/api/trees/${enc(tree)}?now=true&force=true`);
/** The whole tree as the map draws it. @param {string} tree @param {string|null} [at] */
export const map = (tree, at) => get(`/api/trees/${enc(tree)}/map${query({ at })}`);

//: every export format, as the server names it, with the file suffix it downloads as
export const EXPORTS = [
  ["json", "loomdb JSON", "json"],
  ["jsonl", "JSON Lines", "jsonl"],
  ["markdown", "Markdown", "md"],
  ["openai-jsonl", "OpenAI fine-tuning JSONL", "jsonl"],
  ["chatgpt", "ChatGPT export", "json"],
];

/** A tree exported in `format`, as a Blob. @param {string} tree @param {string} format */
export const exportBlob = (tree, format) => bytes(`/api/trees/${enc(tree)}/export${query({ format })}`);

/** The file name an export downloads as. @param {string} title @param {string} format */
export function exportName(title, format) {
  const suffix = (EXPORTS.find(([f]) => f === format) ?? ["", "", "json"])[2];
  const stem = (title || "tree").replace(/[^\p{L}\p{N}._-]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 60);
  return `${stem || "tree"}.${format === "openai-jsonl" ? "openai." : ""}${suffix}`;
}

/** Import another tool's export (the file's bytes as the body); the report of what came in.
 *  @param {File} file @param {string} [format] */
export async function importFile(file, format = "auto") {
  const res = await request("POST", `/api/import${query({ filename: file.name, format })}`, { body: file });
  return res.json();
}
