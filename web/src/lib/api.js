// @ts-check
// The page's one door to the server: the only `fetch` of the app. Every call of an
// area module (lib/<area>.js) comes through `request`, which builds the headers once
// (the signed-in user's bearer token; none for a share link's page, whose capability
// is the token in its path), sends every write as JSON (an upload as
// application/octet-stream: the server refuses what a plain HTML form can send), and
// turns every refusal into one `ApiError` whose `words` a person can read. Streams of
// server-sent events (a generation, live updates) are read by `sse`, one reader with
// the same errors.

const KEY = "loomdb-token";

/** The token kept for this browser (null: none). */
export function token() {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

/** Keep `value` as the token (null or "": forget it). */
export function keepToken(value) {
  if (value) localStorage.setItem(KEY, value);
  else localStorage.removeItem(KEY);
}

/** What the server refused (or that it could not be reached), with the error's type
 *  (`InvalidInput`, `NotFound`...: loomdb.errors), its HTTP status (0: no answer) and
 *  the server's one line; `message` is that line alone, for a person. */
export class ApiError extends Error {
  /** @param {number} status @param {string} type @param {string} message @param {any} [error] */
  constructor(status, type, message, error) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.type = type;
    /** @type {any} the whole error body (a merge conflict's regions...) */
    this.error = error ?? { type, message };
  }
}

/** An error as a person reads it: the server's line without the error's class name. */
export function words(e) {
  if (e instanceof ApiError) {
    if (e.status === 0) return "The server could not be reached: try again.";
    if (e.status === 401) return e.message ? `Not signed in: ${e.message}.` : "Not signed in.";
    return e.message;
  }
  if (e && e.name === "AbortError") return "Stopped.";
  return e && e.message ? String(e.message) : String(e);
}

/** Whether a call was cut short by its AbortSignal (Stop, a newer request). */
export const aborted = (e) => !!e && e.name === "AbortError";

/**
 * @typedef {object} Options
 * @property {any} [body] JSON to send (a Blob goes as application/octet-stream)
 * @property {AbortSignal} [signal]
 * @property {string|null} [token] a token to send instead of the one kept (sign-in checks one)
 * @property {boolean} [anonymous] send no token (a share link's reads)
 * @property {string} [accept]
 */

/** The headers of a call, made in one place. @param {Options} opts */
function headers(opts, body) {
  /** @type {Record<string, string>} */
  const h = {};
  const t = opts.token !== undefined ? opts.token : token();
  if (t && !opts.anonymous) h.Authorization = `Bearer ${t}`;
  if (opts.accept) h.Accept = opts.accept;
  if (body instanceof Blob) h["Content-Type"] = "application/octet-stream";
  else if (body !== undefined) h["Content-Type"] = "application/json";
  return h;
}

/** The error a refused answer carries. @param {Response} res */
async function refusal(res) {
  const type = res.headers.get("content-type") || "";
  const data = type.includes("json") ? await res.json().catch(() => null) : null;
  const err = data && data.error;
  if (err && typeof err.message === "string")
    return new ApiError(res.status, err.type || "HTTP", err.message, err);
  return new ApiError(res.status, "HTTP", `the server answered ${res.status}`);
}

/** The raw answer of a call that succeeded (or an ApiError). @param {string} method
 *  @param {string} path @param {Options} [opts] @returns {Promise<Response>} */
export async function request(method, path, opts = {}) {
  let body = opts.body;
  if (body === undefined && method !== "GET" && method !== "DELETE") body = {};
  /** @type {RequestInit} */
  const init = { method, headers: headers(opts, body), signal: opts.signal, cache: "no-store" };
  if (body !== undefined) init.body = body instanceof Blob ? body : JSON.stringify(body);
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    if (aborted(e)) throw e;
    throw new ApiError(0, "Network", "the server could not be reached");
  }
  if (!res.ok) throw await refusal(res);
  return res;
}

/** A JSON call: its answer parsed. */
export async function call(method, path, opts = {}) {
  const res = await request(method, path, opts);
  const type = res.headers.get("content-type") || "";
  return type.includes("json") ? res.json() : res.text();
}

/** @param {string} path @param {Options} [opts] */
export const get = (path, opts) => call("GET", path, opts);
/** @param {string} path @param {any} [body] @param {Options} [opts] */
export const post = (path, body, opts) => call("POST", path, { ...opts, body: body ?? {} });
/** @param {string} path @param {any} body @param {Options} [opts] */
export const patch = (path, body, opts) => call("PATCH", path, { ...opts, body });
/** @param {string} path @param {Options} [opts] */
export const del = (path, opts) => call("DELETE", path, opts);
/** An answer's bytes (a blob, an export). @param {string} path @param {Options} [opts] */
export const bytes = async (path, opts) => (await request("GET", path, opts)).blob();
export const enc = encodeURIComponent;

/** A query string of the values that are set. @param {Record<string, any>} params */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/**
 * One block of a server-sent event stream, parsed.
 * @param {string} block
 * @returns {{event: string, data: string|null, retry: number|null}}
 */
export function parseEvent(block) {
  let event = "message";
  /** @type {string[]} */
  const data = [];
  let retry = null;
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const at = line.indexOf(":");
    const field = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
  }
  return { event, data: data.length ? data.join("\n") : null, retry };
}

/**
 * Read a stream of server-sent events: `onEvent({event, data})` for each (data parsed
 * from JSON). An `error` event throws its ApiError (the server's type and line), a
 * refused request throws as `request` does, an abort throws an AbortError; the promise
 * resolves when the stream ends, or when `onEvent` returns true (done).
 * @param {string} method @param {string} path @param {Options} opts
 * @param {(e: {event: string, data: any, retry: number|null}) => boolean|void} onEvent
 */
export async function sse(method, path, opts, onEvent) {
  const res = await request(method, path, { ...opts, accept: "text/event-stream" });
  if (!res.body) throw new ApiError(res.status, "Stream", "the answer has no stream");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (aborted(e) || opts.signal?.aborted) throw e;
        throw new ApiError(0, "Network", "the stream was cut");
      }
      if (chunk.done) return;
      buf += chunk.value.replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const { event, data, retry } = parseEvent(buf.slice(0, cut));
        buf = buf.slice(cut + 2);
        if (data === null && retry === null) continue;
        const value = data === null ? null : JSON.parse(data);
        if (event === "error") {
          const err = (value && value.error) || { type: "Stream", message: "the stream failed" };
          throw new ApiError(502, err.type, err.message, err);
        }
        if (onEvent({ event, data: value, retry })) return;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
