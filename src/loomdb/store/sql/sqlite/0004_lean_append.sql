-- Fewer pages per append. Every page an append dirties is a 4 KiB frame written to the
-- WAL at commit, so this layout keeps one append to four b-trees plus the log line:
--
-- * nodes become a rowid table keyed by `segment << 20 | position`: a thread grows at
--   the right edge of one rowid range (SQLite's cheapest insert), the path of a long
--   thread is still a few range scans, and the first node of a segment records the key
--   of its parent (`parent_key`) so a walk climbs from segment to segment;
-- * content lives inline in the first node that used it (`body`); later nodes with the
--   same content point at that node (`body_key`), and a unique index on the content id
--   of the holders keeps every content stored once;
-- * only segment starts enter an index, `nodes_starts` on (tree, parent slot): it
--   lists a tree's segments (so its key ranges) and the children that start one; a
--   continuation inside a segment is the row at key + 1;
-- * a ref's head is the last line of its log: a move appends one row whose primary key
--   (ref name, seq) is the compare-and-swap, and the refs row never changes.
--
-- Existing stores are rewritten here, in this migration's transaction.

CREATE TEMP TABLE seg_map (
  old TEXT PRIMARY KEY,
  seg INTEGER NOT NULL,
  tree_id TEXT NOT NULL,
  parent_seg TEXT,
  parent_pos INTEGER
) WITHOUT ROWID;
INSERT INTO seg_map
  SELECT id, row_number() OVER (ORDER BY id), tree_id, parent_seg, parent_pos FROM segments;

CREATE TABLE nodes_v4 (
  key INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  tree_id TEXT NOT NULL,
  parent_id TEXT,
  parent_key INTEGER,
  slot_id TEXT NOT NULL,
  parent_slot TEXT,
  edited_from TEXT,
  depth INTEGER NOT NULL,
  role TEXT NOT NULL,
  kind TEXT NOT NULL,
  author TEXT NOT NULL,
  source TEXT NOT NULL,
  content_id BLOB NOT NULL,
  body TEXT,
  body_key INTEGER,
  options TEXT,
  cache INTEGER NOT NULL,
  flags INTEGER NOT NULL,
  tokens INTEGER NOT NULL,
  total_tokens INTEGER NOT NULL,
  provenance TEXT,
  origin TEXT,
  created_at TEXT NOT NULL,
  chain_hash BLOB NOT NULL
);
INSERT INTO nodes_v4
  SELECT (m.seg << 20) | n.pos, n.id, n.tree_id, n.parent_id,
    CASE WHEN n.pos = 0 AND m.parent_seg IS NOT NULL
      THEN ((SELECT p.seg FROM seg_map p WHERE p.old = m.parent_seg) << 20) | m.parent_pos END,
    n.slot_id, n.parent_slot, n.edited_from, n.depth, n.role, n.kind, n.author, n.source,
    c.id, NULL, NULL, n.options, n.cache, n.flags, n.tokens, n.total_tokens, n.provenance,
    n.origin, n.created_at, n.chain_hash
  FROM nodes n JOIN seg_map m ON m.old = n.seg JOIN contents c ON c.seq = n.content_seq;
UPDATE nodes_v4 SET body = (SELECT c.body FROM contents c WHERE c.id = nodes_v4.content_id)
  WHERE key IN (SELECT min(key) FROM nodes_v4 GROUP BY content_id);
CREATE UNIQUE INDEX nodes_content ON nodes_v4 (content_id) WHERE body IS NOT NULL;
UPDATE nodes_v4 SET body_key = (SELECT b.key FROM nodes_v4 b
  WHERE b.content_id = nodes_v4.content_id AND b.body IS NOT NULL) WHERE body IS NULL;

DROP TABLE seg_map;

DROP TABLE nodes;
DROP TABLE segments;
DROP TABLE contents;
ALTER TABLE nodes_v4 RENAME TO nodes;
CREATE UNIQUE INDEX nodes_id ON nodes (id);
-- the first node of every segment: a root (no parent) or one that starts a branch, a
-- version or a new run (its parent's key recorded)
CREATE INDEX nodes_starts ON nodes (tree_id, parent_slot)
  WHERE parent_key IS NOT NULL OR parent_id IS NULL;
CREATE INDEX nodes_versions ON nodes (slot_id) WHERE edited_from IS NOT NULL;
-- the content table of earlier versions, for anyone reading the file directly
CREATE VIEW contents AS SELECT content_id AS id, body FROM nodes WHERE body IS NOT NULL;

-- a ref whose log does not end at its head gets one line that does
INSERT INTO ref_log (ref_name, seq, at, old_node, new_node, actor, reason)
  SELECT r.name, coalesce(l.seq, 0) + 1, r.updated_at, l.new_node, r.node_id, 'loomdb',
    'migrate: head'
  FROM refs r LEFT JOIN ref_log l ON l.ref_name = r.name
    AND l.seq = (SELECT max(seq) FROM ref_log x WHERE x.ref_name = r.name)
  WHERE l.new_node IS NOT r.node_id;
CREATE TABLE refs_v4 (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('session', 'view', 'bookmark')),
  tree_id TEXT NOT NULL,
  origin TEXT,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO refs_v4 SELECT name, kind, tree_id, origin, created_at FROM refs;
DROP TABLE refs;
ALTER TABLE refs_v4 RENAME TO refs;
CREATE INDEX refs_tree ON refs (tree_id);
