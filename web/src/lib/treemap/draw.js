// @ts-check
// Drawing the tree map on a canvas: only what is in view (every place and link is
// checked against the visible rectangle before it costs a draw call), and less detail
// the further out the zoom: text and labels up close, plain boxes in the middle, dots
// and straight lines far out. The current path, the refs (sessions, views, bookmarks)
// and the focused place stay visible at every zoom.

import { BOX, TOGGLE } from "./layout.js";

export const NEAR = 0.6; // from this zoom: text, labels, toggles
export const FAR = 0.3; // below this zoom: dots and straight lines

const LIGHT = {
  bg: "#ffffff", box: "#f5f6f8", border: "#c3c9d2", text: "#1b2130", muted: "#5a6372",
  edge: "#b3bac5", path: "#d6336c", focus: "#1b2130",
  role: { user: "#3f72d6", assistant: "#23936d", system: "#7c828c", tool: "#b9801a" },
  ref: { session: "#1d8f4e", view: "#7d46cc", bookmark: "#c8691b" },
};
const DARK = {
  bg: "#15181d", box: "#222731", border: "#444c5a", text: "#e6e9ef", muted: "#a3abb9",
  edge: "#4b5361", path: "#ff5c93", focus: "#ffffff",
  role: { user: "#6b9bff", assistant: "#3fc79a", system: "#9aa1ab", tool: "#e0a94a" },
  ref: { session: "#3fcf7f", view: "#b388ff", bookmark: "#ff9f4a" },
};

export function palette() {
  return matchMedia("(prefers-color-scheme: dark)").matches ? DARK : LIGHT;
}

export function roleColor(colors, role) {
  return colors.role[role] || colors.muted;
}

