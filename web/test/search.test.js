import { describe, it, expect } from "vitest";
import { marked, hitHref, whenOf } from "../src/lib/search.js";

describe("marked", () => {
  it("marks the spans given and keeps brackets in the content", () => {
    const parts = marked("def f(x: Dict[str, Any]) -> ferry", [[28, 33]]);
    expect(parts).toEqual([{ text: "def f(x: Dict[str, Any]) -> ", hit: false },
      { text: "ferry", hit: true }]);
  });
  it("counts code points, not UTF-16 units", () => {
    expect(marked("🙂 ferry", [[2, 7]])).toEqual([{ text: "🙂 ", hit: false }, { text: "ferry", hit: true }]);
  });
  it("ignores spans out of range or overlapping", () => {
    expect(marked("abc", [[1, 2], [1, 3], [5, 9]])).toEqual([
      { text: "a", hit: false }, { text: "b", hit: true }, { text: "c", hit: true }]);
    expect(marked("abc")).toEqual([{ text: "abc", hit: false }]);
  });
});

describe("hitHref", () => {
  it("opens a message hit's branch down to its latest message, at the hit", () => {
    expect(hitHref({ entity: "A", kind: "message", leaf: "Z" })).toBe("#/thread/Z?at=A");
    expect(hitHref({ entity: "A", kind: "message" })).toBe("#/thread/A?at=A");
    expect(hitHref({ entity: "doc:n@r1", kind: "document" })).toBe("#/documents/n?rev=r1");
  });
});

describe("whenOf", () => {
  it("says the day, or the time today", () => {
    const now = new Date("2026-03-04T10:00:00Z");
    expect(whenOf("2025-01-02T03:04:05Z", now)).toBe("2025-01-02");
    expect(whenOf("2026-03-04T08:30:00Z", now)).toBe("today 08:30 UTC");
    expect(whenOf("nonsense", now)).toBe("");
  });
});
