import { describe, expect, it } from "vitest";
import { buildModel, descendants } from "../src/lib/treemap/model.js";
import { layoutTree, BOX } from "../src/lib/treemap/layout.js";

// rows: 0 root, 1 answer, 2 second answer (a branch), 3 a version of 1, 4 follows 3
const data = {
  tree: "t",
  nodes: { id: ["a", "b", "c", "d", "e"], parent: [-1, 0, 0, 0, 3], slot: [0, 1, 2, 1, 4],
    role: ["user", "assistant", "assistant", "assistant", "user"], kind: ["message", "message", "message", "message", "message"],
    text: ["q", "a1", "a2", "a1 edited", "next"] },
  refs: { session: [{ name: "main", node: 4 }] }, current: 4, pruned: [2], excluded: [],
};

describe("the tree map's model and layout", () => {
  it("folds versions into their place and follows the current path", () => {
    const m = buildModel(data);
    expect(m.roots).toEqual([0]);
    expect(m.kids.get(0)).toEqual([1, 2]);
    expect(m.versions.get(1)).toEqual([3]);
    expect(m.kids.get(1)).toEqual([4]);
    expect(m.current).toBe(4);
    expect([...m.onPath]).toEqual([1, 1, 0, 0, 1]);
    expect(m.pruned.has(2)).toBe(true);
    expect(m.marks.get(4)).toEqual([{ kind: "session", name: "main", row: 4 }]);
    expect(descendants(m, 1)).toBe(1);
    expect(descendants(m, 0)).toBe(3);
  });
  it("lays out a reply a row below what it answers and branches side by side", () => {
    const m = buildModel(data);
    const l = layoutTree(m);
    expect(l.y[1]).toBeGreaterThan(l.y[0]);
    expect(l.y[1]).toBe(l.y[2]);
    expect(Math.abs(l.x[1] - l.x[2])).toBeGreaterThanOrEqual(BOX.w);
    const folded = layoutTree(m, { collapsed: new Set([1]) });
    expect(folded.has(4)).toBe(false);
    expect(folded.has(1)).toBe(true);
    expect(folded.isCollapsed(1)).toBe(true);
  });
  it("lays out a 5,000-message thread in linear time", () => {
    const n = 5000;
    const line = { tree: "t", nodes: { id: [], parent: [], slot: [], role: [], kind: [], text: [] }, refs: {}, current: n - 1 };
    for (let i = 0; i < n; i++) {
      line.nodes.id.push(`n${i}`); line.nodes.parent.push(i - 1); line.nodes.slot.push(i);
      line.nodes.role.push(i % 2 ? "assistant" : "user"); line.nodes.kind.push("message"); line.nodes.text.push("");
    }
    const l = layoutTree(buildModel(line));
    expect(l.places.length).toBe(n);
    expect(l.y[n - 1]).toBeGreaterThan(l.y[0]);
  });
  it("folds each linear run into one box at branch points only", () => {
    // 0 root -> 1 -> 2 (a branch point) -> 3 -> 4 and 2 -> 5
    const run = { tree: "t", nodes: { id: ["a", "b", "c", "d", "e", "f"], parent: [-1, 0, 1, 2, 3, 2],
      slot: [0, 1, 2, 3, 4, 5], role: Array(6).fill("user"), kind: Array(6).fill("message"), text: Array(6).fill("") },
    refs: {}, current: 4 };
    const m = buildModel(run);
    const l = layoutTree(m, { runs: true });
    expect([...l.places]).toEqual([0, 3, 5]);
    expect(l.runOf(0)).toBe(3); // the root, its reply and the branch point
    expect(l.runOf(3)).toBe(2);
    expect(l.runOf(5)).toBe(1);
    expect(l.shownAs(4)).toBe(3);
    expect(l.shownAs(1)).toBe(0);
    expect(l.children(0)).toEqual([3, 5]);
    expect(layoutTree(m).places.length).toBe(6);
    // a collapsed place ends its run there
    const cut = layoutTree(m, { runs: true, collapsed: new Set([1]) });
    expect([...cut.places]).toEqual([0]);
    expect(cut.runOf(0)).toBe(2);
  });
});
