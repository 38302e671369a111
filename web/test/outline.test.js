import { describe, expect, it } from "vitest";
import { buildModel } from "../src/lib/treemap/model.js";
import { outline } from "../src/lib/outline.js";

// u0 - a1 - u2 - a3          (the current path, a session `main` at a3)
//           \- u4 - a5       (a second branch at a1; u4 has a bookmark)
//      a1' (a version of a1)
const data = {
  tree: "t",
  nodes: { id: ["u0", "a1", "u2", "a3", "u4", "a5", "a1v"], parent: [-1, 0, 1, 2, 1, 4, 0],
           slot: [0, 1, 2, 3, 4, 5, 1], role: ["user", "assistant", "user", "assistant", "user", "assistant", "assistant"],
           kind: Array(7).fill("message"), text: ["q0", "a1", "q2", "a3", "q4", "a5", "a1 again"] },
  refs: { session: [{ name: "main", node: 3 }], bookmark: [{ name: "idea", node: 4 }] },
  current: 3,
};

describe("the tree outline", () => {
  it("indents at branch points only and marks the current path, refs and labels", () => {
    const lines = outline(buildModel(data));
    expect(lines.map((l) => [l.text, l.depth])).toEqual([["q0", 0], ["a1", 0], ["q2", 1], ["a3", 1], ["q4", 1], ["a5", 1]]);
    expect(lines.filter((l) => l.onPath).map((l) => l.text)).toEqual(["q0", "a1", "q2", "a3"]);
    expect(lines.find((l) => l.current).text).toBe("a3");
    expect(lines[1].branches).toBe(2);
    expect(lines[3].marks).toEqual([{ kind: "session", name: "main" }]);
    expect(lines[4].marks).toEqual([{ kind: "bookmark", name: "idea" }]);
  });
  it("folds a branch point and lists only the user's messages on request", () => {
    const model = buildModel(data);
    const folded = outline(model, { folded: new Set([1]) });
    expect(folded.map((l) => l.text)).toEqual(["q0", "a1"]);
    expect(folded[1]).toMatchObject({ folded: true, hidden: 4 });
    expect(outline(model, { userOnly: true }).map((l) => [l.text, l.depth])).toEqual([["q0", 0], ["q2", 1], ["q4", 1]]);
  });
  it("keeps a long single line flat and reads it without recursion", () => {
    const n = 5000;
    const long = buildModel({ tree: "t", nodes: { id: Array.from({ length: n }, (_, i) => `n${i}`),
      parent: Array.from({ length: n }, (_, i) => i - 1), slot: Array.from({ length: n }, (_, i) => i),
      role: Array.from({ length: n }, (_, i) => (i % 2 ? "assistant" : "user")), kind: Array(n).fill("message"),
      text: Array(n).fill("x") }, refs: {}, current: n - 1 });
    const lines = outline(long);
    expect(lines).toHaveLength(n);
    expect(lines.every((l) => l.depth === 0)).toBe(true);
  });
});
