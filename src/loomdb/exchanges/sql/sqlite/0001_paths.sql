-- The gateway's memo: the running digest of a request's messages up to one of them ->
-- the node holding that message on a path with the same contents (and the version
-- selections that path needs). Re-sent histories are matched by one indexed look-up.
CREATE TABLE gateway_paths (
  digest TEXT NOT NULL,
  tree_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  depth INTEGER NOT NULL,
  selections TEXT,
  PRIMARY KEY (digest, tree_id)
) WITHOUT ROWID;
