import { describe, expect, it } from "vitest";
import { typing, plain, global, composerKey, threadKey, step } from "../src/lib/keys.js";

const key = (k, extra = {}) => ({ key: k, target: { tagName: "DIV" }, ...extra });
const inField = (k, extra = {}) => key(k, { target: { tagName: "TEXTAREA" }, ...extra });

describe("keys", () => {
  it("knows a field being typed in and a plain key", () => {
    expect(typing(inField("a"))).toBe(true);
    expect(typing(key("a", { target: { tagName: "DIV", isContentEditable: true } }))).toBe(true);
    expect(typing(key("a"))).toBe(false);
    expect(plain(key("a", { ctrlKey: true }))).toBe(false);
    expect(plain(key("A", { shiftKey: true }))).toBe(true);
  });
  it("opens search with / outside fields only", () => {
    expect(global(key("/"))).toBe("search");
    expect(global(inField("/"))).toBe(null);
    expect(global(key("/", { metaKey: true }))).toBe(null);
  });
  it("sends on Enter, a new line on Shift+Enter, stops on Esc while streaming", () => {
    expect(composerKey(inField("Enter"), false)).toBe("send");
    expect(composerKey(inField("Enter", { shiftKey: true }), false)).toBe("newline");
    expect(composerKey(inField("Enter", { isComposing: true }), false)).toBe("newline");
    expect(composerKey(inField("Enter", { ctrlKey: true }), false)).toBe("send");
    expect(composerKey(inField("Escape"), true)).toBe("stop");
    expect(composerKey(inField("Escape"), false)).toBe(null);
    expect(composerKey(inField("a"), false)).toBe(null);
  });
  it("walks the thread", () => {
    expect(threadKey(key("k"), { inList: false })).toBe("up");
    expect(threadKey(key("ArrowUp"), { inList: false })).toBe(null);
    expect(threadKey(key("ArrowUp"), { inList: true })).toBe("up");
    expect(threadKey(key("ArrowDown"), { inList: true })).toBe("down");
    expect(threadKey(key("l"), { inList: false })).toBe("next-branch");
    expect(threadKey(key("ArrowLeft"), { inList: true })).toBe("prev-branch");
    expect(threadKey(key("["), { inList: false })).toBe("prev-version");
    expect(threadKey(key("]"), { inList: false })).toBe("next-version");
    expect(threadKey(key("?"), { inList: false })).toBe("help");
    expect(threadKey(inField("k"), { inList: true })).toBe(null);
    expect(threadKey(key("Escape"), { inList: false, streaming: true })).toBe("stop");
    expect(threadKey(inField("Escape"), { inList: false })).toBe("escape");
    expect(threadKey(key("j", { altKey: true }), { inList: true })).toBe(null);
  });
  it("steps round a list", () => {
    expect(step(["a", "b", "c"], "c", 1)).toBe("a");
    expect(step(["a", "b", "c"], "a", -1)).toBe("c");
    expect(step(["a"], "a", 1)).toBe(null);
  });
});

import { loomKey } from "../src/lib/keys.js";
describe("loomKey", () => {
  it("maps the loom's keys outside fields only", () => {
    expect(loomKey({ key: "g" })).toBe("generate");
    expect(loomKey({ key: "b" })).toBe("bookmark");
    expect(loomKey({ key: "Enter" })).toBe("pick");
    expect(loomKey({ key: "ArrowRight" })).toBe("right");
    expect(loomKey({ key: "ArrowUp" })).toBe("earlier");
    expect(loomKey({ key: "g", target: { tagName: "INPUT" } })).toBe(null);
    expect(loomKey({ key: "g", ctrlKey: true })).toBe(null);
    expect(loomKey({ key: "x" })).toBe(null);
  });
});
