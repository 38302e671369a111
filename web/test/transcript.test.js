import { describe, expect, it } from "vitest";
import { toolOnly, summary, fold, isPatch, patchOf, diffLines } from "../src/lib/transcript.js";

const said = (id, role, text) => ({ id, role, content: [{ type: "text", text }] });
const calls = (id, ...names) => ({ id, role: "assistant",
  content: names.map((name, i) => ({ type: "tool_use", id: `${id}-${i}`, name, input: {} })) });
const results = (id, n = 1) => ({ id, role: "tool",
  content: Array.from({ length: n }, (_, i) => ({ type: "tool_result", tool_use_id: `c${i}`, content: [] })) });

describe("an agent's transcript", () => {
  it("folds consecutive tool steps into one line counting the calls by name", () => {
    const ms = [said("a", "user", "fix it"), calls("b", "bash", "bash"), results("c", 2),
      calls("d", "read_file"), results("e"), calls("f", "bash"), results("g"),
      said("h", "assistant", "done")];
    const items = fold(ms);
    expect(items.map((it) => (it.fold ? it.summary : it.m.id))).toEqual(["a", "3 bash, 1 read_file", "h"]);
    expect(items[1].rows.map((r) => r.k)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(items[2].k).toBe(7);
  });
  it("leaves a lone step, talk, compactions and subagent summaries unfolded", () => {
    expect(fold([said("a", "user", "x"), calls("b", "bash"), said("c", "assistant", "y")])
      .every((it) => !it.fold)).toBe(true);
    expect(toolOnly({ id: "t", content: [{ type: "thinking", thinking: "" }, { type: "tool_use", name: "x", input: {} }] })).toBe(true);
    expect(toolOnly({ id: "t", content: [{ type: "text", text: "" }, { type: "tool_use", name: "x", input: {} }] })).toBe(false);
    expect(toolOnly({ ...calls("s", "bash"), origin: { subagent: {} } })).toBe(false);
    expect(toolOnly({ ...calls("s", "spawn_subagent") })).toBe(false);
    expect(toolOnly({ ...calls("s", "bash"), subagents: [{ tree: "t" }] })).toBe(false);
    expect(fold([results("a"), results("b")]).every((it) => !it.fold)).toBe(true);
    expect(summary([results("a")])).toBe("1 tool results");
  });
  it("tells patches from other text and shows each line for what it is", () => {
    const unified = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n keep\n-old\n+new";
    expect(isPatch(unified)).toBe(true);
    expect(isPatch("*** Begin Patch\n*** Update File: x.py\n@@\n-a\n+b\n*** End Patch")).toBe(true);
    expect(isPatch("- a list item\n+ not a diff")).toBe(false);
    expect(isPatch(42)).toBe(false);
    expect(diffLines(unified).map((l) => l.kind)).toEqual(["file", "file", "hunk", "ctx", "del", "add"]);
    expect(patchOf({ type: "tool_use", name: "apply_patch", input: { input: "*** Begin Patch\n*** End Patch" } }))
      .toBe("*** Begin Patch\n*** End Patch");
    expect(patchOf({ type: "tool_use", name: "shell", input: { command: ["apply_patch", unified] } })).toBe(unified);
    expect(patchOf({ type: "tool_use", name: "Edit", input: { file_path: "x.py", old_string: "a", new_string: "b\nc" } }))
      .toBe("--- x.py\n+++ x.py\n@@ @@\n-a\n+b\n+c");
    expect(patchOf({ type: "tool_use", name: "bash", input: { command: "ls" } })).toBe(null);
  });
});
