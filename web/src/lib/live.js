// @ts-check
// Live updates: the server pushes an event when what a view shows has changed
// (GET /api/trees/<tree>/events, GET /api/s/<token>/events: server-sent events, read by
// api.sse with the bearer token, which EventSource cannot send). A stream that ends
// (the server closes each after a while) or fails is opened again; a change made while
// it was closed is still told (the first stamp of the new stream differs from the last
// one seen).
//
//   const stop = follow(tree, (event) => { ... });   // event.type: "change" | "gone"
//   followShared(token, onEvent), followApprovals(onEvent) likewise
//   stop();

import { sse, enc, aborted, ApiError } from "./api.js";

/** @typedef {(e: {type: "change"|"gone", data: any}) => void} OnEvent */

/** @param {string} tree @param {OnEvent} onEvent */
export function follow(tree, onEvent) {
  return stream(`/api/trees/${enc(tree)}/events`, false, onEvent);
}

/** The caller's tool calls waiting for a person, in any tree (for the inbox). @param {OnEvent} onEvent */
export function followApprovals(onEvent) {
  return stream("/api/events", false, onEvent);
}

/** @param {string} shareToken @param {OnEvent} onEvent */
export function followShared(shareToken, onEvent) {
  return stream(`/api/s/${enc(shareToken)}/events`, true, onEvent);
}

/** @param {string} url @param {boolean} anonymous @param {OnEvent} onEvent */
function stream(url, anonymous, onEvent) {
  let stopped = false;
  /** @type {AbortController|null} */
  let ctrl = null;
  /** @type {any} */
  let timer = null;
  /** @type {string|null} */
  let last = null;
  let retry = 1000;

  async function run() {
    if (stopped) return;
    ctrl = new AbortController();
    let wait = retry;
    try {
      await sse("GET", url, { signal: ctrl.signal, anonymous }, ({ event, data, retry: r }) => {
        if (r !== null) retry = r;
        if (data === null) return;
        const stamp = JSON.stringify(data);
        if (event === "ready") {
          if (last !== null && stamp !== last) onEvent({ type: "change", data });
          last = stamp;
        } else if (event === "change") {
          last = stamp;
          onEvent({ type: "change", data });
        } else if (event === "gone") {
          stopped = true;
          onEvent({ type: "gone", data: {} });
          return true;
        }
      });
    } catch (e) {
      if (stopped || aborted(e)) return;
      if (e instanceof ApiError && (e.status === 404 || e.status === 401)) {
        stopped = true;
        onEvent({ type: "gone", data: {} });
        return;
      }
      // refused (too many streams), failing or cut: try again, later
      wait = e instanceof ApiError && e.status ? 5000 : Math.max(retry, 2000);
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
