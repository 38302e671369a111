-- The core: trees, content, nodes, edges, the metadata overlay, refs and their log, blobs.
-- Ids are ULID text; content ids and chain hashes are raw 32-byte SHA-256 digests.
-- Every per-tree table carries tree_id so a tree can be listed, exported or moved alone.

CREATE TABLE trees (
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('dialogue', 'buffer')),
  system TEXT,
  options TEXT,
  root_id TEXT,
  lineage TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  archived_at TEXT
) WITHOUT ROWID;
CREATE INDEX trees_created ON trees (created_at);
CREATE INDEX trees_active ON trees (created_at) WHERE archived_at IS NULL;

-- Content is keyed by an integer in insertion order, so a thread's contents sit close
-- together on disk; the SHA-256 id is unique and names it everywhere outside this file.
CREATE TABLE contents (
  seq INTEGER PRIMARY KEY,
  id BLOB NOT NULL UNIQUE,
  body TEXT NOT NULL
);

-- Nodes are clustered by (seg, pos): a segment is a run of nodes each created from the
-- one before it, so the path of a long thread is a few range scans instead of one
-- index search per node. A node starts a new segment when its parent already has a
-- continuation in the parent's segment (a branch or a version).
CREATE TABLE segments (
  id TEXT PRIMARY KEY,
  tree_id TEXT NOT NULL,
  parent_seg TEXT,
  parent_pos INTEGER
) WITHOUT ROWID;

CREATE TABLE nodes (
  seg TEXT NOT NULL,
  pos INTEGER NOT NULL,
  id TEXT NOT NULL,
  tree_id TEXT NOT NULL,
  parent_id TEXT,
  slot_id TEXT NOT NULL,
  parent_slot TEXT,
  edited_from TEXT,
  depth INTEGER NOT NULL,
  role TEXT NOT NULL,
  kind TEXT NOT NULL,
  author TEXT NOT NULL,
  source TEXT NOT NULL,
  content_seq INTEGER NOT NULL,
  options TEXT,
  cache INTEGER NOT NULL,
  flags INTEGER NOT NULL,
  tokens INTEGER NOT NULL,
  total_tokens INTEGER NOT NULL,
  provenance TEXT,
  origin TEXT,
  created_at TEXT NOT NULL,
  chain_hash BLOB NOT NULL,
  PRIMARY KEY (tree_id, seg, pos)
) WITHOUT ROWID;
-- A tree's nodes are one primary-key range (listing, counting, leaves, export); every
-- index below is touched by an append, so each one costs a page write per commit.
CREATE UNIQUE INDEX nodes_id ON nodes (id);
CREATE INDEX nodes_children ON nodes (parent_slot) WHERE parent_slot IS NOT NULL;
CREATE INDEX nodes_versions ON nodes (slot_id) WHERE edited_from IS NOT NULL;

CREATE TABLE node_sources (
  node_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  source_id TEXT NOT NULL,
  role TEXT NOT NULL,
  tree_id TEXT NOT NULL,
  PRIMARY KEY (node_id, position)
) WITHOUT ROWID;
CREATE INDEX node_sources_source ON node_sources (source_id);

CREATE TABLE node_selections (
  node_id TEXT NOT NULL,
  slot_id TEXT NOT NULL,
  version_id TEXT NOT NULL,
  tree_id TEXT NOT NULL,
  PRIMARY KEY (node_id, slot_id)
) WITHOUT ROWID;

CREATE TABLE edges (
  id TEXT PRIMARY KEY,
  tree_id TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('annotation', 'link')),
  target_id TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX edges_target ON edges (target_id);
CREATE INDEX edges_tree ON edges (tree_id);

CREATE TABLE edge_sources (
  edge_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  source_id TEXT NOT NULL,
  role TEXT NOT NULL,
  PRIMARY KEY (edge_id, position)
) WITHOUT ROWID;
CREATE INDEX edge_sources_source ON edge_sources (source_id);

CREATE TABLE node_meta (
  node_id TEXT PRIMARY KEY,
  tree_id TEXT NOT NULL,
  bookmarked INTEGER NOT NULL DEFAULT 0,
  label TEXT,
  pruned INTEGER NOT NULL DEFAULT 0,
  excluded INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX node_meta_bookmarked ON node_meta (tree_id) WHERE bookmarked = 1;
CREATE INDEX node_meta_excluded ON node_meta (tree_id) WHERE excluded = 1;
CREATE INDEX node_meta_pruned ON node_meta (tree_id) WHERE pruned = 1;

CREATE TABLE node_tags (
  node_id TEXT NOT NULL,
  tag TEXT NOT NULL,
  tree_id TEXT NOT NULL,
  PRIMARY KEY (node_id, tag)
) WITHOUT ROWID;
CREATE INDEX node_tags_tag ON node_tags (tag);

CREATE TABLE refs (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('session', 'view', 'bookmark')),
  tree_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  origin TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX refs_tree ON refs (tree_id);
CREATE INDEX refs_node ON refs (node_id);

CREATE TABLE ref_selections (
  ref_name TEXT NOT NULL,
  slot_id TEXT NOT NULL,
  version_id TEXT NOT NULL,
  PRIMARY KEY (ref_name, slot_id)
) WITHOUT ROWID;

-- One b-tree keyed by (ref, seq): logging a move writes one page, not a row and an index.
CREATE TABLE ref_log (
  ref_name TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at TEXT NOT NULL,
  old_node TEXT,
  new_node TEXT,
  actor TEXT NOT NULL,
  reason TEXT NOT NULL,
  PRIMARY KEY (ref_name, seq)
) WITHOUT ROWID;

CREATE TABLE blobs (
  id BLOB PRIMARY KEY,
  size INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
