// @ts-check
// Documents (/api/documents): versioned texts with branches, merges and diffs; one
// made from a message holds that message's own content.
import { get, post, del, enc, query } from "./api.js";

export const list = () => get("/api/documents");
/** @param {string} name @param {string} text */
export const create = (name, text) => post("/api/documents", { name, text });
/** A document whose content is a message's. @param {string} headish @param {string} name */
export const fromMessage = (headish, name) => post("/api/documents/from-message", { headish, name });
/** @param {string} name */
export const graph = (name) => get(`/api/documents/${enc(name)}/graph`);
/** @param {string} name @param {string} [at] */
export const show = (name, at) => get(`/api/documents/${enc(name)}${query({ at })}`);
/** @param {string} name @param {string} from @param {string} to */
export const diff = (name, from, to) => get(`/api/documents/${enc(name)}/diff${query({ from, to })}`);
/** @param {string} name @param {string} branch @param {string} at */
export const branch = (name, branch, at) => post(`/api/documents/${enc(name)}/branches`, { name: branch, at });
/** @param {string} name @param {string} target */
export const checkout = (name, target) => post(`/api/documents/${enc(name)}/checkout`, { target });
/** @param {string} name @param {string} branch */
export const merge = (name, branch) => post(`/api/documents/${enc(name)}/merge`, { branch });
/** @param {string} name @param {string} text @param {string} message */
export const commit = (name, text, message) => post(`/api/documents/${enc(name)}/revisions`, { text, message });
/** @param {string} name */
export const remove = (name) => del(`/api/documents/${enc(name)}`);