/** Draw the map; returns how many places were drawn (those in view). */
export function draw(ctx, model, layout, t, size, state) {
  const { w, h, dpr } = size;
  const colors = state.colors;
  const k = t.k;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = colors.bg;
  ctx.fillRect(0, 0, w, h);
  if (!layout) return 0;
  const { x, y, places } = layout;
  // the visible rectangle in layout units, widened by a box (and a label) each way
  const mx = BOX.w, my = BOX.h + 30;
  const vx0 = -t.x / k - mx, vx1 = (w - t.x) / k + mx;
  const vy0 = -t.y / k - my, vy1 = (h - t.y) / k + my;
  const sx = (p) => x[p] * k + t.x;
  const sy = (p) => y[p] * k + t.y;
  const hw = (BOX.w / 2) * k, hh = (BOX.h / 2) * k;

  // links: one path for all, one for the current path's
  const plain = new Path2D(), path = new Path2D();
  for (let i = 0; i < places.length; i++) {
    const c = places[i];
    const p = layout.par[c];
    if (p < 0) continue;
    if (Math.max(x[p], x[c]) < vx0 || Math.min(x[p], x[c]) > vx1 || y[c] < vy0 || y[p] > vy1) continue;
    const into = model.onPath[c] && model.onPath[p] ? path : plain;
    const x0 = sx(p), y0 = sy(p) + hh, x1 = sx(c), y1 = sy(c) - hh;
    into.moveTo(x0, y0);
    if (k < FAR || x0 === x1) {
      into.lineTo(x1, y1);
    } else {
      const mid = (y0 + y1) / 2;
      into.lineTo(x0, mid);
      into.lineTo(x1, mid);
      into.lineTo(x1, y1);
    }
  }
  ctx.lineWidth = k < FAR ? 1 : 1.25;
  ctx.strokeStyle = colors.edge;
  ctx.stroke(plain);
  ctx.lineWidth = k < FAR ? 2 : 3;
  ctx.strokeStyle = colors.path;
  ctx.stroke(path);

  // places
  let drawn = 0;
  const inView = [];
  for (let i = 0; i < places.length; i++) {
    const p = places[i];
    if (x[p] < vx0 || x[p] > vx1 || y[p] < vy0 || y[p] > vy1) continue;
    inView.push(p);
  }
  drawn = inView.length;
  if (k < FAR) {
    const bw = Math.max(2 * hw, 2), bh = Math.max(2 * hh, 2);
    for (const p of inView) {
      ctx.globalAlpha = model.pruned.has(p) ? 0.35 : 1;
      ctx.fillStyle = model.onPath[p] ? colors.path : roleColor(colors, model.role[p]);
      ctx.fillRect(sx(p) - bw / 2, sy(p) - bh / 2, bw, bh);
    }
    ctx.globalAlpha = 1;
  } else {
    const near = k >= NEAR;
    const font = 11 * k;
    for (const p of inView) {
      const row = model.pathRow.get(p) ?? p;
      const bx = sx(p) - hw, by = sy(p) - hh;
      const run = layout.runOf(p);
      ctx.globalAlpha = model.pruned.has(p) ? 0.4 : 1;
      if (run > 1) { // a run: a stack of boxes
        ctx.fillStyle = colors.box;
        ctx.strokeStyle = colors.border;
        ctx.lineWidth = 1;
        for (const d of [6, 3]) {
          ctx.fillRect(bx + d * k, by + d * k, 2 * hw, 2 * hh);
          ctx.strokeRect(bx + d * k, by + d * k, 2 * hw, 2 * hh);
        }
      }
      ctx.fillStyle = colors.box;
      ctx.fillRect(bx, by, 2 * hw, 2 * hh);
      ctx.fillStyle = roleColor(colors, model.role[row]);
      ctx.fillRect(bx, by, Math.max(4 * k, 2), 2 * hh);
      ctx.setLineDash(model.kind[row] === "compaction" ? [4, 3] : []);
      ctx.lineWidth = model.onPath[p] ? 2.5 : 1;
      ctx.strokeStyle = model.onPath[p] ? colors.path : colors.border;
      ctx.strokeRect(bx, by, 2 * hw, 2 * hh);
      ctx.setLineDash([]);
      if (near) {
        ctx.fillStyle = colors.muted;
        ctx.font = `600 ${font * 0.85}px system-ui, sans-serif`;
        ctx.textBaseline = "top";
        const vs = model.versions.get(p);
        const head = model.kind[row] === "message" ? model.role[row] : `${model.role[row]} · ${model.kind[row]}`;
        const versioned = vs ? `${head} · v${row === p ? 1 : vs.indexOf(row) + 2}/${vs.length + 1}` : head;
        const tag = run > 1 ? `${versioned} · ${run} messages` : versioned;
        ctx.fillText(tag, bx + 9 * k, by + 5 * k);
        ctx.fillStyle = colors.text;
        ctx.font = `${font}px system-ui, sans-serif`;
        const lines = wrapped(ctx, state.lines, model, row);
        lines.forEach((line, j) => ctx.fillText(line, bx + 9 * k, by + (18 + j * 13) * k));
        if (hasToggle(model, layout, p, state.focus)) {
          toggle(ctx, colors, sx(p), sy(p) + hh, k, layout.isCollapsed(p), model, p);
        }
      } else if (layout.isCollapsed(p)) {
        ctx.fillStyle = colors.muted;
        ctx.beginPath();
        ctx.arc(sx(p), sy(p) + hh + 5 * k, 3 * k + 1, 0, 2 * Math.PI);
        ctx.fill();
      }
    }
    ctx.globalAlpha = 1;
  }
  marks(ctx, colors, model, inView, sx, sy, hw, hh, k);
  if (state.focus >= 0 && layout.has(state.focus)) {
    const f = state.focus;
    const pad = 4;
    const bw = Math.max(2 * hw, 6), bh = Math.max(2 * hh, 6);
    ctx.lineWidth = 2;
    ctx.setLineDash([5, 3]);
    ctx.strokeStyle = colors.focus;
    ctx.strokeRect(sx(f) - bw / 2 - pad, sy(f) - bh / 2 - pad, bw + 2 * pad, bh + 2 * pad);
    ctx.setLineDash([]);
  }
  return drawn;
}

/** Whether place `p` shows its collapse toggle: a branch point, a collapsed place, or
 * the focused one (a chain of single replies would otherwise be a column of them). */
