CREATE TABLE users (
  id text PRIMARY KEY,
  name text NOT NULL UNIQUE,
  token_hash text NOT NULL UNIQUE,
  created_at text NOT NULL
);
CREATE TABLE user_trees (
  tree_id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id)
);
CREATE INDEX user_trees_user ON user_trees (user_id);
CREATE TABLE user_imports (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  created_at text NOT NULL,
  filename text NOT NULL,
  summary text NOT NULL
);
CREATE INDEX user_imports_user ON user_imports (user_id);
