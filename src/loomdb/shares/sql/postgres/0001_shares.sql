-- A share link: a capability to read one branch. Only the token's sha256 is kept (a copy
-- of the store hands out no link); its first characters are kept to list it by.
CREATE TABLE shares (
  id text PRIMARY KEY,
  token_hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('snapshot', 'live')),
  tree_id text NOT NULL,
  node_id text,
  ref_name text,
  user_id text,
  created_at text NOT NULL
);
CREATE INDEX shares_user ON shares (user_id);
