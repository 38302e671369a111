// @ts-check
// An agent's transcript as people read it: consecutive tool calls and their results
// folded into one line ("3 bash, 1 read_file"), and patches (a unified diff, an
// `apply_patch` input, an edit's old and new strings) told apart from other text so
// they can be shown as diffs. Pure functions, no page.

/** @typedef {{type: string, [k: string]: any}} Block */
/** @typedef {{id: string, kind?: string, origin?: any, subagents?: any[], content: Block[]}} Msg */
/** @typedef {{k: number, m: any}} Row */
/** An item of the thread: one message (`k`, `m`), or a fold of `rows` (`k`, `m`: its
 *  first). @typedef {{key: string, fold: boolean, k: number, m: any, rows: Row[], summary: string}} Item */

const TOOLISH = new Set(["tool_use", "tool_result", "thinking"]);

/** Whether a message is only tool calls or results (thinking beside them allowed): a
 *  step of an agent's loop, with nothing said to the person. A subagent's call or
 *  report stays in view (it links to the child's thread). @param {Msg} m */
export function toolOnly(m) {
  if (m.kind === "compaction" || m.origin?.subagent || m.subagents?.length) return false;
  const blocks = m.content ?? [];
  if (blocks.some((b) => b.name === "spawn_subagent")) return false;
  return blocks.some((b) => b.type === "tool_use" || b.type === "tool_result")
    && blocks.every((b) => TOOLISH.has(b.type));
}

/** "3 bash, 1 read_file": the calls of a run by name, in the order first called.
 *  @param {Msg[]} ms */
export function summary(ms) {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const m of ms) {
    for (const b of m.content ?? []) {
      if (b.type === "tool_use") counts.set(b.name, (counts.get(b.name) ?? 0) + 1);
    }
  }
  if (!counts.size) return `${ms.length} tool results`;
  return [...counts].map(([name, n]) => `${n} ${name}`).join(", ");
}

/** The messages as the thread draws them: runs of two or more tool-only messages
 *  holding at least one call become one folded item; the rest stay one item each.
 *  @param {Msg[]} messages @returns {Item[]} */
export function fold(messages) {
  /** @type {Item[]} */
  const out = [];
  /** @type {Row[]} */
  let run = [];
  const flush = () => {
    const calls = run.some((r) => r.m.content.some((/** @type {Block} */ b) => b.type === "tool_use"));
    if (run.length >= 2 && calls) {
      out.push({ key: `fold-${run[0].m.id}`, fold: true, k: run[0].k, m: run[0].m, rows: run,
                 summary: summary(run.map((r) => r.m)) });
    } else {
      for (const r of run) out.push(one(r.k, r.m));
    }
    run = [];
  };
  messages.forEach((m, k) => {
    if (toolOnly(m)) {
      run.push({ k, m });
    } else {
      flush();
      out.push(one(k, m));
    }
  });
  flush();
  return out;
}

/** @param {number} k @param {any} m @returns {Item} */
const one = (k, m) => ({ key: m.id, fold: false, k, m, rows: [], summary: "" });

/** Whether `text` is a patch: a unified diff or an `apply_patch` envelope.
 *  @param {unknown} text */
export function isPatch(text) {
  if (typeof text !== "string") return false;
  if (/^\*\*\* Begin Patch\s*$/m.test(text) || /^diff --git /m.test(text)) return true;
  return /^@@ .*@@/m.test(text) && /^(---|\+\+\+) /m.test(text);
}

/** The patch a tool call carries, as text, or null: a patch-shaped string anywhere in
 *  its input (an `apply_patch` input, a shell command's argument), or an edit's
 *  `old_string` / `new_string` written as a diff. @param {Block} block */
export function patchOf(block) {
  const input = block.input;
  if (!input || typeof input !== "object") return null;
  if (typeof input.old_string === "string" && typeof input.new_string === "string") {
    const file = typeof input.file_path === "string" ? input.file_path : "";
    return [`--- ${file}`, `+++ ${file}`, "@@ @@",
            ...lines(input.old_string).map((l) => `-${l}`),
            ...lines(input.new_string).map((l) => `+${l}`)].join("\n");
  }
  /** @type {unknown[]} */
  const values = [...Object.values(input)];
  for (let i = 0; i < values.length && i < 100; i++) {
    const v = values[i];
    if (isPatch(v)) return /** @type {string} */ (v);
    if (Array.isArray(v)) values.push(...v);
  }
  return null;
}

/** @param {string} s */
const lines = (s) => (s === "" ? [] : s.split("\n"));

/** A patch's lines, each with what it is: `file` (a header naming a file), `hunk`
 *  (`@@` ...), `add`, `del` or `ctx`. @param {string} text
 *  @returns {{kind: "file"|"hunk"|"add"|"del"|"ctx", text: string}[]} */
export function diffLines(text) {
  return text.split("\n").map((line) => {
    if (/^(diff --git |index |--- |\+\+\+ |\*\*\* (Begin|End) Patch|\*\*\* (Add|Update|Delete) File: |\*\*\* Move to: )/.test(line))
      return { kind: "file", text: line };
    if (line.startsWith("@@")) return { kind: "hunk", text: line };
    if (line.startsWith("+")) return { kind: "add", text: line };
    if (line.startsWith("-")) return { kind: "del", text: line };
    return { kind: "ctx", text: line };
  });
}
