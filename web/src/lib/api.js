// The JSON API, as the page calls it. Every write goes as JSON (an upload as
// application/octet-stream): the server refuses what a plain HTML form can send.
// A signed-in user's token is kept in localStorage and sent as a bearer token; a share
// link's page sends none (its capability is the token in its path).

const KEY = "loomdb-token";

export function token() {
  return localStorage.getItem(KEY);
}

export function signIn(value) {
  if (value) localStorage.setItem(KEY, value);
  else localStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, type, message) {
    super(`${type}: ${message}`);
    this.status = status;
    this.type = type;
  }
}

export async function api(method, path, body, { signal } = {}) {
  const headers = {};
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const init = { method, headers, signal };
  if (body instanceof Blob) {
    headers["Content-Type"] = "application/octet-stream";
    init.body = body;
  } else if (body !== undefined || method !== "GET") {
    headers["Content-Type"] = "application/json";
    if (body !== undefined) init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const type = res.headers.get("content-type") || "";
  const data = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const err = data && data.error ? data.error : { type: "HTTP", message: String(res.status) };
    throw Object.assign(new ApiError(res.status, err.type, err.message), { error: err });
  }
  return data;
}

export const get = (path, opts) => api("GET", path, undefined, opts);
export const post = (path, body, opts) => api("POST", path, body ?? {}, opts);
export const del = (path, opts) => api("DELETE", path, undefined, opts);
export const enc = encodeURIComponent;
