// @ts-check
// Hash routing: every view has an address that can be bookmarked, reloaded and shared.
// `#/trees`, `#/thread/<headish>`, `#/search?q=...`, `#/documents/<name>`, ...
// A share link's page is served at /s/<token>; its views live under the same hash.

function parse() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = raw.split("?");
  const parts = path ? path.split("/").map(decodeURIComponent) : [];
  return { view: parts[0] || "trees", args: parts.slice(1), params: new URLSearchParams(query) };
}

export const route = $state(parse());

window.addEventListener("hashchange", () => Object.assign(route, parse()));

// The tree the page shows (a conversation, a loom document, a map): the navigation's
// "Tree map" opens its map at the message in view rather than asking which tree.
export const inView = $state({ tree: /** @type {string | null} */ (null), at: /** @type {string | null} */ (null) });

/** Say which tree (and which message of it) the page shows. @param {string | null} tree @param {string | null} [at] */
export function showing(tree, at = null) {
  inView.tree = tree;
  inView.at = at;
}

// A share link's page: whether its link lets a signed-in reader continue (the header
// says so rather than "read-only").
export const shareLink = $state({ continuable: false });

export function href(view, ...args) {
  return "#/" + [view, ...args.map(encodeURIComponent)].join("/");
}

export function go(view, ...args) {
  location.hash = href(view, ...args).slice(1);
}

export function shareToken() {
  const m = location.pathname.match(/^\/s\/([^/]+)/);
  return m ? decodeURIComponent(m[1]) : null;
}
