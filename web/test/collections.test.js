import { describe, expect, it } from "vitest";
import { upMove, downMove, descendants, underMove, byTag, fieldNames, columns } from "../src/lib/collections.js";

const items = [
  { id: "a", parent: null, tags: ["x"], fields: { status: "todo" } },
  { id: "b", parent: "a", tags: [], fields: {} },
  { id: "c", parent: "a", tags: ["x", "y"], fields: { status: "done" } },
  { id: "d", parent: null, tags: [], fields: { owner: "me" } },
];

describe("collection moves and groupings", () => {
  it("moves among siblings", () => {
    expect(upMove(items, items[2])).toEqual({ first: true });
    expect(upMove(items, items[1])).toBe(null);
    expect(downMove(items, items[1])).toEqual({ after: "c" });
    expect(downMove(items, items[3])).toBe(null);
    expect([...descendants(items, items[0])].sort()).toEqual(["b", "c"]);
    expect(underMove(items, items[1], "d")).toEqual({ parent: "d" });
    expect(underMove(items, items[1], null)).toEqual({ after: "d" });
  });
  it("groups by tag and by a field", () => {
    expect(byTag(items).map(([t, its]) => [t, its.map((i) => i.id)])).toEqual([["x", ["a", "c"]], ["y", ["c"]], ["", ["b", "d"]]]);
    expect(fieldNames(items)).toEqual(["owner", "status"]);
    expect(columns(items, "status", ["todo", "doing"]).map(([v, its]) => [v, its.length])).toEqual([["todo", 1], ["doing", 0], ["done", 1], ["", 2]]);
  });
});
