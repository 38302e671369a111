// @ts-check
// What a key does, decided apart from the page (pure, so unit tests read it): the
// keys every view shares ("/" the search box), the thread's walk, and the composer's
// Enter / Shift+Enter / Esc. `lib/shortcuts.js` installs the page-wide ones.

/** @typedef {{key: string, ctrlKey?: boolean, metaKey?: boolean, altKey?: boolean, shiftKey?: boolean, isComposing?: boolean, target?: any}} KeyLike */

/** Whether the key goes to a field being typed in. @param {KeyLike} event */
export function typing(event) {
  const t = event.target;
  return !!t && (!!t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName ?? ""));
}

/** No modifier but Shift. @param {KeyLike} event */
export function plain(event) {
  return !event.ctrlKey && !event.metaKey && !event.altKey;
}

/** The page-wide key an event is, if any ("search": focus the search box). @param {KeyLike} event */
export function global(event) {
  return event.key === "/" && plain(event) && !typing(event) ? "search" : null;
}

/** What a key in the composer does: "send" (Enter), "newline" (Shift+Enter, or Enter
 *  while an input method composes), "stop" (Esc while a stream runs), or null.
 *  @param {KeyLike} event @param {boolean} streaming */
export function composerKey(event, streaming) {
  if (event.key === "Escape") return streaming ? "stop" : null;
  if (event.key !== "Enter") return null;
  if (event.isComposing || event.shiftKey) return "newline";
  if (event.ctrlKey || event.metaKey) return "send";
  return event.altKey ? null : "send";
}

/** The thread's walk: which move a key asks for ("up", "down", "prev-branch",
 *  "next-branch", "prev-version", "next-version", "help"; Esc "stop" while a stream
 *  runs, else "escape"), or null. Arrows move only while the focus is in the list of
 *  messages. @param {KeyLike} event @param {{inList: boolean, streaming?: boolean}} where */
export function threadKey(event, { inList, streaming = false }) {
  if (event.key === "Escape") return streaming ? "stop" : "escape";
  if (!plain(event) || typing(event)) return null;
  const k = event.key;
  if (k === "?") return "help";
  if (k === "k" || (inList && k === "ArrowUp")) return "up";
  if (k === "j" || (inList && k === "ArrowDown")) return "down";
  if (k === "h" || (inList && k === "ArrowLeft")) return "prev-branch";
  if (k === "l" || (inList && k === "ArrowRight")) return "next-branch";
  if (k === "[") return "prev-version";
  if (k === "]") return "next-version";
  return null;
}

/** The neighbour of `id` in `list` (wrapping), or null when there is none to go to.
 *  @template T @param {T[]} list @param {T} id @param {number} d */
export function step(list, id, d) {
  if (list.length < 2) return null;
  const k = list.indexOf(id);
  return list[(k + d + list.length) % list.length];
}

/** What a key does in loom mode (outside any field): "generate" (g), "left" / "right"
 *  (among the continuations at a position), "earlier" / "later" (up / down a level),
 *  "pick" (Enter: switch the document to the continuation in focus), "bookmark" (b).
 *  @param {KeyLike} event */
export function loomKey(event) {
  if (typing(event) || !plain(event) || event.shiftKey) return null;
  return { g: "generate", b: "bookmark", Enter: "pick", ArrowLeft: "left", ArrowRight: "right",
    ArrowUp: "earlier", ArrowDown: "later" }[event.key] ?? null;
}
