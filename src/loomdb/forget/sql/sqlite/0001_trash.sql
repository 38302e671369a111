-- The trash: trees retention or a delete set aside, purged for good (through the
-- forget's delete, with its record) once `purge_after` has passed. A tree here is
-- hidden from listings and search; restoring it deletes its row.
CREATE TABLE trash (
  tree_id TEXT PRIMARY KEY,
  trashed_at TEXT NOT NULL,
  purge_after TEXT NOT NULL,
  rule TEXT NOT NULL,
  actor TEXT,
  reason TEXT
);
CREATE INDEX trash_due ON trash (purge_after);
-- Holds: a tree (`tree`, its id) or a session (`session`, its ref name) that retention
-- never takes, and that no purge takes while the hold stays.
CREATE TABLE retention_holds (
  kind TEXT NOT NULL CHECK (kind IN ('tree', 'session')),
  name TEXT NOT NULL,
  at TEXT NOT NULL,
  actor TEXT,
  reason TEXT,
  PRIMARY KEY (kind, name)
);
