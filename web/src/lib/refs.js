// @ts-check
// Refs (/api/refs): sessions, views and bookmarks. A session made at an existing
// message is a fork; `select` makes a session or view use a version (or an
// alternative) where it passes, as `loomdb select` does.
import { get, post, del, enc, query } from "./api.js";

/** @typedef {import("./types.js").RefOut} RefOut */

/** @param {{kind?: string, tree?: string}} [o] @returns {Promise<{refs: RefOut[]}>} */
export const list = ({ kind, tree } = {}) => get(`/api/refs${query({ kind, tree })}`);
/** A named session (a fork), view or bookmark at a message.
 *  @param {string} at @param {string} name @param {string} [kind] @returns {Promise<RefOut>} */
export const create = (at, name, kind = "session") => post("/api/refs", { name, kind, at });
/** @param {string} ref @param {string} node @returns {Promise<RefOut>} */
export const select = (ref, node) => post(`/api/refs/${enc(ref)}/select`, { node });
/** Show another version or alternative in a session or view, as a chat does (a version
 *  selected, with its own answers when it has some; an alternative: the ref moves to
 *  the newest leaf below it). @param {string} ref @param {string} node @returns {Promise<RefOut>} */
export const switchTo = (ref, node) => post(`/api/refs/${enc(ref)}/switch`, { node });
/** @param {string} ref */
export const remove = (ref) => del(`/api/refs/${enc(ref)}`);
