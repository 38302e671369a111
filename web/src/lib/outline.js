// @ts-check
// The tree outline beside a thread (as pi's /tree): every place of the tree map's
// model (lib/treemap/model.js) as one line, in order, indented only where the tree
// branches (a run of single replies stays at one level, so a 900-message session is a
// flat list, not a staircase), the current path marked. A branch point folds; with
// `userOnly`, only the user's messages are listed (each at its own level). Pure: the
// view draws the rows.
import { descendants } from "./treemap/model.js";

/** @typedef {{place: number, row: number, depth: number, role: string, text: string,
 *   onPath: boolean, current: boolean, branches: number, folded: boolean, hidden: number,
 *   marks: {kind: string, name: string}[]}} Line */

/** The outline's lines. `folded`: branch points (places) whose branches are hidden.
 *  @param {any} model @param {{userOnly?: boolean, folded?: Set<number>}} [o]
 *  @returns {Line[]} */
export function outline(model, { userOnly = false, folded = new Set() } = {}) {
  /** @type {Line[]} */
  const lines = [];
  /** @type {[number, number][]} place, depth; a stack, the first child on top */
  const stack = [];
  for (let i = model.roots.length - 1; i >= 0; i--) stack.push([model.roots[i], 0]);
  while (stack.length) {
    const [place, depth] = /** @type {[number, number]} */ (stack.pop());
    const kids = model.kids.get(place) ?? [];
    const shut = kids.length > 1 && folded.has(place);
    const row = model.pathRow.get(place) ?? place;
    if (!userOnly || model.role[row] === "user") {
      lines.push({
        place, row, depth, role: model.role[row], text: model.text[row] ?? "",
        onPath: !!model.onPath[place], current: model.current === place,
        branches: kids.length > 1 ? kids.length : 0, folded: shut,
        hidden: shut ? descendants(model, place) : 0,
        marks: (model.marks.get(place) ?? []).map((/** @type {any} */ m) => ({ kind: m.kind, name: m.name })),
      });
    }
    if (shut) continue;
    const next = kids.length > 1 ? depth + 1 : depth;
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], next]);
  }
  return lines;
}
