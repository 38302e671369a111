// @ts-check
// The tree map's model: the server's columnar answer (GET /api/trees/<id>/map) turned
// into places to draw. A place is an original node (a row whose slot is itself); its
// edited versions fold into it, and its children are the originals written after any
// of its versions. Everything is held in flat arrays indexed by row, so a 10,000-node
// tree is a few typed arrays, not 10,000 objects.

export const KINDS = ["session", "view", "bookmark"];

export function buildModel(data) {
  const { id, parent, slot, role, kind, text } = data.nodes;
  const n = id.length;
  const place = new Int32Array(n); // the place (original's row) each row fills
  for (let i = 0; i < n; i++) place[i] = slot[i] >= 0 && slot[i] < n ? slot[i] : i;
  const up = new Int32Array(n).fill(-1); // a place's parent place
  const kids = new Map(); // place -> child places, oldest first
  const versions = new Map(); // place -> rows of its edited versions, oldest first
  const roots = [];
  for (let i = 0; i < n; i++) {
    if (place[i] !== i) {
      if (!versions.has(place[i])) versions.set(place[i], []);
      versions.get(place[i]).push(i);
      continue;
    }
    const p = parent[i];
    if (p < 0 || p >= n) {
      roots.push(i);
      continue;
    }
    up[i] = place[p];
    if (!kids.has(up[i])) kids.set(up[i], []);
    kids.get(up[i]).push(i);
  }
  const marks = new Map(); // place -> [{kind, name, row}]
  for (const k of Object.keys(data.refs || {})) {
    for (const ref of data.refs[k]) {
      if (ref.node < 0 || ref.node >= n) continue;
      const at = place[ref.node];
      if (!marks.has(at)) marks.set(at, []);
      marks.get(at).push({ kind: k, name: ref.name, row: ref.node });
    }
  }
  const model = {
    tree: data.tree, n, id, parent, role, kind, text, place, up, kids, versions, roots,
    marks, pruned: new Set((data.pruned || []).map((r) => place[r])),
    excluded: new Set((data.excluded || []).map((r) => place[r])),
    onPath: new Uint8Array(n), pathRow: new Map(), current: -1, pathLength: 0,
  };
  setCurrent(model, data.current ?? (n ? n - 1 : -1));
  return model;
}

/** Make `row`'s path the highlighted one: every place it passes through, and which
 * version of each place it takes. */
export function setCurrent(model, row) {
  model.onPath.fill(0);
  model.pathRow.clear();
  model.pathLength = 0;
  model.current = row >= 0 && row < model.n ? model.place[row] : -1;
  for (let r = row, guard = 0; r >= 0 && r < model.n && guard <= model.n; guard++) {
    model.onPath[model.place[r]] = 1;
    model.pathRow.set(model.place[r], r);
    model.pathLength++;
    r = model.parent[r];
  }
}

/** The row a place stands for when opened or read: the version its path takes when
 * it is on the current path, else the original. */
export function shownRow(model, place) {
  return model.pathRow.get(place) ?? place;
}

/** How many places lie below `place` (all of them, collapsed or not). */
export function descendants(model, place) {
  let count = 0;
  const stack = [...(model.kids.get(place) || [])];
  while (stack.length) {
    const p = stack.pop();
    count++;
    const k = model.kids.get(p);
    if (k) for (const c of k) stack.push(c);
  }
  return count;
}

/** The address that opens a row's path in the thread view, scrolled to it. */
export function threadHref(model, row) {
  const id = encodeURIComponent(model.id[row]);
  return `#/thread/${id}?at=${id}`;
}

/** What a screen reader hears about a place (and the details panel shows). */
export function describe(model, place, layout) {
  const row = shownRow(model, place);
  const parts = [`${model.role[row]}${model.kind[row] !== "message" ? ` ${model.kind[row]}` : ""}`];
  const depth = layout?.depthOf(place);
  if (depth !== undefined) parts.push(`level ${depth + 1}`);
  const sibs = layout ? layout.siblings(place) : [];
  if (sibs.length > 1) parts.push(`${sibs.indexOf(place) + 1} of ${sibs.length} branches`);
  const kids = model.kids.get(place)?.length || 0;
  const run = layout?.runOf ? layout.runOf(place) : 1;
  if (run > 1) parts.push(`a run of ${run} messages`);
  parts.push(kids === 1 ? "1 reply" : `${kids} replies`);
  if (layout?.isCollapsed(place)) parts.push(`collapsed, ${descendants(model, place)} hidden`);
  const vs = model.versions.get(place);
  if (vs) {
    const at = row === place ? 1 : vs.indexOf(row) + 2;
    parts.push(`version ${at} of ${vs.length + 1}`);
  }
  if (model.onPath[place]) parts.push(place === model.current ? "end of the current path" : "on the current path");
  for (const m of model.marks.get(place) || []) parts.push(`${m.kind} ${m.name}`);
  if (model.pruned.has(place)) parts.push("pruned");
  if (model.excluded.has(place)) parts.push("excluded");
  return `${parts.join(", ")}: ${model.text[row] || "(no text)"}`;
}
