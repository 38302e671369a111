// @ts-check
// The models this server lets a caller use (/api/models: the operator's served
// aliases), and the one the page asks for unless the reader picks another.
import { get } from "./api.js";

/** @returns {Promise<{models: {name: string, provider: string, model: string}[], default: string|null}>} */
export const served = () => get("/api/models");

const KEY = "loomdb-model";
/** The model last picked in this browser (null: the server's default). */
export function picked() {
  try { return localStorage.getItem(KEY); } catch { return null; }
}
/** @param {string|null} name */
export function pick(name) {
  try { if (name) localStorage.setItem(KEY, name); else localStorage.removeItem(KEY); } catch { /* private mode */ }
}
