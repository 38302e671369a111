-- LangGraph's checkpoints (loomdb.integrations.langgraph). A thread's messages are nodes
-- of one loomdb tree (`tree_id`); a checkpoint names the node at the tip of each message
-- channel and keeps the other channels' values as references to `lg_blobs`, where each
-- distinct value of a thread is stored once (keyed by its digest). `key` numbers a
-- thread inside the store so that the rows of every step carry a small integer.
CREATE TABLE lg_threads (
  key INTEGER PRIMARY KEY,
  thread_id TEXT NOT NULL UNIQUE,
  tree_id TEXT,
  forks INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE INDEX lg_threads_tree ON lg_threads (tree_id);
-- one row per checkpoint: `body` holds the checkpoint without its id and values, its
-- metadata and a reference per channel value (see saver.py); `branch` is the line of
-- checkpoints (and the session ref that follows it) a root checkpoint belongs to
CREATE TABLE lg_checkpoints (
  thread INTEGER NOT NULL,
  ns TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  parent_id TEXT,
  run_id TEXT,
  branch INTEGER,
  body BLOB NOT NULL,
  PRIMARY KEY (thread, ns, checkpoint_id)
) WITHOUT ROWID;
CREATE INDEX lg_checkpoints_run ON lg_checkpoints (run_id) WHERE run_id IS NOT NULL;
-- the newest checkpoint of each branch: a put after it continues the branch, a put
-- after any other checkpoint starts a new one (a fork)
CREATE TABLE lg_branches (
  thread INTEGER NOT NULL,
  branch INTEGER NOT NULL,
  head TEXT NOT NULL,
  PRIMARY KEY (thread, branch)
) WITHOUT ROWID;
CREATE TABLE lg_writes (
  thread INTEGER NOT NULL,
  ns TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  channel TEXT NOT NULL,
  task_path TEXT NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (thread, ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
CREATE TABLE lg_blobs (
  thread INTEGER NOT NULL,
  hash BLOB NOT NULL,
  type TEXT NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (thread, hash)
) WITHOUT ROWID;
-- what a message's node does not carry (its LangChain id, metadata, fields not at their
-- defaults; or the whole message as the serializer writes it): see messages.py
CREATE TABLE lg_messages (
  node_id TEXT PRIMARY KEY,
  fields BLOB NOT NULL
) WITHOUT ROWID;
