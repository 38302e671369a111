// @ts-check
// The thread as a chat, decided apart from the page (pure, unit-tested): the name a
// message is written through (a session keeps the address), where Regenerate asks,
// which model is asked, what a stream has written so far, and the words of a date.

/** @typedef {{id: string, index: number, role: string, parent: string|null, slot: string, content: any[], branches: string[], versions: string[], created_at: string}} Message */

/**
 * The headish a message is acted on through: seen through a session or view (the
 * thread's address names it), `S~k` (k messages above its head), so edits and
 * selections stay in it; otherwise the message's own id.
 * @param {Message} m @param {{through: boolean, headish: string|null, total: number}} at
 */
export function headOf(m, { through, headish, total }) {
  if (!through || !headish) return m.id;
  const back = total - 1 - m.index;
  return back === 0 ? headish : `${headish}~${back}`;
}

/** Whether the thread is read through the ref its address names (a session or view).
 *  @param {{kind: string, name: string}|null} ref @param {string|null} headish */
export const throughRef = (ref, headish) => !!ref && ref.kind !== "bookmark" && ref.name === headish;

/** Where Regenerate asks for a new answer to message `k`: the message it answers
 *  (null: the first message has nothing before it). @param {Message[]} messages @param {number} k */
export function regenerateAt(messages, k) {
  if (k > 0) return messages[k - 1];
  return null;
}

/** The model to ask: the one picked if still served, else the server's default, else
 *  the first served. @param {{models: {name: string}[], default: string|null}|null} served
 *  @param {string|null} picked */
export function chooseModel(served, picked) {
  if (!served || !served.models.length) return null;
  const names = served.models.map((m) => m.name);
  if (picked && names.includes(picked)) return picked;
  if (served.default && names.includes(served.default)) return served.default;
  return names[0];
}

/** What the generate call is asked: one answer unless more are asked for, the model picked.
 *  @param {{model: string|null, n: any, maxTokens: any}} s */
export function askFor({ model, n, maxTokens }) {
  const count = Math.min(16, Math.max(1, Math.floor(Number(n)) || 1));
  const max = Math.min(4096, Math.max(1, Math.floor(Number(maxTokens)) || 512));
  return { n: count, models: model ? [model] : [], max_tokens: max };
}

/** A stream's text so far, per answer ("job.index" keys, in the order they started).
 *  @param {Record<string, string>} live @param {string} key @param {string} delta */
export function streamed(live, key, delta) {
  return { ...live, [key]: (live[key] ?? "") + delta };
}

/** A message's text (its text blocks), what Copy copies and Edit starts from.
 *  @param {{type: string, text?: string}[]} blocks */
export function textOf(blocks) {
  return blocks.filter((b) => b.type === "text").map((b) => b.text ?? "").join("\n\n");
}

/** Whether a message is written as text only (a new version is written as text). @param {Message & {kind?: string}} m */
export const editable = (m) => (m.kind ?? "message") === "message" && m.content.every((b) => b.type === "text");

/** A date as a person reads it: the time for today, the day and month this year,
 *  the full date before. @param {string} iso @param {Date} [now] */
export function shortDate(iso, now = new Date()) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const sameDay = d.toDateString() === now.toDateString();
  if (sameDay) return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (d.getFullYear() === now.getFullYear())
    return d.toLocaleDateString(undefined, { day: "numeric", month: "short" });
  return d.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

/** "3 messages" / "1 message". @param {number} n @param {string} one @param {string} [many] */
export const count = (n, one, many = `${one}s`) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

/** The words of a refusal shown beside a form, for a name already in use. @param {string} text */
export function nameTaken(text) {
  return /taken|already exists/.test(text) ? "That name is already in use: choose another." : text;
}
