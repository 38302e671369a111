// Live updates: the server pushes an event when what a view shows has changed
// (GET /api/trees/<tree>/events, GET /api/s/<token>/events: server-sent events).
// Read with fetch rather than EventSource, which cannot send the bearer token a store
// with users needs. A stream that ends (the server closes each after a while) or fails
// is opened again; a change made while it was closed is still told (the first stamp
// of the new stream differs from the last one seen).
//
//   const stop = follow(tree, (event) => { ... });   // event.type: "change" | "gone"
//   followShared(token, onEvent), followApprovals(onEvent) likewise
//   stop();

import { token, enc } from "./api.js";

export function follow(tree, onEvent) {
  return stream(`/api/trees/${enc(tree)}/events`, onEvent);
}

// the caller's tool calls waiting for a person, in any tree (for the inbox)
export function followApprovals(onEvent) {
  return stream("/api/events", onEvent);
}

export function followShared(shareToken, onEvent) {
  return stream(`/api/s/${enc(shareToken)}/events`, onEvent);
}

function stream(url, onEvent) {
  let stopped = false;
  let ctrl = null;
  let timer = null;
  let last = null;
  let retry = 1000;

  function handle(block) {
    let type = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const at = line.indexOf(":");
      const field = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
      if (field === "event") type = value;
      else if (field === "data") data.push(value);
      else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
    }
    if (!data.length) return;
    const text = data.join("\n");
    if (type === "ready") {
      if (last !== null && text !== last) onEvent({ type: "change", data: JSON.parse(text) });
      last = text;
    } else if (type === "change") {
      last = text;
      onEvent({ type, data: JSON.parse(text) });
    } else if (type === "gone") {
      stopped = true;
      onEvent({ type, data: {} });
    }
  }

  async function run() {
    if (stopped) return;
    ctrl = new AbortController();
    let wait = retry;
    try {
      const headers = { Accept: "text/event-stream" };
      const t = token();
      if (t && !url.startsWith("/api/s/")) headers.Authorization = `Bearer ${t}`;
      const res = await fetch(url, { headers, signal: ctrl.signal, cache: "no-store" });
      if (res.status === 404 || res.status === 401) {
        stopped = true;
        onEvent({ type: "gone", data: {} });
        return;
      }
      if (!res.ok || !res.body) {
        wait = 5000; // refused (too many streams) or failing: try again, later
      } else {
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        while (!stopped) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value.replace(/\r\n?/g, "\n");
          let cut;
          while ((cut = buf.indexOf("\n\n")) >= 0) {
            handle(buf.slice(0, cut));
            buf = buf.slice(cut + 2);
          }
        }
      }
    } catch {
      if (stopped) return;
      wait = Math.max(retry, 2000);
    }
    if (!stopped) timer = setTimeout(run, wait);
  }

  run();
  return function stop() {
    stopped = true;
    clearTimeout(timer);
    if (ctrl) ctrl.abort();
  };
}
