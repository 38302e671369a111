import { describe, expect, it } from "vitest";
import { headOf, throughRef, regenerateAt, chooseModel, askFor, streamed, textOf, editable, shortDate, count, nameTaken } from "../src/lib/chat.js";

const msg = (index, extra = {}) => ({ id: `n${index}`, index, role: index % 2 ? "assistant" : "user", parent: index ? `n${index - 1}` : null,
  slot: `n${index}`, content: [{ type: "text", text: `t${index}` }], branches: [], versions: [], created_at: "2026-01-02T03:04:05Z", ...extra });

describe("the chat's decisions", () => {
  it("acts through the session its address names", () => {
    expect(headOf(msg(4), { through: true, headish: "main", total: 5 })).toBe("main");
    expect(headOf(msg(1), { through: true, headish: "main", total: 5 })).toBe("main~3");
    expect(headOf(msg(1), { through: false, headish: "n4", total: 5 })).toBe("n1");
    expect(throughRef({ kind: "session", name: "main" }, "main")).toBe(true);
    expect(throughRef({ kind: "bookmark", name: "main" }, "main")).toBe(false);
    expect(throughRef({ kind: "session", name: "main" }, "n4")).toBe(false);
    expect(throughRef(null, "main")).toBe(false);
  });
  it("regenerates at the message answered", () => {
    const ms = [msg(0), msg(1), msg(2), msg(3)];
    expect(regenerateAt(ms, 3)).toBe(ms[2]);
    expect(regenerateAt(ms, 0)).toBe(null);
  });
  it("asks the picked model while it is served, else the default", () => {
    const served = { models: [{ name: "local" }, { name: "milli" }], default: "local" };
    expect(chooseModel(served, "milli")).toBe("milli");
    expect(chooseModel(served, "gone")).toBe("local");
    expect(chooseModel({ models: [{ name: "a" }], default: null }, null)).toBe("a");
    expect(chooseModel({ models: [], default: null }, "a")).toBe(null);
  });
  it("asks for one answer unless more are asked for, within bounds", () => {
    expect(askFor({ model: "local", n: "", maxTokens: "" })).toEqual({ n: 1, models: ["local"], max_tokens: 512 });
    expect(askFor({ model: null, n: 3, maxTokens: 16 })).toEqual({ n: 3, models: [], max_tokens: 16 });
    expect(askFor({ model: null, n: 99, maxTokens: -4 }).n).toBe(16);
  });
  it("keeps what a stream wrote, per answer", () => {
    let live = {};
    live = streamed(live, "0.0", "Hel");
    live = streamed(live, "0.1", "Bon");
    live = streamed(live, "0.0", "lo");
    expect(live).toEqual({ "0.0": "Hello", "0.1": "Bon" });
    expect(Object.keys(live)).toEqual(["0.0", "0.1"]);
  });
  it("copies and edits a message's text", () => {
    expect(textOf([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }])).toBe("a\n\nb");
    expect(editable(msg(0))).toBe(true);
    expect(editable(msg(0, { content: [{ type: "image" }] }))).toBe(false);
    expect(editable(msg(0, { kind: "compaction" }))).toBe(false);
  });
  it("says dates and counts in words", () => {
    const now = new Date("2026-03-04T12:00:00Z");
    expect(shortDate("2026-03-04T10:30:00Z", now)).toMatch(/\d/);
    expect(shortDate("2025-01-02T10:30:00Z", now)).toMatch(/2025/);
    expect(shortDate("not a date", now)).toBe("");
    expect(count(1, "message")).toBe("1 message");
    expect(count(1200, "message")).toBe("1,200 messages");
    expect(nameTaken("session 'x': the name is taken (names are unique in the store); choose another"))
      .toBe("That name is already in use: choose another.");
    expect(nameTaken("must not be empty")).toBe("must not be empty");
  });
});
