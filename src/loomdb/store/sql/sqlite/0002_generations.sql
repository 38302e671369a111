-- Provenance of model generations (seed 003 RawApiResponse) and compaction records (seed 004).

CREATE TABLE generations (
  id TEXT PRIMARY KEY,
  tree_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  request TEXT NOT NULL,
  provider_request TEXT NOT NULL,
  raw_response TEXT NOT NULL,
  response_hash BLOB NOT NULL,
  usage TEXT,
  latency_ms INTEGER NOT NULL,
  status TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX generations_tree ON generations (tree_id, created_at);

CREATE TABLE compactions (
  node_id TEXT PRIMARY KEY,
  tree_id TEXT NOT NULL,
  model TEXT NOT NULL,
  tokens_before INTEGER NOT NULL,
  tokens_after INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  trigger TEXT NOT NULL,
  summarized INTEGER NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX compactions_tree ON compactions (tree_id, created_at);
