// @ts-check
// Who is signed in (/api/me). A token is checked with the server before it is kept:
// `check(token)` asks /api/me with it and answers who it is, or throws the refusal.
import { get, token, keepToken } from "./api.js";

/** @typedef {{user: string|null, users: boolean}} Me */

/** Who the kept token (or none) is. @returns {Promise<Me>} */
export const me = () => get("/api/me");

/** Check `value` with the server; keep it only when it names a user. @param {string} value
 *  @returns {Promise<Me>} */
export async function signIn(value) {
  const who = await get("/api/me", { token: value });
  if (!who.user) throw new Error("This store has no users: it needs no token.");
  keepToken(value);
  return who;
}

export function signOut() {
  keepToken(null);
}

export const signedIn = () => !!token();