export function hasToggle(model, layout, p, focus) {
  const kids = model.kids.get(p);
  return !!kids && (kids.length > 1 || p === focus || layout.isCollapsed(p));
}

function toggle(ctx, colors, cx, top, k, collapsed, model, p) {
  const r = TOGGLE.r * k, cy = top + TOGGLE.gap * k;
  ctx.beginPath();
  ctx.arc(cx, cy, r, 0, 2 * Math.PI);
  ctx.fillStyle = colors.bg;
  ctx.fill();
  ctx.lineWidth = 1;
  ctx.strokeStyle = colors.border;
  ctx.stroke();
  ctx.strokeStyle = colors.muted;
  ctx.beginPath();
  ctx.moveTo(cx - r / 2, cy);
  ctx.lineTo(cx + r / 2, cy);
  if (collapsed) {
    ctx.moveTo(cx, cy - r / 2);
    ctx.lineTo(cx, cy + r / 2);
  }
  ctx.stroke();
  if (collapsed) {
    ctx.fillStyle = colors.muted;
    ctx.font = `${10 * k}px system-ui, sans-serif`;
    ctx.textBaseline = "middle";
    ctx.fillText(`${countBelow(model, p)} hidden`, cx + r + 4 * k, cy);
  }
}

const below = new WeakMap();
function countBelow(model, p) {
  let cache = below.get(model);
  if (!cache) below.set(model, (cache = new Map()));
  if (!cache.has(p)) {
    let count = 0;
    const stack = [...(model.kids.get(p) || [])];
    while (stack.length) {
      count++;
      const k = model.kids.get(stack.pop());
      if (k) stack.push(...k);
    }
    cache.set(p, count);
  }
  return cache.get(p);
}

// refs: a labelled pill above the box up close, a coloured dot at its corner further out
function marks(ctx, colors, model, inView, sx, sy, hw, hh, k) {
  const near = k >= NEAR;
  ctx.textBaseline = "middle";
  ctx.font = `600 ${Math.max(10 * k, 9)}px system-ui, sans-serif`;
  for (const p of inView) {
    const at = model.marks.get(p);
    if (!at) continue;
    let left = sx(p) - hw;
    const top = sy(p) - hh;
    at.forEach((m, j) => {
      const color = colors.ref[m.kind] || colors.muted;
      if (near) {
        const label = `${m.kind === "bookmark" ? "★" : m.kind === "view" ? "◆" : "●"} ${m.name}`;
        const wide = ctx.measureText(label).width + 10;
        ctx.fillStyle = color;
        ctx.fillRect(left, top - 17 * k, wide, 15 * k);
        ctx.fillStyle = "#ffffff";
        ctx.fillText(label, left + 5, top - 9.5 * k);
        left += wide + 4;
      } else {
        const r = Math.max(3.5, 5 * k);
        ctx.beginPath();
        ctx.arc(sx(p) + hw + r * (1 + 2.2 * j), top - r, r, 0, 2 * Math.PI);
        ctx.fillStyle = color;
        ctx.fill();
      }
    });
  }
}

// a row's preview in at most two lines that fit the box (measured once per row)
function wrapped(ctx, cache, model, row) {
  let lines = cache.get(row);
  if (lines) return lines;
  ctx.save();
  ctx.font = "11px system-ui, sans-serif";
  const width = BOX.w - 16;
  const words = (model.text[row] || "(no text)").split(" ");
  lines = [];
  let line = "";
  for (const word of words) {
    const next = line ? `${line} ${word}` : word;
    if (ctx.measureText(next).width <= width) {
      line = next;
      continue;
    }
    if (line) lines.push(line);
    line = word;
    if (lines.length === 2) break;
  }
  if (lines.length < 2 && line) lines.push(line);
  if (lines.length === 2 && words.join(" ") !== lines.join(" ")) {
    let last = lines[1];
    while (last && ctx.measureText(`${last}…`).width > width) last = last.slice(0, -1);
    lines[1] = `${last}…`;
  }
  lines = lines.map((l) => {
    while (ctx.measureText(l).width > width) l = l.slice(0, -2) + "…";
    return l;
  });
  ctx.restore();
  cache.set(row, lines);
  return lines;
}
