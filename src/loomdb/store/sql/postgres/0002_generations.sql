-- Provenance of model generations (seed 003 RawApiResponse) and compaction records (seed 004).
-- As in sql/sqlite/0002_generations.sql; tree_id is in each primary key (Citus-ready).

CREATE TABLE generations (
  id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  request text NOT NULL,
  provider_request text NOT NULL,
  raw_response text NOT NULL,
  response_hash bytea NOT NULL,
  usage text,
  latency_ms integer NOT NULL,
  status text NOT NULL,
  PRIMARY KEY (id, tree_id)
);
CREATE INDEX generations_tree ON generations (tree_id, created_at);

CREATE TABLE compactions (
  node_id text COLLATE "C" NOT NULL,
  tree_id text COLLATE "C" NOT NULL,
  model text NOT NULL,
  tokens_before integer NOT NULL,
  tokens_after integer NOT NULL,
  duration_ms integer NOT NULL,
  trigger text NOT NULL,
  summarized integer NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  PRIMARY KEY (node_id, tree_id)
);
CREATE INDEX compactions_tree ON compactions (tree_id, created_at);
