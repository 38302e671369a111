// @ts-check
// Share links (/api/shares, /api/s/<token>): read-only links to one branch, and
// continuing one a maker allows it for.
import { get, post, del, enc } from "./api.js";

export const list = () => get("/api/shares");
/** A link to the branch at `headish`: `live` follows a session; `allowContinue` lets a
 *  signed-in reader continue it in a tree of their own.
 *  @param {string} headish @param {boolean} live @param {boolean} [allowContinue] */
export const create = (headish, live, allowContinue = false) =>
  post("/api/shares", { headish, live, allow_continue: allowContinue });
/** Continue a shared branch (a link that allows it) as the signed-in caller: a new tree
 *  of theirs whose root is `text`, with the session `session`.
 *  @param {string} token @param {string} session @param {string} text
 *  @returns {Promise<{tree: string, node: string, session: string}>} */
export const continueShared = (token, session, text) =>
  post(`/api/s/${enc(token)}/continue`, { session, text });
/** @param {string} id */
export const revoke = (id) => del(`/api/shares/${enc(id)}`);
/** What a link shows (its page's own read). @param {string} token */
export const info = (token) => get(`/api/s/${enc(token)}`, { anonymous: true });
