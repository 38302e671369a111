// @ts-check
// Share links (/api/shares, /api/s/<token>): read-only links to one branch.
import { get, post, del, enc } from "./api.js";

export const list = () => get("/api/shares");
/** @param {string} headish @param {boolean} live */
export const create = (headish, live) => post("/api/shares", { headish, live });
/** @param {string} id */
export const revoke = (id) => del(`/api/shares/${enc(id)}`);
/** What a link shows (its page's own read). @param {string} token */
export const info = (token) => get(`/api/s/${enc(token)}`, { anonymous: true });
