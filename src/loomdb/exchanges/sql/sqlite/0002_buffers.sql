-- Buffer documents the gateway has seen: a document (a buffer tree's path text) up to
-- the end of one node, found from a prompt by its first characters and its length.
CREATE TABLE gateway_buffers (
  head TEXT NOT NULL,
  length INTEGER NOT NULL,
  digest TEXT NOT NULL,
  tree_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  PRIMARY KEY (head, length, digest, tree_id)
) WITHOUT ROWID;
