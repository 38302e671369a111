// @ts-check
// Search's address and its hits' destinations. The whole query lives in the address
// (`#/search?q=...&mode=...&tree=...`) so a search can be bookmarked, shared and reloaded.

import { get } from "./api.js";

export const MODES = [["text", "Full text"], ["semantic", "Semantic"], ["hybrid", "Hybrid"]];
export const FILTERS = ["tree", "role", "author", "tag", "kind"];
//: the longest query the box sends (the server refuses nothing shorter; a query is words)
export const MAX_QUERY = 500;
//: hits asked for at first, and the most "More hits" asks for (the server's own cap is higher)
export const PAGE = 20;
export const MAX_HITS = 200;

/** The query an address names: {q, mode, tree, role, author, tag, kind} (absent → ""). */
export function queryOf(params) {
  const out = { q: (params?.get("q") ?? "").slice(0, MAX_QUERY), mode: params?.get("mode") ?? "text" };
  if (!MODES.some(([m]) => m === out.mode)) out.mode = "text";
  for (const f of FILTERS) out[f] = params?.get(f) ?? "";
  const limit = Number.parseInt(params?.get("limit") ?? "", 10);
  out.limit = Number.isFinite(limit) ? Math.min(Math.max(limit, 1), MAX_HITS) : PAGE;
  return out;
}

/** The address of a query: only what is set, so addresses stay short. */
export function addressOf(query) {
  const p = new URLSearchParams();
  p.set("q", query.q.trim());
  if (query.mode && query.mode !== "text") p.set("mode", query.mode);
  for (const f of FILTERS) if (query[f]) p.set(f, query[f]);
  if (query.limit && query.limit !== PAGE) p.set("limit", String(query.limit));
  return "#/search?" + p.toString();
}

/** The API path answering a query. */
export function apiPathOf(query) {
  const p = new URLSearchParams({ q: query.q.trim(), mode: query.mode, limit: String(query.limit ?? PAGE) });
  for (const f of FILTERS) if (query[f]) p.set(f, query[f]);
  return "/api/search?" + p.toString();
}

const enc = encodeURIComponent;

/** Where an address opens in the page, and what to call it:
 *  a message → its branch scrolled to it; `doc:NAME@REV` → that document at that revision;
 *  `coll:NAME/ITEM` → that collection with the item marked; `tree:ID` → its thread. */
export function placeOf(address) {
  let m = /^doc:([^@]+)(?:@(.+))?$/.exec(address);
  if (m) return { kind: "document", name: m[1], label: `Document ${m[1]}`,
    href: `#/documents/${enc(m[1])}` + (m[2] ? `?rev=${enc(m[2])}` : "") };
  m = /^coll:([^/]+)(?:\/(.+))?$/.exec(address);
  if (m) return { kind: "collection", name: m[1], label: `Collection ${m[1]}`,
    href: `#/collections/${enc(m[1])}` + (m[2] ? `?item=${enc(m[2])}` : "") };
  m = /^tree:(.+)$/.exec(address);
  if (m) return { kind: "tree", name: m[1], label: `Tree ${m[1]}`, href: `#/treemap/${enc(m[1])}` };
  if (/^sha256:/.test(address)) return { kind: "content", name: address, label: address, href: null };
  return { kind: "message", name: address, label: `Message ${address.slice(-8)}`,
    href: `#/thread/${enc(address)}?at=${enc(address)}` };
}

/** A snippet split into plain and matched parts: the server sends the snippet as plain
 *  text and its matches as `[start, end]` spans in characters (code points), so
 *  nothing in the content (a bracket, a tag) is ever taken for a marker.
 *  @param {string} snippet @param {number[][]} [marks] */
export function marked(snippet, marks = []) {
  const chars = Array.from(snippet ?? "");
  const parts = [];
  let last = 0;
  for (const [start, end] of [...marks].sort((a, b) => a[0] - b[0])) {
    const s = Math.max(start, last), e = Math.min(end, chars.length);
    if (e <= s) continue;
    if (s > last) parts.push({ text: chars.slice(last, s).join(""), hit: false });
    parts.push({ text: chars.slice(s, e).join(""), hit: true });
    last = e;
  }
  if (last < chars.length) parts.push({ text: chars.slice(last).join(""), hit: false });
  return parts;
}

/** Where a hit opens: a message hit its branch THROUGH the hit down to the branch's
 *  latest message (`leaf`), scrolled to the hit; anything else as `placeOf` says.
 *  @param {{entity: string, kind: string, leaf?: string | null}} hit */
export function hitHref(hit) {
  const place = placeOf(hit.entity);
  if (place.kind !== "message" || !hit.leaf) return place.href;
  return `#/thread/${enc(hit.leaf)}?at=${enc(hit.entity)}`;
}

/** A date as the page shows it: the day, and the time when it is today. @param {string} iso */
export function whenOf(iso, now = new Date()) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const day = d.toISOString().slice(0, 10);
  return day === now.toISOString().slice(0, 10) ? `today ${d.toISOString().slice(11, 16)} UTC` : day;
}

/** How far embedding has come, or null when the server says nothing of it (no status
 *  route, or nothing pending). @param {{signal?: AbortSignal}} [o] */
export async function embedding({ signal } = {}) {
  try {
    const s = await get("/api/search/status", { signal });
    return s && typeof s.pending === "number" && typeof s.total === "number" ? s : null;
  } catch (e) {
    if (e?.name === "AbortError") throw e;
    return null; // a server without the route (or without the semantic extra)
  }
}

/** The hits of a query (see apiPathOf). @param {Record<string, any>} q @param {{signal?: AbortSignal}} [o] */
export const search = (q, { signal } = {}) => get(apiPathOf(q), { signal });
