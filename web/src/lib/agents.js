// @ts-check
// The agents' inbox as the page calls it (/api/agents): tool calls waiting for a
// person, proposed messages between sessions, personas, and a turn's steps.
import { get, post, enc } from "./api.js";

export const pending = () => get("/api/agents/pending").then((d) => d.pending);
export const approve = (node) => post(`/api/agents/pending/${enc(node)}/approve`);
export const amendCall = (node, inputs) =>
  post(`/api/agents/pending/${enc(node)}/amend`, { inputs });
export const deny = (node, reason) =>
  post(`/api/agents/pending/${enc(node)}/deny`, reason ? { reason } : {});
export const turn = (node, opts) => get(`/api/agents/turns/${enc(node)}`, opts);
export const messages = () => get("/api/agents/messages").then((d) => d.messages);
export const approveMessage = (id) => post(`/api/agents/messages/${enc(id)}/approve`);
export const amendMessage = (id, text) => post(`/api/agents/messages/${enc(id)}/amend`, { text });
export const denyMessage = (id, reason) =>
  post(`/api/agents/messages/${enc(id)}/deny`, reason ? { reason } : {});
export const personas = () => get("/api/agents/personas").then((d) => d.personas);

// One line a person reads for each block of a step: what the model said, which tool
// it called with what, what the tool answered.
export function describeBlock(block) {
  if (block.type === "text") return { kind: "text", text: block.text };
  if (block.type === "tool_use")
    return { kind: "call", text: `${block.name} ${JSON.stringify(block.input)}` };
  if (block.type === "tool_result") {
    const parts = Array.isArray(block.content) ? block.content : [{ type: "text", text: String(block.content ?? "") }];
    const text = parts.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join(" ");
    return { kind: block.is_error ? "error" : "result", text };
  }
  if (block.type === "thinking") return { kind: "thinking", text: block.thinking ?? "" };
  return { kind: "other", text: `[${block.type}]` };
}

export const STATES = {
  answer: "Answered",
  pending: "Waiting for approval",
  denied: "Denied",
  open: "Running",
};
