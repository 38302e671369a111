CREATE TABLE users (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
CREATE TABLE user_trees (
  tree_id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id)
);
CREATE INDEX user_trees_user ON user_trees (user_id);
CREATE TABLE user_imports (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id),
  created_at TEXT NOT NULL,
  filename TEXT NOT NULL,
  summary TEXT NOT NULL
);
CREATE INDEX user_imports_user ON user_imports (user_id);
