-- A share link: a capability to read one branch. Only the token's sha256 is kept (a copy
-- of the store hands out no link); its first characters are kept to list it by.
CREATE TABLE shares (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('snapshot', 'live')),
  tree_id TEXT NOT NULL,
  node_id TEXT,
  ref_name TEXT,
  user_id TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX shares_user ON shares (user_id);
