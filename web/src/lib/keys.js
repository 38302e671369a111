// Keys every view shares: "/" focuses the search box (opening the Search view when the
// page shows none). Installed once, by the first view that imports this module.
import { go } from "./router.svelte.js";

export function typing(event) {
  const t = event.target;
  return !!t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

export function plain(event) {
  return !event.ctrlKey && !event.metaKey && !event.altKey;
}

function searchbox() {
  return document.querySelector('[role="searchbox"], input[type="search"]');
}

export function focusSearch() {
  const box = searchbox();
  if (box) { box.focus(); return; }
  go("search");
  // wait for the Search view to draw its box (bounded: a view without one stops it)
  const seen = new MutationObserver(() => {
    const found = searchbox();
    if (found) { seen.disconnect(); found.focus(); }
  });
  seen.observe(document.body, { childList: true, subtree: true });
  setTimeout(() => seen.disconnect(), 5000);
}

if (!window.__loomdbKeys) {
  window.__loomdbKeys = true;
  window.addEventListener("keydown", (event) => {
    if (event.key === "/" && plain(event) && !typing(event)) {
      event.preventDefault();
      focusSearch();
    }
  });
}
