-- Span redaction and stale derived values: the same tables and meaning as
-- sql/sqlite/0009_scrubs.sql (never content).
CREATE TABLE scrubs (
  item text COLLATE "C" NOT NULL,
  kind text NOT NULL CHECK (kind IN ('content', 'generation', 'node')),
  digest text NOT NULL,
  seq bigint NOT NULL,
  at text COLLATE "C" NOT NULL,
  PRIMARY KEY (item)
);
CREATE TABLE stale (
  tree_id text COLLATE "C" NOT NULL,
  item text COLLATE "C" NOT NULL,
  kind text NOT NULL,
  source text COLLATE "C" NOT NULL,
  at text COLLATE "C" NOT NULL,
  PRIMARY KEY (tree_id, item)
);
CREATE TABLE node_scrubs (
  tree_id text COLLATE "C" NOT NULL,
  node_id text COLLATE "C" NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (tree_id, node_id)
);
