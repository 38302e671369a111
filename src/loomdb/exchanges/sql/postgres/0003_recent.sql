-- The answers the gateway wrote last (the newest `at` first; at most a few dozen kept):
-- where a client's own compaction of its history is looked for. In the store, not in a
-- gateway's memory, so a compaction sent after a restart, or to another gateway process
-- on the same store, is still found.
CREATE TABLE gateway_recent (
  node_id text NOT NULL PRIMARY KEY,
  tree_id text NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX gateway_recent_at ON gateway_recent (at);
