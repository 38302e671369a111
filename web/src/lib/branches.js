// @ts-check
// The git verbs of conversations (/api/branches): two paths compared, a branch's outcome
// merged back into another line, a path's user turns replayed onto a new base or model.
import { get, post, query } from "./api.js";

/** Two paths aligned from their common ancestor: `entries` of `same`, `changed`,
 *  `added` (only on the right) or `removed` (only on the left).
 *  @param {string} left @param {string} right */
export const diff = (left, right) => get(`/api/branches/diff${query({ left, right })}`);

/** A merge node appended to `into` carrying the branch's last answer (neither `text`
 *  nor `summary`), the user's `text`, or a served model's `summary` of the branch.
 *  @param {string} branch @param {string} into @param {{text?: string|null, summary?: string|null}} [carry]
 *  @returns {Promise<{node: string, tree: string, merged_from: any, created: boolean}>} */
export const merge = (branch, into, { text = null, summary = null } = {}) =>
  post("/api/branches/merge", { branch, into, text, summary });

/** The user turns of `path` sent again onto `onto` (null: its first message) as the new
 *  session `session`, answered by `model` unless `generate` is false; `stopped` says
 *  why a replay ended early.
 *  @param {{path: string, session: string, onto?: string|null, model?: string|null, generate?: boolean, maxTokens?: number}} a
 *  @returns {Promise<{session: string, tree: string, onto: string, ancestor: string|null, turns: {from: string, node: string, answers: string[]}[], stopped: string|null}>} */
export function replay({ path, session, onto = null, model = null, generate = true, maxTokens = 256 }) {
  /** @type {Record<string, any>} */
  const body = { path, session, generate, max_tokens: maxTokens };
  if (onto) body.onto = onto;
  if (model) body.models = [model];
  return post("/api/branches/replay", body);
}

/** What an entry's status reads as, for a person. @param {string} status */
export function statusWords(status) {
  return { same: "same", changed: "changed", added: "only on the right", removed: "only on the left" }[status] ?? status;
}

/** A unified diff's lines as rows: `{kind: "hunk"|"add"|"del"|"ctx", text}`.
 *  @param {string[]} lines */
export function textRows(lines) {
  return lines.map((text) => ({
    kind: text.startsWith("@@") ? "hunk" : text.startsWith("+") ? "add" : text.startsWith("-") ? "del" : "ctx",
    text,
  }));
}

/** The tool calls of one side as short lines: `name(input)`. @param {{name: string, input: any}[]} calls */
export const callLines = (calls) => (calls ?? []).map((c) => `${c.name}(${JSON.stringify(c.input)})`);
