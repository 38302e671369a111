// @ts-check
// Who is using the page, read once when it opens (GET /api/me) and after a sign-in:
// `who.state` is "checking", "in" (a user, or the operator of a store without users),
// "out" (the store has users and no token was kept) or "refused" (the token kept was
// not accepted); `who.user` names the user.
import * as Users from "./users.js";
import { ApiError, token } from "./api.js";

export const who = $state({ state: "checking", user: null, users: false, error: "" });

export async function check() {
  try {
    const me = await Users.me();
    Object.assign(who, { state: "in", user: me.user, users: me.users, error: "" });
  } catch (e) {
    const refused = e instanceof ApiError && e.status === 401;
    Object.assign(who, {
      state: refused ? (token() ? "refused" : "out") : "in",
      user: null, users: refused, error: refused ? "" : e.message,
    });
  }
}

export async function signIn(value) {
  const me = await Users.signIn(value);
  Object.assign(who, { state: "in", user: me.user, users: true, error: "" });
}

export function signOut() {
  Users.signOut();
  Object.assign(who, { state: "out", user: null, users: true, error: "" });
}
