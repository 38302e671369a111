-- The trash: trees retention or a delete set aside, purged for good (through the
-- forget's delete, with its record) once `purge_after` has passed. A tree here is
-- hidden from listings and search; restoring it deletes its row.
CREATE TABLE trash (
  tree_id text PRIMARY KEY,
  trashed_at text NOT NULL,
  purge_after text NOT NULL,
  rule text NOT NULL,
  actor text,
  reason text
);
CREATE INDEX trash_due ON trash (purge_after);
-- Holds: a tree (`tree`, its id) or a session (`session`, its ref name) that retention
-- never takes, and that no purge takes while the hold stays.
CREATE TABLE retention_holds (
  kind text NOT NULL CHECK (kind IN ('tree', 'session')),
  name text NOT NULL,
  at text NOT NULL,
  actor text,
  reason text,
  PRIMARY KEY (kind, name)
);
