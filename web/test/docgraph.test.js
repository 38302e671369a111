import { describe, expect, it } from "vitest";
import { layout, short, ROW, LANE } from "../src/lib/docgraph.js";

describe("the revision graph", () => {
  it("gives the current branch the first lane and brings a merge's other parent in from its own", () => {
    const graph = {
      revisions: [
        { id: "r1", parents: [] }, { id: "r2", parents: ["r1"] }, { id: "r3", parents: ["r1"] },
        { id: "r4", parents: ["r2", "r3"] },
      ],
      branches: { main: "r4", side: "r3" }, branch: "main", revision: "r4",
    };
    const out = layout(graph);
    expect(out.rows.map((r) => r.rev.id)).toEqual(["r4", "r3", "r2", "r1"]);
    const lane = Object.fromEntries(out.rows.map((r) => [r.rev.id, r.lane]));
    expect(lane).toEqual({ r4: 0, r2: 0, r1: 0, r3: 1 });
    expect(out.rows[0]).toMatchObject({ number: 4, current: true, branches: ["main"], y: ROW / 2 });
    expect(out.rows[1].branches).toEqual(["side"]);
    expect(out.edges).toHaveLength(4);
    expect(out.width).toBe(2 * LANE);
    expect(out.height).toBe(4 * ROW);
    expect(short("01ABCDEFGHJKMNPQRS")).toBe("MNPQRS".padStart(7, "K"));
  });
});
