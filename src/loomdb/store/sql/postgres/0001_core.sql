-- The core on PostgreSQL: the same tables and meaning as sql/sqlite/0001_core.sql.
-- Ids and timestamps are text in the "C" collation (byte order, as SQLite compares them);
-- content ids and chain hashes are raw 32-byte SHA-256 digests (bytea); JSON is kept as
-- the exact text the backend wrote (options and provenance are re-read by the verifier).
--
-- Distribution (Citus) without schema changes: every per-tree table carries tree_id in
-- its primary key and every unique key, so it can be distributed by tree and co-located
-- (trees by id, the others by tree_id). The node id comes first in the node-keyed
-- primary keys so lookups by id alone (get_nodes, walk) are one b-tree search.
-- `contents` and `blobs` are global and content-addressed (reference tables); refs are
-- global by name, so `refs`, `ref_selections` and `ref_log` are keyed (and can be
-- distributed) by the ref name. See docs/postgres.md.

CREATE TABLE trees (
  id text COLLATE "C" NOT NULL,
  title text NOT NULL,
  mode text NOT NULL CHECK (mode IN ('dialogue', 'buffer')),
  system text,
  options text,
  root_id text COLLATE "C",
  lineage text,
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  archived_at text COLLATE "C",
  PRIMARY KEY (id)
);
CREATE INDEX trees_created ON trees (created_at);
CREATE INDEX trees_active ON trees (created_at) WHERE archived_at IS NULL;

CREATE TABLE contents (
  id bytea NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (id)
);

CREATE TABLE nodes (
  id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  parent_id text COLLATE "C",
  slot_id text COLLATE "C" NOT NULL,
  parent_slot text COLLATE "C",
  edited_from text COLLATE "C",
  depth integer NOT NULL,
  role text NOT NULL,
  kind text NOT NULL,
  author text COLLATE "C" NOT NULL,
  source text NOT NULL,
  content_id bytea NOT NULL,
  options text,
  cache integer NOT NULL,
  flags integer NOT NULL,
  tokens integer NOT NULL,
  total_tokens bigint NOT NULL,
  provenance text,
  origin text,
  created_at text COLLATE "C" NOT NULL,
  chain_hash bytea NOT NULL,
  PRIMARY KEY (id, tree_id)
);
-- children of a slot (and the anti-join behind leaves); tree_id rides along so the
-- probe is index-only and stays inside one shard when distributed
CREATE INDEX nodes_children ON nodes (parent_slot, tree_id) WHERE parent_slot IS NOT NULL;
-- all nodes of a tree in creation order (listing, export, verification, leaves)
CREATE INDEX nodes_tree ON nodes (tree_id, created_at, id) INCLUDE (slot_id);
CREATE INDEX nodes_author ON nodes (author);
CREATE INDEX nodes_versions ON nodes (slot_id) WHERE edited_from IS NOT NULL;

CREATE TABLE node_sources (
  node_id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  position integer NOT NULL,
  source_id text COLLATE "C" NOT NULL,
  role text NOT NULL,
  PRIMARY KEY (node_id, tree_id, position)
);
CREATE INDEX node_sources_source ON node_sources (source_id);

CREATE TABLE node_selections (
  node_id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  slot_id text COLLATE "C" NOT NULL,
  version_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (node_id, tree_id, slot_id)
);

CREATE TABLE edges (
  id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  type text NOT NULL CHECK (type IN ('annotation', 'link')),
  target_id text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (id, tree_id)
);
CREATE INDEX edges_target ON edges (target_id);
CREATE INDEX edges_tree ON edges (tree_id);

CREATE TABLE edge_sources (
  edge_id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  position integer NOT NULL,
  source_id text COLLATE "C" NOT NULL,
  role text NOT NULL,
  PRIMARY KEY (edge_id, tree_id, position)
);
CREATE INDEX edge_sources_source ON edge_sources (source_id);

CREATE TABLE node_meta (
  node_id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  bookmarked integer NOT NULL DEFAULT 0,
  label text,
  pruned integer NOT NULL DEFAULT 0,
  excluded integer NOT NULL DEFAULT 0,
  PRIMARY KEY (node_id, tree_id)
);
CREATE INDEX node_meta_bookmarked ON node_meta (tree_id) WHERE bookmarked = 1;
CREATE INDEX node_meta_excluded ON node_meta (tree_id) WHERE excluded = 1;
CREATE INDEX node_meta_pruned ON node_meta (tree_id) WHERE pruned = 1;

CREATE TABLE node_tags (
  node_id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  tag text COLLATE "C" NOT NULL,
  PRIMARY KEY (node_id, tree_id, tag)
);
CREATE INDEX node_tags_tag ON node_tags (tag);

CREATE TABLE refs (
  name text COLLATE "C" NOT NULL,
  kind text NOT NULL CHECK (kind IN ('session', 'view', 'bookmark')),
  tree_id text COLLATE "C" NOT NULL,
  node_id text COLLATE "C" NOT NULL,
  origin text,
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (name)
);
CREATE INDEX refs_tree ON refs (tree_id);
CREATE INDEX refs_node ON refs (node_id);

CREATE TABLE ref_selections (
  ref_name text COLLATE "C" NOT NULL,
  slot_id text COLLATE "C" NOT NULL,
  version_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (ref_name, slot_id)
);

CREATE TABLE ref_log (
  seq bigint GENERATED BY DEFAULT AS IDENTITY,
  ref_name text COLLATE "C" NOT NULL,
  at text COLLATE "C" NOT NULL,
  old_node text COLLATE "C",
  new_node text COLLATE "C",
  actor text NOT NULL,
  reason text NOT NULL,
  PRIMARY KEY (ref_name, seq)
);

CREATE TABLE blobs (
  id bytea NOT NULL,
  size bigint NOT NULL,
  mime_type text NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (id)
);
