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

/** A snippet split into plain and matched parts (the server marks matches [like this]). */
export function marked(snippet) {
  const parts = [];
  const re = /\[([^\]]*)\]/g;
  let last = 0, m;
  while ((m = re.exec(snippet))) {
    if (m.index > last) parts.push({ text: snippet.slice(last, m.index), hit: false });
    parts.push({ text: m[1], hit: true });
    last = re.lastIndex;
  }
  if (last < snippet.length) parts.push({ text: snippet.slice(last), hit: false });
  return parts;
}

/** The hits of a query (see apiPathOf). @param {Record<string, any>} q @param {{signal?: AbortSignal}} [o] */
export const search = (q, { signal } = {}) => get(apiPathOf(q), { signal });
