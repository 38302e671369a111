import { describe, expect, it } from "vitest";
import { parseEvent, query, words, ApiError } from "../src/lib/api.js";
import { queryOf, addressOf, placeOf, marked } from "../src/lib/search.js";
import { exportName, EXPORTS } from "../src/lib/trees.js";

describe("the client layer's pure parts", () => {
  it("parses a server-sent event", () => {
    expect(parseEvent('event: token\ndata: {"delta":"a"}')).toEqual({ event: "token", data: '{"delta":"a"}', retry: null });
    expect(parseEvent(": comment\nretry: 3000")).toEqual({ event: "message", data: null, retry: 3000 });
    expect(parseEvent("data: a\ndata: b").data).toBe("a\nb");
  });
  it("builds query strings of what is set", () => {
    expect(query({ a: 1, b: null, c: "", d: "x y" })).toBe("?a=1&d=x+y");
    expect(query({})).toBe("");
  });
  it("says an error in words", () => {
    expect(words(new ApiError(400, "InvalidInput", "name: must not be empty"))).toBe("name: must not be empty");
    expect(words(new ApiError(0, "Network", "x"))).toMatch(/could not be reached/);
    expect(words(Object.assign(new Error("x"), { name: "AbortError" }))).toBe("Stopped.");
  });
  it("keeps a search in its address", () => {
    const q = queryOf(new URLSearchParams("q=hello&mode=semantic&tree=t1&limit=40"));
    expect(q).toMatchObject({ q: "hello", mode: "semantic", tree: "t1", limit: 40 });
    expect(addressOf(q)).toBe("#/search?q=hello&mode=semantic&tree=t1&limit=40");
    expect(queryOf(new URLSearchParams("q=x&mode=bogus")).mode).toBe("text");
    expect(placeOf("doc:plan@r1").href).toBe("#/documents/plan?rev=r1");
    expect(placeOf("01ABC").href).toBe("#/thread/01ABC?at=01ABC");
    expect(marked("a [b] c", [[3, 4]])).toEqual([{ text: "a [", hit: false }, { text: "b", hit: true }, { text: "] c", hit: false }]);
  });
  it("names an export's file by its tree and format", () => {
    expect(exportName("Trip to Paris?", "markdown")).toBe("Trip-to-Paris.md");
    expect(exportName("", "openai-jsonl")).toBe("tree.openai.jsonl");
    expect(EXPORTS.map(([f]) => f)).toEqual(["json", "jsonl", "markdown", "openai-jsonl", "chatgpt"]);
  });
});
