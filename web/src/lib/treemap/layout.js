// @ts-check
// Where each place of the tree map goes: d3-hierarchy's tidy tree (Reingold-Tilford,
// linear in the number of nodes) over the places shown: below the hoisted place if one
// is hoisted, and not below a collapsed one. The root is at the top, each reply one
// row further down, branches side by side. Coordinates are a box's centre in layout
// units (1 unit = 1 CSS pixel at zoom 1).

import { hierarchy, tree as tidy } from "d3-hierarchy";

export const BOX = { w: 168, h: 46 };
// the collapse toggle drawn below a place with replies (radius, gap below the box)
export const TOGGLE = { r: 8, gap: 10 };
const GAP = { x: 22, y: 38 };
const VIRTUAL = -1; // the common parent of several roots (drawn as nothing)

// d3.hierarchy's nodes, built here: d3.hierarchy() finds each node's height by walking
// up from every node in turn, which is quadratic along a long chain (a 5,000-message
// thread took 100-200 ms); this is one pass down and one back up.
function nodes(top, childrenOf) {
  const make = (data, parent) => {
    const d = Object.create(hierarchy.prototype);
    d.data = data;
    d.depth = parent ? parent.depth + 1 : 0;
    d.height = 0;
    d.parent = parent;
    return d;
  };
  const root = make(top, null);
  const stack = [root], order = [];
  while (stack.length) {
    const d = stack.pop();
    order.push(d);
    const kids = childrenOf(d.data);
    if (!kids || !kids.length) continue;
    d.children = new Array(kids.length);
    for (let i = kids.length - 1; i >= 0; i--) stack.push((d.children[i] = make(kids[i], d)));
  }
  for (let i = order.length - 1; i > 0; i--) {
    const d = order[i];
    if (d.parent.height <= d.height) d.parent.height = d.height + 1;
  }
  return root;
}

// `runs`: branch points only. A linear run (a place and the single replies below it, down
// to a branch point or a leaf) is one box standing for all of them, at its first place;
// its replies are the last place's.
export function layoutTree(model, { collapsed = new Set(), hoist = null, runs = false } = {}) {
  const top = hoist ?? (model.roots.length === 1 ? model.roots[0] : VIRTUAL);
  const runEnd = (p) => {
    let q = p;
    for (let kids; runs && !collapsed.has(q) && (kids = model.kids.get(q)) && kids.length === 1;) q = kids[0];
    return q;
  };
  const root = nodes(top, (p) => {
    if (p === VIRTUAL) return model.roots;
    const end = runEnd(p);
    if (collapsed.has(end)) return null;
    return model.kids.get(end) || null;
  });
  const tidied = /** @type {any} */ (tidy().nodeSize([BOX.w + GAP.x, BOX.h + GAP.y]));
  tidied.separation((a, b) => (a.parent === b.parent ? 1 : 1.2))(root);

  const byPlace = new Map(); // place -> its hierarchy node
  const shown = [];
  const x = new Float64Array(model.n);
  const y = new Float64Array(model.n);
  const par = new Int32Array(model.n).fill(-1); // a shown place's shown parent
  const shift = top === VIRTUAL ? BOX.h + GAP.y : 0;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  root.each((d) => {
    if (d.data === VIRTUAL) return;
    byPlace.set(d.data, d);
    shown.push(d.data);
    if (d.parent && d.parent.data !== VIRTUAL) par[d.data] = d.parent.data;
    x[d.data] = d.x;
    y[d.data] = d.y - shift;
    if (d.x < x0) x0 = d.x;
    if (d.x > x1) x1 = d.x;
    if (d.y - shift < y0) y0 = d.y - shift;
    if (d.y - shift > y1) y1 = d.y - shift;
  });
  const places = Int32Array.from(shown);
  // each place inside a run: the first place of its run (the box that stands for it)
  const head = new Int32Array(runs ? model.n : 0).fill(-1);
  const length = new Map(); // a run's first place -> how many places it stands for
  if (runs) {
    for (const p of shown) {
      let q = p, n = 1;
      head[q] = p;
      for (let kids; !collapsed.has(q) && (kids = model.kids.get(q)) && kids.length === 1; n++) head[(q = kids[0])] = p;
      if (n > 1) length.set(p, n);
    }
  }

  return {
    root: top, places, x, y, par, hoist, runs,
    bounds: { x0: x0 - BOX.w / 2, x1: x1 + BOX.w / 2, y0: y0 - BOX.h / 2, y1: y1 + BOX.h / 2 },
    has: (p) => byPlace.has(p),
    /** How many places the box at `p` stands for (1 unless it is a run's). */
    runOf: (p) => length.get(p) ?? 1,
    /** The shown place standing for `p` (itself, or the first place of its run), or -1. */
    shownAs: (p) => (byPlace.has(p) ? p : runs && p >= 0 && p < head.length ? head[p] : -1),
    depthOf: (p) => (byPlace.has(p) ? byPlace.get(p).depth - (top === VIRTUAL ? 1 : 0) : undefined),
    isCollapsed: (p) => collapsed.has(p) && model.kids.has(p),
    parentOf: (p) => (byPlace.has(p) ? par[p] : -1),
    children(p) {
      const d = byPlace.get(p);
      return d && d.children ? d.children.map((c) => c.data) : [];
    },
    siblings(p) {
      const d = byPlace.get(p);
      if (!d) return [];
      return d.parent ? d.parent.children.map((c) => c.data) : [p];
    },
    /** The place whose box holds the layout point (px, py), or -1; far out, where a
     * box is a dot, the nearest within a few pixels (`k` is the zoom). */
    hit(px, py, k = 1) {
      const hw = Math.max(BOX.w / 2, 4 / k), hh = Math.max(BOX.h / 2, 4 / k);
      let best = -1, bestDistance = Infinity;
      for (let i = 0; i < places.length; i++) {
        const p = places[i];
        const dx = Math.abs(x[p] - px), dy = Math.abs(y[p] - py);
        if (dx > hw || dy > hh) continue;
        const distance = dx * dx + dy * dy;
        if (distance < bestDistance) {
          best = p;
          bestDistance = distance;
        }
      }
      return best;
    },
    /** The place whose collapse toggle (drawn below the places `shows` says) holds
     * the layout point, or -1. */
    hitToggle(px, py, shows) {
      for (let i = 0; i < places.length; i++) {
        const p = places[i];
        if (!shows(p)) continue;
        if (Math.hypot(px - x[p], py - (y[p] + BOX.h / 2 + TOGGLE.gap)) <= TOGGLE.r + 2) return p;
      }
      return -1;
    },
  };
}

