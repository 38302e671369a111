// @ts-check
// The layout of a document's revision graph: one row per revision (newest on top), one
// lane per line of history. Each branch, the current one first, claims the revisions
// along its first parents that no branch has claimed yet; a merge's other parent
// comes in from its own lane.

export const ROW = 30;
export const LANE = 18;

/** {rows: [{rev, number (1 the oldest), lane, y, x, branches, current}], edges: [{x1,y1,x2,y2}], width, height}
 *  from GET /api/documents/{name}/graph. */
export function layout(graph) {
  const byId = new Map(graph.revisions.map((r) => [r.id, r]));
  const order = [...graph.revisions].reverse(); // newest first
  const lane = new Map();
  const names = Object.keys(graph.branches).sort((a, b) =>
    (a === graph.branch ? -1 : b === graph.branch ? 1 : a.localeCompare(b)));
  let lanes = 0;
  for (const b of names) {
    let at = graph.branches[b];
    if (lane.has(at)) continue;
    const mine = lanes++;
    while (at && byId.has(at) && !lane.has(at)) {
      lane.set(at, mine);
      at = byId.get(at).parents[0];
    }
  }
  for (const r of order) if (!lane.has(r.id)) lane.set(r.id, lanes++);
  const heads = {};
  for (const [b, h] of Object.entries(graph.branches)) (heads[h] ??= []).push(b);
  const n = order.length;
  const rows = order.map((r, i) => ({
    rev: r, number: n - i, lane: lane.get(r.id), x: LANE / 2 + lane.get(r.id) * LANE, y: ROW / 2 + i * ROW,
    branches: (heads[r.id] ?? []).sort(), current: r.id === graph.revision,
  }));
  const at = new Map(rows.map((row) => [row.rev.id, row]));
  const edges = [];
  for (const row of rows) {
    for (const p of row.rev.parents) {
      const to = at.get(p);
      if (to) edges.push({ x1: row.x, y1: row.y, x2: to.x, y2: to.y, key: `${row.rev.id}-${p}` });
    }
  }
  return { rows, edges, width: Math.max(1, lanes) * LANE, height: rows.length * ROW };
}

export const short = (id) => id.slice(-7);
