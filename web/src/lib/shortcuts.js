// @ts-check
// The keys every view shares, installed once by the shell: "/" focuses the search box
// (opening the Search view when the page shows none).
import { go } from "./router.svelte.js";
import { global } from "./keys.js";

function searchbox() {
  return /** @type {HTMLElement|null} */ (document.querySelector('[role="searchbox"], input[type="search"]'));
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

export function install() {
  window.addEventListener("keydown", (event) => {
    if (global(event) === "search") {
      event.preventDefault();
      focusSearch();
    }
  });
}
